package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

// InputRoundsExceeded is the call-level outcome when the server keeps asking
// for input past Options.MaxRounds. The classifier never produces it: it is a
// verdict on the whole call, not on one response.
const InputRoundsExceeded = classify.InputRoundsExceeded

// ErrUsage marks a call that cannot start because of its inputs (bad URL,
// an empty tool name, arguments that are not a JSON object).
var ErrUsage = errors.New("usage")

// ErrInterrupted is the cause a program gives the context of a call it
// stops because its user interrupted it (Ctrl-C), with
// context.WithCancelCause (wrapped to say more: mcpdiag call gives
// "interrupted by the user (SIGINT)"). The call's decision then says that
// the user interrupted the call and that no retry was made, rather than
// naming the request the interrupt cut as a failure a retry would be for.
var ErrInterrupted = errors.New("interrupted by the user")

// IdleConnTimeout is how long the client keeps an idle connection for the
// next request: less than the 5 s keep-alive of Node's HTTP server, the
// shortest common one (the TypeScript SDK's servers, server-everything),
// so the client does not write a request into a connection the server is
// closing at that moment: the request would fail with "connection reset by
// peer" and be judged a NETWORK_ERROR of the server's, and a tools/call is
// not retried on it. undici, Node's own client, keeps 4 s too. Go's
// default is 90 s.
const IdleConnTimeout = 4 * time.Second

// defaultTransport is the transport of a client given no HTTPClient: Go's
// default with IdleConnTimeout, shared by every such client as Go's is.
var defaultTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.IdleConnTimeout = IdleConnTimeout
	return t
}()

// Client is a diagnostic MCP client for one endpoint. It is not safe for
// concurrent use: a call is a sequence of numbered exchanges.
type Client struct {
	opts Options
	http *http.Client
	// pol is made once per client, so its retry budget spans every call.
	pol retry.Policy

	// mu guards seq, exchanges and OnExchange calls, which the 2025-11-25
	// standalone stream's goroutine shares; answerMu serializes Inputs.
	mu        sync.Mutex
	answerMu  sync.Mutex
	seq       int
	nextID    int64
	protocol  string // the era in use; "" until decided
	eraReason string
	session   string // 2025-11-25 Mcp-Session-Id
	// sessionVersion is the revision initialize negotiated (2025-11-25 or
	// an older one the server chose).
	sessionVersion string
	tools          map[string]Tool
	toolOrder      []string            // tool names in the server's order
	excluded       map[string][]string // tool name → why its x-mcp-header annotations exclude it
	listed         bool
	// listComplete reports that the last tools/list was read to its end
	// (no page cut, no cursor loop, every page readable).
	listComplete bool
	exchanges    []*Exchange

	// auth is the OAuth flow (nil without Options.Auth, or with Bearer);
	// authFacts counts its re-authorizations for the retry policy, per
	// call.
	auth      *authState
	authFacts retry.Facts
}

// New returns a client for opts.URL.
func New(opts Options) (*Client, error) {
	if opts.URL == "" {
		return nil, fmt.Errorf("%w: no server URL", ErrUsage)
	}
	switch opts.Protocol {
	case "":
		opts.Protocol = ProtocolAuto
	case ProtocolAuto, Protocol2026, Protocol2025:
	default:
		return nil, fmt.Errorf("%w: protocol %q: must be auto, 2026-07-28 or 2025-11-25", ErrUsage, opts.Protocol)
	}
	// The client decides about every redirect itself (redirect.go), also
	// with a caller's own http.Client: a copy whose CheckRedirect hands
	// every 3xx back unfollowed.
	var hc http.Client
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	} else {
		hc.Transport = defaultTransport
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := &Client{opts: opts, http: &hc, pol: opts.policy()}
	if opts.Auth != nil && opts.Bearer == "" {
		if err := opts.Auth.validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		c.auth = newAuthState(c, *opts.Auth)
		c.auth.load()
	}
	// One bound on MRTR rounds: --max-rounds decides, whatever the policy
	// passed in says.
	c.pol.MaxInputRounds = opts.maxRounds()
	switch opts.Protocol {
	case Protocol2026, Protocol2025:
		c.protocol = opts.Protocol
		c.eraReason = "fixed by --protocol " + opts.Protocol
	}
	return c, nil
}

// Exchanges returns every exchange the client has made, in order.
func (c *Client) Exchanges() []*Exchange { return c.exchanges }

func (c *Client) newID() wire.ID {
	c.nextID++
	return wire.IntID(c.nextID)
}

