package retry

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
)

// Decide turns a classified response and the facts of the call into the
// next step. Call it once per response: it takes a budget token when it
// decides Retry, and deposits a refund into the budget when the server gave
// a healthy answer (TOOL_SUCCESS, RESULT_SUCCESS, NOTIFICATION_ACCEPTED,
// HTTP_SUCCESS, REQUEST_ACCEPTED, TOOL_ERROR, INPUT_REQUIRED, TASK_CREATED). Apart from p.Budget it has no
// state and no side effects; it never sleeps.
//
// The rules, in the order they apply (docs/retry.md has the full table):
//   - A success is Done; a tool error is SurfaceToModel; input_required is
//     ContinueInput; a task is PollTask.
//   - A rejection that the server made before acting on the request leads to
//     the matching fix, for any tool: 401 and 403 insufficient_scope
//     Reauthorize, -32022 Renegotiate, -32020 about Mcp-Param-*
//     RefreshAndRetry, a 2025-11-25 session 404 Reinitialize.
//   - A request that never left the client, and a 429, may be retried for
//     any tool.
//   - After a request may have reached the server (5xx, 408, a network error
//     after sending, a broken stream, an empty or malformed answer, -32603)
//     only a safe call (ReadOnly, Idempotent, IdempotencyKey) is retried;
//     for any other the reason says it is unknown whether the tool ran.
//   - Every other error fails: it would fail again unless something changes.
//   - NOT_CLASSIFIED (a limit of the classifier, not an answer of the
//     server) fails without a retry: there is no verdict to act on.
//
// A retry is further bound by p.MaxRetries, by f.Remaining, by the budget,
// and, on 429 and 503, by p.MaxRetryAfter.
func (p Policy) Decide(res *classify.Result, f Facts) Decision {
	if res == nil {
		return Decision{Action: Fail, Reason: "there is no result to judge"}
	}
	d := p.decide(res, &f)
	switch res.Outcome {
	case classify.ToolSuccess, classify.ResultSuccess, classify.NotificationAccepted, classify.HTTPSuccess,
		classify.RequestAccepted, classify.ToolError, classify.InputRequired, classify.TaskCreated:
		p.Budget.Deposit()
	}
	return d
}

func (p Policy) decide(res *classify.Result, f *Facts) Decision {
	switch res.Outcome {
	case classify.ToolSuccess, classify.ResultSuccess:
		return Decision{Action: Done, Reason: "the call completed (" + string(res.Outcome) + ")"}
	case classify.NotificationAccepted:
		return Decision{Action: Done, Reason: "the notification was accepted"}
	case classify.RequestAccepted:
		// The proxy's record of a POST over the 2024-11-05 HTTP+SSE
		// transport, answered 202: the answer comes on the GET stream.
		return Decision{Action: Done, Reason: "the server accepted the request (HTTP 202): its answer travels on the session's event stream; read it there, do not send the request again"}
	case classify.HTTPSuccess:
		// A 2xx to an exchange that is no JSON-RPC request, a
		// subscription that ended, a server request the session's end
		// ended (the stdio proxy's records): nothing failed.
		return Decision{Action: Done, Reason: "nothing failed (HTTP_SUCCESS: " + res.Reason + "): there is nothing to retry"}
	case classify.ToolError:
		return Decision{Action: SurfaceToModel, Reason: "the tool ran and reported an error (isError: true): " +
			"show it to the model, which may call again with other arguments; an automatic retry would repeat the tool and its failure"}
	case classify.InputRequired:
		return p.input(res, f)
	case classify.TaskCreated:
		id := ""
		if res.Task() != nil {
			id = " " + res.Task().TaskID
		}
		return Decision{Action: PollTask, Reason: "the server created task" + id + ": poll tasks/get for its result (not a retry)"}
	case classify.NetworkError:
		if resumable(res, f) {
			// A GET that resumes a broken stream got no response:
			// resuming again cannot run the tool again, so it is the
			// resumption budget's, not a retry of the tools/call.
			return p.resume(res, f)
		}
		return p.network(res, f)
	case classify.HTTPError:
		return p.httpError(res, f)
	case classify.JSONRPCError:
		return p.jsonrpcError(res, f)
	case classify.StreamIncomplete:
		if resumable(res, f) {
			return p.resume(res, f)
		}
		return p.retry(res, f, mayHaveRun, "the response stream ended before the JSON-RPC response arrived", false)
	case classify.EmptyResponse:
		return p.retry(res, f, mayHaveRun, fmt.Sprintf("HTTP %d came with no body (a request needs a JSON-RPC response)", res.Status), false)
	case classify.MalformedJSON:
		return p.retry(res, f, mayHaveRun, "the response is not valid JSON", false)
	case classify.InvalidEnvelope:
		return p.retry(res, f, mayHaveRun, "the response is not a valid JSON-RPC response for this request", false)
	case classify.InvalidToolResult, classify.InvalidResult:
		return p.retry(res, f, mayHaveRun, "the result is not a valid "+resultName(res), false)
	case classify.NotClassified:
		return Decision{Action: Fail, Reason: "the response was not classified (" + res.Reason + "): " +
			"mcpdiag has no verdict on it, so it decides nothing; the call may have completed, and sending it again is not indicated by anything mcpdiag saw"}
	case classify.UnexpectedContentType:
		return Decision{Action: Fail, Reason: fmt.Sprintf("HTTP %d with Content-Type %q is not an MCP answer (often a proxy, a login page or a wrong URL): "+
			"the same request would get the same page, and it is unknown whether the request reached the server", res.Status, res.ContentType())}
	}
	return Decision{Action: Fail, Reason: fmt.Sprintf("outcome %q is unknown to the retry policy", res.Outcome)}
}

