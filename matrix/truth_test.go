package matrix_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestClientThatNeverRan (issue 10, defect 5): a client that sends nothing
// (`false`, a Python client that dies on an import error, a script that
// only prints "outcome: TOOL_SUCCESS") fails every case with client.ran,
// whose evidence gives the exit code and the first lines of stderr,
// redacted; a client that crashes after its call fails where the call was
// answered and passes where the call failed.
func TestClientThatNeverRan(t *testing.T) {
	t.Parallel()
	falseBin, err := exec.LookPath("false")
	if err != nil {
		t.Skip("no false on PATH")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH")
	}
	const secret = "zqNeverRanx7Q2vL9w"
	importError := `echo 'connecting with Authorization: Bearer ` + secret + `' >&2
echo 'Traceback (most recent call last):' >&2
echo '  File "client.py", line 1, in <module>' >&2
echo '    from mcp import ClientSession' >&2
echo "ModuleNotFoundError: No module named 'mcp'" >&2
exit 1`
	cases := selectCases(t, matrix.Era2026, "baseline", "errors.http_status_sequence")
	tests := []struct {
		name  string
		cmd   []string
		words []string
	}{
		{"false", []string{falseBin}, []string{"sent no request", "exit code 1", "stderr empty"}},
		{"import error", []string{"sh", "-c", importError, "sh"},
			[]string{"sent no request", "exit code 1", "stderr: connecting with Authorization: Bearer [redacted:len=", "Traceback (most recent call last):", "ModuleNotFoundError: No module named 'mcp'"}},
		{"prints success only", []string{"sh", "-c", "echo outcome: TOOL_SUCCESS", "sh"}, []string{"sent no request", "exit code 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := run(t, matrix.Options{Cases: cases, Command: tt.cmd})
			if !rep.Failed() {
				t.Errorf("%s passed the matrix: %+v", tt.name, rep.Totals())
			}
			for _, c := range rep.Cases {
				ch := checkOf(t, rep, c.Case.Name, "client.ran")
				if ch.Verdict != judge.Fail {
					t.Errorf("%s: client.ran is %s (%s), want fail", c.Case.Name, ch.Verdict, ch.Evidence)
					continue
				}
				for _, w := range tt.words {
					if !strings.Contains(ch.Evidence, w) {
						t.Errorf("%s: evidence %q does not mention %q", c.Case.Name, ch.Evidence, w)
					}
				}
				if strings.Contains(ch.Evidence, secret) {
					t.Errorf("%s: the evidence leaks the client's credential: %s", c.Case.Name, ch.Evidence)
				}
			}
			if tt.name == "prints success only" {
				ch := checkOf(t, rep, "baseline", "client.classification")
				if ch.Verdict != judge.Fail || !strings.Contains(ch.Evidence, "no tools/call reached the server") {
					t.Errorf("a TOOL_SUCCESS printed without a request: client.classification %+v", ch)
				}
			}
			// A client that sent nothing observed nothing: OBSERVED is
			// "-", never "=" (as expected) for the TOOL_SUCCESS it
			// printed, in the row, both tables and the JSON.
			for _, c := range rep.Cases {
				if row := c.Row(); row.Observed != "-" {
					t.Errorf("%s: observed %q, want - (no request reached the server)", c.Case.Name, row.Observed)
				}
			}
			for _, wide := range []bool{false, true} {
				var table bytes.Buffer
				if err := rep.WriteTable(&table, wide); err != nil {
					t.Fatal(err)
				}
				for _, line := range strings.Split(table.String(), "\n") {
					f := strings.Fields(line)
					if len(f) < 3 || f[0] != "baseline" {
						continue
					}
					at := 2 // SCENARIO EXPECTED OBSERVED
					if wide {
						at = 4 // SCENARIO ERA LAYER EXPECTED OBSERVED
					}
					if obs := f[at]; obs != "-" {
						t.Errorf("wide=%v: baseline's OBSERVED is %q, want -: %q", wide, obs, line)
					}
				}
			}
			var js bytes.Buffer
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
				var v struct {
					Case     string `json:"case"`
					Observed string `json:"observed"`
				}
				if err := json.Unmarshal([]byte(line), &v); err != nil || v.Observed != "-" {
					t.Errorf("--json: %s observed %q (%v), want -", v.Case, v.Observed, err)
				}
			}
		})
	}

	t.Run("crash after the call", func(t *testing.T) {
		t.Parallel()
		rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline", "errors.header_mismatch"), Command: []string{badClient(t), "-bad=crash"}})
		failed := failedRules(rep)
		if len(failed) != 1 || len(failed["client.ran"]) != 1 || failed["client.ran"][0] != "baseline" {
			t.Errorf("failed rules %v, want client.ran in baseline only", failed)
		}
		ch := checkOf(t, rep, "baseline", "client.ran")
		for _, w := range []string{"exited with code 1", "POST 1 (tools/call echo, id 1)", "TOOL_SUCCESS", "stderr: panic: the client crashed"} {
			if !strings.Contains(ch.Evidence, w) {
				t.Errorf("evidence %q does not mention %q", ch.Evidence, w)
			}
		}
	})
}

