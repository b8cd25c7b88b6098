package judge

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

var classificationRules = []Rule{
	{
		ID: "client.ran", Title: "the client ran the call: it sent a request to the server (in the era the case pins), and exited 0 unless the call failed",
		Cite:    `docs/matrix.md › Running your own client: the client makes the case's call at MCP_URL, in the era MCP_PROTOCOL names when the case pins one; a client that sends nothing, or dies (an import error, a crash), or speaks another era than the pinned one, has not been tested, whatever it printed; a non-zero exit is the client's own failure report, true only when the call failed (as mcpdiag call exits 1 on TOOL_ERROR, 3 on a protocol-layer and 4 on a transport-layer failure)`,
		Active:  true,
		Applies: withClient,
		Check: func(t *Trace) (bool, string) {
			c := t.Client
			if c.Error != "" && c.Duration == 0 {
				return false, "the client did not start: " + c.Error
			}
			if c.NotStarted {
				return false, notStarted(t)
			}
			n := 0
			for _, x := range t.Exchanges {
				if x.IsRequest() {
					n++
				}
			}
			var bad []string
			switch {
			case n == 0 && len(t.Exchanges) == 0 && c.Unsettled > 0:
				// Not "saw nothing": the server had the request, and the
				// matrix's wait for it ran out.
				bad = append(bad, fmt.Sprintf("the server was still serving %d request(s) of the client when the matrix's wait for the run's requests ended at its limit: none was judged (their lines are written late, with the warning matrix-line-late)", c.Unsettled))
			case n == 0 && len(t.Exchanges) == 0:
				bad = append(bad, "the client sent no request: the server saw nothing at its endpoint")
			case n == 0:
				bad = append(bad, fmt.Sprintf("the client sent no JSON-RPC request: %d POST(s) without a method and an id", len(t.Exchanges)))
			}
			if n > 0 {
				if w := otherEra(t); w != "" {
					bad = append(bad, w)
				}
				if w := noCall(t); w != "" {
					bad = append(bad, w)
				}
				if w := otherTool(t); w != "" {
					bad = append(bad, w)
				}
			}
			switch {
			case c.Signal != "":
				// A crash is no failure report, whatever the call's end.
				bad = append(bad, fmt.Sprintf("it died of %s, which the matrix did not send: a crash, not a failure report", c.Signal))
			case c.ExitCode != 0 && !c.Killed && !exitExpected(t) && outOfTime(t) == "":
				bad = append(bad, fmt.Sprintf("it exited with code %d, but %s", c.ExitCode, callWords(t)))
			}
			if len(bad) == 0 {
				if c.ExitCode != 0 && outOfTime(t) != "" {
					// The exit code reports the call's own limit, as
					// the printed classification does.
					if !c.Builtin {
						return true, fmt.Sprintf("%d request(s); exit code %d, at or after the time limit it was given (MCP_TIMEOUT_MS, %s)", n, c.ExitCode, FormatDuration(t.Case.Timeout))
					}
					return true, fmt.Sprintf("%d request(s); exit code %d, for the call's own time limit (%s), which ran out before it ended", n, c.ExitCode, FormatDuration(t.Case.Timeout))
				}
				return true, fmt.Sprintf("%d request(s); exit code %d", n, c.ExitCode)
			}
			ev := strings.Join(bad, "; ")
			if !strings.Contains(ev, "exited with code") && c.Signal == "" {
				ev += fmt.Sprintf("; exit code %d", c.ExitCode)
			}
			if c.Killed {
				ev += " (killed at its time limit)"
			}
			if lines := firstLines(c.Stderr); lines != "" {
				ev += "; stderr: " + lines
			} else if !c.Builtin {
				ev += "; stderr empty"
			}
			return false, ev
		},
	},
	{
		ID: "client.classification", Title: "the classification the client prints is what the server answered to its last tools/call (the scenario's expected outcome; TOOL_ERROR when the server's tool answered isError on a call no scenario fired on; else TOOL_SUCCESS when the call was answered)",
		Cite:   `docs/outcomes.md (the outcome names) and docs/scenarios.md (the outcome each scenario produces); the server's log, not the client's word, says how the last tools/call ended: a retry that recovers, or a fault on another request, ends in TOOL_SUCCESS`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			if t.Client == nil || t.Client.Outcome == "" {
				return false, "the client printed no classification"
			}
			return true, ""
		},
		// A classification the run's time limit cut is not compared: the
		// run did not test it, and is no pass (matrixna22: n/a, it
		// counted as passed).
		Untested: outOfTime,
		Check: func(t *Trace) (bool, string) {
			want, got := t.Want(), t.Client.Outcome
			last := t.lastCall()
			// A printed answer (success, a tool error, input_required) is
			// false when the server answered no tools/call, or failed it.
			if healthy(got) && !answered(last) {
				if last == nil {
					return false, fmt.Sprintf("printed %s, but no tools/call reached the server (%d POST(s)); expected %s", got, len(t.Exchanges), t.Case.Expected)
				}
				return false, fmt.Sprintf("printed %s, but the server answered the last tools/call, %s, with %s; expected %s", got, last.Label(), last.What, want)
			}
			why := "expected " + string(want)
			switch {
			case want == t.Case.Expected:
			case t.NotTested() != "" && t.clientNames() == nil:
				why = fmt.Sprintf("expected %s: the records do not show the client's declaration, and the server answered the last tools/call, %s, %s, MissingRequiredClientCapability (the scenario's %s needs the interaction)", want, last.Label(), answerWords(last), t.Case.Expected)
			case t.NotTested() != "" && slices.Contains(t.clientNames(), t.Case.NeedsCapability):
				why = fmt.Sprintf("expected %s: the client declared %s but not what the scenario's interaction needs of it, and the server answered the last tools/call, %s, %s (the scenario's %s needs the interaction)", want, t.Case.NeedsCapability, last.Label(), answerWords(last), t.Case.Expected)
			case t.NotTested() != "":
				why = fmt.Sprintf("expected %s: the client declared no %s capability, and the server answered the last tools/call, %s, %s (the scenario's %s needs the interaction)", want, t.Case.NeedsCapability, last.Label(), answerWords(last), t.Case.Expected)
			case want == classify.InputRequired && answered(last) && last.Outcome == classify.InputRequired:
				why = fmt.Sprintf("expected %s: the server answered the last tools/call, %s, with input_required, and no round answered it (the scenario's %s needs the rounds)", want, last.Label(), t.Case.Expected)
			case want == classify.ToolError && last.Fired == "":
				why = fmt.Sprintf("expected %s: the server's tool answered the last tools/call, %s, with isError true, and no scenario fired on it (the scenario expects %s only when its tool accepts the call)", want, last.Label(), t.Case.Expected)
			case len(t.Retries()) > 0:
				why = fmt.Sprintf("expected %s: a retry recovered the scenario's %s (%s answered)", want, t.Case.Expected, last.Label())
			default:
				why = fmt.Sprintf("expected %s: the scenario's %s hit another request, and %s was answered", want, t.Case.Expected, last.Label())
			}
			if got != want && want == classify.HTTPError && got == classify.AuthFailed {
				// A 401 (or 403) starts an authorization chain: a client
				// that ran it and saw it fail (the metadata names no
				// authorization server) says AUTH_FAILED, as mcpdiag call
				// does; it is as true as HTTP_ERROR.
				if x := t.lastRequest(); x != nil && (x.Status == http.StatusUnauthorized || x.Status == http.StatusForbidden) {
					return true, fmt.Sprintf("printed %s; %s: the server answered %s with HTTP %d, and the authorization chain that answer starts failed", got, why, x.Label(), x.Status)
				}
			}
			if got != want && last != nil && !answered(last) {
				why += fmt.Sprintf("; the server answered the last tools/call, %s, with %s", last.Label(), last.What)
			}
			return got == want, fmt.Sprintf("printed %s; %s", got, why)
		},
	},
}

