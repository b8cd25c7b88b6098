//go:build unix

package interop_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	judgepkg "github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// TestTypeScriptSDKHangsUnderMatrix runs a matrix client written on the
// TypeScript SDK v2 as a new user would write it (interop/node/
// ts-matrix-client.mjs: the SDK's defaults, no timeout of its own), started
// by a shell that runs node as its child (as npm scripts do), on 2025-11-25:
// errors.empty_response and sse.truncated first, then baseline. The SDK
// waits for an answer that never comes on the empty 202 and on the cut
// stream (its request timeout is 60 s). Each hanging run must end at the
// matrix's run limit (5 s after its first request, far below the SDK's
// 60 s), with live.finish failing on "killed 5s after its first request
// (the run's limit)" and no rule judging a classification it never
// printed; baseline, after them, must still run and pass; the report must
// fail; and every node process the shell started must be stopped.
func TestTypeScriptSDKHangsUnderMatrix(t *testing.T) {
	t.Parallel()
	const peer = "TS SDK v2 client 2.4.0"
	r := row{Section: 7, Order: 0, Peer: peer, Direction: "peer → mcpdiag matrix", Era: "2025-11-25",
		Scenario: "hangs on an empty 202 and a cut stream: killed at the run limit, judged so, later cases run", Route: "mcpdiag matrix -- sh -c 'node …'"}
	results.expect(t, []row{r})
	skipShort(t, "the TypeScript SDK runs on node", r)
	nt := needNode(t, r)
	var cases []matrix.Case
	for _, name := range []string{"errors.empty_response", "sse.truncated", "baseline"} {
		cs, err := matrix.Select(matrix.Cases(), []string{name}, matrix.Era2025)
		if err != nil || len(cs) == 0 {
			t.Fatalf("%s: %d case(s), %v", name, len(cs), err)
		}
		cases = append(cases, cs[0])
	}
	pids := filepath.Join(t.TempDir(), "node.pids")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := matrix.Run(ctx, matrix.Options{
		Cases:    cases,
		Command:  []string{"/bin/sh", "-c", `"$NODE" "$SCRIPT" "$1" & echo $! >> "$PIDS"; wait`, "sh"},
		Env:      append(os.Environ(), "MCPDIAG_NODE_PREFIX="+nt.prefix, "NODE="+nt.node, "SCRIPT="+filepath.Join(root, "interop", "node", "ts-matrix-client.mjs"), "PIDS="+pids),
		Parallel: 1,
		Limits:   matrix.Limits{RunTimeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, c := range rep.Cases {
		run := c.Runs[0]
		checks := map[string]judgepkg.Check{}
		for _, ch := range run.Checks {
			checks[ch.Rule] = ch
		}
		hung := c.Case.Scenario() != "baseline"
		if hung {
			if !run.Client.Killed || run.Client.NoRequest {
				bad = append(bad, c.Case.Name+": not killed after its requests: "+run.Client.Error+" stderr "+run.Client.Stderr)
			}
			if ch := checks["live.finish"]; ch.Verdict != judgepkg.Fail || !strings.Contains(ch.Evidence, "the matrix killed it: killed 5s after its first request (the run's limit)") {
				bad = append(bad, c.Case.Name+": live.finish "+string(ch.Verdict)+" "+ch.Evidence)
			}
			if ch := checks["client.classification"]; ch.Verdict != judgepkg.NotApplicable {
				bad = append(bad, c.Case.Name+": client.classification "+string(ch.Verdict)+" "+ch.Evidence)
			}
			if run.Trace.Posts() == 0 {
				bad = append(bad, c.Case.Name+": no POST")
			}
		} else if run.Client.Killed || run.Client.Outcome != "TOOL_SUCCESS" || c.Verdict() != judgepkg.Pass {
			bad = append(bad, c.Case.Name+": after the hangs: killed "+strconv.FormatBool(run.Client.Killed)+", printed "+string(run.Client.Outcome)+", verdict "+string(c.Verdict())+", stderr "+run.Client.Stderr)
		}
		for _, ch := range run.Checks {
			if ch.Verdict == judgepkg.Fail && !(hung && ch.Rule == "live.finish") {
				bad = append(bad, c.Case.Name+": "+ch.Rule+" failed: "+ch.Evidence)
			}
		}
	}
	if len(rep.Cases) != 3 {
		bad = append(bad, strconv.Itoa(len(rep.Cases))+" cases judged, want 3")
	}
	if !rep.Failed() {
		bad = append(bad, "the report passed")
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	started := strings.Fields(string(b))
	if len(started) != 3 {
		bad = append(bad, "node started "+strconv.Itoa(len(started))+" times, want 3")
	}
	for _, p := range started {
		pid, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		if killed, state := nodeKilled(pid); !killed {
			bad = append(bad, "node (pid "+p+") still runs after the matrix ended: "+state)
		}
	}
	r.Want = "each hang killed at 5s and failing live.finish only, baseline after them passing, the report failing, no node left"
	r.Got = strings.Join(bad, "; ")
	r.Pass = len(bad) == 0
	if r.Pass {
		r.Got = "as wanted"
	}
	results.add(t, r)
}

// nodeKilled reports whether process pid can no longer run, at once: it
// is gone, a zombie (its new parent reaps it in its own time), or has
// SIGKILL pending (the kill of its group was delivered; the kernel is
// tearing it down). A node the matrix did not kill runs with no SIGKILL
// pending and is reported with its state, with no wait: it used to be
// given 5 s to disappear, a fixed time a loaded machine could outlast, and
// one in which a node left running could have exited by itself. state
// says what was seen.
func nodeKilled(pid int) (killed bool, state string) {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true, "gone"
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if errors.Is(err, os.ErrNotExist) {
		return true, "gone"
	}
	if err != nil {
		return false, err.Error()
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	state = "State " + fields["State"] + ", SigPnd " + fields["SigPnd"] + ", ShdPnd " + fields["ShdPnd"]
	if strings.HasPrefix(fields["State"], "Z") || strings.HasPrefix(fields["State"], "X") {
		return true, state
	}
	const sigkill = 1 << (syscall.SIGKILL - 1)
	for _, k := range []string{"SigPnd", "ShdPnd"} {
		if mask, err := strconv.ParseUint(fields[k], 16, 64); err == nil && mask&sigkill != 0 {
			return true, state
		}
	}
	return false, state
}

// TestNodeKilledTellsRunningFromKilled: a running process (sleep, started
// or sleeping) is reported as running, with its state; the same process once SIGKILLed (not yet
// reaped: a zombie, or SIGKILL pending) and once reaped (gone) is killed.
func TestNodeKilledTellsRunningFromKilled(t *testing.T) {
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if killed, state := nodeKilled(pid); killed || !strings.HasPrefix(state, "State ") {
		t.Errorf("a running process: killed %v (%s), want running, with its state", killed, state)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if killed, state := nodeKilled(pid); !killed {
		t.Errorf("a SIGKILLed process not yet reaped: killed %v (%s)", killed, state)
	}
	_ = cmd.Wait()
	if killed, state := nodeKilled(pid); !killed || state != "gone" {
		t.Errorf("a reaped process: killed %v (%s), want gone", killed, state)
	}
}