// Whether the server may have acted on the request, for retry.
const (
	notRun     = false // rejected or never sent: any call may be retried
	mayHaveRun = true  // only a safe call may be retried
)

func resultName(res *classify.Result) string {
	if res.Method() == "" || res.Method() == "tools/call" {
		return "CallToolResult"
	}
	return res.Method() + " result"
}

func protocol(res *classify.Result, f *Facts) string {
	switch {
	case f.Protocol != "":
		return f.Protocol
	case res.Protocol() != "":
		return res.Protocol()
	}
	return classify.Protocol2026
}

func versions(f *Facts) []string {
	if f.Versions != nil {
		return f.Versions
	}
	return ClientVersions
}

// retry decides a retry of a request after cause. ran says whether the server
// may have acted on it; then only a safe call is retried. retryAfter makes a
// valid Retry-After header replace the backoff (429 and 503).
func (p Policy) retry(res *classify.Result, f *Facts, ran bool, cause string, retryAfter bool) Decision {
	safety := f.Safety.orUnknown()
	if ran && !safety.Safe() {
		what := "the tool ran"
		if res.Method() != "" && res.Method() != "tools/call" {
			what = "the server acted on " + res.Method()
		}
		why := "nothing says the call is safe to repeat (not known to be read-only or idempotent, and no idempotency key)"
		if safety == Unsafe {
			why = "the call is marked unsafe (destructive or not idempotent) and has no idempotency key"
		}
		return Decision{Action: Fail, Reason: fmt.Sprintf("not retried: %s; unknown whether %s, because the request may have reached the server, and %s, "+
			"so a retry could run it twice (mark the call safe or give it an idempotency key to allow retries)", cause, what, why)}
	}
	if f.Retries >= p.MaxRetries {
		return Decision{Action: Fail, Reason: fmt.Sprintf("gave up after %s (limit %d): %s", plural(f.Retries, "retry", "retries"), max(p.MaxRetries, 0), cause)}
	}
	delay := Backoff(p.Backoff, p.MaxBackoff, f.Retries, f.Rand)
	how := fmt.Sprintf("backoff with full jitter, up to %s", ceiling(p.Backoff, p.MaxBackoff, f.Retries))
	if retryAfter && res.HTTP() != nil && res.HTTP().RetryAfter != nil {
		ra := res.HTTP().RetryAfter
		switch {
		case !ra.Valid:
			how += fmt.Sprintf("; Retry-After %q is not seconds or an HTTP-date and was ignored", ra.Raw)
		case ra.Delay > p.MaxRetryAfter:
			return Decision{Action: Fail, Reason: fmt.Sprintf("not retried: the server asked to wait %s (Retry-After: %s), longer than the %s limit on Retry-After: %s",
				ra.Delay, ra.Raw, p.MaxRetryAfter, cause)}
		default:
			delay = ra.Delay
			how = "as Retry-After: " + ra.Raw + " asks"
		}
	}
	if f.Remaining > 0 && delay >= f.Remaining {
		return Decision{Action: Fail, Reason: fmt.Sprintf("not retried: %s, and waiting %s would pass the deadline (%s left)", cause, delay, f.Remaining)}
	}
	if !p.Budget.Take() {
		return Decision{Action: Fail, Reason: fmt.Sprintf("not retried: retry budget exhausted (%.3g tokens left; it refills as calls succeed): %s", p.Budget.Tokens(), cause)}
	}
	why := ""
	switch {
	case safety == IdempotencyKey:
		why = "; re-send the same idempotency key"
	case !ran:
		why = "; the server did not act on the request, so any call may be retried"
	default:
		why = "; the call is " + string(safety)
	}
	return Decision{Action: Retry, Delay: delay,
		Reason: fmt.Sprintf("retry %d of %d after %s (%s): %s%s", f.Retries+1, p.MaxRetries, delay, how, cause, why)}
}

