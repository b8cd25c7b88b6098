package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/proxy/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Exchanges through a proxy show up in /metrics by method, tool, layer and
// outcome, with durations, upstream errors and dropped records.
func TestMetricsThroughProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(b), `"fail"`) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`)
	}))
	defer up.Close()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Options{RecordsDropped: func() int64 { return 7 }})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(up.URL + "/mcp")
	p, err := proxy.New(proxy.Options{Upstream: u, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(p)
	dead, _ := url.Parse("http://127.0.0.1:1/mcp")
	pd, _ := proxy.New(proxy.Options{Upstream: dead, Observer: m})
	pds := httptest.NewServer(pd)
	for _, c := range []struct{ url, tool string }{{ps.URL, "echo"}, {ps.URL, "echo"}, {ps.URL, "fail"}, {pds.URL, "echo"}} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":{}}}`
		resp, err := http.Post(c.url+"/mcp", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ps.Close()
	pds.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.Close(ctx)
	pd.Close(ctx)

	srv := httptest.NewServer(metrics.Handler(reg))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`mcpdiag_proxy_exchanges_total{layer="application",method="tools/call",outcome="TOOL_SUCCESS",tool="echo",transport="tcp"} 2`,
		`mcpdiag_proxy_exchanges_total{layer="application",method="tools/call",outcome="TOOL_ERROR",tool="fail",transport="tcp"} 1`,
		`mcpdiag_proxy_exchanges_total{layer="transport",method="tools/call",outcome="HTTP_ERROR",tool="echo",transport="tcp"} 1`,
		`mcpdiag_proxy_upstream_errors_total{error="connection_refused"} 1`,
		`mcpdiag_proxy_records_dropped_total 7`,
		`mcpdiag_proxy_exchange_duration_seconds_count{layer="application",method="tools/call",transport="tcp"} 3`,
		`mcpdiag_proxy_upstream_duration_seconds_count{method="tools/call"} 4`, // the refused attempt is a leg too
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if n, err := testutil.GatherAndCount(reg, metrics.NameExchanges); err != nil || n != 3 {
		t.Errorf("%d exchange series, err %v", n, err)
	}
	if t.Failed() {
		t.Logf("%s", text)
	}
}

// Client-chosen names cannot grow the labels without bound.
func TestMetricsLabelBounds(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Options{MaxTools: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, tool string }{{"tools/call", "a"}, {"tools/call", "b"}, {"tools/call", "c"}, {"x/evil-1", ""}, {"x/evil-2", ""}} {
		m.Observe(&proxy.Observation{Record: recordFor(c.method, c.tool), Transport: proxy.TransportTCP})
	}
	for _, want := range []string{`tool="_other"`, `method="_other"`} {
		if n := strings.Count(gather(t, reg), want); n != 1 {
			t.Errorf("%d series with %s, want 1", n, want)
		}
	}
}
