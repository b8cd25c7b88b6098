package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestUpstreamIdleConnectionNotReused: the proxy does not forward a request
// on an upstream connection idle longer than UpstreamIdleConnTimeout.
// Node's HTTP server closes an idle connection after 5 s; a request written
// into it as it closes fails, and the proxy would answer 502 and record a
// NETWORK_ERROR neither side caused. Before, Go's 90 s default reused it.
func TestUpstreamIdleConnectionNotReused(t *testing.T) {
	if testing.Short() {
		t.Skip("waits past the idle timeout")
	}
	var mu sync.Mutex
	var order []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		order = append(order, r.RemoteAddr)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	}))
	defer up.Close()
	base, _, _, stop := startProxy(t, up.URL+"/mcp", proxy.Options{})
	defer stop()
	post := func() {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	post()
	time.Sleep(proxy.UpstreamIdleConnTimeout + 500*time.Millisecond)
	post()
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 2 || order[0] == order[1] {
		t.Errorf("upstream requests came from %v: the second, after %s idle, must come on a new connection", order, proxy.UpstreamIdleConnTimeout+500*time.Millisecond)
	}
}