// exitExpected reports whether a non-zero exit tells the truth: the call
// failed (its answer failed, or no tools/call was answered), or the outcome
// the client must print is not a success.
func exitExpected(t *Trace) bool {
	if !answered(t.lastCall()) {
		return true
	}
	want := t.Want()
	return want != "" && !want.Success()
}

// callWords says how the call ended, for evidence.
func callWords(t *Trace) string {
	last := t.lastCall()
	if want := t.Want(); want != "" {
		return fmt.Sprintf("the server answered the last tools/call, %s, and the case's outcome is %s", last.Label(), want)
	}
	return fmt.Sprintf("the server answered the last tools/call, %s", last.Label())
}

// firstLines returns the first lines of a client's (already redacted)
// stderr for evidence, joined with " | ": three, and the last one when
// there are more (where a traceback names its error), each cut to 160
// characters; "" when there is none.
func firstLines(s string) string {
	var ls []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ls = append(ls, cut(l, 160))
		}
	}
	if len(ls) > 4 {
		ls = append(ls[:3], "…", ls[len(ls)-1])
	}
	return strings.Join(ls, " | ")
}

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// otherEra says how the client ran a case that pins an era (MCP_PROTOCOL)
// in another one: no request of the pinned era, and requests of another;
// "" when it ran in the pinned era, the case pins none, or the requests do
// not say their era. The case was then not tested in its era, whatever its
// other rules found.
func otherEra(t *Trace) string {
	if t.Case == nil || t.Case.Protocol == "" {
		return ""
	}
	pinModern := t.Case.Protocol >= wire.Protocol2026
	var other []*Exchange
	for _, x := range t.Exchanges {
		if !x.IsRequest() {
			continue
		}
		switch {
		case pinModern && modern(x), !pinModern && legacy(x):
			return ""
		case pinModern && legacy(x), !pinModern && modern(x):
			other = append(other, x)
		}
	}
	if len(other) == 0 {
		return ""
	}
	era := wire.Protocol2026
	if pinModern {
		era = eraOf(other[0])
	}
	return fmt.Sprintf("the case pins %s (MCP_PROTOCOL), but the client sent no request of that era and %d in %s, the first %s: the case was not run in its era",
		t.Case.Protocol, len(other), era, other[0].Label())
}

