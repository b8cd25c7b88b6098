package ui

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
	"github.com/mcpdiag/mcpdiag/wire"
)

// proxiedEraProbes are records as mcpdiag proxy writes them in front of a
// 2025-11-25 server (no eraFallback member: the proxy cannot know what the
// client does next): two refused 2026-07-28 probes each followed by their
// client's initialize on the same connection (the second recorded after
// its initialize, as the proxy's finishing goroutines may write them), and
// one after which the client gave up. want is whether each row is failed.
func proxiedEraProbes() (recs []*record.Record, want map[string]bool) {
	t0 := time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC)
	probe := func(id, conn string, at time.Duration) *record.Record {
		return &record.Record{Kind: record.KindExchange, ID: id, Time: t0.Add(at), Conn: conn, Client: "inspector-cli@0.17",
			HTTPMethod: "POST", URL: "http://127.0.0.1:9/mcp", Method: "tools/list", ProtocolVersion: wire.Protocol2026,
			Status: 400, Outcome: classify.HTTPError, Layer: classify.LayerTransport}
	}
	initialize := func(id, conn string, at time.Duration) *record.Record {
		return &record.Record{Kind: record.KindExchange, ID: id, Time: t0.Add(at), Conn: conn, Client: "inspector-cli@0.17",
			HTTPMethod: "POST", URL: "http://127.0.0.1:9/mcp", Method: "initialize", ProtocolVersion: wire.Protocol2025,
			Status: 200, Outcome: classify.ResultSuccess, Layer: classify.LayerApplication}
	}
	recs = []*record.Record{
		probe("PROBE-FELL-BACK", "c1", 0),
		initialize("INIT-1", "c1", 5*time.Millisecond),
		initialize("INIT-2", "c2", 2005*time.Millisecond),
		probe("PROBE-RECORDED-LATE", "c2", 2000*time.Millisecond),
		probe("PROBE-GAVE-UP", "c3", 4000*time.Millisecond),
	}
	want = map[string]bool{"PROBE-FELL-BACK": false, "INIT-1": false, "INIT-2": false, "PROBE-RECORDED-LATE": false, "PROBE-GAVE-UP": true}
	return recs, want
}

// failedRows returns, for each row's record id, whether the page marks it
// failed.
func failedRows(t *testing.T, p *browser.Page) map[string]bool {
	t.Helper()
	got := browser.Eval[map[string]bool](t, p, `Object.fromEntries([...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) => [tr.dataset.id, tr.classList.contains('fail')]))`)
	return got
}

// reportFailures is what mcpdiag report counts of recs: the failed
// exchanges and the era fallbacks.
func reportFailures(recs []*record.Record) (failures, fallbacks int64) {
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	s := acc.Summary()
	return s.Exchanges.Failures, s.Exchanges.EraFallbacks
}

// TestProxiedEraFallbackRowsAgreeWithReport: the refused 2026-07-28 probes
// that mcpdiag report links to their client's initialize when it reads a
// proxy's records (counted as era fallbacks, not failures) are not failed
// rows on the static page either, and the one after which the client gave
// up is; the page's failed rows are as many as the report's failures.
// Before, every refused probe in a proxy's records was a red row (the page
// knew only the built-in client's eraFallback member).
func TestProxiedEraFallbackRowsAgreeWithReport(t *testing.T) {
	recs, want := proxiedEraProbes()
	failures, fallbacks := reportFailures(recs)
	if failures != 1 || fallbacks != 2 {
		t.Fatalf("report: %d failures, %d era fallbacks; the fixture wants 1 and 2", failures, fallbacks)
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	browser.WaitFor(t, p, "the rows", `document.querySelectorAll('#rows tr.row[data-id]').length === 5`)
	got := failedRows(t, p)
	checkFailed(t, got, want, failures)
	clickRow(t, p, "PROBE-RECORDED-LATE")
	if detail := browser.Eval[string](t, p, `document.getElementById('detail').textContent`); !strings.Contains(detail, "fell back to initialize") {
		t.Errorf("the detail of a linked era fallback does not say so: %q", detail)
	}
}

// TestLiveEraFallbackRowsAgreeWithReport: the same on the live page, for
// a page open while the records are published (the mark comes as a
// "fallback" event after the record it names, which was red until then)
// and for one opened after (the events replayed).
func TestLiveEraFallbackRowsAgreeWithReport(t *testing.T) {
	recs, want := proxiedEraProbes()
	failures, _ := reportFailures(recs)
	s, err := NewServer(ServerOptions{Title: "live"})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, s)
	early := browser.Open(t, base+s.Path())
	browser.WaitFor(t, early, "the live page", `document.body.dataset.ready === 'true' || document.getElementById('status').textContent.includes('live')`)
	for _, r := range recs {
		if err := s.Publish(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Records(); n != int64(len(recs)) {
		t.Errorf("Records() = %d, want %d (era fallback marks are not records)", n, len(recs))
	}
	for name, p := range map[string]*browser.Page{"open before": early, "opened after": browser.Open(t, base+s.Path())} {
		t.Run(name, func(t *testing.T) {
			browser.WaitFor(t, p, "the rows", `document.querySelectorAll('#rows tr.row[data-id]').length === 5 && !document.querySelector('#rows tr.row[data-id="PROBE-RECORDED-LATE"].fail')`)
			checkFailed(t, failedRows(t, p), want, failures)
		})
	}
}

func checkFailed(t *testing.T, got, want map[string]bool, failures int64) {
	t.Helper()
	var red int64
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("no row for %s", id)
			continue
		}
		if g != w {
			t.Errorf("row %s failed: %v, want %v", id, g, w)
		}
		if g {
			red++
		}
	}
	if red != failures {
		t.Errorf("%d failed rows, mcpdiag report counts %d failures", red, failures)
	}
}

// TestPublishLinksTheIDsThePageGets: a producer's records without an ID
// or a time (the encoder fills both in as it writes the line) are linked
// under the IDs of the lines the page gets: the "fallback" event names the
// refused probe's line, after the initialize's line that settled it.
// Before, Publish linked the record it was handed, whose empty ID named
// nothing on the page.
func TestPublishLinksTheIDsThePageGets(t *testing.T) {
	recs, _ := proxiedEraProbes()
	s, err := NewServer(ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[:2] { // the probe, then its initialize on the same connection
		c := *r
		c.ID, c.Time = "", time.Time{}
		if err := s.Publish(&c); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	evs := slices.Clone(s.recs)
	s.mu.Unlock()
	if len(evs) != 3 || evs[0].name != "record" || evs[1].name != "record" || evs[2].name != "fallback" {
		var names []string
		for _, e := range evs {
			names = append(names, e.name)
		}
		t.Fatalf("events %v, want record, record, fallback", names)
	}
	probe, err := record.Decode(evs[0].data)
	if err != nil {
		t.Fatal(err)
	}
	if probe.ID == "" || string(evs[2].data) != strconv.Quote(probe.ID) {
		t.Errorf("fallback event %s, want the probe line's id %q", evs[2].data, probe.ID)
	}
}
