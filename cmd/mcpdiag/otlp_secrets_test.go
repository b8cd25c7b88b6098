package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestOTLPExportErrorsMaskTheKey (attack8): a collector that refuses the
// proxy's spans and quotes the API key it was sent
// (OTEL_EXPORTER_OTLP_HEADERS) in its answer: the exporter's error, which
// repeats the answer, went to the process's stderr through OpenTelemetry's
// default error handler, unscrubbed (found with the real binary: "traces
// export: failed to send to …: 401 Unauthorized (body: invalid api key
// KEY)"). It now goes to the proxy's stderr, scrubbed, with the headers'
// values registered as secrets.
func TestOTLPExportErrorsMaskTheKey(t *testing.T) {
	key := canary("otlpkey")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-honeycomb-team="+key)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	got := make(chan string, 16)
	coll := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case got <- r.Header.Get("X-Honeycomb-Team"):
		default:
		}
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "invalid api key %s", r.Header.Get("X-Honeycomb-Team"))
	}))
	defer coll.Close()
	su, _ := startServe(t, serveOptions{})
	p := runHTTPProxyForTest(t, proxyOptions{upstream: su, otlp: coll.URL})
	resp, err := http.Post(p.base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case h := <-got:
		if h != key {
			t.Fatalf("the collector got header %q, want the key: the test proves nothing", h)
		}
	case <-time.After(testwait.Bound):
		t.Fatalf("no export reached the collector in %s", testwait.Bound)
	}
	deadline := time.Now().Add(testwait.Bound)
	for time.Now().Before(deadline) && !strings.Contains(p.stderr.String(), "401") {
		time.Sleep(20 * time.Millisecond)
	}
	p.stop()
	out := p.stderr.String()
	if !strings.Contains(out, "401 Unauthorized") || !strings.Contains(out, "invalid api key [redacted:len=") {
		t.Errorf("the proxy's stderr does not say the export failed, with the key masked:\n%s", out)
	}
	if strings.Contains(out, key) {
		t.Errorf("the proxy's stderr leaks the OTLP key:\n%s", out)
	}
}
