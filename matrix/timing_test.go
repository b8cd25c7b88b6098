//go:build unix

package matrix_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/record"
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

// TestRequestThatArrivesAfterItsRunWasJudged: a client that sends its
// tools/call's request line and exits, while a child of it sends the rest
// 3.5 s later, after the matrix's wait for the run (3 s) ended. The run is
// judged without the request; its log line stayed in the matrix's memory
// and never reached --record. It is written once, with the warning
// matrix-line-late, and the report counts it.
func TestRequestThatArrivesAfterItsRunWasJudged(t *testing.T) {
	t.Parallel()
	var rec lines
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline"),
		Command: []string{badClient(t), "-bad", "exit-late-request"}, Records: &rec})
	r := rep.Cases[0].Runs[0]
	if !r.Client.NoRequest || r.Trace.Posts() != 0 {
		t.Errorf("no request %v, %d POST(s); want the run judged before its request came", r.Client.NoRequest, r.Trace.Posts())
	}
	if rep.LateLines != 1 {
		t.Errorf("LateLines %d, want 1", rep.LateLines)
	}
	var text strings.Builder
	if err := rep.WriteText(&text, matrix.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "\nLATE: 1 server log line(s) came after their run was judged: in no verdict; written to --record (when set) with the warning matrix-line-late.\n"; !strings.Contains(text.String(), want) {
		t.Errorf("the text report says no late line:\n%s", text.String())
	}
	var calls []*record.Record
	for _, l := range rec.all() {
		if bytes.Contains(l, []byte(`"method":"tools/call"`)) {
			got, err := record.Decode(l)
			if err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			calls = append(calls, got)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("%d tools/call line(s) in the record, want 1", len(calls))
	}
	c := calls[0]
	if c.Kind != record.KindExchange || c.Method != "tools/call" || c.Scenario != "" || c.Fault == nil || c.Fault.Selection != "baseline" || c.Fault.Endpoint != r.Endpoint || c.Status != 200 {
		t.Errorf("the late line: kind %s, fault %+v, status %d; want an exchange of %s, 200", c.Kind, c.Fault, c.Status, r.Endpoint)
	}
	if len(c.Warnings) != 1 || c.Warnings[0].Code != matrix.LateWarning {
		t.Errorf("the late line's warnings %+v, want one %s", c.Warnings, matrix.LateWarning)
	}
}

// TestClientThatExitsUnreadJudgedAlike: a client that sends its tools/call
// and closes the connection without reading the answer, ten times, and one
// that reads it first. The server's line says "no response (the client left
// first)" or 200, by whether the close or the answer came first: the same
// client was "safety.retry-bound pass: at most 0 retries" in some runs and
// "n/a: no request failed" in others (about half each). Every run must be
// judged alike, and like the client that read its answer.
func TestClientThatExitsUnreadJudgedAlike(t *testing.T) {
	t.Parallel()
	bc := badClient(t)
	cases := selectCases(t, matrix.Era2026, "baseline")
	read := run(t, matrix.Options{Cases: cases, Command: []string{bc, "-bad", "read-then-exit"}})
	unread := run(t, matrix.Options{Cases: cases, Repeat: 10, Command: []string{bc, "-bad", "exit-unread"}})
	want := map[string]judge.Check{}
	for _, ch := range read.Cases[0].Runs[0].Checks {
		want[ch.Rule] = ch
	}
	for _, r := range unread.Cases[0].Runs {
		if r.Trace.Posts() != 1 {
			t.Errorf("run %d: %d POST(s), want its one tools/call", r.Repeat, r.Trace.Posts())
		}
		for _, ch := range r.Checks {
			switch ch.Rule {
			case "safety.retry-bound", "safety.unsafe-repeat", "safety.retry-after", "safety.backoff", "spec.reissue-new-id":
				if w := want[ch.Rule]; ch.Verdict != w.Verdict || ch.Evidence != w.Evidence {
					t.Errorf("run %d: %s %s %q; the client that read its answer: %s %q", r.Repeat, ch.Rule, ch.Verdict, ch.Evidence, w.Verdict, w.Evidence)
				}
			}
		}
	}
}

// TestBuiltinClientOutOfTimeSaysSo: the built-in client whose call's own
// time limit runs out before the server's answer, on a case that does not
// hold its answer (on a loaded machine, a chain of slow exchanges: seen in
// TestAuthRulesPassTheBuiltinClient at load 18 under -race, "printed
// NETWORK_ERROR; expected TOOL_SUCCESS" and "it exited with code 4, but
// the server answered"). Made here without load: timeout.late_response
// holds its answer 3 s and the case's limit is 1 s. The client printed its
// own limit, truthfully; the verdict must say the limit ran out, not that
// the client misclassified or exited wrongly.
func TestBuiltinClientOutOfTimeSaysSo(t *testing.T) {
	t.Parallel()
	cs := selectCases(t, matrix.Era2026, "timeout.late_response")
	cs[0].Params = []byte(`{"delayMs":3000}`)
	cs[0].Timeout = time.Second
	rep := run(t, matrix.Options{Cases: cs})
	r := rep.Cases[0].Runs[0]
	if !r.Client.OutOfTime {
		t.Errorf("OutOfTime false; the client's decision: %s", r.Client.Decision)
	}
	for _, ch := range r.Checks {
		if ch.Verdict == judge.Fail {
			t.Errorf("%s failed: %s", ch.Rule, ch.Evidence)
		}
		if ch.Rule == "client.classification" && (ch.Verdict != judge.NotTested || !strings.Contains(ch.Evidence, "time limit (1s) ran out before it ended: it printed "+string(r.Client.Outcome))) {
			t.Errorf("client.classification %s %q, want not tested naming the 1s limit", ch.Verdict, ch.Evidence)
		}
		if ch.Rule == "live.finish" && !strings.Contains(ch.Evidence, "its call's own time limit (1s) ran out") {
			t.Errorf("live.finish does not say the limit ran out: %s", ch.Evidence)
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"outOfTime":true`) {
		t.Errorf("--json does not say the call ran out of time:\n%s", js.String())
	}
	// Not a pass in any view (matrixna22): the text, --json and --junit
	// count it not tested, with the reason.
	if !strings.Contains(js.String(), `"verdict":"not tested"`) || !strings.Contains(js.String(), `"notTestedRuns":1`) {
		t.Errorf("--json does not say not tested:\n%s", js.String())
	}
	var txt, ju bytes.Buffer
	if err := rep.WriteText(&txt, matrix.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "1 runs: 0 passed, 1 not tested, 0 failed.") || !strings.Contains(txt.String(), "ran out before it ended") {
		t.Errorf("the text does not count it not tested, with the reason:\n%s", txt.String())
	}
	if err := rep.WriteJUnit(&ju); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ju.String(), `<skipped message="not tested: the call&#39;s own time limit (1s) ran out`) {
		t.Errorf("--junit does not skip it with the reason:\n%s", ju.String())
	}
	if rep.Failed() {
		t.Error("the report failed: not tested is no failure of the exit status")
	}
}

// TestRequestStillServedWhenTheWaitEndsSaysSo: a client whose request's
// head reaches the server (its handler starts) and whose body comes 3.5 s
// later, after the matrix's wait for the run (3 s) ended. At load 19 the
// child of exit-mid-request started that late, and the run was judged
// "the client sent no request: the server saw nothing at its endpoint"
// while the server was serving it. The run must say what happened: the
// wait ended with the request still being served.
func TestRequestStillServedWhenTheWaitEndsSaysSo(t *testing.T) {
	t.Parallel()
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline"),
		Command: []string{badClient(t), "-bad", "exit-late-body"}})
	r := rep.Cases[0].Runs[0]
	if r.Client.NoRequest || r.Client.Unsettled != 1 || r.Trace.Posts() != 0 {
		t.Errorf("no request %v, unsettled %d, %d POST(s); want the request seen, still served, not judged", r.Client.NoRequest, r.Client.Unsettled, r.Trace.Posts())
	}
	for _, ch := range r.Checks {
		if ch.Rule == "client.ran" && (strings.Contains(ch.Evidence, "saw nothing") || !strings.Contains(ch.Evidence, "still serving 1 request(s) of the client when the matrix's wait")) {
			t.Errorf("client.ran %s: %s", ch.Verdict, ch.Evidence)
		}
	}
	if rep.LateLines != 1 {
		t.Errorf("LateLines %d, want 1", rep.LateLines)
	}
}

