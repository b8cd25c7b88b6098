package judge

import (
	"net/http"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

// Limits are the bounds some rules enforce. The zero value of a field means
// its default.
type Limits struct {
	// MaxRetries is the most automatic repeats of one request after
	// failures (DefaultMaxRetries).
	MaxRetries int `json:"maxRetries"`
	// MinBackoff is the wait below which a retry counts as immediate; a
	// request retried twice or more with every wait below it is hammering
	// (DefaultMinBackoff).
	MinBackoff time.Duration `json:"minBackoffNs"`
	// RetryAfterSlack is how much earlier than Retry-After a repeat may
	// arrive, for clock and network jitter (DefaultRetryAfterSlack).
	RetryAfterSlack time.Duration `json:"retryAfterSlackNs"`
	// LoopThreshold is how many identical calls after complete answers make
	// a loop (DefaultLoopThreshold).
	LoopThreshold int `json:"loopThreshold"`
	// RunTimeout bounds one run of an external client, from its first
	// request (DefaultRunTimeout).
	RunTimeout time.Duration `json:"runTimeoutNs"`
	// StartTimeout bounds how long an external client may take from its
	// start to its first request; one that sent none by then is stopped
	// (DefaultStartTimeout).
	StartTimeout time.Duration `json:"startTimeoutNs"`
	// LivenessGrace is added to a case's call timeout to bound a client on
	// a scenario that holds the response (DefaultLivenessGrace).
	LivenessGrace time.Duration `json:"livenessGraceNs"`
	// MaxStepUps is the most step-up rounds (re-authorization and the
	// request sent again after 403 insufficient_scope) of one request, and
	// the most authorization requests after the first such 403
	// (DefaultMaxStepUps).
	MaxStepUps int `json:"maxStepUps"`
}

// The defaults of Limits.
const (
	DefaultMaxRetries      = 3
	DefaultMinBackoff      = 10 * time.Millisecond
	DefaultRetryAfterSlack = 100 * time.Millisecond
	DefaultLoopThreshold   = 3
	DefaultRunTimeout      = 15 * time.Second
	DefaultStartTimeout    = 60 * time.Second
	DefaultLivenessGrace   = 3 * time.Second
	DefaultMaxStepUps      = 2
)

// WithDefaults returns l with each zero field set to its default.
func (l Limits) WithDefaults() Limits {
	orDefault(&l.MaxRetries, DefaultMaxRetries)
	orDefault(&l.MinBackoff, DefaultMinBackoff)
	orDefault(&l.RetryAfterSlack, DefaultRetryAfterSlack)
	orDefault(&l.LoopThreshold, DefaultLoopThreshold)
	orDefault(&l.RunTimeout, DefaultRunTimeout)
	orDefault(&l.StartTimeout, DefaultStartTimeout)
	orDefault(&l.LivenessGrace, DefaultLivenessGrace)
	orDefault(&l.MaxStepUps, DefaultMaxStepUps)
	return l
}

// orDefault sets *v to def when it is zero or negative.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// ClientRun is what the matrix saw of the client itself.
type ClientRun struct {
	// Builtin reports mcpdiag's own client; otherwise Command ran.
	Builtin bool     `json:"builtin"`
	Command []string `json:"command,omitempty"`
	// Outcome is the classification the client printed ("" when it
	// printed none).
	Outcome classify.Outcome `json:"outcome,omitempty"`
	// Duration is how long the client ran; Killed reports that the matrix
	// stopped it at a limit (Error says which).
	Duration time.Duration `json:"-"`
	Killed   bool          `json:"killed,omitempty"`
	// Startup is how long after its start the client's first request
	// arrived at the server, and Active how long it ran from then on: the
	// time the liveness bounds count. NoRequest reports a client that sent
	// no request at all (both are then 0).
	Startup   time.Duration `json:"-"`
	Active    time.Duration `json:"-"`
	NoRequest bool          `json:"noRequest,omitempty"`
	// NotStarted reports a client the matrix stopped at the start-up
	// limit (Limits.StartTimeout from its start) before it sent any
	// request: it was not tested, so client.ran fails with "did not start
	// within …" and every other rule is n/a (docs/decisions.md, matrix9).
	NotStarted bool `json:"notStarted,omitempty"`
	// Exited reports a command that ended by itself (not stopped at a
	// limit or by the end of the matrix's context).
	Exited bool `json:"-"`
	// Signal names the signal the program died of when the matrix did
	// not send it (a crash: "signal 11 (segmentation fault)"); "" when it
	// exited, or the matrix stopped it.
	Signal string `json:"signal,omitempty"`
	// ExitCode, Stdout and Stderr are the program's (capped).
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	// Error is why the client could not run, if it could not.
	Error string `json:"error,omitempty"`
	// Retries, Rounds, Recoveries and Decision are the built-in client's
	// own account of the call.
	Retries    int      `json:"retries,omitempty"`
	Rounds     int      `json:"rounds,omitempty"`
	Recoveries []string `json:"recoveries,omitempty"`
	Decision   string   `json:"decision,omitempty"`
	// OutOfTime reports a built-in client's call whose own time limit (the
	// case's Timeout) had passed when the call returned, or a client
	// program that exited by itself at or after the limit it was given
	// (MCP_TIMEOUT_MS, the call's, counted from its first request as the
	// server saw it arrive: its start-up does not count): what it printed may be its
	// deadline's (a read cut, a retry or an authorization step not made),
	// not a reading of the server's answer.
	OutOfTime bool `json:"outOfTime,omitempty"`
	// Unsettled counts the client's requests the server was still
	// serving when the matrix's wait for the run's requests ended at its
	// limit: in no verdict (their lines are written late).
	Unsettled int `json:"unsettled,omitempty"`
}

// Trace is what the rules judge: the POSTs one client sent, as the fault
// server (or a recorder) saw them, and what the client reported.
type Trace struct {
	// Name labels the trace: the case name, or the client and session of
	// the records.
	Name string
	// Case is the facts of the matrix case the trace ran; nil for records
	// judged passively.
	Case *Case
	// Exchanges are the POSTs, in arrival order.
	Exchanges []*Exchange
	// Auth are the log lines of the endpoint's authorization server
	// (mcpdiag serve's /oauth/N, with the typed auth member), in arrival
	// order: what the auth.* rules judge. Empty when the endpoint has
	// none, and for records.
	Auth []*record.Record
	// Client is what the client did; nil for records.
	Client *ClientRun
	// Safety is each tool's safety from its tools/list annotations; a tool
	// missing from it is unknown.
	Safety map[string]retry.Safety
	// Limits are the bounds the rules enforce.
	Limits Limits
	// Passive reports records judged without an injected fault.
	Passive bool
	// Probe reports the records of an mcpdiag probe run: only the probe
	// rules (Rule.Probe) run on it, which judge the server.
	Probe bool

	byKey map[string][]*Exchange
}

// attempts returns the requests with x's key, in order.
func (t *Trace) attempts(key string) []*Exchange {
	if t.byKey == nil {
		t.byKey = map[string][]*Exchange{}
		for _, x := range t.Exchanges {
			if x.IsRequest() {
				t.byKey[x.Key()] = append(t.byKey[x.Key()], x)
			}
		}
	}
	return t.byKey[key]
}

// Repeat is a request sent again (Next) after an earlier attempt with its
// key (Prev).
type Repeat struct {
	Prev, Next *Exchange
}

// Retries returns every repeat of a request whose previous attempt failed,
// in order: retries and recoveries, MRTR rounds excluded (they follow an
// answer).
func (t *Trace) Retries() []Repeat {
	var out []Repeat
	for _, x := range t.Exchanges {
		if !x.IsRequest() {
			continue
		}
		if p := t.previous(x); p != nil && p.Failed {
			out = append(out, Repeat{p, x})
		}
	}
	return out
}

// previous returns the attempt before x with x's key, or nil.
func (t *Trace) previous(x *Exchange) *Exchange {
	var prev *Exchange
	for _, a := range t.attempts(x.Key()) {
		if a == x {
			return prev
		}
		prev = a
	}
	return nil
}

// after returns the attempt after x with x's key, or nil.
func (t *Trace) after(x *Exchange) *Exchange {
	as := t.attempts(x.Key())
	for i, a := range as {
		if a == x && i+1 < len(as) {
			return as[i+1]
		}
	}
	return nil
}

// IsRound reports an MRTR round: x carries requestState or inputResponses,
// or (when its params are not known) the answer to its previous attempt
// asked for input.
func (t *Trace) IsRound(x *Exchange) bool {
	p := t.previous(x)
	if p == nil || p.Failed {
		return false
	}
	return x.Round() || p.IssuedAny || p.Outcome == classify.InputRequired
}

// safety returns a tool's safety (Unknown when the listing did not name it).
func (t *Trace) safety(tool string) retry.Safety {
	if s, ok := t.Safety[tool]; ok {
		return s
	}
	return retry.Unknown
}

// lastCall returns the last tools/call POST, or nil.
func (t *Trace) lastCall() *Exchange {
	for i := len(t.Exchanges) - 1; i >= 0; i-- {
		if t.Exchanges[i].Method == "tools/call" {
			return t.Exchanges[i]
		}
	}
	return nil
}

// CallUnseen reports that printed, a classification that says the call was
// answered (a success, a tool error, input_required), has no tools/call in
// the server's log behind it: client.classification fails it, and it is no
// observation of the case (matrix's OBSERVED is "-", not "=").
func (t *Trace) CallUnseen(printed classify.Outcome) bool {
	return healthy(printed) && t.lastCall() == nil
}

// Recovered reports that a retry recovered the call: some request was sent
// again after a failure, and the server's answer to the last tools/call did
// not fail.
func (t *Trace) Recovered() bool {
	last := t.lastCall()
	return last != nil && !last.Failed && last.Status >= 200 && last.Status < 300 && len(t.Retries()) > 0
}

// Want returns the classification a client must print, from what the
// server answered to the client's last tools/call (not from what the client
// says): when that answer finished the call (2xx, no fault that breaks the
// body), the answer's outcome: the scenario's expected one if its fault
// fired on that call and makes an answer (TOOL_ERROR, input_required);
// TOOL_ERROR when no fault fired on it and the server's own answer was a
// tool error (its record says so: the server's tool refused the call, as a
// server answers a client that declared no elicitation capability to a tool
// that needs one); else TOOL_SUCCESS, also when the fault hit another
// request or a retry recovered. When there was no tools/call, or its answer
// failed, the case's expected outcome. INPUT_REQUIRED when that answer
// asked for input (no round answered it). A run that did not test its case
// (NotTested: the client declared no capability the scenario's interaction
// needs) must print what the server answered its last tools/call without
// the interaction, its record's outcome, whether that answer finished the
// call (a tool error) or not (a 400 -32021).
func (t *Trace) Want() classify.Outcome {
	if t.Case == nil {
		return ""
	}
	last := t.lastCall()
	if last != nil && last.Outcome != "" && t.NotTested() != "" {
		// The client could not take part in the interaction, and the
		// server answered its call without it, as a server must (a tool
		// error, a 400 -32021): that answer is what it must print.
		return last.Outcome
	}
	if answered(last) {
		switch {
		case last.Outcome == classify.InputRequired:
			// The server asked for input on the last tools/call, and no
			// round answered it: the call did not complete, whatever the
			// scenario's outcome after its rounds.
			return classify.InputRequired
		case last.Fired != "" && healthy(t.Case.Expected):
			return t.Case.Expected
		case last.Fired == "" && last.Outcome == classify.ToolError:
			return classify.ToolError
		}
		return classify.ToolSuccess
	}
	return t.Case.Expected
}

// answered reports a tools/call whose answer finished it: a 2xx status and
// no fault that broke the body.
func answered(x *Exchange) bool {
	return x != nil && !x.Failed && x.Status >= 200 && x.Status < 300
}

// Posts returns the number of POSTs.
func (t *Trace) Posts() int {
	n := 0
	for _, x := range t.Exchanges {
		if x.HTTPMethod == http.MethodPost {
			n++
		}
	}
	return n
}

// Start returns when the first POST arrived (zero without one).
func (t *Trace) Start() time.Time {
	if len(t.Exchanges) == 0 {
		return time.Time{}
	}
	return t.Exchanges[0].Start
}

// Case is what the rules know of a matrix case: the facts the runner passes
// in (the judge reads no scenario catalogue).
type Case struct {
	// Name is the case name (the scenario id, a probe's "/TOOL", the era's
	// "@2025-11-25").
	Name string `json:"name"`
	// Expected is the outcome a client that does not retry must see (the
	// scenario's expected outcome).
	Expected classify.Outcome `json:"expected"`
	// Timeout is the call timeout the client was told to use.
	Timeout time.Duration `json:"timeoutNs"`
	// Holds reports a scenario that holds the response past Timeout (a hang
	// or keep-alives only): the client must give up by itself.
	Holds bool `json:"holds,omitempty"`
	// Protocol is the era the case pins (the client was told it in
	// MCP_PROTOCOL); "" when the client negotiates.
	Protocol string `json:"protocol,omitempty"`
	// Tool is the tool the case's call names (the client was told it in
	// MCP_TOOL); "" when the case names none.
	Tool string `json:"tool,omitempty"`
	// ArgsHash is the argsHash of the case's call (its tool with the
	// arguments the client was told in MCP_ARGS; docs/records.md); ""
	// when the case names no tool.
	ArgsHash string `json:"argsHash,omitempty"`
	// NeedsCapability is the client capability the scenario's interaction
	// needs (the catalogue's, a top-level ClientCapabilities name such as
	// "elicitation"); "" when it needs none. A run whose client did not
	// declare it, and in which the interaction did not take place, is
	// NotTested (client.capability).
	NeedsCapability string `json:"needsCapability,omitempty"`
}
