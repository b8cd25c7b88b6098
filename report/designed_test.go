package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// designedFile holds real records of mcpdiag proxy: in front of mcpdiag
// serve, a GET and a DELETE of /mcp (answered 405, Allow: POST) and a
// call; with --preserve-host in front of serve --auth, a call through the
// OAuth flow (the authorize endpoint answered 302, the first tools/list
// 401, the client's tools/list with its new token answered 200: an answered
// challenge, see TestProxyChallengeAnsweredCountedApart).
const designedFile = "testdata/designed-answers.jsonl"

// designedAnswerOf401 is the record in designedFile of the client's
// tools/list with its new token, which answered the 401.
const designedAnswerOf401 = "01M98G8KNW3EZPWNTSGFKZ9HYC"

// TestDesignedAnswersCountedApart: the 405s to the GET and the DELETE and
// the 302 of the authorize endpoint are counted apart as designed answers
// (totals, by outcome), not as failures, worst offenders, examples or in
// the gates; the proxy's 401, whose answer is left out of the input here,
// stays a failure. Before: 4 failed, and --fail-on HTTP_ERROR failed on 4.
func TestDesignedAnswersCountedApart(t *testing.T) {
	recs := slices.DeleteFunc(recordtest.ReadFile(t, designedFile), func(r *record.Record) bool { return r.ID == designedAnswerOf401 })
	var designed, failing int64
	ids := map[string]bool{}
	reasons := map[record.Designed]int{}
	for _, r := range recs {
		if d := r.DesignedAnswer(); d != "" {
			designed++
			ids[r.ID] = true
			reasons[d]++
		} else if r.Kind == record.KindExchange && Failure(r.Kind, r.Outcome) {
			failing++
		}
	}
	if designed != 3 || failing != 1 || reasons[record.DesignedNoStream] != 1 || reasons[record.DesignedNoSessionEnd] != 1 || reasons[record.DesignedRedirect] != 1 {
		t.Fatalf("the file holds %d designed answers %v and %d other failing exchanges, want 3 (one of each) and 1: not the file this test is about", designed, reasons, failing)
	}
	s := summarise(recs)
	ex := s.Exchanges
	if ex.Total != int64(len(recs)) || ex.DesignedAnswers != designed || ex.Failures != failing {
		t.Errorf("exchanges: %d, %d designed answers, %d failures; want %d, %d, %d", ex.Total, ex.DesignedAnswers, ex.Failures, len(recs), designed, failing)
	}
	if want := rate(failing, ex.Total-designed); ex.FailureRate != want {
		t.Errorf("failure rate %v, want %v (of the exchanges that are no designed answer)", ex.FailureRate, want)
	}
	for _, c := range ex.ByOutcome {
		if c.Outcome == string(classify.HTTPError) && (c.Count != designed+failing || c.DesignedAnswers != designed || c.judged() != failing) {
			t.Errorf("HTTP_ERROR: count %d, %d designed answers, %d judged; want %d, %d, %d", c.Count, c.DesignedAnswers, c.judged(), designed+failing, designed, failing)
		}
		for _, id := range c.Examples {
			if ids[id] {
				t.Errorf("%s's examples name %s, a designed answer", c.Outcome, id)
			}
		}
	}
	for _, o := range ex.WorstOffenders {
		if o.Method == "" {
			t.Errorf("worst offender %+v: the designed answers have no JSON-RPC method", o)
		}
		for _, id := range o.Examples {
			if ids[id] {
				t.Errorf("worst offender %s %s names %s, a designed answer", o.Name(), o.Outcome, id)
			}
		}
	}
	g := Gates{FailOn: []classify.Outcome{classify.HTTPError}, On: "exchange"}
	rep, err := g.Check(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0].Message, "1 of 8") {
		t.Errorf("--fail-on HTTP_ERROR: %+v; want one failure, 1 of 8 exchanges (the proxy's 401)", rep.Failures)
	}
	var out bytes.Buffer
	if err := NewTextReporter(s).Report(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exchanges: 11, 1 failed (12.5%)", ", 3 designed answers (a GET or DELETE answered 405", "HTTP_ERROR 4 (3 designed answers)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, out.String())
		}
	}
}
