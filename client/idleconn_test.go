package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
)

// TestIdleConnectionNotReusedPastKeepAlive: a connection idle longer than
// client.IdleConnTimeout is not used for the next request. Node's HTTP
// server closes an idle connection after 5 s; a request written into it
// as it closes fails with "connection reset by peer", a NETWORK_ERROR that
// was the client's doing (the conformance suite's http-custom-headers
// scenario failed so under load). Before, Go's 90 s default reused it.
func TestIdleConnectionNotReusedPastKeepAlive(t *testing.T) {
	if testing.Short() {
		t.Skip("waits past the idle timeout")
	}
	var mu sync.Mutex
	conns := map[string]bool{}
	var order []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		order = append(order, r.RemoteAddr)
		mu.Unlock()
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		result := `{"content":[{"type":"text","text":"ok"}]}`
		if m.Method == "initialize" {
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns[c.RemoteAddr().String()] = true
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := client.New(client.Options{URL: srv.URL, Protocol: client.Protocol2025, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if call, err := c.CallTool(context.Background(), "t", nil); err != nil || call.Outcome != "TOOL_SUCCESS" {
		t.Fatalf("first call: %v %+v", err, call)
	}
	mu.Lock()
	first, k := order[len(order)-1], len(order)
	mu.Unlock()
	time.Sleep(client.IdleConnTimeout + 500*time.Millisecond)
	if call, err := c.CallTool(context.Background(), "t", nil); err != nil || call.Outcome != "TOOL_SUCCESS" {
		t.Fatalf("second call: %v %+v", err, call)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, addr := range order[k:] {
		if addr == first {
			t.Errorf("a request after %s idle came on the connection the last request used (%s): the client reused a connection idle longer than its IdleConnTimeout; requests on %v, %d connections", client.IdleConnTimeout+500*time.Millisecond, first, order, len(conns))
		}
	}
}
