package probe_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestProbeThroughProxyRecordsProbes: mcpdiag probe run through mcpdiag
// proxy against a healthy server. The proxy's records mark each request the
// probe sent on purpose as a probe of its kind (the Mcpdiag-Probe request
// header), so that mcpdiag report counts no failure where the probe's own
// records count none, and matrix --from-records leaves the probes out.
// Before, report said 18 of 22 exchanges failed (the server's correct
// answers to deliberately bad requests: TOOL_ERROR, HTTP 400) and matrix
// --from-records failed mcpdiag's own client on spec.accept,
// spec.protocol-header, spec.method-headers and safety.backoff (found by
// newuser7 probing mcpdiag serve through the proxy).
func TestProbeThroughProxyRecordsProbes(t *testing.T) {
	t.Parallel()
	upstream, _ := badServer(t, "healthy")
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	lines := &recordtest.Lines{}
	sink := record.NewAsync(lines, record.AsyncOptions{Policy: record.QueueBlock})
	p, err := proxy.New(proxy.Options{Upstream: u, Records: sink})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = p.HTTPServer(p)
	ts.Start()
	rep := run(t, ts.URL+u.Path, "2026-07-28", probe.Options{MaxPerTool: 1})
	ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	file := bytes.Join(lines.All(), nil)
	var recs []*record.Record
	for r, err := range record.NewReader(bytes.NewReader(file)).All() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	// The probe's own records and the proxy's name the same probes (kind,
	// seed and index: the proxy's record makes the probe again), the
	// foreign-Origin one too, which the proxy refuses itself (and records).
	kinds := func(rs []*record.Record) []string {
		var out []string
		for _, r := range rs {
			if r.Probe != nil {
				out = append(out, fmt.Sprintf("%s %s seed=%s index=%d", r.Method, r.Probe.Kind, r.Probe.Seed, r.Probe.Index))
			}
		}
		slices.Sort(out)
		return out
	}
	own, proxied := kinds(rep.Records), kinds(recs)
	if len(own) < 5 || !slices.Equal(own, proxied) {
		t.Errorf("probes in the probe's records:\n  %q\nin the proxy's:\n  %q", own, proxied)
	}
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	if s := acc.Summary().Exchanges; s.Failures != 0 || s.Probes != int64(len(proxied)) {
		t.Errorf("report over the proxy's records: %d failures, %d probes; want 0 and %d", s.Failures, s.Probes, len(proxied))
	}
	passive, err := matrix.FromRecords(bytes.NewReader(file), "proxy.jsonl", matrix.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if passive.Failed() {
		var b bytes.Buffer
		_ = passive.WriteTable(&b)
		t.Errorf("matrix --from-records over the proxy's records failed:\n%s", b.String())
	}
}
