package ui

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestPageFailuresAreReportsOverCorpora: over every record file the
// repository keeps (real runs of call, proxy, serve and probe, old
// versions' lines) and the proxied era probes, the page marks failed
// exactly the records mcpdiag report counts as failures, kind by kind:
// the page's rule (app.js isFailure, with the era fallbacks and the
// re-judged lines the page is told or applies) and report's cannot drift
// apart unseen. Pages of at most 40 records, so that every row is in the
// document (the table renders the rows in view and 30 either side).
func TestPageFailuresAreReportsOverCorpora(t *testing.T) {
	era, _ := proxiedEraProbes()
	corpora := map[string][]*record.Record{
		"records.jsonl":     recordtest.ReadFile(t, "testdata/records.jsonl"),
		"probe-serve.jsonl": recordtest.ReadFile(t, "../report/testdata/probe-serve.jsonl"),
		// A real matrix interrupted with a run in flight: its records
		// carry matrix-run-interrupted, counted apart, not failed.
		"matrix-interrupted.jsonl": recordtest.ReadFile(t, "../report/testdata/matrix-interrupted.jsonl"),
	}
	// The small files on one page, as mcpdiag report reads several.
	small := era
	for _, path := range []string{
		"testdata/ids.jsonl", "testdata/older-get.jsonl", "../report/testdata/pre-15d740b.jsonl",
		"../matrix/testdata/serve-e244dc8-retries.jsonl", "../matrix/testdata/serve-two-clients-503.jsonl",
		// mcpdiag call stopped by SIGINT in a held tools/call
		// (call-interrupted on each record).
		"../report/testdata/call-interrupted.jsonl",
		// mcpdiag proxy's GET and DELETE answered 405, an authorize
		// endpoint's 302: designed answers, not failed.
		"../report/testdata/designed-answers.jsonl",
	} {
		small = append(small, recordtest.ReadFile(t, path)...)
	}
	corpora["the small files and the proxied era probes"] = small
	for name, recs := range corpora {
		for start := 0; start < len(recs); start += 40 {
			page := recs[start:min(start+40, len(recs))]
			t.Run(fmt.Sprintf("%s from %d", name, start), func(t *testing.T) {
				acc := report.New(report.Options{})
				for _, r := range page {
					acc.Add(r)
				}
				acc.Close()
				s := acc.Summary()
				p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, page)}).String())
				browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(page)))
				failed := failedRows(t, p)
				byKind := map[record.Kind]int64{}
				for _, r := range page {
					if failed[r.ID] {
						byKind[r.Kind]++
					}
				}
				if got, want := byKind[record.KindExchange], s.Exchanges.Failures; got != want {
					t.Errorf("exchanges: %d failed rows, report counts %d failures", got, want)
				}
				if got, want := byKind[record.KindServer], s.Server.Failures; got != want {
					t.Errorf("server lines: %d failed rows, report counts %d failures", got, want)
				}
				if s.Calls.Orphans == 0 {
					if got, want := byKind[record.KindCall], s.Calls.Failures; got != want {
						t.Errorf("calls: %d failed rows, report counts %d failures", got, want)
					}
				}
			})
		}
	}
}