// Call is the outcome of one logical tools/call.
type Call struct {
	Tool      string
	Arguments json.RawMessage
	// Protocol is the era used and EraReason why.
	Protocol  string
	EraReason string
	// Safety is the tool's safety as the retry policy saw it, and
	// SafetySource where it came from (annotations, --safe/--unsafe,
	// idempotency key, or "tool not listed").
	Safety       retry.Safety
	SafetySource string
	// Exchanges are all the exchanges of the call, set-up included.
	Exchanges []*Exchange
	// Final is the classification of the last tools/call response (or of
	// the exchange that stopped the call before tools/call was sent).
	Final *classify.Result
	// Outcome is Final's outcome, or InputRoundsExceeded.
	Outcome classify.Outcome
	// Decision is the last decision of the retry policy.
	Decision retry.Decision
	// Retries and Recoveries count what the call did. Rounds counts the
	// exchanges that answered the server's input requests as they went on
	// the wire: MRTR rounds (a tools/call with inputResponses) and the
	// answers to a 2025-11-25 server request (elicitation/create on a
	// stream), as the call record's inputRounds and the report count them.
	Retries    int
	Rounds     int
	Recoveries []string
	// Unanswered lists input request keys no answer was found for.
	Unanswered []string
	// Result is the final JSON-RPC response message (when there was one).
	Result json.RawMessage
	// Auth, when the outcome is AUTH_FAILED, says at which step of the
	// authorization chain and why.
	Auth *AuthFailure
	// LegacyTransport, when the call failed because the server speaks the
	// 2024-11-05 HTTP+SSE transport, is the path its endpoint event named
	// (Decision and EraReason say so).
	LegacyTransport string
}

// Layer returns the layer of the call's outcome.
func (c *Call) Layer() classify.Layer {
	switch c.Outcome {
	case InputRoundsExceeded:
		return classify.LayerInteraction
	case ToolExcluded:
		return classify.LayerProtocol
	case AuthFailed:
		return classify.LayerTransport
	}
	return c.Outcome.Layer()
}

// Exit codes of `mcpdiag call`, by the call's outcome.
const (
	ExitSuccess   = 0
	ExitToolError = 1
	ExitUsage     = 2
	ExitProtocol  = 3
	ExitTransport = 4
	ExitInput     = 5
)

// ExitCode maps the outcome to the documented exit code: 0 TOOL_SUCCESS, 1
// TOOL_ERROR, 3 protocol layer, 4 transport layer, 5 input required and not
// answered (or too many rounds). TASK_CREATED exits 0: the call was accepted.
func (c *Call) ExitCode() int {
	switch c.Layer() {
	case classify.LayerApplication:
		if c.Outcome == classify.ToolError {
			return ExitToolError
		}
		return ExitSuccess
	case classify.LayerInteraction:
		if c.Outcome == classify.TaskCreated {
			return ExitSuccess
		}
		return ExitInput
	case classify.LayerProtocol:
		return ExitProtocol
	}
	return ExitTransport
}

// callState is the mutable state of one logical call.
type callState struct {
	call     *Call
	facts    retry.Facts
	inputs   json.RawMessage // inputResponses for the next round
	state    json.RawMessage // requestState to echo, raw JSON string
	origin   Origin
	deadline context.Context
	// resume, when set, makes the next exchange a GET that resumes the
	// 2025-11-25 stream of the request with id resumeID after this event.
	resume   string
	resumeID wire.ID
	// retryField is the reconnection time the call's event streams set
	// (the SSE retry field), the least wait before resuming.
	retryField time.Duration
	// mrtr counts the MRTR rounds sent (the --max-rounds bound); the
	// call's Rounds counts every answering exchange at the end.
	mrtr int
}