// ceiling is the upper bound of the jittered backoff for retry n+1.
func ceiling(base, limit time.Duration, n int) time.Duration {
	if base <= 0 || limit <= 0 {
		return 0
	}
	t := base
	for i := 0; i < n && t < limit; i++ {
		if t > limit/2 {
			return limit
		}
		t *= 2
	}
	return min(t, limit)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// recoverWith decides one of the bounded recoveries (not retries) after a
// rejection the server made before acting on the request.
func recoverWith(a Action, done, limit int, reason string) Decision {
	if done >= limit {
		return Decision{Action: Fail, Reason: fmt.Sprintf("gave up: %s, but %s was already tried %s (limit %d)",
			reason, a, plural(done, "time", "times"), max(limit, 0))}
	}
	return Decision{Action: a, Reason: reason}
}

func (p Policy) network(res *classify.Result, f *Facts) Decision {
	sent := true
	if res.Network() != nil {
		sent = res.Network().RequestSent || res.Network().Phase == "body"
	}
	switch f.Sent {
	case NotSent:
		sent = false
	case FullySent:
		sent = true
	}
	detail := networkDetail(res)
	if !sent {
		return p.retry(res, f, notRun, "the request never fully left the client"+detail, false)
	}
	cause := "the connection failed"
	switch {
	case res.Network() != nil && res.Network().Phase == "body":
		cause = "the response body was cut after the headers"
	case res.Network() != nil && res.Network().Timeout:
		cause, detail = "no response arrived before the timeout", ""
	}
	return p.retry(res, f, mayHaveRun, cause+detail, false)
}

// resumable reports a failure of a 2025-11-25 stream that gave an event id:
// a GET with Last-Event-ID resumes it (the resumption budget's, not a retry).
func resumable(res *classify.Result, f *Facts) bool {
	return protocol(res, f) == classify.Protocol2025 && f.LastEventID != ""
}

// networkDetail is the network error of res in parentheses, after a space,
// as its cause says it ("the server closed or reset the connection"): Go's
// text of one event differs between runs (EOF or "connection reset by
// peer", and the URL with its port), and a decision's words must not. The
// raw text stays in the result's network details (the record's
// network.error). The raw text only when no cause was read (a result made
// elsewhere); "" when there is no error.
func networkDetail(res *classify.Result) string {
	n := res.Network()
	switch {
	case n == nil || n.Error == "" && n.Cause == "":
		return ""
	case n.Cause != "":
		return " (" + n.Cause.Words() + ")"
	}
	return " (" + n.Error + ")"
}

func (p Policy) resume(res *classify.Result, f *Facts) Decision {
	cause := fmt.Sprintf("the response stream broke after event %q", f.LastEventID)
	if res.Outcome == classify.NetworkError {
		cause = fmt.Sprintf("the GET resuming the response stream after event %q got no response", f.LastEventID) + networkDetail(res)
	}
	if f.Resumptions >= p.MaxRetries {
		return Decision{Action: Fail, Reason: fmt.Sprintf("gave up after %s (limit %d): %s",
			plural(f.Resumptions, "resumption", "resumptions"), max(p.MaxRetries, 0), cause)}
	}
	delay := Backoff(p.Backoff, p.MaxBackoff, f.Resumptions, f.Rand)
	wait := fmt.Sprint(delay)
	if f.RetryField > delay {
		// The stream's retry field is the least wait: the client waits
		// it, so the reason and the deadline are judged on it.
		delay = f.RetryField
		wait = fmt.Sprintf("%s (the stream's retry field)", delay)
	}
	if f.Remaining > 0 && delay >= f.Remaining {
		return Decision{Action: Fail, Reason: fmt.Sprintf("not resumed: %s, and waiting %s would pass the deadline (%s left)", cause, wait, f.Remaining)}
	}
	return Decision{Action: Resume, Delay: delay, Reason: fmt.Sprintf("resume %d of %d after %s: %s; "+
		"in 2025-11-25 a disconnect is not a cancellation, so GET with Last-Event-ID receives the rest without running the tool again",
		f.Resumptions+1, p.MaxRetries, wait, cause)}
}

func (p Policy) input(res *classify.Result, f *Facts) Decision {
	if protocol(res, f) == classify.Protocol2025 {
		return Decision{Action: Fail, Reason: "the server answered input_required, which 2025-11-25 does not define (MRTR starts with 2026-07-28)"}
	}
	what := "the server needs input"
	if in := res.Input(); in != nil {
		var methods []string
		for _, r := range in.Requests {
			methods = append(methods, r.Method)
		}
		switch {
		case len(methods) > 0:
			what += " (" + strings.Join(methods, ", ") + ")"
		case in.HasRequestState:
			what = "the server returned only requestState (it may be shedding load)"
		}
	}
	if f.InputRounds >= p.MaxInputRounds {
		return Decision{Action: Fail, Reason: fmt.Sprintf("gave up after %s (limit %d): %s",
			plural(f.InputRounds, "input round", "input rounds"), max(p.MaxInputRounds, 0), what)}
	}
	return Decision{Action: ContinueInput, Reason: what + ": answer the input requests and send the next round " +
		"with a new id, the same method and arguments, and requestState echoed exactly (an MRTR round, not a retry)"}
}

func (p Policy) httpError(res *classify.Result, f *Facts) Decision {
	status := res.Status
	cause := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	var challenge *classify.WWWAuthenticate
	if res.HTTP() != nil {
		challenge = res.HTTP().WWWAuthenticate
	}
	switch status {
	case http.StatusUnauthorized:
		reason := cause + ": the token is missing, invalid or expired; get a token"
		if challenge != nil && challenge.ResourceMetadata != "" {
			reason += " (resource metadata: " + challenge.ResourceMetadata + ")"
		}
		if challenge != nil && challenge.Scope != "" {
			reason += " for scope " + challenge.Scope
		}
		return recoverWith(Reauthorize, f.Reauthorizations, p.MaxReauthorizations, reason+" and re-send; the server refused the request without acting on it")
	case http.StatusForbidden:
		switch {
		case challenge != nil && strings.EqualFold(challenge.Error, "insufficient_scope"):
			reason := cause + ": insufficient_scope: step-up authorization: ask for the current scopes plus " + quoteOr(challenge.Scope, "the scope the operation needs") +
				" and re-send; the server refused the request without acting on it"
			d := recoverWith(Reauthorize, f.Reauthorizations, p.MaxReauthorizations, reason)
			d.StepUp = d.Action == Reauthorize
			return d
		case challenge != nil && strings.EqualFold(challenge.Error, "invalid_token"):
			return recoverWith(Reauthorize, f.Reauthorizations, p.MaxReauthorizations,
				cause+": invalid_token: get a new token and re-send; the server refused the request without acting on it")
		case challenge != nil:
			return Decision{Action: Fail, Reason: cause + " with a " + challenge.Scheme + " challenge that asks for no step-up: the permission is missing; a retry would be refused again"}
		}
		return Decision{Action: Fail, Reason: cause + " without a WWW-Authenticate challenge (often an Origin the server rejects): a retry would be refused again"}
	}
	if d, ok := p.code(res, f, status); ok {
		return d
	}
	proto := protocol(res, f)
	switch {
	case status == http.StatusNotFound && proto == classify.Protocol2025 && f.SessionHeld:
		return recoverWith(Reinitialize, f.Reinitializations, p.MaxRecoveries,
			cause+": the 2025-11-25 session has expired; initialize a new session and re-send (the server rejected the request without acting on it)")
	case (status == http.StatusBadRequest || status == http.StatusNotFound) && proto == classify.Protocol2026 && !modernError(res):
		if !slices.Contains(versions(f), classify.Protocol2025) {
			return Decision{Action: Fail, Reason: cause + " without a 2026-07-28 error body: the server may be older than 2026-07-28, and the client does not speak 2025-11-25"}
		}
		d := recoverWith(Renegotiate, f.Renegotiations, p.MaxRecoveries,
			cause+" without a 2026-07-28 error body (-32020/-32021/-32022 or a standard code): the server may be older than 2026-07-28; fall back to 2025-11-25 and start with initialize")
		if d.Action == Renegotiate {
			d.Version = classify.Protocol2025
		}
		return d
	case status == http.StatusRequestTimeout:
		return p.retry(res, f, mayHaveRun, cause+" (the server gave up waiting for the request; an intermediary may have forwarded it)", false)
	case status == http.StatusConflict && f.Safety == IdempotencyKey:
		return p.retry(res, f, notRun, cause+": a request with the same idempotency key is still running", false)
	case status == http.StatusTooManyRequests:
		return p.retry(res, f, notRun, cause+" (rate limited)", true)
	case status == http.StatusServiceUnavailable:
		return p.retry(res, f, mayHaveRun, cause, true)
	case status == http.StatusNotImplemented || status == http.StatusHTTPVersionNotSupported || status == http.StatusNetworkAuthenticationRequired:
		return Decision{Action: Fail, Reason: cause + ": not a transient failure; a retry would get the same answer"}
	case status >= 500 && status <= 599:
		return p.retry(res, f, mayHaveRun, cause, false)
	}
	reason := cause + ": the server refused the request; a retry without a change would be refused again"
	switch {
	case status == http.StatusNotFound && proto == classify.Protocol2025:
		reason = cause + " without a session to renew: the endpoint or the method is absent"
	case status == http.StatusMethodNotAllowed:
		reason = cause + ": the endpoint does not take this HTTP method (a legacy endpoint or the wrong URL)"
	case status >= 300 && status <= 399:
		reason = cause + ": a redirect was not followed; point the client at the final URL"
	case status == http.StatusUnprocessableEntity && f.Safety == IdempotencyKey:
		reason = cause + ": the idempotency key was used before with a different request; use a new key for a new request"
	case status == http.StatusConflict:
		reason = cause + ": the server reports a conflict; retrying unchanged would conflict again"
	}
	return Decision{Action: Fail, Reason: reason}
}

func quoteOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return "scope " + s
}

