package report

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// TestChallengeNotAnsweredByAnotherSessionOrCall: the real 401 of
// designedFile is not answered by a request of another session (another
// instance of the same client software, the same name and User-Agent) nor
// by a call of other arguments (a later call of the same tool, not the
// refused one re-sent), though either carried a new token and got 200: the
// challenge stays a failure. Before, both linked it (review20).
func TestChallengeNotAnsweredByAnotherSessionOrCall(t *testing.T) {
	c0, a0 := proxyChallenge(t)
	cases := []struct {
		name   string
		f      func(c, a *record.Record)
		linked int64
	}{
		{"the real answer", func(c, a *record.Record) {}, 1},
		{"another session", func(c, a *record.Record) { c.Session, a.Session = "sha256:1111111111111111", "sha256:2222222222222222" }, 0},
		{"the same session", func(c, a *record.Record) { c.Session, a.Session = "sha256:1111111111111111", "sha256:1111111111111111" }, 1},
		{"other arguments", func(c, a *record.Record) {
			c.Method, c.Tool, c.ArgsHash = "tools/call", "echo", "sha256:01"
			a.Method, a.Tool, a.ArgsHash = "tools/call", "echo", "sha256:02"
		}, 0},
		{"the same arguments", func(c, a *record.Record) {
			c.Method, c.Tool, c.ArgsHash = "tools/call", "echo", "sha256:01"
			a.Method, a.Tool, a.ArgsHash = "tools/call", "echo", "sha256:01"
		}, 1},
	}
	for _, k := range cases {
		c, a := clone(c0, c0.ID), clone(a0, a0.ID)
		k.f(c, a)
		s := countInputs(t, []*record.Record{c, a})
		ex := s.Exchanges
		if ex.ChallengesLinked != k.linked || ex.Failures != 1-k.linked {
			t.Errorf("%s: %d linked, %d failed; want %d, %d", k.name, ex.ChallengesLinked, ex.Failures, k.linked, 1-k.linked)
		}
	}
}