// CallTool performs one logical tools/call of tool with args (a JSON object,
// or nil for none) and returns what happened. The error is non-nil only for
// bad inputs; every server-side failure is in the Call.
func (c *Client) CallTool(ctx context.Context, tool string, args json.RawMessage) (*Call, error) {
	if tool == "" {
		// No tool has an empty name (tool names are 1 to 128 characters):
		// sent, its refusal would be reported as the server's answer.
		return nil, fmt.Errorf("%w: the tool name is empty", ErrUsage)
	}
	if len(args) > 0 && wire.Kind(args) != '{' {
		return nil, fmt.Errorf("%w: tool arguments must be a JSON object", ErrUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	first := len(c.exchanges)
	call := &Call{Tool: tool, Arguments: args}
	st := &callState{call: call, origin: OriginNone}
	if c.opts.Rand != nil {
		st.facts.Rand = c.opts.Rand
	}
	defer func() {
		call.Exchanges = append([]*Exchange(nil), c.exchanges[first:]...)
		// An answer to a 2025-11-25 server request is sent while the
		// tools/call stream is open, so it is recorded first; order by Seq.
		sort.SliceStable(call.Exchanges, func(i, j int) bool { return call.Exchanges[i].Seq < call.Exchanges[j].Seq })
		call.Protocol, call.EraReason = c.protocol, c.eraReason
		call.Rounds = 0
		for _, ex := range call.Exchanges {
			if ex.Origin == OriginMRTR {
				call.Rounds++
			}
		}
		if call.Outcome == "" && call.Final != nil {
			call.Outcome = call.Final.Outcome
		}
		c.finishAuth(call)
	}()
	c.startAuth()

	if !c.prepare(ctx, st) {
		return call, nil
	}
	if reasons, excluded := c.excluded[tool]; excluded {
		c.excludedCall(call, reasons)
		return call, nil
	}
	call.Safety, call.SafetySource = c.safety(tool)
	st.facts.Safety = call.Safety
	pol := c.pol
	for {
		ex := c.callOnce(ctx, st)
		c.warnUnknownTool(call.Tool, ex)
		switch {
		case ex.HTTPMethod == "":
			st.retryField = ex.sse.retry
		case ex.sse.hasRetry:
			st.retryField = ex.sse.retry
		}
		st.facts.RetryField = st.retryField
		d := c.decide(ctx, pol, ex, &st.facts)
		call.Final, call.Decision = ex.Result, d
		call.Result = ex.Result.Response()
		if ex.Result.Outcome == classify.InputRequired && d.Action != retry.ContinueInput && st.mrtr >= c.opts.maxRounds() {
			call.Outcome = InputRoundsExceeded
			call.Decision.Reason = fmt.Sprintf("the server still needs input after %d MRTR rounds (--max-rounds %d): %s", st.mrtr, c.opts.maxRounds(), d.Reason)
			return call, nil
		}
		switch d.Action {
		case retry.Retry:
			if !c.sleep(ctx, d.Delay) {
				c.stoppedWaiting(ctx, call, ex, d)
				return call, nil
			}
			st.facts.Count(d)
			call.Retries++
			st.origin = OriginPolicy
		case retry.ContinueInput:
			if st.mrtr >= c.opts.maxRounds() {
				call.Outcome = InputRoundsExceeded
				call.Decision = retry.Decision{Action: retry.Fail, Reason: fmt.Sprintf("the server still needs input after %d MRTR rounds (--max-rounds %d)", st.mrtr, c.opts.maxRounds())}
				return call, nil
			}
			if !c.answerInputs(ctx, st, ex.Result) {
				return call, nil
			}
			st.facts.Count(d)
			st.mrtr++
			st.origin = OriginMRTR
		case retry.Reinitialize:
			st.facts.Count(d)
			call.Recoveries = append(call.Recoveries, "reinitialize: "+d.Reason)
			c.session = ""
			if !c.initialize(ctx, st) {
				return call, nil
			}
			st.origin = OriginPolicy
		case retry.Renegotiate:
			st.facts.Count(d)
			call.Recoveries = append(call.Recoveries, "renegotiate: "+d.Reason)
			c.protocol, c.eraReason = d.Version, "renegotiated: "+d.Reason
			if c.protocol == Protocol2025 && !c.initialize(ctx, st) {
				return call, nil
			}
			st.origin = OriginPolicy
		case retry.RefreshAndRetry:
			st.facts.Count(d)
			call.Recoveries = append(call.Recoveries, "refresh tools/list: "+d.Reason)
			c.listed = false
			if !c.listTools(ctx, st) {
				return call, nil
			}
			if reasons, excluded := c.excluded[tool]; excluded {
				c.excludedCall(call, reasons)
				return call, nil
			}
			st.origin = OriginPolicy
		case retry.Resume:
			// The stream's retry field is the least wait (WHATWG, and
			// 2025-11-25 transports: the client MUST respect it): the
			// policy judged the decision on it (Facts.RetryField).
			if !c.sleep(ctx, d.Delay) {
				c.stoppedWaiting(ctx, call, ex, d)
				return call, nil
			}
			st.facts.Count(d)
			call.Recoveries = append(call.Recoveries, "resume: "+d.Reason)
			st.resume, st.resumeID = st.facts.LastEventID, ex.ID
			st.origin = OriginPolicy
		default:
			// Done, SurfaceToModel, Fail, Reauthorize (the caller must
			// bring a new token), PollTask: the call ends with this
			// decision.
			return call, nil
		}
	}
}

// decide asks the policy about one exchange and records the decision on it.
func (c *Client) decide(ctx context.Context, pol retry.Policy, ex *Exchange, f *retry.Facts) retry.Decision {
	f.Protocol = ex.Protocol
	f.SessionHeld = ex.RequestHeader.Get("Mcp-Session-Id") != ""
	f.ParamHeaders = hasParamHeaders(ex.RequestHeader)
	// A resumed stream that broke again before any event keeps the id it
	// resumed from; a new POST starts a new stream.
	if ex.HTTPMethod == "" || ex.sse.lastEventID != "" {
		f.LastEventID = ex.sse.lastEventID
	}
	if dl, ok := ctx.Deadline(); ok {
		f.Remaining = max(0, timeUntil(dl))
	}
	d := pol.Decide(ex.Result, *f)
	if alt, ok := versionListedAnyway(pol, ex, d, *f); ok {
		d = alt
	}
	if alt, ok := c.fixedEraRefused(ex, d); ok {
		d = alt
	}
	if alt, ok := authStopped(ex); ok {
		d = alt
	}
	switch {
	case ex.outOfTime:
		d = retry.Decision{Action: retry.Fail, Reason: outOfTimeHead(c.opts.timeout()) + "; no retry or resume (the call has no time left); a longer --timeout lets it finish"}
	case ex.cutByStop:
		d = stoppedDuring(ctx, ex)
	case ctx.Err() != nil && (d.Action == retry.Retry || d.Action == retry.Resume):
		d = stoppedBefore(ctx, d)
	}
	ex.Decision = &d
	c.emit(ex)
	return d
}

// stoppedWaiting ends call, whose context ended while it waited to carry
// out d (a retry or resume) that exchange ex asked for: the call and ex
// both take stoppedBefore's decision, as the setup's exchanges do, so that
// ex's record does not announce a retry or resume that was never sent.
func (c *Client) stoppedWaiting(ctx context.Context, call *Call, ex *Exchange, d retry.Decision) {
	fail := stoppedBefore(ctx, d)
	call.Decision = fail
	c.mu.Lock()
	ex.Decision = &fail
	c.mu.Unlock()
}

// stoppedBefore is the decision of a call whose context ended (its
// --timeout, or an interrupt) before the retry or resume d could happen:
// fail, saying what stopped it and that d was not made. The exchange that
// asked for d carries this decision too, so that its record does not
// announce a retry that was never sent.
func stoppedBefore(ctx context.Context, d retry.Decision) retry.Decision {
	what := "retry"
	if d.Action == retry.Resume {
		what = "resume"
	}
	// Every stop in one form: "before the retry: retry 1 of 2 …: the
	// connection failed (a timeout passed)" read as a second failure
	// (mend17).
	return retry.Decision{Action: retry.Fail, Reason: stopWhy(ctx) + " before the " + what + ", so no " + what + " was made (it was to be: " + d.Reason + ")"}
}

// stoppedDuring is the decision on an exchange that the end of the call's
// context cut while it waited for the answer (ex.cutByStop): an interrupt,
// or the program stopping the call. The failure is the stop's, not the
// server's: nothing is retried, and the policy's reading of the cut (a
// network failure it might retry) is not given as the reason.
func stoppedDuring(ctx context.Context, ex *Exchange) retry.Decision {
	what := "the answer"
	if ex.Method != "" {
		what += " to " + ex.Method
	}
	cut := "the stop"
	if interrupted(ctx) {
		cut = "the interrupt"
	}
	return retry.Decision{Action: retry.Fail, Reason: stopWhy(ctx) + " while it waited for " + what + "; no retry was made (" + cut + " cut the request, not the server)"}
}

// stopWhy says what ended the call's context: its time limit, the user's
// interrupt (ErrInterrupted), or another stop, with its cause.
func stopWhy(ctx context.Context) string {
	err := ctx.Err()
	switch {
	case err == nil || errors.Is(err, context.DeadlineExceeded):
		return "the call's time ran out"
	case interrupted(ctx):
		return "the user interrupted the call"
	}
	why := "the call was stopped"
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		why += " (" + cause.Error() + ")"
	}
	return why
}

// interrupted reports a context its program ended because the user
// interrupted the call (ErrInterrupted).
func interrupted(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrInterrupted)
}

