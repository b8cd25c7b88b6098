package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// startHTTPProxy runs `mcpdiag proxy` in-process in front of upstream and
// returns its base URL (scheme and host) and its metrics URL ("" without
// --metrics); it stops when the test ends.
func startHTTPProxy(t *testing.T, o proxyOptions) (base, metricsURL string) {
	t.Helper()
	p := runHTTPProxyForTest(t, o)
	return p.base, p.metrics
}

// testProxy is a running `mcpdiag proxy`.
type testProxy struct {
	base, metrics string
	stderr        *syncBuffer
	// stop sends SIGTERM and waits for the proxy to end (records and spans
	// flushed); it is safe to call twice.
	stop func()
}

func runHTTPProxyForTest(t *testing.T, o proxyOptions) *testProxy {
	t.Helper()
	if o.listen == "" {
		o.listen = "127.0.0.1:0"
	}
	if o.recordBodies == "" {
		o.recordBodies = "errors"
	}
	o.queue, o.queuePolicy, o.fsync, o.shutdownTimeout = 16, "block", "close", time.Second
	ready := make(chan [2]string, 1)
	sigs := make(chan os.Signal, 1)
	o.ready = func(p, m string) { ready <- [2]string{p, m} }
	o.signals = sigs
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- runProxy(context.Background(), nil, io.Discard, stderr, nil, o) }()
	var urls [2]string
	select {
	case urls = <-ready:
	case err := <-done:
		t.Fatalf("the proxy ended: %v\n%s", err, stderr.String())
	case <-time.After(testwait.Bound):
		t.Fatalf("the proxy neither gave its URLs nor ended within %s", testwait.Bound)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			sigs <- syscall.SIGTERM
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("proxy: %v\n%s", err, stderr.String())
				}
			case <-time.After(testwait.Bound):
				t.Errorf("the proxy did not stop within %s", testwait.Bound)
			}
		})
	}
	t.Cleanup(stop)
	i := strings.Index(urls[0][len("http://"):], "/")
	return &testProxy{base: urls[0][:len("http://")+i], metrics: urls[1], stderr: stderr, stop: stop}
}

