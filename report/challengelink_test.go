package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// designedChallenge is the record in designedFile of the proxy's 401 to the
// client's first tools/list (a Bearer challenge); designedAnswerOf401 is
// its answer.
const designedChallenge = "01M98G8KN0AFRVZ1FTFEAM6KJR"

// proxyChallenge returns copies of the real 401 and of the client's
// answer in designedFile (mcpdiag proxy --preserve-host in front of mcpdiag
// serve --auth, the built-in client).
func proxyChallenge(t *testing.T) (c, a *record.Record) {
	t.Helper()
	for _, r := range recordtest.ReadFile(t, designedFile) {
		switch r.ID {
		case designedChallenge:
			c = r
		case designedAnswerOf401:
			a = r
		}
	}
	if c == nil || a == nil || !c.BearerChallenge() || !a.ChallengeFacts().Answers(c.ChallengeFacts()) {
		t.Fatal("designedFile lacks the 401 and its answer: not the file this test is about")
	}
	return c, a
}

// clone returns a deep enough copy of r with id, its headers its own.
func clone(r *record.Record, id string) *record.Record {
	x := *r
	x.ID = id
	x.RequestHeaders, x.ResponseHeaders = r.RequestHeaders.Clone(), r.ResponseHeaders.Clone()
	return &x
}

// countInputs counts the records of each input as mcpdiag report does
// (report.Read, once per input, then Close).
func countInputs(t *testing.T, inputs ...[]*record.Record) *Summary {
	t.Helper()
	acc := New(Options{})
	for i, recs := range inputs {
		var b bytes.Buffer
		for _, r := range recs {
			line, err := record.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
		}
		if _, err := Read(&b, fmt.Sprintf("input%d", i), func(bl BadLine) { t.Fatalf("bad line: %v", bl) }, acc); err != nil {
			t.Fatal(err)
		}
	}
	acc.Close()
	return acc.Summary()
}

// TestProxyChallengeAnsweredCountedApart: in real proxy records of an
// OAuth flow (designedFile: the built-in client through mcpdiag proxy
// --preserve-host in front of mcpdiag serve --auth), the 401 to the first
// tools/list, answered by the same client's tools/list with its new token,
// is counted apart as an answered challenge, named with its answer, not as
// a failure, an offender or in the gates. Before: "exchanges: 12, 1
// failed", worst offender [tools/list] HTTP_ERROR, --fail-on HTTP_ERROR
// failed on it.
func TestProxyChallengeAnsweredCountedApart(t *testing.T) {
	recs := recordtest.ReadFile(t, designedFile)
	s := countInputs(t, recs)
	ex := s.Exchanges
	if ex.Failures != 0 || ex.AuthChallenges != 1 || ex.ChallengesLinked != 1 || len(ex.WorstOffenders) != 0 {
		t.Errorf("%d failures, %d auth challenges (%d linked), offenders %+v; want 0, 1 (1), none", ex.Failures, ex.AuthChallenges, ex.ChallengesLinked, ex.WorstOffenders)
	}
	want := ChallengeLink{ID: designedChallenge, AnsweredBy: designedAnswerOf401, Method: "tools/list", Status: 401}
	if len(ex.ChallengeLinks) != 1 || ex.ChallengeLinks[0] != want {
		t.Errorf("challenge links %+v, want [%+v]", ex.ChallengeLinks, want)
	}
	for _, c := range ex.ByOutcome {
		if c.Outcome == string(classify.HTTPError) && (c.AuthChallenges != 1 || c.judged() != 0) {
			t.Errorf("HTTP_ERROR: %d auth challenges, %d judged; want 1, 0", c.AuthChallenges, c.judged())
		}
	}
	g := Gates{FailOn: []classify.Outcome{classify.HTTPError}, On: "exchange"}
	rep, err := g.Check(s)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed {
		t.Errorf("--fail-on HTTP_ERROR: %+v; want passed", rep.Failures)
	}
	var out bytes.Buffer
	if err := NewTextReporter(s).Report(&out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"exchanges: 12, 0 failed (0.0%), 1 auth challenge answered (",
		"answered challenges (the client's next such request carried a new token and was not refused): [tools/list] 401 " + designedChallenge + " answered by " + designedAnswerOf401} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the text lacks %q:\n%s", w, out.String())
		}
	}
}

