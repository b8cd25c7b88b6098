package retry

import (
	"fmt"
	"time"
)

// Action is what a client does next with a call. The names are stable: they
// go into diagnostic records, and scripts match on them.
type Action string

// The actions. Only Retry re-sends the same request because it failed.
// Reauthorize, Renegotiate, RefreshAndRetry and Reinitialize re-send it
// after fixing something the server rejected before acting on the request.
// ContinueInput and PollTask carry on with a call that is not finished yet.
const (
	// Done: the call finished successfully (or a notification was
	// accepted). Use the result.
	Done Action = "done"
	// Retry: send the same request again, with a new JSON-RPC id, after
	// Decision.Delay.
	Retry Action = "retry"
	// Reauthorize: get a token (HTTP 401), or a token with more scope
	// (HTTP 403 insufficient_scope; Decision.StepUp is then set), and
	// re-send the request.
	Reauthorize Action = "reauthorize"
	// Renegotiate: re-send the request at protocol revision
	// Decision.Version. When that is 2025-11-25 the client must start with
	// initialize.
	Renegotiate Action = "renegotiate"
	// RefreshAndRetry: re-read tools/list, rebuild the request's
	// Mcp-Param-* headers from the fresh input schema, and re-send.
	RefreshAndRetry Action = "refresh-and-retry"
	// Reinitialize: the 2025-11-25 session is gone (HTTP 404); run
	// initialize again and re-send the request in the new session.
	Reinitialize Action = "reinitialize"
	// Resume: the 2025-11-25 response stream broke after an event id; open
	// GET with Last-Event-ID to receive the rest instead of re-sending.
	Resume Action = "resume"
	// ContinueInput: the server needs input (MRTR input_required, or the
	// 2025-11-25 URL elicitation error). Answer it and send the next round
	// with a new id. This is a round of the same call, not a retry.
	ContinueInput Action = "continue-input"
	// PollTask: the server created a task (tasks extension). Poll tasks/get
	// for the result.
	PollTask Action = "poll-task"
	// SurfaceToModel: the tool ran and reported an error (isError: true).
	// Show it to the model, which may call again with other arguments. It is
	// never retried automatically.
	SurfaceToModel Action = "surface-to-model"
	// Fail: stop and report. Decision.Reason says why, including when a
	// retry was ruled out because it is unknown whether the tool ran.
	Fail Action = "fail"
)

// Actions lists every action, in the order of the constants.
var Actions = []Action{
	Done, Retry, Reauthorize, Renegotiate, RefreshAndRetry, Reinitialize, Resume,
	ContinueInput, PollTask, SurfaceToModel, Fail,
}

// Final reports whether the action ends the client's loop for this request:
// Done, SurfaceToModel, PollTask and Fail do; every other action is followed
// by another exchange for the same call.
func (a Action) Final() bool {
	switch a {
	case Done, SurfaceToModel, PollTask, Fail:
		return true
	}
	return false
}

// Resends reports whether the action sends the same request (method and
// arguments) to the server again: Retry, Reauthorize, Renegotiate,
// RefreshAndRetry, Reinitialize and ContinueInput do.
func (a Action) Resends() bool {
	switch a {
	case Retry, Reauthorize, Renegotiate, RefreshAndRetry, Reinitialize, ContinueInput:
		return true
	}
	return false
}

// Decision is the verdict on one response: what to do next, when, and why.
type Decision struct {
	// Action is what to do next.
	Action Action `json:"action"`
	// Delay is how long to wait before acting. It is set only for Retry and
	// Resume: a backoff with full jitter, or the server's Retry-After.
	Delay time.Duration `json:"delayNs"`
	// Reason says, in one sentence, what happened and why this action was
	// chosen. It names the limit, the header or the rule that decided.
	Reason string `json:"reason"`
	// Version is the protocol revision to use, for Renegotiate.
	Version string `json:"version,omitempty"`
	// StepUp marks a Reauthorize for more scope (HTTP 403 with
	// error="insufficient_scope"): ask for the union of the old scopes and
	// the challenge's scope.
	StepUp bool `json:"stepUp,omitempty"`
}

// String renders d on one line, such as "retry in 137ms: …" or "fail: …".
func (d Decision) String() string {
	s := string(d.Action)
	if d.Delay > 0 {
		s += " in " + d.Delay.String()
	}
	if d.Version != "" {
		s += " to " + d.Version
	}
	if d.StepUp {
		s += " (step-up)"
	}
	return fmt.Sprintf("%s: %s", s, d.Reason)
}
