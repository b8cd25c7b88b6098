package proxy_test

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestStdioInjectedRequestAnswered: stdio.garbage given a request-shaped
// line (a ping of id "inj-1") writes it to the client in the server's
// place; a client that answers it at once has its answer recorded as the
// answer to the injected request: one record, method ping, id "inj-1" with
// its type, RESULT_SUCCESS, clientAnswer, the scenario that fired and the FI
// flag, its note saying the fault injected it. A client that does not answer
// leaves the injected request recorded as not answered, FI as well. The
// call the fault fired on keeps its own record, and no record calls the JSON
// line noise. Before, the line was recorded as STDIO_NOISE ("not JSON") and
// the client's answer as a stray answer (INVALID_ENVELOPE, "answers no
// request the server sent"): a client fault where the fault was the proxy's.
func TestStdioInjectedRequestAnswered(t *testing.T) {
	t.Parallel()
	const injected = `{"jsonrpc":"2.0","id":"inj-1","method":"ping"}`
	for _, tc := range []struct {
		name     string
		answer   bool
		outcome  classify.Outcome
		note     string
		answered bool
	}{
		{"answered", true, classify.ResultSuccess, "answered by the client", true},
		{"not answered", false, classify.HTTPSuccess, "not answered: the client closed the server's stdin", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			at := &answerAtOnce{trigger: `"id":"inj-1"`, answer: `{"jsonrpc":"2.0","id":"inj-1","result":{}}`}
			if !tc.answer {
				at = nil
			}
			run := startScripted(t, proxy.StdioOptions{Faults: garbageFaults(t, injected)}, at)
			if got, want := run.talk(t, scriptedCall("2", "echo")), injected+"\n"+scriptedAnswer("2", "echo"); got != want {
				t.Fatalf("the client received %q, want %q", got, want)
			}
			run.end(t)
			var pings, calls int
			for _, rec := range run.sink.records(t) {
				switch {
				case rec.Outcome == proxy.StdioNoise:
					t.Errorf("the injected JSON line recorded as noise: %s (%s)", rec.Reason, rec.Note)
				case rec.Method == "ping":
					pings++
					if rec.Outcome != tc.outcome || rec.ClientAnswer != tc.answered || string(rec.JSONRPC.ID.Raw()) != `"inj-1"` ||
						rec.Scenario != "stdio.garbage" || !rec.Flags.Has(record.FlagFI) || !strings.Contains(rec.Note, tc.note) ||
						!strings.Contains(rec.Note, "injected by the fault (FI)") {
						t.Errorf("the injected ping's record: %s clientAnswer %v id %s scenario %q flags %v note %q reason %q; want %s, clientAnswer %v, \"inj-1\", stdio.garbage, FI, note with %q",
							rec.Outcome, rec.ClientAnswer, rec.JSONRPC.ID, rec.Scenario, rec.Flags, rec.Note, rec.Reason, tc.outcome, tc.answered, tc.note)
					}
				case rec.ClientAnswer:
					t.Errorf("a stray answer: %s %s", rec.Outcome, rec.Reason)
				case rec.Tool == "echo":
					calls++
					if rec.Outcome != classify.ToolSuccess || rec.Scenario != "stdio.garbage" {
						t.Errorf("the call's record: %s scenario %q", rec.Outcome, rec.Scenario)
					}
				}
			}
			if pings != 1 || calls != 1 {
				t.Errorf("%d records of the injected ping and %d of the call, want 1 and 1", pings, calls)
			}
		})
	}
}
