package retry

import "time"

// The defaults of DefaultPolicy. docs/retry.md gives the flag of
// `mcpdiag call` that sets each one and the source behind it.
const (
	// DefaultMaxRetries is 2 retries, 3 attempts in all: the AWS standard
	// mode and the SRE book's per-request cap of 3 attempts.
	DefaultMaxRetries = 2
	// DefaultBackoff is the base of the exponential backoff.
	DefaultBackoff = 200 * time.Millisecond
	// DefaultMaxBackoff caps the exponential backoff before jitter.
	DefaultMaxBackoff = 5 * time.Second
	// DefaultMaxRetryAfter is the longest Retry-After honoured; a longer
	// wait fails the call.
	DefaultMaxRetryAfter = 60 * time.Second
	// DefaultMaxReauthorizations bounds re-authorizations per call: one
	// 401 then one 403 step-up (MCP authorization: "no more than a few
	// times").
	DefaultMaxReauthorizations = 2
	// DefaultMaxRecoveries bounds each of renegotiate, refresh-and-retry
	// and reinitialize to one per call.
	DefaultMaxRecoveries = 1
	// DefaultMaxInputRounds bounds MRTR rounds per call; the spec sets no
	// limit and the TypeScript and C# SDKs use 10.
	DefaultMaxInputRounds = 10
	// DefaultBudgetCapacity is the number of tokens in the retry budget of
	// DefaultPolicy (gRPC A6's example maxTokens).
	DefaultBudgetCapacity = 10
	// DefaultBudgetRefund is the tokens each healthy answer puts back (gRPC
	// A6's example tokenRatio): retries are held near one per ten healthy
	// answers once the first ten are spent.
	DefaultBudgetRefund = 0.1
)

// Policy holds the limits of the retry policy. It is a plain value: copy it,
// change fields, and share it between goroutines (only Budget has state, and
// it is safe for concurrent use).
//
// The zero Policy re-sends nothing: every limit is 0, so every failure ends
// in Fail, and only Done, SurfaceToModel and PollTask are ever decided
// otherwise. Start from DefaultPolicy.
type Policy struct {
	// MaxRetries is the most automatic retries (Action Retry) per call,
	// not counting the first attempt. 0 disables retries, and also
	// disables Resume.
	MaxRetries int `json:"maxRetries"`
	// Backoff is the base of the exponential backoff: retry n+1 waits a
	// uniform random time in [0, min(MaxBackoff, Backoff·2^n)] (full
	// jitter). 0 retries at once.
	Backoff time.Duration `json:"backoffNs"`
	// MaxBackoff caps Backoff·2^n before the jitter is drawn. 0 retries at
	// once.
	MaxBackoff time.Duration `json:"maxBackoffNs"`
	// MaxRetryAfter is the longest wait a Retry-After header on a 429 or
	// 503 may ask for. A longer wait fails the call, and the reason says
	// so; 0 accepts only Retry-After: 0.
	MaxRetryAfter time.Duration `json:"maxRetryAfterNs"`
	// MaxReauthorizations is the most Reauthorize decisions per call (401,
	// and 403 step-up together). 0 never re-authorizes.
	MaxReauthorizations int `json:"maxReauthorizations"`
	// MaxRecoveries is the most Renegotiate, RefreshAndRetry and
	// Reinitialize decisions per call, each counted on its own. 0 never
	// recovers that way.
	MaxRecoveries int `json:"maxRecoveries"`
	// MaxInputRounds is the most ContinueInput decisions per call (MRTR
	// rounds). 0 fails on the first input_required.
	MaxInputRounds int `json:"maxInputRounds"`
	// Budget is the retry budget shared by every call decided with this
	// policy; nil means no budget. Decide takes a token for each Retry and
	// deposits one refund for each healthy answer.
	Budget *Budget `json:"-"`
}

// DefaultPolicy returns the default policy with a fresh, full retry budget
// of DefaultBudgetCapacity tokens. It is a function, not a variable, so that
// two users of the defaults never share one budget by accident; call it once
// per loop of calls and share the result.
func DefaultPolicy() Policy {
	return Policy{
		MaxRetries:          DefaultMaxRetries,
		Backoff:             DefaultBackoff,
		MaxBackoff:          DefaultMaxBackoff,
		MaxRetryAfter:       DefaultMaxRetryAfter,
		MaxReauthorizations: DefaultMaxReauthorizations,
		MaxRecoveries:       DefaultMaxRecoveries,
		MaxInputRounds:      DefaultMaxInputRounds,
		Budget:              NewBudget(DefaultBudgetCapacity, DefaultBudgetRefund),
	}
}