// emit and record may run on the 2025-11-25 standalone stream's goroutine
// too (an answer to a server request), so they hold c.mu: OnExchange is
// never called concurrently.
func (c *Client) emit(ex *Exchange) {
	if c.opts.OnExchange != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.opts.OnExchange(ex)
	}
}

func (c *Client) record(ex *Exchange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exchanges = append(c.exchanges, ex)
}

func (c *Client) nextSeq() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	return c.seq
}

// callOnce sends the tools/call of this round or retry, or resumes its
// 2025-11-25 response stream.
func (c *Client) callOnce(ctx context.Context, st *callState) *Exchange {
	call := st.call
	if st.resume != "" {
		ex := c.resumeStream(ctx, st)
		c.record(ex)
		return ex
	}
	p := map[string]json.RawMessage{}
	name, _ := json.Marshal(call.Tool)
	p["name"] = name
	if len(call.Arguments) > 0 {
		p["arguments"] = call.Arguments
	}
	if st.inputs != nil {
		p["inputResponses"] = st.inputs
	}
	if st.state != nil {
		p["requestState"] = st.state
	}
	hdr := http.Header{}
	if c.opts.IdempotencyKey != "" {
		hdr.Set("Idempotency-Key", c.opts.IdempotencyKey)
	}
	if c.protocol == Protocol2026 {
		if t, ok := c.tools[call.Tool]; ok {
			for k, v := range paramHeaders(t.InputSchema, call.Arguments) {
				hdr.Set(k, v)
			}
		}
	}
	rq := c.buildRequest("tools/call", call.Tool, p, hdr, st.origin)
	stop := c.listen(ctx)
	ex := c.send(ctx, rq)
	stop()
	c.record(ex)
	// The next round's inputs are set again by the next input_required.
	st.inputs, st.state = nil, nil
	return ex
}