// TestChallengeLinkRule: what the link takes and what it must not: the
// real 401 and its answer, changed one fact at a time, in one input or two;
// the other records of the real flow around them. Each case counts the
// challenges answered and the failures among the exchanges.
func TestChallengeLinkRule(t *testing.T) {
	c0, a0 := proxyChallenge(t)
	at := func(r *record.Record, d time.Duration) *record.Record { r.Time = c0.Time.Add(d); return r }
	// A challenge of the answer's own (a step-up: 403 insufficient_scope to
	// the request with the first token).
	stepUp := func(id string, d time.Duration, token string) *record.Record {
		r := at(clone(a0, id), d)
		r.Status, r.Outcome, r.Layer = 403, classify.HTTPError, classify.HTTPError.Layer()
		r.ResponseHeaders = http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="mcp:tools mcp:tools:write"`}}
		r.RequestHeaders.Set("Authorization", token)
		return r
	}
	withToken := func(r *record.Record, token string) *record.Record {
		r.RequestHeaders.Set("Authorization", token)
		return r
	}
	const t1, t2 = "Bearer [redacted:len=26:h=11111111]", "Bearer [redacted:len=26:h=22222222]"
	cases := []struct {
		name               string
		inputs             func(c, a *record.Record) [][]*record.Record
		answered, failures int64
	}{
		{"answered", func(c, a *record.Record) [][]*record.Record { return [][]*record.Record{{c, a}} }, 1, 0},
		{"the answer recorded before the challenge", func(c, a *record.Record) [][]*record.Record { return [][]*record.Record{{a, c}} }, 1, 0},
		{"no answer", func(c, a *record.Record) [][]*record.Record { return [][]*record.Record{{c}} }, 0, 1},
		{"the answer in another file", func(c, a *record.Record) [][]*record.Record { return [][]*record.Record{{c}, {a}} }, 0, 1},
		{"the answer in the file before", func(c, a *record.Record) [][]*record.Record { return [][]*record.Record{{a}, {c}} }, 0, 1},
		{"another client", func(c, a *record.Record) [][]*record.Record { a.Client = "other@1"; return [][]*record.Record{{c, a}} }, 0, 1},
		{"another User-Agent", func(c, a *record.Record) [][]*record.Record {
			a.RequestHeaders.Set("User-Agent", "node")
			return [][]*record.Record{{c, a}}
		}, 0, 1},
		{"another recording process", func(c, a *record.Record) [][]*record.Record { a.Conn = "0badc0de-2"; return [][]*record.Record{{c, a}} }, 0, 1},
		{"another method", func(c, a *record.Record) [][]*record.Record {
			a.Method, a.Tool = "tools/call", "echo"
			return [][]*record.Record{{c, a}}
		}, 0, 1},
		{"no token", func(c, a *record.Record) [][]*record.Record {
			a.RequestHeaders.Del("Authorization")
			return [][]*record.Record{{c, a}}
		}, 0, 1},
		{"the same token as the challenge's request", func(c, a *record.Record) [][]*record.Record {
			withToken(c, a.RequestHeaders.Get("Authorization"))
			return [][]*record.Record{{c, a}}
		}, 0, 1},
		// outsider20: another instance of the client, its token cached
		// from an earlier run, is no answer to a challenge its
		// fellow instance gave up on.
		{"the answer's token sent before the challenge", func(c, a *record.Record) [][]*record.Record {
			early := at(clone(a, "early"), -time.Second)
			return [][]*record.Record{{early, c, a}}
		}, 0, 1},
		{"the answer's token sent before the challenge, the answer recorded first", func(c, a *record.Record) [][]*record.Record {
			early := at(clone(a, "early"), -time.Second)
			return [][]*record.Record{{early, a, c}}
		}, 0, 1},
		{"the answer's token sent again after the answer", func(c, a *record.Record) [][]*record.Record {
			later := at(clone(a, "later"), time.Minute)
			return [][]*record.Record{{c, a, later}}
		}, 1, 0},
		{"an old token sent in another recording process", func(c, a *record.Record) [][]*record.Record {
			early := at(clone(a, "early"), -time.Second)
			early.Conn = "0badc0de-2"
			return [][]*record.Record{{early, c, a}}
		}, 1, 0},
		{"the retry refused 401 again, then nothing", func(c, a *record.Record) [][]*record.Record {
			a.Status, a.Outcome, a.Layer = 401, classify.HTTPError, classify.HTTPError.Layer()
			a.ResponseHeaders = c.ResponseHeaders.Clone()
			return [][]*record.Record{{c, a}}
		}, 0, 2},
		{"the retry refused 403 without a challenge", func(c, a *record.Record) [][]*record.Record {
			a.Status, a.Outcome, a.Layer, a.ResponseHeaders = 403, classify.HTTPError, classify.HTTPError.Layer(), nil
			return [][]*record.Record{{c, a}}
		}, 0, 2},
		{"the retry got no answer", func(c, a *record.Record) [][]*record.Record {
			a.Status, a.Outcome, a.Layer, a.Network = 0, classify.NetworkError, classify.NetworkError.Layer(), &record.Network{Error: "EOF", Phase: "headers", RequestSent: true}
			return [][]*record.Record{{c, a}}
		}, 0, 2},
		{"the retry started before the 401 came", func(c, a *record.Record) [][]*record.Record {
			at(a, time.Duration(c.Timings.Headers)-time.Microsecond)
			return [][]*record.Record{{c, a}}
		}, 0, 1},
		{"the answer past the window", func(c, a *record.Record) [][]*record.Record {
			at(a, ChallengeAnswerWindow+time.Second)
			return [][]*record.Record{{c, a}}
		}, 0, 1},
		{"the answer recorded first, past the window", func(c, a *record.Record) [][]*record.Record {
			at(a, ChallengeAnswerWindow+time.Second)
			return [][]*record.Record{{a, c}}
		}, 0, 1},
		{"a later request without a token first", func(c, a *record.Record) [][]*record.Record {
			bare := at(clone(a, "BARE"), time.Duration(c.Timings.Headers)+time.Microsecond)
			bare.RequestHeaders.Del("Authorization")
			return [][]*record.Record{{c, bare, a}}
		}, 0, 1},
		{"two challenges, one answer", func(c, a *record.Record) [][]*record.Record {
			c2 := at(clone(c, "C2"), time.Microsecond)
			return [][]*record.Record{{c, c2, a}}
		}, 1, 1},
		{"two challenges, two answers", func(c, a *record.Record) [][]*record.Record {
			c2 := at(clone(c, "C2"), time.Microsecond)
			a2 := at(clone(a, "A2"), a.Time.Sub(c.Time)+time.Millisecond)
			return [][]*record.Record{{c, c2, a2, a}}
		}, 2, 0},
		{"a step-up answered", func(c, a *record.Record) [][]*record.Record {
			s := stepUp("S", a.Time.Sub(c.Time), t1)
			return [][]*record.Record{{c, s, withToken(at(a, a.Time.Sub(c.Time)+time.Second), t2)}}
		}, 2, 0},
		{"a step-up never answered", func(c, a *record.Record) [][]*record.Record {
			return [][]*record.Record{{c, stepUp("S", a.Time.Sub(c.Time), t1)}}
		}, 0, 2},
		{"a step-up answered with the same token", func(c, a *record.Record) [][]*record.Record {
			s := stepUp("S", a.Time.Sub(c.Time), t1)
			return [][]*record.Record{{c, s, withToken(at(a, a.Time.Sub(c.Time)+time.Second), t1)}}
		}, 0, 2},
	}
	for _, k := range cases {
		t.Run(k.name, func(t *testing.T) {
			s := countInputs(t, k.inputs(clone(c0, c0.ID), clone(a0, a0.ID))...)
			if ex := s.Exchanges; ex.AuthChallenges != k.answered || ex.ChallengesLinked != k.answered || ex.Failures != k.failures {
				t.Errorf("%d answered challenges (%d linked), %d failures; want %d, %d", ex.AuthChallenges, ex.ChallengesLinked, ex.Failures, k.answered, k.failures)
			}
		})
	}
}

// TestChallengeLinkUnrelatedRecords: records of other clients, other
// methods, other recording processes and other kinds, put between the
// challenge and its answer in any order (and the answer before or after
// the challenge), change neither the challenges answered nor the failures
// (a metamorphic property over 200 seeded orders).
func TestChallengeLinkUnrelatedRecords(t *testing.T) {
	c0, a0 := proxyChallenge(t)
	var unrelated []*record.Record
	for _, r := range recordtest.ReadFile(t, designedFile) {
		if r.ID != c0.ID && r.ID != a0.ID && r.Method != "tools/list" {
			unrelated = append(unrelated, r) // the GET, DELETE, OAuth steps, tools/call
		}
	}
	mk := func(id string, f func(*record.Record)) {
		r := clone(c0, id)
		r.Time = c0.Time.Add(time.Duration(len(unrelated)) * time.Millisecond)
		f(r)
		unrelated = append(unrelated, r)
	}
	// Another client's challenge and its own answer, another process's
	// 401, a refused tools/call of the same client, a GET answered 401.
	mk("OTHER-C", func(r *record.Record) { r.Client = "other@1" })
	mk("OTHER-A", func(r *record.Record) {
		r.Client, r.Status, r.Outcome, r.ResponseHeaders = "other@1", 200, classify.ResultSuccess, nil
		r.RequestHeaders.Set("Authorization", "Bearer [redacted:len=9:h=abcdef01]")
		r.Time = r.Time.Add(time.Second)
	})
	mk("PROC-C", func(r *record.Record) { r.Conn = "0badc0de-1" })
	mk("CALL-C", func(r *record.Record) { r.Method, r.Tool = "tools/call", "add" })
	mk("GET-401", func(r *record.Record) { r.HTTPMethod, r.Method = http.MethodGet, "" })
	base := countInputs(t, append([]*record.Record{c0, a0}, unrelated...)).Exchanges
	if base.ChallengesLinked != 2 || base.Failures != 3 {
		t.Fatalf("base: %d linked, %d failures; want 2 (the client's and the other's) and 3 (the other process's, the tools/call's and the GET's 401s)", base.ChallengesLinked, base.Failures)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		recs := append([]*record.Record(nil), unrelated...)
		rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		// The challenge and its answer at random places, in either order.
		ci, ai := rng.IntN(len(recs)+1), 0
		recs = insertAt(recs, ci, c0)
		if rng.IntN(2) == 0 {
			ai = ci + 1 + rng.IntN(len(recs)-ci)
		} else {
			ai = rng.IntN(ci + 1)
		}
		recs = insertAt(recs, ai, a0)
		got := countInputs(t, recs).Exchanges
		if got.ChallengesLinked != base.ChallengesLinked || got.AuthChallenges != base.AuthChallenges || got.Failures != base.Failures || got.Total != base.Total {
			var order []string
			for _, r := range recs {
				order = append(order, r.ID)
			}
			t.Fatalf("order %d (%s): %d linked, %d failures of %d; want %d, %d of %d", i, strings.Join(order, " "), got.ChallengesLinked, got.Failures, got.Total, base.ChallengesLinked, base.Failures, base.Total)
		}
	}
}

func insertAt(recs []*record.Record, i int, r *record.Record) []*record.Record {
	recs = append(recs, nil)
	copy(recs[i+1:], recs[i:])
	recs[i] = r
	return recs
}

// TestLinksKeptOnlyWhenAsked: mcpdiag report reads only the Summary, so its
// Accumulator keeps no list of the linked exchanges, which would grow with
// the input in what is otherwise bounded memory. Before, 3,000 answered
// challenges and 3,000 era fallbacks left 6,000 entries held to the end.
// With Options.KeepLinks (the page, the live view) each is handed out
// once; the counts are the same either way.
func TestLinksKeptOnlyWhenAsked(t *testing.T) {
	c, a := proxyChallenge(t)
	const n = 3000
	for _, keep := range []bool{false, true} {
		acc := New(Options{KeepLinks: keep})
		for i := range n {
			acc.Add(clone(c, fmt.Sprintf("c%d", i)))
			acc.Add(clone(a, fmt.Sprintf("a%d", i)))
			for j, line := range []string{
				`{"v":2,"kind":"exchange","id":"p%d","time":"2026-12-06T09:00:00.000Z","client":"inspector@0.17","protocolVersion":"2026-07-28","scenario":"","method":"tools/list","postCount":1,"httpStatuses":[400],"jsonrpc":{"id":1,"errorCode":null},"resultType":null,"outcome":"HTTP_ERROR","retryOrigin":"none","httpMethod":"POST","status":400,"conn":"r-%d"}`,
				`{"v":2,"kind":"exchange","id":"i%d","time":"2026-12-06T09:00:00.001Z","client":"inspector@0.17","protocolVersion":"2025-11-25","scenario":"","method":"initialize","postCount":1,"httpStatuses":[200],"jsonrpc":{"id":2,"errorCode":null},"resultType":null,"outcome":"RESULT_SUCCESS","retryOrigin":"none","httpMethod":"POST","status":200,"conn":"r-%d"}`,
			} {
				r, err := record.Decode([]byte(fmt.Sprintf(line, i, i)))
				if err != nil {
					t.Fatalf("line %d: %v", j, err)
				}
				acc.Add(r)
			}
		}
		acc.Close()
		held := len(acc.challengeLinks) + len(acc.linked)
		links, fallbacks := acc.TakeChallengeLinks(), acc.TakeEraFallbacks()
		got := acc.Summary().Exchanges
		if got.ChallengesLinked != n || got.EraFallbacks != n || got.Failures != 0 {
			t.Errorf("keep %v: %d challenges linked, %d era fallbacks, %d failures; want %d, %d, 0", keep, got.ChallengesLinked, got.EraFallbacks, got.Failures, n, n)
		}
		switch {
		case !keep && held != 0:
			t.Errorf("without KeepLinks %d linked exchanges held to the end, want none", held)
		case keep && (len(links) != n || len(fallbacks) != n):
			t.Errorf("with KeepLinks %d challenge links and %d era fallbacks handed out, want %d each", len(links), len(fallbacks), n)
		}
	}
}