// TestCommandClientOutOfTimeSaysSo (truth16): a client program that honours
// MCP_TIMEOUT_MS and gives up at it, on a case whose server answers later
// (a loaded machine, made here without load: timeout.late_response holds
// its answer 3 s, the case's limit is 1 s), was judged "printed
// NETWORK_ERROR; expected TOOL_SUCCESS" and "it exited … but the server
// answered": a misclassification it did not make. The run lasted at least
// the limit the matrix gave it, so the verdict says the limit ran out, as
// for the built-in client.
func TestCommandClientOutOfTimeSaysSo(t *testing.T) {
	t.Parallel()
	cs := selectCases(t, matrix.Era2026, "timeout.late_response")
	cs[0].Params = []byte(`{"delayMs":3000}`)
	cs[0].Timeout = time.Second
	rep := run(t, matrix.Options{Cases: cs, Command: []string{badClient(t)}})
	r := rep.Cases[0].Runs[0]
	if !r.Client.OutOfTime || r.Client.Outcome != classify.NetworkError {
		t.Errorf("OutOfTime %v, printed %s after %s; want the 1s limit's NETWORK_ERROR, out of time", r.Client.OutOfTime, r.Client.Outcome, r.Client.Duration)
	}
	for _, ch := range r.Checks {
		if ch.Verdict == judge.Fail {
			t.Errorf("%s failed: %s", ch.Rule, ch.Evidence)
		}
		if ch.Rule == "client.classification" && (ch.Verdict != judge.NotTested || !strings.Contains(ch.Evidence, "MCP_TIMEOUT_MS, 1s") || !strings.Contains(ch.Evidence, "printed NETWORK_ERROR")) {
			t.Errorf("client.classification %s %q, want not tested naming the 1s limit it was given", ch.Verdict, ch.Evidence)
		}
	}
	// Not a pass (matrixna22): the run is counted not tested.
	if v := r.Verdict(); v != judge.NotTested {
		t.Errorf("run verdict %s, want not tested", v)
	}
	if tot := rep.Totals(); tot.PassedRuns() != 0 || tot.NotTestedRuns != 1 || tot.FailedRuns != 0 {
		t.Errorf("totals: %d passed, %d not tested, %d failed; want 0, 1, 0", tot.PassedRuns(), tot.NotTestedRuns, tot.FailedRuns)
	}
}

