package proxy_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
)

func TestIsAdminPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/admin": true, "/admin/": true, "/admin/log": true, "/ADMIN/log": true, "/mcp/../admin/log": true,
		"//admin/log": true, "/./admin": true, "admin/log": true,
		"/mcp": false, "/administrator": false, "/s/admin/mcp": false, "/": false,
		"/Admin": true, "/aDMIN/x": true, "/ADM\u0130N/log": true, "/adminx": false, "/admi": false, "": false,
		"/admin/../mcp": false, "/mcp/admin": false, "/\u00e0dmin": false,
	} {
		if got := proxy.IsAdminPath(p); got != want {
			t.Errorf("IsAdminPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestAdminPathsNotForwarded: the upstream never sees an admin path unless
// ForwardAdmin; then it sees it with Via. The refusal is recorded.
func TestAdminPathsNotForwarded(t *testing.T) {
	var hits atomic.Int32
	var via atomic.Value
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		via.Store(r.Header.Get("Via"))
	}))
	base := strings.TrimSuffix(up, "/mcp")
	purl, _, sink, stop := startProxy(t, base+"/mcp", proxy.Options{})
	pbase := strings.TrimSuffix(purl, "/mcp")
	for _, p := range []string{"/admin/log", "/%61dmin/log", "/mcp/../admin/scenario"} {
		resp, err := http.Get(pbase + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("Proxy-Status"), "http_request_denied") {
			t.Errorf("GET %s: %d Proxy-Status %q", p, resp.StatusCode, resp.Header.Get("Proxy-Status"))
		}
	}
	stop()
	if hits.Load() != 0 {
		t.Fatalf("the upstream saw %d admin requests", hits.Load())
	}
	recs := sink.exchanges(t)
	if len(recs) != 3 || recs[0].Status != 403 || !strings.Contains(recs[0].Note, "admin paths are not forwarded") {
		t.Fatalf("records: %d, first %+v", len(recs), recs[0])
	}

	purl, _, _, stop = startProxy(t, base+"/mcp", proxy.Options{ForwardAdmin: true})
	resp, err := http.Get(strings.TrimSuffix(purl, "/mcp") + "/admin/log")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stop()
	if hits.Load() != 1 || via.Load() != proxy.ViaValue {
		t.Errorf("with ForwardAdmin: upstream hits %d, Via %q", hits.Load(), via.Load())
	}
}

// TestIsAdminPathAllocs: the check on a clean ASCII path (every request
// asks it twice) allocates nothing; "/"+p cleaned by path.Clean cost one
// allocation per call, two per request.
func TestIsAdminPathAllocs(t *testing.T) {
	for _, p := range []string{"/mcp", "/sse", "/s/catalog.rug_pull/mcp", "/admin/log", "/ADMIN"} {
		if n := testing.AllocsPerRun(100, func() { proxy.IsAdminPath(p) }); n != 0 {
			t.Errorf("IsAdminPath(%q): %.0f allocations, want 0", p, n)
		}
	}
}