// modernError reports whether an HTTP error carries a JSON-RPC error code a
// 2026-07-28 server would send (mcp-spec-notes §1.8: a recognised modern
// error means a modern server; an empty or unrecognised body means legacy).
func modernError(res *classify.Result) bool {
	code, ok := res.JSONRPC().ErrorCode()
	if !ok {
		return false
	}
	switch code {
	case -32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022:
		return true
	}
	return false
}

func (p Policy) jsonrpcError(res *classify.Result, f *Facts) Decision {
	if d, ok := p.code(res, f, res.Status); ok {
		return d
	}
	code, name, msg := codeOf(res)
	if code == -32603 {
		return p.retry(res, f, mayHaveRun, fmt.Sprintf("JSON-RPC error -32603 InternalError (%s): the server failed while handling the request", msg), false)
	}
	label := fmt.Sprintf("JSON-RPC error %d", code)
	if name != "" {
		label += " " + name
	}
	return Decision{Action: Fail, Reason: fmt.Sprintf("%s (%s): the spec gives this code no retry meaning; a retry without a change would get the same error", label, msg)}
}

func codeOf(res *classify.Result) (code int64, name, msg string) {
	code, ok := res.JSONRPC().ErrorCode()
	if !ok {
		return 0, "", ""
	}
	return code, res.JSONRPC().Error.CodeName, res.JSONRPC().Error.Message
}