// TestCommandClientSlowStartIsNotOutOfTime (matrixna22): a client program
// that starts later than the limit it was given (a shell sleeping before
// it, as an interpreter starts under load) and then misclassifies at once
// (badclient -bad lie prints TOOL_SUCCESS for the JSON-RPC error). The
// limit (MCP_TIMEOUT_MS, the call's) counted from its process start, so
// it was "out of time": client.classification n/a, and the run passed.
// Counted from its first request, it is judged: FAIL. Should the machine
// be so loaded that the call itself outlasts the limit, the run must be
// not tested, still no pass.
func TestCommandClientSlowStartIsNotOutOfTime(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	cs := selectCases(t, matrix.Era2026, "errors.jsonrpc_error")
	cs[0].Timeout = 3 * time.Second
	rep := run(t, matrix.Options{Cases: cs, Command: []string{"sh", "-c", `sleep 4; exec "$0" "$@"`, badClient(t), "-bad", "lie"}})
	r := rep.Cases[0].Runs[0]
	if r.Client.Startup < cs[0].Timeout || r.Client.NoRequest {
		t.Fatalf("client %+v: want a first request after the 3s limit", r.Client)
	}
	ch := checkOf(t, rep, cs[0].Name, "client.classification")
	if r.Client.Active+matrix.ArrivalSlack < cs[0].Timeout {
		if r.Client.OutOfTime || ch.Verdict != judge.Fail || !strings.Contains(ch.Evidence, "printed TOOL_SUCCESS") || r.Verdict() != judge.Fail {
			t.Errorf("ran %s after a %s start-up: OutOfTime %v, client.classification %s %q, run %s; want FAIL, printed TOOL_SUCCESS",
				r.Client.Active, r.Client.Startup, r.Client.OutOfTime, ch.Verdict, ch.Evidence, r.Verdict())
		}
		if !rep.Failed() {
			t.Error("the report passed")
		}
	} else if ch.Verdict != judge.NotTested || r.Verdict() != judge.NotTested {
		t.Errorf("ran %s after its first request: client.classification %s %q, run %s; want not tested", r.Client.Active, ch.Verdict, ch.Evidence, r.Verdict())
	}
	if tot := rep.Totals(); tot.PassedRuns() != 0 {
		t.Errorf("%d run(s) passed, want none", tot.PassedRuns())
	}
}

// TestCommandClientEarlyTimeoutIsWrong (truth16): a client program that
// reports a timeout long before the limit the matrix gave it (500 ms of
// 60 s), on a case whose server answered (3 s later), misclassified: it is
// not out of time, and client.classification fails.
func TestCommandClientEarlyTimeoutIsWrong(t *testing.T) {
	t.Parallel()
	cs := selectCases(t, matrix.Era2026, "timeout.late_response")
	cs[0].Params = []byte(`{"delayMs":3000}`)
	cs[0].Timeout = time.Minute
	rep := run(t, matrix.Options{Cases: cs, Command: []string{badClient(t), "-bad", "early-timeout"}})
	r := rep.Cases[0].Runs[0]
	if r.Client.OutOfTime || r.Client.Outcome != classify.NetworkError {
		t.Errorf("OutOfTime %v, printed %s after %s; want NETWORK_ERROR, not out of time", r.Client.OutOfTime, r.Client.Outcome, r.Client.Duration)
	}
	found := false
	for _, ch := range r.Checks {
		if ch.Rule == "client.classification" {
			found = true
			if ch.Verdict != judge.Fail || !strings.Contains(ch.Evidence, "printed NETWORK_ERROR; expected TOOL_SUCCESS") {
				t.Errorf("client.classification %s %q, want FAIL: printed NETWORK_ERROR; expected TOOL_SUCCESS", ch.Verdict, ch.Evidence)
			}
		}
	}
	if !found {
		t.Error("no client.classification check")
	}
}