// buildRequest fills in the era's headers and _meta.
func (c *Client) buildRequest(method, name string, params map[string]json.RawMessage, hdr http.Header, origin Origin) *request {
	if hdr == nil {
		hdr = http.Header{}
	}
	rq := &request{method: method, id: c.newID(), tool: name, origin: origin, protocol: c.protocol}
	if c.protocol == Protocol2026 {
		hdr.Set("MCP-Protocol-Version", Protocol2026)
		hdr.Set("Mcp-Method", method)
		if name != "" {
			hdr.Set("Mcp-Name", encodeHeaderValue(name))
		}
		meta := map[string]any{
			wire.MetaProtocolVersion:    Protocol2026,
			wire.MetaClientCapabilities: json.RawMessage(c.opts.capabilities()),
			wire.MetaClientInfo:         c.opts.clientInfo(),
		}
		mb, _ := json.Marshal(meta)
		if params == nil {
			params = map[string]json.RawMessage{}
		}
		params["_meta"] = mb
	} else if c.protocol == Protocol2025 {
		hdr.Set("MCP-Protocol-Version", c.legacyVersion())
		if c.session != "" {
			hdr.Set("Mcp-Session-Id", c.session)
		}
	}
	if params != nil {
		rq.params = marshalParams(params)
	}
	rq.header = hdr
	return rq
}

// marshalParams writes a params object with a stable member order, keeping
// raw values (requestState, arguments) byte for byte.
func marshalParams(p map[string]json.RawMessage) json.RawMessage {
	order := []string{"name", "uri", "cursor", "arguments", "inputResponses", "requestState", "protocolVersion", "capabilities", "clientInfo", "_meta"}
	var b []byte
	b = append(b, '{')
	first := true
	emit := func(k string, v json.RawMessage) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		b = append(b, v...)
	}
	seen := map[string]bool{}
	for _, k := range order {
		if v, ok := p[k]; ok {
			emit(k, v)
			seen[k] = true
		}
	}
	for k, v := range p {
		if !seen[k] {
			emit(k, v)
		}
	}
	return append(b, '}')
}

func hasParamHeaders(h http.Header) bool {
	for k := range h {
		if len(k) > 10 && http.CanonicalHeaderKey(k)[:10] == "Mcp-Param-" {
			return true
		}
	}
	return false
}

// legacyVersion is the MCP-Protocol-Version of a session-era request.
func (c *Client) legacyVersion() string {
	if c.sessionVersion != "" {
		return c.sessionVersion
	}
	return Protocol2025
}