// noCall says how a client ran without the case's call: it sent no
// tools/call, and every answer it got was a complete success (so nothing
// stopped it on the way: a failed answer, such as a 401 whose
// authorization the client could not complete, a hang, or a JSON-RPC
// error, may end a run before its call).
// "" when it sent a tools/call or an answer failed. The scenario's fault
// was then never met, and no other rule has anything to judge.
func noCall(t *Trace) string {
	var methods []string
	for _, x := range t.Exchanges {
		if x.Method == "tools/call" || x.Failed || x.Pending || x.Outcome != "" && !x.Outcome.Success() {
			return ""
		}
		if x.IsRequest() && !slices.Contains(methods, x.Method) {
			methods = append(methods, x.Method)
		}
	}
	if len(methods) == 0 {
		return ""
	}
	return fmt.Sprintf("the client never sent a tools/call: it sent %s, each answered, and stopped; the case's call, and the scenario's fault, were never met", strings.Join(methods, ", "))
}

// otherTool says how a client ran another call than the case's: it sent
// tools/call requests, none of them for the tool the case names
// (MCP_TOOL), or none with the case's arguments (MCP_ARGS, compared by
// argsHash, which is canonical: key order and spacing do not count). The scenario's fault may then have fired on that other
// tool, but the case (a safety probe's destructive delete_item, say) was
// not run: safety.unsafe-repeat, for one, judged a tool the case did not
// ask for. "" when a tools/call named the case's tool, the case names
// none, or the client sent no tools/call (noCall's case).
func otherTool(t *Trace) string {
	if t.Case == nil || t.Case.Tool == "" {
		return ""
	}
	var calls, others []*Exchange
	var tools []string
	for _, x := range t.Exchanges {
		if x.Method != "tools/call" || !x.IsRequest() {
			continue
		}
		if x.Tool == t.Case.Tool {
			if t.Case.ArgsHash == "" || x.ArgsHash == "" || x.ArgsHash == t.Case.ArgsHash {
				return ""
			}
			others = append(others, x)
			continue
		}
		calls = append(calls, x)
		if !slices.Contains(tools, x.Tool) {
			tools = append(tools, x.Tool)
		}
	}
	if len(others) > 0 {
		return fmt.Sprintf("the case's call is tools/call %q with the arguments of MCP_ARGS (%s), but the client's %d tools/call %q request(s) carried other arguments (the first %s: %s): the case was not run",
			t.Case.Tool, t.Case.ArgsHash, len(others), t.Case.Tool, others[0].Label(), others[0].ArgsHash)
	}
	if len(calls) == 0 {
		return ""
	}
	for i, name := range tools {
		tools[i] = strconv.Quote(name)
	}
	return fmt.Sprintf("the case's call is tools/call %q (MCP_TOOL), but the client called %s (%d tools/call request(s), the first %s) and never %q: the case was not run",
		t.Case.Tool, strings.Join(tools, ", "), len(calls), calls[0].Label(), t.Case.Tool)
}

// lastRequest is the trace's last JSON-RPC request (nil when none).
func (t *Trace) lastRequest() *Exchange {
	for i := len(t.Exchanges) - 1; i >= 0; i-- {
		if x := t.Exchanges[i]; x.IsRequest() {
			return x
		}
	}
	return nil
}

// outOfTime says why a classification is not compared with the server's
// answer (the run did not test it): the built-in client's call ran out of
// its own time limit, or a client program ran at least the limit it was
// given after its first request, on a case that does
// not hold its answer (on a loaded machine, the chain of a slow server and
// client), and what it printed differs from the server's answer, so it
// reports the limit, not the answer. "" when it is compared: a program
// that exits before its limit is compared, whatever it says of time. A
// case that holds its answer is about that limit and is compared.
func outOfTime(t *Trace) string {
	c := t.Client
	if c == nil || !c.OutOfTime || t.Case == nil || t.Case.Holds {
		return ""
	}
	want := t.Want()
	if c.Outcome == want {
		return ""
	}
	if !c.Builtin {
		// A program's own deadline cannot be seen from outside: what is
		// known is that it ran at least the limit it was given.
		return fmt.Sprintf("the client ran %s after its first request (which came %s after it started), within a second of the time limit it was given (MCP_TIMEOUT_MS, %s, the call's, whose clock starts as the request is sent) or longer: it printed %s at or after that limit, as a client that honours it reports it, not a reading of the server's answer (%s); the run did not finish within its time, so its classification was not tested",
			FormatDuration(c.Active), FormatDuration(c.Startup), FormatDuration(t.Case.Timeout), c.Outcome, want)
	}
	return fmt.Sprintf("the call's own time limit (%s) ran out before it ended: it printed %s for that limit, not for the server's answer (%s); the run did not finish within its time, so its classification was not tested",
		FormatDuration(t.Case.Timeout), c.Outcome, want)
}
