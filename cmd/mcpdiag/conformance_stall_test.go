package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/conformance"
)

// connKey carries a connection's request counter on its requests' contexts.
type connKey struct{}

// TestConformanceClientSurvivesAStalledNodeServer: the conformance suite's
// mock servers are Node HTTP servers (keep-alive 5 s). When Node's event
// loop is blocked for 5 s or more after a response (the suite's process on
// a machine at load 16), the keep-alive timer fires before the next request
// on that connection is read and Node destroys the connection with the
// request unread: the client sees "connection reset by peer" about 6 s
// after it sent the call (reproduced with a Node 22 server that blocks its
// loop 6 s after its first response; TestConformanceClientSuite's
// http-custom-headers failed so, NETWORK_ERROR after 6.2 s, twice at load
// ~16). The client cannot know the request was not processed, so a
// tools/call is not retried and the verdict, NETWORK_ERROR, is true; the
// adapter therefore opens a connection per request, where no keep-alive
// timer is running. This server resets every second request on a
// connection, as Node does after such a stall: every step must still get
// its answer, each on a connection of its own.
func TestConformanceClientSurvivesAStalledNodeServer(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	reset := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.Context().Value(connKey{}).(*int)
		mu.Lock()
		*n++
		second := *n > 1
		if second {
			reset++
		}
		mu.Unlock()
		if second {
			// The stalled server's keep-alive timer fired first: the
			// connection is destroyed with the request unread.
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
			return
		}
		m, _ := readRPCRequest(r)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"t1","inputSchema":{"type":"object"}},{"name":"t2","inputSchema":{"type":"object"}}]}}`, m.ID)
		case "tools/call":
			mu.Lock()
			calls = append(calls, m.Params.Name)
			mu.Unlock()
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`, m.ID)
		default:
			http.Error(w, "unexpected "+m.Method, http.StatusBadRequest)
		}
	}))
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, new(int))
	}
	srv.Start()
	t.Cleanup(srv.Close)

	t.Setenv(conformance.EnvScenario, "http-custom-headers")
	t.Setenv(conformance.EnvProtocol, "2026-07-28")
	t.Setenv(conformance.EnvContext, `{"name":"http-custom-headers","toolCalls":[{"name":"t1","arguments":{}},{"name":"t2","arguments":{}}]}`)
	var stdout, stderr bytes.Buffer
	code := run([]string{"conformance-client", srv.URL + "/mcp"}, strings.NewReader(""), &stdout, &stderr)
	mu.Lock()
	defer mu.Unlock()
	if code != 0 || strings.Join(calls, ",") != "t1,t2" || reset != 0 {
		t.Errorf("exit %d, calls answered %q, requests sent on a used connection (and reset) %d; want 0, \"t1,t2\", 0\nstdout:\n%s\nstderr:\n%s", code, calls, reset, stdout.String(), stderr.String())
	}
	for _, want := range []string{"tools/call t1: TOOL_SUCCESS", "tools/call t2: TOOL_SUCCESS"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
}
