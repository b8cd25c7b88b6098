package judge

import (
	"fmt"
	"time"
)

var livenessRules = []Rule{
	{
		ID: "live.finish", Title: "the client finishes within its time (on a hang or keep-alives only: its timeout plus a grace)",
		Cite:    `MCP 2026-07-28 Cancellation: a client that gives up closes the stream (the server treats it as cancellation); SSE keep-alive comments are not progress (WHATWG SSE); docs/retry.md › Deadline`,
		Active:  true,
		Applies: withClient,
		Check: func(t *Trace) (bool, string) {
			c := t.Client
			if c.Error != "" && c.Duration == 0 {
				return false, "the client did not run: " + c.Error
			}
			if c.NoRequest {
				ev := fmt.Sprintf("the client sent no request; it ran %s", FormatDuration(c.Duration))
				if c.Killed {
					return false, ev + "; " + c.Error
				}
				return true, ev
			}
			// Counted from the first request: a client's start-up (an
			// interpreter under load) is not its liveness.
			bound, what := livenessBound(t)
			ev := fmt.Sprintf("the client ran %s after its first request (which came %s after it started); %s", FormatDuration(c.Active), FormatDuration(c.Startup), what)
			if last := t.lastPost(); last != nil && t.Start() != (time.Time{}) {
				ev += fmt.Sprintf("; its last POST came %s after its first", FormatDuration(last.Start.Sub(t.Start())))
			}
			if c.Killed {
				return false, ev + "; the matrix killed it: " + c.Error
			}
			switch {
			case c.OutOfTime && t.Case != nil && c.Builtin:
				ev += fmt.Sprintf("; its call's own time limit (%s) ran out before the call ended", FormatDuration(t.Case.Timeout))
			case c.OutOfTime && t.Case != nil:
				ev += fmt.Sprintf("; it exited at or after the time limit it was given (MCP_TIMEOUT_MS, %s), counted from its first request", FormatDuration(t.Case.Timeout))
			}
			return c.Active <= bound, ev
		},
	},
	{
		ID: "loop.identical-calls", Title: "no loop: fewer than 3 identical calls (same tool and arguments) after complete answers",
		Cite:   `mcpdiag heuristic, not a spec MUST: the same call repeated after it was answered (not an MRTR round, not a retry) is an agent loop that costs and may act twice; docs/retry.md › isError goes to the model, which may call again with other arguments`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.Method == "tools/call" {
					return true, ""
				}
			}
			return false, "no tools/call"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			seen := map[string]bool{}
			for _, x := range t.Exchanges {
				if x.Method != "tools/call" || !x.IsRequest() || seen[x.Key()] {
					continue
				}
				seen[x.Key()] = true
				as := t.attempts(x.Key())
				loop := []*Exchange{as[0]}
				for i := 1; i < len(as); i++ {
					if !as[i-1].Failed && !t.IsRound(as[i]) {
						loop = append(loop, as[i])
					}
				}
				if len(loop) >= t.Limits.LoopThreshold {
					bad = append(bad, fmt.Sprintf("tools/call %s with the same arguments (%s) was sent %d times after complete answers: POSTs %s",
						x.Tool, short(x.ArgsHash), len(loop), posts(loop)))
				}
			}
			return verdict(bad, "no call was repeated after complete answers")
		},
	},
	{
		ID: "live.pending", Title: "no request is left pending (unanswered when the capture ended)",
		Cite:    `MCP 2026-07-28 Cancellation: a request ends with its response or is cancelled (HTTP: the client disconnects; stdio: notifications/cancelled); one that got neither was still pending when the capture ended`,
		Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.IsRequest() {
					return true, ""
				}
			}
			return false, "no request"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			for _, x := range t.Exchanges {
				if x.Pending && t.after(x) == nil {
					bad = append(bad, fmt.Sprintf("%s sent at %s was never answered: %s", x.Label(), x.Start.UTC().Format("15:04:05.000"), x.What))
				}
			}
			return verdict(bad, "every request was answered or ended by the client")
		},
	},
}

// livenessBound returns how long the client may run, and says why.
func livenessBound(t *Trace) (time.Duration, string) {
	if t.Case != nil && t.Case.Holds {
		b := t.Case.Timeout + t.Limits.LivenessGrace
		return b, fmt.Sprintf("the scenario holds the response, so it must give up within %s (its timeout %s + %s)", FormatDuration(b), FormatDuration(t.Case.Timeout), FormatDuration(t.Limits.LivenessGrace))
	}
	if t.Client.Builtin && t.Case != nil {
		b := t.Case.Timeout + t.Limits.LivenessGrace
		return b, fmt.Sprintf("the bound is %s (its timeout %s + %s)", FormatDuration(b), FormatDuration(t.Case.Timeout), FormatDuration(t.Limits.LivenessGrace))
	}
	return t.Limits.RunTimeout, fmt.Sprintf("the bound is the run timeout %s", FormatDuration(t.Limits.RunTimeout))
}

func (t *Trace) lastPost() *Exchange {
	if len(t.Exchanges) == 0 {
		return nil
	}
	return t.Exchanges[len(t.Exchanges)-1]
}
