package report

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// challengesFile holds the --record files of two real `mcpdiag call`s
// against `mcpdiag serve`: /s/auth.oauth/mcp (a 401 challenge, the chain
// got a token, the request re-sent, TOOL_SUCCESS) and
// /s/auth.registration_refused/mcp (a 401 challenge the client could not
// answer: registration refused, AUTH_FAILED). Made with
//
//	mcpdiag serve --addr 127.0.0.1:0 &
//	mcpdiag call BASE/s/auth.oauth/mcp echo --args '{"text":"hi"}' --record oauth.jsonl
//	mcpdiag call BASE/s/auth.registration_refused/mcp echo --args '{"text":"hi"}' --record refused.jsonl
//	cat oauth.jsonl refused.jsonl > oauth-challenges.jsonl
const challengesFile = "testdata/oauth-challenges.jsonl"

// TestAuthChallengeAnsweredCountedApart: the 401 the client answered (auth
// step challenge, decision reauthorize) is counted apart as an auth
// challenge, in the totals and its outcome, never as a failure, an example
// or a worst offender, and no gate fails on it; the 401 it could not answer
// (decision fail) and the refused registration stay failures. Before, a
// clean OAuth login's records read "exchanges: 8, 1 failed".
func TestAuthChallengeAnsweredCountedApart(t *testing.T) {
	recs := recordtest.ReadFile(t, challengesFile)
	var answered, failing int64
	ids := map[string]bool{}
	for _, r := range recs {
		if r.Kind != record.KindExchange {
			continue
		}
		switch {
		case r.Auth != nil && r.Auth.Step == "challenge" && r.Decision != nil && r.Decision.Action == "reauthorize":
			answered++
			ids[r.ID] = true
		case Failure(r.Kind, r.Outcome):
			failing++
		}
	}
	if answered != 1 || failing != 2 {
		t.Fatalf("the file holds %d answered challenges and %d other failing exchanges, want 1 and 2: not the file this test is about", answered, failing)
	}
	s := summarise(recs)
	ex := s.Exchanges
	if ex.AuthChallenges != answered || ex.Failures != failing {
		t.Errorf("exchanges: %d auth challenges, %d failures; want %d, %d", ex.AuthChallenges, ex.Failures, answered, failing)
	}
	if want := rate(failing, ex.Total-answered); ex.FailureRate != want {
		t.Errorf("failure rate %v, want %v (of the exchanges that are no answered challenge)", ex.FailureRate, want)
	}
	for _, c := range ex.ByOutcome {
		if c.Outcome == string(classify.HTTPError) && (c.AuthChallenges != answered || c.judged() != failing) {
			t.Errorf("HTTP_ERROR: count %d, %d auth challenges, %d judged; want %d and %d", c.Count, c.AuthChallenges, c.judged(), answered, failing)
		}
		for _, id := range c.Examples {
			if ids[id] {
				t.Errorf("%s's examples name %s, an answered challenge", c.Outcome, id)
			}
		}
	}
	for _, o := range ex.WorstOffenders {
		for _, id := range o.Examples {
			if ids[id] {
				t.Errorf("worst offender %s %s names %s, an answered challenge", o.Name(), o.Outcome, id)
			}
		}
	}
	if s.Calls.Failures != 1 {
		t.Errorf("calls: %d failures, want 1 (AUTH_FAILED; the OAuth call succeeded)", s.Calls.Failures)
	}
	// Only the oauth call's records: no exchange failed.
	var oauth []*record.Record
	for _, r := range recs {
		if r.CallID == recs[0].CallID || r.ID == recs[0].CallID {
			oauth = append(oauth, r)
		}
	}
	o := summarise(oauth).Exchanges
	if o.Failures != 0 || o.AuthChallenges != 1 {
		t.Errorf("the OAuth call's exchanges: %d failed, %d auth challenges; want 0 and 1 (a clean login)", o.Failures, o.AuthChallenges)
	}
	g := Gates{On: string(record.KindExchange), FailOn: []classify.Outcome{classify.HTTPError}}
	if rep, err := g.Check(summarise(oauth)); err != nil || !rep.Passed {
		t.Errorf("--gate-on exchange --fail-on HTTP_ERROR over the OAuth call: %+v, %v; want passed", rep, err)
	}
}