// adminDo sends one admin request and returns its status and body.
func adminDo(t *testing.T, method, u, body string, hdr map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const putErrors = `{"scenario":"errors.tool_error"}`

// scenarioOf reads serve's main selection directly (loopback, no proxy).
func scenarioOf(t *testing.T, serveBase string, hdr map[string]string) string {
	t.Helper()
	status, body := adminDo(t, "GET", serveBase+"/admin/scenario", "", hdr)
	if status != 200 {
		t.Fatalf("GET /admin/scenario directly: %d %s", status, body)
	}
	return body
}

// TestAdminAPIThroughProxy: `mcpdiag proxy` in front of `mcpdiag serve`
// does not hand out serve's loopback-only admin API. The proxy refuses
// /admin/ (in any spelling of the path) unless --forward-admin; with it,
// serve refuses a request that came through a proxy unless it carries the
// --admin-token. The scenario of the main endpoint changes only when the
// token is given.
func TestAdminAPIThroughProxy(t *testing.T) {
	t.Run("no token", func(t *testing.T) {
		su, _ := startServe(t, serveOptions{})
		sbase := strings.TrimSuffix(su, "/mcp")
		before := scenarioOf(t, sbase, nil)
		for _, forward := range []bool{false, true} {
			pbase, _ := startHTTPProxy(t, proxyOptions{upstream: su, forwardAdmin: forward})
			for _, path := range []string{"/admin/log", "/%61dmin/log", "/admin/./log", "/mcp/../admin/log", "/admin/counters"} {
				// With --forward-admin serve itself refuses (403), or routes
				// an odd spelling nowhere (404); without, the proxy refuses.
				status, body := adminDo(t, "GET", pbase+path, "", nil)
				if status != http.StatusForbidden && (!forward || status != http.StatusNotFound) {
					t.Errorf("forward=%v GET %s through the proxy: %d %.200s, want 403", forward, path, status, body)
				}
				if forward == strings.Contains(body, "mcpdiag proxy:") {
					t.Errorf("forward=%v GET %s: refused by the wrong side: %.200s", forward, path, body)
				}
			}
			if status, body := adminDo(t, "PUT", pbase+"/admin/scenario", putErrors, nil); status != http.StatusForbidden {
				t.Errorf("forward=%v PUT /admin/scenario through the proxy: %d %.200s, want 403", forward, status, body)
			}
		}
		if after := scenarioOf(t, sbase, nil); after != before {
			t.Errorf("the scenario changed through the proxy: %s → %s", before, after)
		}
	})
	t.Run("token", func(t *testing.T) {
		const token = "admin-TOKEN-7f6e5d4c3b2a"
		auth := map[string]string{"Authorization": "Bearer " + token}
		su, _ := startServe(t, serveOptions{adminToken: token})
		sbase := strings.TrimSuffix(su, "/mcp")
		// Without --forward-admin the proxy refuses even with the token.
		pbase, _ := startHTTPProxy(t, proxyOptions{upstream: su})
		if status, _ := adminDo(t, "GET", pbase+"/admin/log", "", auth); status != http.StatusForbidden {
			t.Errorf("GET /admin/log through a proxy without --forward-admin: %d, want 403", status)
		}
		pbase, _ = startHTTPProxy(t, proxyOptions{upstream: su, forwardAdmin: true})
		if status, _ := adminDo(t, "PUT", pbase+"/admin/scenario", putErrors, nil); status != http.StatusUnauthorized {
			t.Errorf("PUT /admin/scenario through the proxy without the token: %d, want 401", status)
		}
		if status, body := adminDo(t, "PUT", pbase+"/admin/scenario", putErrors, auth); status != http.StatusOK {
			t.Fatalf("PUT /admin/scenario through the proxy with the token: %d %s", status, body)
		}
		if got := scenarioOf(t, sbase, auth); !strings.Contains(got, "errors.tool_error") {
			t.Errorf("the scenario did not change: %s", got)
		}
		if status, body := adminDo(t, "GET", pbase+"/admin/log", "", auth); status != http.StatusOK || strings.Contains(body, token) {
			t.Errorf("GET /admin/log through the proxy with the token: %d (token in the log: %v)", status, strings.Contains(body, token))
		}
	})
}

// TestAdminAPIRefusesForwardedRequests: serve's admin API, without a token,
// answers only a direct loopback client: a request that names a proxy
// (Forwarded, X-Forwarded-*, Via), whatever its peer, is refused.
func TestAdminAPIRefusesForwardedRequests(t *testing.T) {
	su, _ := startServe(t, serveOptions{})
	sbase := strings.TrimSuffix(su, "/mcp")
	if status, body := adminDo(t, "GET", sbase+"/admin/counters", "", nil); status != 200 {
		t.Fatalf("direct loopback: %d %s", status, body)
	}
	for _, h := range []map[string]string{
		{"Forwarded": "for=203.0.113.7;proto=https"},
		{"X-Forwarded-For": "203.0.113.7"},
		{"X-Forwarded-Host": "mcp.example.com"},
		{"X-Forwarded-Proto": "https"},
		{"X-Real-Ip": "203.0.113.7"},
		{"Via": "1.1 gateway"},
		{"Host": "evil.example"},
		{"Origin": "http://evil.example"},
	} {
		if status, body := adminDo(t, "GET", sbase+"/admin/counters", "", h); status != http.StatusForbidden {
			t.Errorf("GET /admin/counters with %v: %d %.200s, want 403", h, status, body)
		}
	}
}

// TestMetricsRefusesForeignHost: the proxy's /metrics on a loopback
// listener applies the same DNS-rebinding check as the admin API.
func TestMetricsRefusesForeignHost(t *testing.T) {
	su, _ := startServe(t, serveOptions{})
	_, murl := startHTTPProxy(t, proxyOptions{upstream: su, metricsAddr: "127.0.0.1:0"})
	if status, body := adminDo(t, "GET", murl, "", nil); status != 200 || !strings.Contains(body, "mcpdiag_proxy") {
		t.Fatalf("GET /metrics: %d %.200s", status, body)
	}
	for _, h := range []map[string]string{
		{"Host": "evil.example"},
		{"Host": "evil.example:9464"},
		{"Origin": "http://evil.example"},
	} {
		if status, body := adminDo(t, "GET", murl, "", h); status != http.StatusForbidden {
			t.Errorf("GET /metrics with %v: %d %.100s, want 403", h, status, body)
		}
	}
}

// TestLoopbackBinds: an address without a host binds 127.0.0.1 for serve,
// the proxy and the proxy's metrics; the proxy and the metrics on loopback
// refuse a foreign Host or Origin (DNS rebinding) and serve the right ones.
func TestLoopbackBinds(t *testing.T) {
	su, _ := startServe(t, serveOptions{addr: ":0"}) // startServe checks the URL is on 127.0.0.1
	p := runHTTPProxyForTest(t, proxyOptions{upstream: su, listen: ":0", metricsAddr: ":0"})
	for _, u := range []string{p.base, p.metrics} {
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Errorf("an address without a host bound %s, want 127.0.0.1", u)
		}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	mcpHeaders := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	with := func(k, v string) map[string]string {
		h := map[string]string{k: v}
		for hk, hv := range mcpHeaders {
			h[hk] = hv
		}
		return h
	}
	// A loopback Host reaches the upstream (which answers this bare
	// request 400 for its missing _meta).
	if status, b := adminDo(t, "POST", p.base+"/mcp", body, mcpHeaders); status == http.StatusForbidden || !strings.Contains(b, `"jsonrpc"`) {
		t.Fatalf("tools/list through the proxy: %d %.200s", status, b)
	}
	for _, h := range []map[string]string{with("Host", "evil.example"), with("Host", "evil.example:8081"), with("Origin", "http://evil.example")} {
		if status, b := adminDo(t, "POST", p.base+"/mcp", body, h); status != http.StatusForbidden {
			t.Errorf("POST /mcp through the proxy with %v: %d %.100s, want 403", h, status, b)
		}
	}
}
