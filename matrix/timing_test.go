//go:build unix

package matrix_test

import (
	"bytes"
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// TestRequestThatArrivesAfterItsClientExited: a client that sends its
// tools/call's request line and exits, while a child of it (in its own
// session: the matrix's kill of the process group does not reach it)
// sends the rest 200 ms later. The server logs the request after the
// client exited. The matrix judged the endpoint 20 ms after the client
// exited: the run was "the client sent no request: the server saw nothing
// at its endpoint" and the request's log line was never written to
// --record; on a loaded machine a request still in the socket buffer did
// the same in some runs and not in others. Every run must see the
// request, write its line, and judge the same.
func TestRequestThatArrivesAfterItsClientExited(t *testing.T) {
	t.Parallel()
	var rec lines
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline"), Repeat: 3,
		Command: []string{badClient(t), "-bad", "exit-mid-request"}, Records: &rec})
	var want map[string]judge.Verdict
	for _, r := range rep.Cases[0].Runs {
		if r.Client.NoRequest || r.Trace.Posts() != 1 {
			t.Errorf("run %d: no request %v, %d POST(s); want its one tools/call", r.Repeat, r.Client.NoRequest, r.Trace.Posts())
		}
		got := map[string]judge.Verdict{}
		for _, ch := range r.Checks {
			got[ch.Rule] = ch.Verdict
			if ch.Rule == "client.ran" && ch.Verdict != judge.Pass {
				t.Errorf("run %d: client.ran %s: %s", r.Repeat, ch.Verdict, ch.Evidence)
			}
		}
		if want == nil {
			want = got
		}
		for rule, v := range got {
			if want[rule] != v {
				t.Errorf("run %d: %s %s, run 1 %s", r.Repeat, rule, v, want[rule])
			}
		}
	}
	calls := 0
	for _, l := range rec.all() {
		if bytes.Contains(l, []byte(`"method":"tools/call"`)) {
			calls++
		}
	}
	if calls != 3 {
		t.Errorf("%d tools/call line(s) in the record, want 3 (one per run)", calls)
	}
}