// TestClassificationFromServersAnswer (issue 10, defect 6): the printed
// outcome is compared with what the server answered to the client's last
// tools/call. A client that prints TOOL_SUCCESS after a 400 fails; a client
// whose 2026-07-28 probe got the 503 and that fell back to initialize, with
// a tools/call that succeeded, printed the truth (client.classification
// passes) but fell back on a status that is no version signal
// (spec.era-fallback fails); after a 400 -32022 the same fall back passes.
func TestClassificationFromServersAnswer(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	tests := []struct {
		mode, scenario string
		fails          map[string][]string // rule: words of its evidence
		passes         []string
	}{
		{"lie", "baseline", map[string][]string{"client.classification": {"printed TOOL_SUCCESS", "POST 1 (tools/call echo, id 1)", "HTTP 400"}}, nil},
		{"fallback", "errors.http_status_sequence", map[string][]string{"spec.era-fallback": {"POST 2 (initialize, id 2)", "POST 1 (server/discover, id 1)", "HTTP 503", "not a version signal"}},
			[]string{"client.classification", "client.ran"}},
		{"fallback", "errors.unsupported_version", nil, []string{"spec.era-fallback", "client.classification", "client.ran"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"/"+tt.scenario, func(t *testing.T) {
			t.Parallel()
			rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, tt.scenario), Command: []string{bin, "-bad=" + tt.mode}})
			failed := failedRules(rep)
			if len(failed) != len(tt.fails) {
				t.Errorf("failed rules %v, want %d", failed, len(tt.fails))
			}
			for rule, words := range tt.fails {
				ch := checkOf(t, rep, tt.scenario, rule)
				if ch.Verdict != judge.Fail {
					t.Errorf("%s is %s (%s), want fail", rule, ch.Verdict, ch.Evidence)
					continue
				}
				for _, w := range words {
					if !strings.Contains(ch.Evidence, w) {
						t.Errorf("%s: evidence %q does not mention %q", rule, ch.Evidence, w)
					}
				}
			}
			for _, rule := range tt.passes {
				if ch := checkOf(t, rep, tt.scenario, rule); ch.Verdict != judge.Pass {
					t.Errorf("%s is %s (%s), want pass", rule, ch.Verdict, ch.Evidence)
				}
			}
		})
	}
}

// TestPinnedEraNotRun: a case pinned to 2025-11-25 (MCP_PROTOCOL) that the
// client ran in 2026-07-28 anyway (the test client speaks only 2026-07-28
// and ignores MCP_PROTOCOL; serve's endpoint answers both eras) was not
// run in its era: client.ran fails and says so, and the row does not pass.
// Before, the row "on 2025-11-25" passed every rule, as if the client had
// been tested on 2025-11-25. The same client on the unpinned case passes,
// and the built-in client, which speaks the pinned era, passes the pinned
// case.
func TestPinnedEraNotRun(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	cases := append(selectCases(t, matrix.Era2025, "baseline", "errors.tool_error"), selectCases(t, matrix.Era2026, "baseline")...)
	rep := run(t, matrix.Options{Cases: cases, Command: []string{bin}})
	for _, name := range []string{"baseline@2025-11-25", "errors.tool_error@2025-11-25"} {
		ch := checkOf(t, rep, name, "client.ran")
		if ch.Verdict != judge.Fail || !strings.Contains(ch.Evidence, "the case pins 2025-11-25 (MCP_PROTOCOL)") ||
			!strings.Contains(ch.Evidence, "2026-07-28") {
			t.Errorf("%s: client.ran %s: %s", name, ch.Verdict, ch.Evidence)
		}
	}
	if ch := checkOf(t, rep, "baseline", "client.ran"); ch.Verdict != judge.Pass {
		t.Errorf("baseline: client.ran %s: %s", ch.Verdict, ch.Evidence)
	}
	builtin := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2025, "baseline")})
	for rule, where := range failedRules(builtin) {
		t.Errorf("the built-in client on baseline@2025-11-25: %s failed in %v", rule, where)
	}
}