// code decides the JSON-RPC error codes whose meaning settles the action,
// inside HTTP 200 or an HTTP error. ok is false for -32603 and for codes
// without a defined meaning, which the caller decides by status.
func (p Policy) code(res *classify.Result, f *Facts, status int) (Decision, bool) {
	if _, ok := res.JSONRPC().ErrorCode(); !ok {
		return Decision{}, false
	}
	code, _, msg := codeOf(res)
	switch code {
	case -32022:
		return p.renegotiate(res, f, "-32022 UnsupportedProtocolVersion"), true
	case -32004:
		if _, _, ok := UnsupportedVersion(res); ok {
			return p.renegotiate(res, f, "-32004 (early-draft number of UnsupportedProtocolVersion)"), true
		}
	case -32020:
		lower := strings.ToLower(msg + " " + string(res.JSONRPC().Error.Data))
		switch {
		case strings.Contains(lower, "mcp-param-"):
			return recoverWith(RefreshAndRetry, f.Refreshes, p.MaxRecoveries, fmt.Sprintf("-32020 HeaderMismatch about an Mcp-Param-* header (%s): "+
				"the tool's input schema may have changed; re-read tools/list, rebuild the headers and re-send (the server rejected the request without acting on it)", msg)), true
		case f.ParamHeaders:
			return recoverWith(RefreshAndRetry, f.Refreshes, p.MaxRecoveries, fmt.Sprintf("-32020 HeaderMismatch (%s) on a request with Mcp-Param-* headers: "+
				"the tool's input schema may have changed; re-read tools/list, rebuild the headers and re-send (the server rejected the request without acting on it)", msg)), true
		}
		return Decision{Action: Fail, Reason: fmt.Sprintf("-32020 HeaderMismatch (%s): the request's headers do not match its body, a client bug; a retry unchanged would be rejected again", msg)}, true
	case -32021, -32003:
		caps := ""
		if len(res.JSONRPC().Error.Data) > 0 {
			caps = "; data " + string(bytes.TrimSpace(res.JSONRPC().Error.Data))
		}
		return Decision{Action: Fail, Reason: fmt.Sprintf("%d MissingRequiredClientCapability (%s%s): declare the capabilities if the client supports them; a retry unchanged would be rejected again", code, msg, caps)}, true
	case -32601:
		return Decision{Action: Fail, Reason: fmt.Sprintf("-32601 MethodNotFound (%s): the method, or the capability behind it, is absent; not retryable", msg)}, true
	case -32602:
		if protocol(res, f) == classify.Protocol2025 && res.Method() == "initialize" {
			if _, _, ok := UnsupportedVersion(res); ok {
				return p.renegotiate(res, f, "-32602 on initialize with data.supported (the 2025-11-25 version error)"), true
			}
		}
		return Decision{Action: Fail, Reason: fmt.Sprintf("-32602 InvalidParams (%s): an unknown tool, invalid arguments, a rejected requestState or a missing _meta; a retry unchanged would get the same error", msg)}, true
	case -32700, -32600:
		return Decision{Action: Fail, Reason: fmt.Sprintf("%d %s (%s): the server could not read the request, a client bug; a retry unchanged would get the same error", code, classify.CodeName(code), msg)}, true
	case -32042:
		if protocol(res, f) != classify.Protocol2025 {
			break // retired in 2026-07-28: no defined meaning there
		}
		if f.InputRounds >= p.MaxInputRounds {
			return Decision{Action: Fail, Reason: fmt.Sprintf("gave up after %s (limit %d): -32042 URLElicitationRequired",
				plural(f.InputRounds, "input round", "input rounds"), max(p.MaxInputRounds, 0))}, true
		}
		return Decision{Action: ContinueInput, Reason: fmt.Sprintf("-32042 URLElicitationRequired (%s): the 2025-11-25 server needs the user to open the URL(s) in error.data; do so, then send the request again (an input round, not a retry)", msg)}, true
	}
	return Decision{}, false
}

func (p Policy) renegotiate(res *classify.Result, f *Facts, what string) Decision {
	supported, requested, ok := UnsupportedVersion(res)
	if !ok {
		return Decision{Action: Fail, Reason: what + " without data.supported: the server named no version to use"}
	}
	if requested == "" {
		requested = protocol(res, f)
	}
	var candidates []string
	for _, v := range versions(f) {
		if v != requested {
			candidates = append(candidates, v)
		}
	}
	v, ok := PickVersion(supported, candidates)
	if !ok {
		return Decision{Action: Fail, Reason: fmt.Sprintf("%s: no version in common: the server supports %s, the client speaks %s (and %s was refused)",
			what, strings.Join(supported, ", "), strings.Join(versions(f), ", "), requested)}
	}
	reason := fmt.Sprintf("%s: the server refused %s and supports %s; re-send at %s, the newest version both support", what, requested, strings.Join(supported, ", "), v)
	if v == classify.Protocol2025 {
		reason += " (2025-11-25 starts with initialize)"
	}
	d := recoverWith(Renegotiate, f.Renegotiations, p.MaxRecoveries, reason)
	if d.Action == Renegotiate {
		d.Version = v
	}
	return d
}
