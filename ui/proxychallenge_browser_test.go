package ui

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestProxyChallengeRowsAgreeWithReport: on the page of real proxy records
// of an OAuth flow (report/testdata/designed-answers.jsonl: the built-in
// client's first tools/list answered 401 with a Bearer challenge, then its
// tools/list with the new token), read as two inputs the way mcpdiag
// report --html reads two files, the challenge answered in its own input
// is no failed row and names its answer, the same challenge in the other
// input (whose answer is in the first) is a failed row, and the failed
// rows and the count line agree with report's counts. Before, the proxy's
// 401 was a red row in both.
func TestProxyChallengeRowsAgreeWithReport(t *testing.T) {
	recs := recordtest.ReadFile(t, "../report/testdata/designed-answers.jsonl")
	var challenge, answer *record.Record
	for _, r := range recs {
		switch {
		case r.BearerChallenge():
			challenge = r
		case r.Method == "tools/list" && r.BearerSent() != "":
			answer = r
		}
	}
	if challenge == nil || answer == nil {
		t.Fatal("no 401 and answer in the file: not the file this test is about")
	}
	// The second input: the challenge again (another id), without its
	// answer, which is in the first.
	again := *challenge
	again.ID = challenge.ID + "-again"
	inputs := [][]*record.Record{recs, {&again}}

	acc := report.New(report.Options{})
	var page bytes.Buffer
	w := NewHTMLWriter(&page, HTMLOptions{Title: "two inputs"})
	var all []*record.Record
	for i, in := range inputs {
		var b bytes.Buffer
		for _, r := range in {
			line, err := record.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			all = append(all, r)
		}
		if _, err := report.Read(&b, fmt.Sprintf("input%d", i), nil, acc, w); err != nil {
			t.Fatal(err)
		}
	}
	acc.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := acc.Summary()
	if s.Exchanges.ChallengesLinked != 1 || s.Exchanges.Failures != 1 {
		t.Fatalf("the report links %d challenges, counts %d failures; want 1 and 1 (the challenge of the second input)", s.Exchanges.ChallengesLinked, s.Exchanges.Failures)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: path}).String())
	browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(all)))
	fail := browser.Eval[map[string]bool](t, p, `Object.fromEntries([...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) =>
	  [tr.dataset.id, tr.classList.contains('fail')]))`)
	var failed int64
	for _, r := range all {
		f, ok := fail[r.ID]
		if !ok {
			t.Fatalf("no row for %s", r.ID)
		}
		if f {
			failed++
		}
	}
	if fail[challenge.ID] {
		t.Errorf("the answered challenge %s is a failed row", challenge.ID)
	}
	if !fail[again.ID] {
		t.Errorf("the challenge of the second input %s, whose answer is in the first, is no failed row", again.ID)
	}
	if failed != s.Exchanges.Failures {
		t.Errorf("the page %d failed rows, report %d failures", failed, s.Exchanges.Failures)
	}
	want := fmt.Sprintf("%d of %d records · %d auth challenge answered (401/403 the client answered with a new token; not failures) · %d designed answers (405 to a GET or DELETE, 3xx to a GET; not failures)",
		len(all), len(all), s.Exchanges.AuthChallenges, s.Exchanges.DesignedAnswers)
	if got := browser.Eval[string](t, p, `document.getElementById('count').textContent`); got != want {
		t.Errorf("count line %q, want %q", got, want)
	}
	// The detail pane names the answer.
	browser.Eval[bool](t, p, fmt.Sprintf(`(document.querySelector('#rows tr.row[data-id="%s"]').click(), true)`, challenge.ID))
	browser.WaitFor(t, p, "the detail naming the answer", fmt.Sprintf(`document.getElementById('detail') && document.getElementById('detail').textContent.includes('%s')`, answer.ID))
}

// TestLiveProxyChallengeRowsAgreeWithReport: the same records published to
// the live page, one open while they are published (the mark comes as a
// "challenge" event after the answer, the 401 red until then) and one
// opened after (the events replayed): the 401 is no failed row, and the
// failed rows are report's failures.
func TestLiveProxyChallengeRowsAgreeWithReport(t *testing.T) {
	recs := recordtest.ReadFile(t, "../report/testdata/designed-answers.jsonl")
	acc := report.New(report.Options{KeepLinks: true})
	want := map[string]bool{}
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	links := acc.TakeChallengeLinks()
	if len(links) != 1 {
		t.Fatalf("report links %d challenges: not the file this test is about", len(links))
	}
	for _, r := range recs {
		want[r.ID] = r.Kind == record.KindExchange && report.Failure(r.Kind, r.Outcome) && r.DesignedAnswer() == "" && r.ID != links[0].ID
	}
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
		t.Errorf("Records() = %d, want %d (challenge marks are not records)", n, len(recs))
	}
	for name, p := range map[string]*browser.Page{"open before": early, "opened after": browser.Open(t, base+s.Path())} {
		t.Run(name, func(t *testing.T) {
			browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d && !document.querySelector('#rows tr.row[data-id="%s"].fail')`, len(recs), links[0].ID))
			checkFailed(t, failedRows(t, p), want, acc.Summary().Exchanges.Failures)
			browser.WaitFor(t, p, "the count line", `document.getElementById('count').textContent.includes(' · 1 auth challenge answered (')`)
		})
	}
}