// TestClientThatNeverCalls: a client that lists the tools, gets a complete
// answer, and exits 0 without the case's tools/call never met the
// scenario's fault: client.ran fails every case, the safety probes too.
// Before, every case passed (the fault never fired, so no rule found
// anything). Where an answer before the call failed, a client may stop
// there (an auth chain it cannot run): that is not this.
func TestClientThatNeverCalls(t *testing.T) {
	t.Parallel()
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline", "errors.tool_error", "sse.truncated"), Command: []string{badClient(t), "-bad=list-only"}})
	if len(rep.Cases) != 4 {
		t.Fatalf("%d cases, want 4", len(rep.Cases))
	}
	for _, c := range rep.Cases {
		ch := checkOf(t, rep, c.Case.Name, "client.ran")
		if ch.Verdict != judge.Fail || !strings.Contains(ch.Evidence, "never sent a tools/call") || !strings.Contains(ch.Evidence, "tools/list") {
			t.Errorf("%s: client.ran %s: %s", c.Case.Name, ch.Verdict, ch.Evidence)
		}
	}
}

// TestClientThatCallsAnotherTool: a client that calls another tool than
// the case's (MCP_TOOL), answered, and exits 0 did not run the case: the
// safety probe sse.truncated/delete_item run with echo never tested the
// destructive call. client.ran fails every such case and names both
// tools. Before, every case passed (found by newuser8 running the matrix
// with a client that swapped the tool): the row said the probe passed.
func TestClientThatCallsAnotherTool(t *testing.T) {
	t.Parallel()
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline", "sse.truncated"), Command: []string{badClient(t), "-bad=other-tool"}})
	want := map[string]string{
		"baseline":                  `the case's call is tools/call "echo" (MCP_TOOL), but the client called "delete_item" (1 tools/call request(s), the first POST 1 (tools/call delete_item, id 1)) and never "echo": the case was not run; exit code 0; stderr empty`,
		"sse.truncated":             `the case's call is tools/call "echo" (MCP_TOOL), but the client called "delete_item" (1 tools/call request(s), the first POST 1 (tools/call delete_item, id 1)) and never "echo": the case was not run; exit code 0; stderr empty`,
		"sse.truncated/delete_item": `the case's call is tools/call "delete_item" (MCP_TOOL), but the client called "echo" (1 tools/call request(s), the first POST 1 (tools/call echo, id 1)) and never "delete_item": the case was not run; exit code 0; stderr empty`,
	}
	if len(rep.Cases) != len(want) {
		t.Fatalf("%d cases, want %d", len(rep.Cases), len(want))
	}
	for name, ev := range want {
		ch := checkOf(t, rep, name, "client.ran")
		if ch.Verdict != judge.Fail || ch.Evidence != ev {
			t.Errorf("%s: client.ran %s: %s\nwant fail: %s", name, ch.Verdict, ch.Evidence, ev)
		}
	}
	// The same client's own call is judged as before: the well-behaved
	// client on the same cases passes client.ran.
	good := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline", "sse.truncated"), Command: []string{badClient(t)}})
	for _, c := range good.Cases {
		if ch := checkOf(t, good, c.Case.Name, "client.ran"); ch.Verdict != judge.Pass {
			t.Errorf("well-behaved %s: client.ran %s: %s", c.Case.Name, ch.Verdict, ch.Evidence)
		}
	}
}