// Sent says whether the whole request left the client. It matters only for
// NETWORK_ERROR: any other outcome means a response arrived, so the request
// reached a server.
type Sent int8

// The values of Sent.
const (
	// SentFromResult takes the answer from the result: res.Network()'s
	// RequestSent, or "sent" when the result has no network details (the
	// cautious reading).
	SentFromResult Sent = iota
	// NotSent: the client knows the request never fully left it (DNS
	// failure, connection refused, a write that failed part-way). A server
	// does not act on a partial request, so any call may be retried.
	NotSent
	// FullySent: the whole request was written; the server may have acted
	// on it.
	FullySent
)

// Facts are what the policy needs to know about one call besides the
// classified response: how far the call has gone, how safe it is to repeat,
// and the protocol it speaks. Keep one Facts per logical call, and after
// acting on each decision call Count.
type Facts struct {
	// Retries is the number of automatic retries (Action Retry) already
	// made for this call: 0 when judging the response to the first
	// attempt. Re-sends after Reauthorize, Renegotiate, RefreshAndRetry,
	// Reinitialize and ContinueInput are not retries and do not count.
	Retries int `json:"retries"`
	// Reauthorizations counts Reauthorize decisions already acted on for
	// this call (401 and 403 step-up together).
	Reauthorizations int `json:"reauthorizations,omitempty"`
	// Renegotiations counts Renegotiate decisions already acted on.
	Renegotiations int `json:"renegotiations,omitempty"`
	// Refreshes counts RefreshAndRetry decisions already acted on.
	Refreshes int `json:"refreshes,omitempty"`
	// Reinitializations counts Reinitialize decisions already acted on.
	Reinitializations int `json:"reinitializations,omitempty"`
	// Resumptions counts Resume decisions already acted on.
	Resumptions int `json:"resumptions,omitempty"`
	// InputRounds counts ContinueInput decisions already acted on (MRTR
	// rounds, and 2025-11-25 URL elicitations).
	InputRounds int `json:"inputRounds,omitempty"`

	// Safety says whether the call may run twice. "" means Unknown.
	Safety Safety `json:"safety"`
	// Sent overrides what the result says about whether the request left
	// the client (NETWORK_ERROR only).
	Sent Sent `json:"-"`
	// Protocol is the revision the request used, classify.Protocol2026 or
	// classify.Protocol2025. "" takes res.Protocol, and 2026-07-28 when
	// that is empty too.
	Protocol string `json:"protocol,omitempty"`
	// SessionHeld reports that the request carried a 2025-11-25
	// Mcp-Session-Id. An HTTP 404 then means the session expired.
	SessionHeld bool `json:"sessionHeld,omitempty"`
	// Versions are the revisions the client can speak. nil means
	// ClientVersions (both eras).
	Versions []string `json:"versions,omitempty"`
	// ParamHeaders reports that the request carried Mcp-Param-* headers,
	// so a HeaderMismatch (-32020) whose message names no header may be
	// about them.
	ParamHeaders bool `json:"paramHeaders,omitempty"`
	// LastEventID is the id of the last SSE event received on a 2025-11-25
	// response stream. When the stream broke and this is set, the decision
	// is Resume rather than a re-send; so it is when the GET resuming the
	// stream got no response (NETWORK_ERROR with this still set).
	LastEventID string `json:"lastEventId,omitempty"`
	// RetryField is the reconnection time the broken stream's SSE retry
	// field set (0 when none did). A resume waits at least this long
	// (WHATWG; 2025-11-25 clients MUST respect it), so the decision's
	// Delay, its reason and its deadline check use the longer of it and
	// the backoff.
	RetryField time.Duration `json:"retryFieldNs,omitempty"`
	// Remaining is the time left before the caller's deadline for the whole
	// call; 0 means no deadline. A wait that would reach it fails the call.
	Remaining time.Duration `json:"remainingNs,omitempty"`
	// Rand is the source of jitter; nil uses math/rand/v2's global source.
	// Seed it to make delays reproducible.
	Rand Rand `json:"-"`
}

// Count adds the decision the caller acted on to the counters in f: Retries
// for Retry, Reauthorizations for Reauthorize, and so on. Call it after
// acting on d and before deciding on the next response.
func (f *Facts) Count(d Decision) {
	switch d.Action {
	case Retry:
		f.Retries++
	case Reauthorize:
		f.Reauthorizations++
	case Renegotiate:
		f.Renegotiations++
		if d.Version != "" {
			f.Protocol = d.Version
		}
	case RefreshAndRetry:
		f.Refreshes++
	case Reinitialize:
		f.Reinitializations++
	case Resume:
		f.Resumptions++
	case ContinueInput:
		f.InputRounds++
	}
}
