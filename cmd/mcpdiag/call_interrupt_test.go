package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// TestCallInterruptBinary: SIGINT to a real `mcpdiag call` whose read-only
// tools/call the server holds unanswered (until the interrupted client
// leaves: a condition, not a time) exits 130, prints the report (decision:
// fail, the user interrupted the call, no retry was made) and writes the
// records of what happened, the exchange's and the call's decision the
// report's. Before, it exited 4, the status of a transport-layer failure
// (the server blamed for what the user stopped), and the decision said
// "the call's time ran out before the retry" (found by newuser7: mcpdiag
// call against serve's timeout.uncooperative_hang, Ctrl-C after 1.5 s);
// then "the call was stopped (interrupt signal received) before the retry:
// retry 1 of 2 after …: the connection failed (the client cancelled the
// request)", the interrupt's own cut given as the failure a retry was for.
func TestCallInterruptBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses SIGINT")
	}
	bin := testBinary(t)
	url, got := hangingServer(t, `[{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]`,
		func(method string) bool { return method == "tools/call" })
	recs := filepath.Join(t.TempDir(), "call.jsonl")
	p := startProcess(t, nil, bin, "call", url+"/mcp", "t", "--protocol", "2026-07-28", "--record", recs)
	code := interruptWhenHung(t, p, got, "tools/call")
	out := p.stdout.String()
	if code != 130 {
		t.Errorf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out, p.stderr.String())
	}
	const decision = "the user interrupted the call while it waited for the answer to tools/call; no retry was made (the interrupt cut the request, not the server)"
	if want := "  decision:  fail — " + decision + "\n"; !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	if want := "mcpdiag: call interrupted by the user (SIGINT): no retry was made; the report and records above are what it had (its own exit status would be 4)\n"; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
	}
	b, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	var kinds, outcomes, actions []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Kind, Outcome, Method string
			Decision              struct{ Action, Reason string }
			Warnings              []struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		kinds, outcomes, actions = append(kinds, r.Kind), append(outcomes, r.Outcome), append(actions, r.Decision.Action)
		if r.Method == "tools/call" && r.Decision.Reason != decision {
			t.Errorf("the %s record's decision %q, want the report's %q", r.Kind, r.Decision.Reason, decision)
		}
		const warn = "mcpdiag call was interrupted by the user (SIGINT) while this call was in flight: its verdict is the stop's, not the server's answer"
		if n := len(r.Warnings); n == 0 || r.Warnings[n-1].Code != record.WarnCallInterrupted || r.Warnings[n-1].Message != warn {
			t.Errorf("the %s record's warnings %+v, want the last %s: %q", r.Kind, r.Warnings, record.WarnCallInterrupted, warn)
		}
	}
	if got, want := fmt.Sprint(kinds, outcomes, actions), "[exchange exchange call] [RESULT_SUCCESS NETWORK_ERROR NETWORK_ERROR] [done fail fail]"; got != want {
		t.Errorf("records %s, want %s", got, want)
	}
}