// TestClientKilledBySignal: a client that dies of a signal the matrix did
// not send (the OOM killer, a segmentation fault) crashed: client.ran fails
// it, also where its call failed and a non-zero exit would have told the
// truth (sse.truncated, a cut stream), and the evidence names the signal.
// Before, sse.truncated passed every rule with "exit code -1" (found by
// newuser8 with a client script that died of SIGSEGV while the server of
// timeout.uncooperative_hang held its call).
func TestClientKilledBySignal(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no signals")
	}
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline", "sse.truncated"), Command: []string{badClient(t), "-bad=killed"}})
	const want = "it died of signal 9 (killed), which the matrix did not send: a crash, not a failure report; stderr: the client is killed after its call"
	for _, name := range []string{"baseline", "sse.truncated", "sse.truncated/delete_item"} {
		ch := checkOf(t, rep, name, "client.ran")
		if ch.Verdict != judge.Fail || ch.Evidence != want {
			t.Errorf("%s: client.ran %s: %s\nwant fail: %s", name, ch.Verdict, ch.Evidence, want)
		}
	}
	for _, c := range rep.Cases {
		for _, r := range c.Runs {
			if r.Client.Signal != "signal 9 (killed)" || r.Client.Killed {
				t.Errorf("%s: client %+v, want Signal \"signal 9 (killed)\", not Killed", c.Case.Name, r.Client)
			}
		}
	}
}

// TestClientThatCallsWithOtherArguments: a client that calls the case's
// tool, but never with the case's arguments (MCP_ARGS), did not run the
// case's call: client.ran fails and gives both argument hashes. The
// hashes are canonical, so the well-behaved client, which sends MCP_ARGS
// as it got them, passes. Before, every case passed (newuser8: a client
// script that sent {"unexpected":1} passed all 11 cases it ran,
// elicitation.* and mrtr.* among them).
func TestClientThatCallsWithOtherArguments(t *testing.T) {
	t.Parallel()
	cases := selectCases(t, matrix.Era2026, "baseline", "sse.truncated")
	rep := run(t, matrix.Options{Cases: cases, Command: []string{badClient(t), "-bad=other-args"}})
	other := record.ArgsHash("tools/call", "echo", json.RawMessage(`{"text":"not the case's arguments","id":"item-2"}`))
	otherDel := record.ArgsHash("tools/call", "delete_item", json.RawMessage(`{"text":"not the case's arguments","id":"item-2"}`))
	want := map[string]string{
		"baseline": `the case's call is tools/call "echo" with the arguments of MCP_ARGS (` + record.ArgsHash("tools/call", "echo", json.RawMessage(`{"text":"hi"}`)) +
			`), but the client's 1 tools/call "echo" request(s) carried other arguments (the first POST 1 (tools/call echo, id 1): ` + other + `): the case was not run`,
		"sse.truncated/delete_item": `the case's call is tools/call "delete_item" with the arguments of MCP_ARGS (` + record.ArgsHash("tools/call", "delete_item", json.RawMessage(`{"id":"item-1"}`)) +
			`), but the client's 1 tools/call "delete_item" request(s) carried other arguments (the first POST 1 (tools/call delete_item, id 1): ` + otherDel + `): the case was not run`,
	}
	for name, ev := range want {
		ch := checkOf(t, rep, name, "client.ran")
		if ch.Verdict != judge.Fail || !strings.HasPrefix(ch.Evidence, ev) {
			t.Errorf("%s: client.ran %s: %s\nwant fail, starting: %s", name, ch.Verdict, ch.Evidence, ev)
		}
	}
}

// TestWrapperReportsClientCrash: a shell wrapper whose child died of
// SIGSEGV exits 139 by itself (128 + 11); the matrix reads the code as the
// shell means it, a death by signal 11, and client.ran fails the crash as
// for a client that died of the signal itself (TestClientKilledBySignal).
// Before, 139 counted as the client's own failure report, and sse.truncated
// (a failed call) passed client.ran (newuser8). A wrapper that exits 3 by
// itself is a failure report as before.
func TestWrapperReportsClientCrash(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no signals")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := badClient(t)
	// The client makes its call, then a child of the wrapper dies of
	// SIGSEGV; "exit $?" keeps the wrapper from exec'ing its last command.
	crash := []string{"sh", "-c", `"$0" "$@"; sh -c 'kill -SEGV $$'; exit $?`, bin}
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline", "sse.truncated"), Command: crash})
	const want = "it died of signal 11 (segmentation fault), as its shell reports (exit code 139), which the matrix did not send: a crash, not a failure report"
	for _, name := range []string{"baseline", "sse.truncated", "sse.truncated/delete_item"} {
		ch := checkOf(t, rep, name, "client.ran")
		if ch.Verdict != judge.Fail || !strings.HasPrefix(ch.Evidence, want) {
			t.Errorf("%s: client.ran %s: %s\nwant fail: %s", name, ch.Verdict, ch.Evidence, want)
		}
	}
	for _, c := range rep.Cases {
		for _, r := range c.Runs {
			if r.Client.Signal != "signal 11 (segmentation fault), as its shell reports (exit code 139)" || r.Client.ExitCode != 139 || r.Client.Killed {
				t.Errorf("%s: client %+v, want Signal of exit code 139, not Killed", c.Case.Name, r.Client)
			}
		}
	}
	// A wrapper's own failure report (exit 3 where the call failed) stays one.
	rep = run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "sse.truncated"), Command: []string{"sh", "-c", `"$0" "$@"; exit 3`, bin}})
	ch := checkOf(t, rep, "sse.truncated", "client.ran")
	if ch.Verdict != judge.Pass || rep.Cases[0].Runs[0].Client.Signal != "" {
		t.Errorf("sse.truncated, wrapper exiting 3: client.ran %s: %s; client %+v", ch.Verdict, ch.Evidence, rep.Cases[0].Runs[0].Client)
	}
}

// TestHeaderNamesTheRowsEra: the narrow table's header names the era of
// the rows whose name names none (2026-07-28), and names no era when every
// row runs in 2025-11-25 (`--protocol 2025-11-25`), whose rows each say
// so. Before, that header said "SCENARIO (2026-07-28)" over rows that all
// ran in 2025-11-25 (outsider18).
func TestHeaderNamesTheRowsEra(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		era, header, row string
	}{
		{matrix.Era2025, "SCENARIO                       EXPECTED", "baseline (2025-11-25)"},
		{matrix.Era2026, "SCENARIO (2026-07-28)          EXPECTED", "baseline                       TOOL_SUCCESS"},
	} {
		rep := run(t, matrix.Options{Cases: selectCases(t, tt.era, "baseline", "errors.tool_error")})
		var text bytes.Buffer
		if err := rep.WriteText(&text, matrix.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"\n" + tt.header, "\n" + tt.row} {
			if !strings.Contains(text.String(), w) {
				t.Errorf("--protocol %s: the table does not say %q:\n%s", tt.era, w, text.String())
			}
		}
	}
}

// TestClientThatNeverCalled: a client that sent a request but no tools/call
// (initialize only) and printed an answered call (TOOL_SUCCESS) observed
// nothing: OBSERVED is "-", as for a client that sent no request, beside
// client.classification's FAIL ("no tools/call reached the server"). A
// failure it printed is kept: an HTTP_ERROR printed after a 503 to its
// initialize is what the server answered. Before, baseline's OBSERVED was
// "=" (as expected), and errors.tool_error's the TOOL_SUCCESS it printed
// (the Inspector-like client of outsider20).
func TestClientThatNeverCalled(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl on PATH")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH")
	}
	script := curl + ` -s -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$MCP_URL" -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"init-only","version":"1"}}}'
case "$MCP_SCENARIO" in errors.http_status_sequence) echo "outcome: HTTP_ERROR";; *) echo "outcome: TOOL_SUCCESS";; esac`
	cases := selectCases(t, matrix.Era2025, "baseline", "errors.tool_error", "errors.http_status_sequence")
	rep := run(t, matrix.Options{Cases: cases, Command: []string{"sh", "-c", script, "sh"}})
	for _, c := range rep.Cases {
		want := "-"
		if c.Case.Scenario() == "errors.http_status_sequence" {
			want = "=" // HTTP_ERROR printed, HTTP_ERROR expected
		}
		row := c.Row()
		got := row.Observed
		if got == string(row.Expected) {
			got = "="
		}
		if got != want {
			t.Errorf("%s: observed %q, want %q (posts %d)", c.Case.Name, row.Observed, want, row.Posts)
		}
	}
}
