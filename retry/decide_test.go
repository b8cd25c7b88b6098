package retry_test

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
)

// firstDelay is Backoff(200ms, 5s, 0, seeded()): the first draw of PCG(1, 2)
// over [0, 200ms]. Every retry of a first attempt in the table waits this
// long; if math/rand/v2 ever changed its PCG, this is the number to update.
const firstDelay = 153874654 * time.Nanosecond

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func int64p(n int64) *int64 { return &n }

// result builders: each returns a fresh value so rows cannot share state.

func res(o classify.Outcome) *classify.Result {
	r := &classify.Result{Outcome: o, Status: 200}
	r.SetMethod("tools/call")
	r.SetProtocol(classify.Protocol2026)
	return r
}

func era(r *classify.Result, protocol string) *classify.Result {
	r.SetProtocol(protocol)
	return r
}

func httpErr(status int) *classify.Result {
	r := res(classify.HTTPError)
	r.Status = status
	return r
}

func withRPC(r *classify.Result, code int64, msg, data string) *classify.Result {
	r.SetJSONRPC(&classify.JSONRPCDetails{Error: &classify.ErrorObject{Code: int64p(code), CodeName: classify.CodeName(code), Message: msg}})
	if data != "" {
		r.JSONRPC().Error.Data = json.RawMessage(data)
	}
	return r
}

func withChallenge(r *classify.Result, w classify.WWWAuthenticate) *classify.Result {
	if r.HTTP() == nil {
		r.SetHTTP(&classify.HTTPDetails{})
	}
	r.HTTP().WWWAuthenticate = &w
	return r
}

func withRetryAfter(r *classify.Result, ra classify.RetryAfter) *classify.Result {
	if r.HTTP() == nil {
		r.SetHTTP(&classify.HTTPDetails{})
	}
	r.HTTP().RetryAfter = &ra
	return r
}

func network(sent bool, phase string, timeout bool) *classify.Result {
	r := res(classify.NetworkError)
	r.Status = 0
	r.SetNetwork(&classify.NetworkDetails{Error: "boom", Phase: phase, RequestSent: sent, Timeout: timeout})
	return r
}

func method(r *classify.Result, m string) *classify.Result {
	r.SetMethod(m)
	return r
}

type want struct {
	action  retry.Action
	delay   time.Duration
	reason  string // a substring of Decision.Reason
	version string
	stepUp  bool
}

// expect holds the decision for a safe call (read-only, idempotent,
// idempotency key) and an unsafe one (unsafe, unknown), on the first attempt
// and past every limit.
type expect struct {
	safeFirst, unsafeFirst, safePast, unsafePast want
	// key, when set, replaces the safe columns for Safety IdempotencyKey.
	key *[2]want
}

func all(w want) expect          { return expect{w, w, w, w, nil} }
func firstPast(f, p want) expect { return expect{f, f, p, p, nil} }

// retrySafe: retried for a safe call only; the others fail because the tool
// may have run.
func retrySafe(delay time.Duration) expect {
	unknown := want{action: retry.Fail, reason: "unknown whether the tool ran"}
	return expect{
		safeFirst:   want{action: retry.Retry, delay: delay, reason: "retry 1 of 2"},
		unsafeFirst: unknown,
		safePast:    want{action: retry.Fail, reason: "gave up after 2 retries (limit 2)"},
		unsafePast:  unknown,
	}
}

// retryAny: retried whatever the tool, because the server did not act.
func retryAny(delay time.Duration) expect {
	return firstPast(
		want{action: retry.Retry, delay: delay, reason: "retry 1 of 2"},
		want{action: retry.Fail, reason: "gave up after 2 retries (limit 2)"})
}

func recovery(a retry.Action, reason string) expect {
	return firstPast(want{action: a, reason: reason}, want{action: retry.Fail, reason: "already tried"})
}

func renegotiate(version, reason string) expect {
	return firstPast(want{action: retry.Renegotiate, version: version, reason: reason}, want{action: retry.Fail, reason: "already tried"})
}

func fail(reason string) expect { return all(want{action: retry.Fail, reason: reason}) }

// past has every counter at the DefaultPolicy limit.
var past = retry.Facts{Retries: 2, Reauthorizations: 2, Renegotiations: 1, Refreshes: 1, Reinitializations: 1, Resumptions: 2, InputRounds: 10}

type row struct {
	name  string
	res   func() *classify.Result
	facts func(*retry.Facts)
	want  expect
}

var table = []row{
	// application and interaction layers
	{"tool success", func() *classify.Result { return res(classify.ToolSuccess) }, nil, all(want{action: retry.Done, reason: "completed"})},
	{"result success", func() *classify.Result { return method(res(classify.ResultSuccess), "tools/list") }, nil, all(want{action: retry.Done})},
	{"notification accepted", func() *classify.Result { return res(classify.NotificationAccepted) }, nil, all(want{action: retry.Done, reason: "accepted"})},
	{"request accepted (2024-11-05 HTTP+SSE)", func() *classify.Result { return res(classify.RequestAccepted) }, nil, all(want{action: retry.Done, reason: "travels on the session's event stream"})},
	{"http success", func() *classify.Result { return res(classify.HTTPSuccess) }, nil, all(want{action: retry.Done, reason: "nothing to retry"})},
	{"tool error", func() *classify.Result { return res(classify.ToolError) }, nil, all(want{action: retry.SurfaceToModel, reason: "show it to the model"})},
	{"input required", func() *classify.Result {
		r := res(classify.InputRequired)
		r.SetInput(&classify.InputDetails{Requests: []classify.InputRequest{{Key: "k", Method: "elicitation/create"}}, HasRequestState: true})
		return r
	}, nil, firstPast(want{action: retry.ContinueInput, reason: "(elicitation/create)"}, want{action: retry.Fail, reason: "gave up after 10 input rounds"})},
	{"input required, requestState only", func() *classify.Result {
		r := res(classify.InputRequired)
		r.SetInput(&classify.InputDetails{Requests: []classify.InputRequest{}, HasRequestState: true})
		return r
	}, nil, firstPast(want{action: retry.ContinueInput, reason: "only requestState"}, want{action: retry.Fail, reason: "input rounds"})},
	{"input required on 2025-11-25", func() *classify.Result { return era(res(classify.InputRequired), classify.Protocol2025) }, nil, fail("2025-11-25 does not define")},
	{"task created", func() *classify.Result {
		r := res(classify.TaskCreated)
		r.SetTask(&classify.TaskDetails{TaskID: "t1", Status: "working"})
		return r
	}, nil, all(want{action: retry.PollTask, reason: "task t1"})},

	// transport: network
	{"network, not sent", func() *classify.Result { return network(false, "before-response", false) }, nil, retryAny(firstDelay)},
	{"network, sent", func() *classify.Result { return network(true, "before-response", false) }, nil, retrySafe(firstDelay)},
	{"network, timeout after sending", func() *classify.Result { return network(true, "before-response", true) }, nil, retrySafe(firstDelay)},
	{"network, body cut", func() *classify.Result { return network(true, "body", false) }, nil, retrySafe(firstDelay)},
	{"network, no details", func() *classify.Result { r := res(classify.NetworkError); r.Status = 0; return r }, nil, retrySafe(firstDelay)},
	{"network, caller says not sent", func() *classify.Result { return network(true, "before-response", false) },
		func(f *retry.Facts) { f.Sent = retry.NotSent }, retryAny(firstDelay)},
	{"network, caller says fully sent", func() *classify.Result { return network(false, "before-response", false) },
		func(f *retry.Facts) { f.Sent = retry.FullySent }, retrySafe(firstDelay)},

	// transport: HTTP status
	{"401", func() *classify.Result {
		return withChallenge(httpErr(401), classify.WWWAuthenticate{Scheme: "Bearer", ResourceMetadata: "https://x/.well-known/oauth-protected-resource", Scope: "files:read"})
	}, nil, recovery(retry.Reauthorize, "get a token (resource metadata: https://x/")},
	{"403 insufficient_scope", func() *classify.Result {
		return withChallenge(httpErr(403), classify.WWWAuthenticate{Scheme: "Bearer", Error: "insufficient_scope", Scope: "files:write"})
	}, nil, firstPast(want{action: retry.Reauthorize, stepUp: true, reason: "step-up authorization: ask for the current scopes plus scope files:write"},
		want{action: retry.Fail, reason: "already tried 2 times"})},
	{"403 invalid_token", func() *classify.Result {
		return withChallenge(httpErr(403), classify.WWWAuthenticate{Scheme: "Bearer", Error: "invalid_token"})
	}, nil, recovery(retry.Reauthorize, "invalid_token")},
	{"403 no challenge", func() *classify.Result { return httpErr(403) }, nil, fail("without a WWW-Authenticate challenge")},
	{"403 other challenge", func() *classify.Result {
		return withChallenge(httpErr(403), classify.WWWAuthenticate{Scheme: "Bearer"})
	}, nil, fail("asks for no step-up")},
	{"404 session expired (2025-11-25)", func() *classify.Result { return era(httpErr(404), classify.Protocol2025) },
		func(f *retry.Facts) { f.SessionHeld = true }, recovery(retry.Reinitialize, "session has expired")},
	{"404 2025-11-25 session, -32001 body", func() *classify.Result {
		return withRPC(era(httpErr(404), classify.Protocol2025), -32001, "Session not found", "")
	}, func(f *retry.Facts) { f.SessionHeld = true }, recovery(retry.Reinitialize, "session has expired")},
	{"404 2025-11-25 without a session", func() *classify.Result { return era(httpErr(404), classify.Protocol2025) }, nil, fail("without a session to renew")},
	{"404 2026-07-28 without a modern body", func() *classify.Result { return httpErr(404) }, nil,
		firstPast(want{action: retry.Renegotiate, version: classify.Protocol2025, reason: "may be older than 2026-07-28"}, want{action: retry.Fail, reason: "already tried"})},
	{"400 2026-07-28 with a legacy -32000 body", func() *classify.Result {
		return withRPC(httpErr(400), -32000, "Bad Request: No valid session ID provided", "")
	}, nil,
		firstPast(want{action: retry.Renegotiate, version: classify.Protocol2025, reason: "start with initialize"}, want{action: retry.Fail, reason: "already tried"})},
	{"400 2026-07-28 bare, client speaks 2026 only", func() *classify.Result { return httpErr(400) },
		func(f *retry.Facts) { f.Versions = []string{classify.Protocol2026} }, fail("does not speak 2025-11-25")},
	{"400 2025-11-25 bare", func() *classify.Result { return era(httpErr(400), classify.Protocol2025) }, nil, fail("a retry without a change")},
	{"404 -32601", func() *classify.Result { return withRPC(httpErr(404), -32601, "Method not found", "") }, nil, fail("-32601 MethodNotFound")},
	{"400 -32022", func() *classify.Result {
		return withRPC(httpErr(400), -32022, "Unsupported protocol version", `{"supported":["2025-11-25","2024-11-05"],"requested":"2026-07-28"}`)
	}, nil, firstPast(want{action: retry.Renegotiate, version: classify.Protocol2025, reason: "re-send at 2025-11-25"}, want{action: retry.Fail, reason: "already tried 1 time"})},
	{"400 -32020 about Mcp-Param", func() *classify.Result {
		return withRPC(httpErr(400), -32020, "Header Mcp-Param-Region does not match arguments.region", "")
	}, nil, recovery(retry.RefreshAndRetry, "re-read tools/list")},
	{"400 -32020, request had Mcp-Param headers", func() *classify.Result { return withRPC(httpErr(400), -32020, "Header mismatch", "") },
		func(f *retry.Facts) { f.ParamHeaders = true }, recovery(retry.RefreshAndRetry, "on a request with Mcp-Param-* headers")},
	{"400 -32020 about Mcp-Name", func() *classify.Result {
		return withRPC(httpErr(400), -32020, "Mcp-Name does not match params.name", "")
	}, nil,
		fail("a client bug")},
	{"400 -32021", func() *classify.Result {
		return withRPC(httpErr(400), -32021, "Server requires elicitation", `{"requiredCapabilities":{"elicitation":{}}}`)
	}, nil, fail(`{"requiredCapabilities":{"elicitation":{}}}`)},
	{"400 -32602", func() *classify.Result { return withRPC(httpErr(400), -32602, "missing _meta", "") }, nil, fail("-32602 InvalidParams")},
	{"405", func() *classify.Result { return httpErr(405) }, nil, fail("does not take this HTTP method")},
	{"302", func() *classify.Result { return httpErr(302) }, nil, fail("redirect was not followed")},
	{"408", func() *classify.Result { return httpErr(408) }, nil, retrySafe(firstDelay)},
	{"409", func() *classify.Result { return httpErr(409) }, nil, func() expect {
		e := fail("conflict")
		e.key = &[2]want{
			{action: retry.Retry, delay: firstDelay, reason: "same idempotency key is still running"},
			{action: retry.Fail, reason: "gave up after 2 retries"}}
		return e
	}()},
	{"413", func() *classify.Result { return httpErr(413) }, nil, fail("HTTP 413 Request Entity Too Large: the server refused the request")},
	{"429 without Retry-After", func() *classify.Result { return httpErr(429) }, nil, retryAny(firstDelay)},
	{"429 Retry-After: 3", func() *classify.Result {
		return withRetryAfter(httpErr(429), classify.RetryAfter{Raw: "3", Delay: 3 * time.Second, Valid: true})
	}, nil, firstPast(want{action: retry.Retry, delay: 3 * time.Second, reason: "as Retry-After: 3 asks"}, want{action: retry.Fail, reason: "gave up after 2 retries"})},
	{"500", func() *classify.Result { return httpErr(500) }, nil, retrySafe(firstDelay)},
	{"500 with -32603", func() *classify.Result { return withRPC(httpErr(500), -32603, "internal", "") }, nil, retrySafe(firstDelay)},
	{"500 with -32602", func() *classify.Result { return withRPC(httpErr(500), -32602, "unknown tool", "") }, nil, fail("-32602")},
	{"501", func() *classify.Result { return httpErr(501) }, nil, fail("not a transient failure")},
	{"502", func() *classify.Result { return httpErr(502) }, nil, retrySafe(firstDelay)},
	{"503 without Retry-After", func() *classify.Result { return httpErr(503) }, nil, retrySafe(firstDelay)},
	{"503 Retry-After: 3", func() *classify.Result {
		return withRetryAfter(httpErr(503), classify.RetryAfter{Raw: "3", Delay: 3 * time.Second, Valid: true})
	}, nil, func() expect {
		e := retrySafe(3 * time.Second)
		e.safeFirst.reason = "as Retry-After: 3 asks"
		return e
	}()},
	{"504", func() *classify.Result { return httpErr(504) }, nil, retrySafe(firstDelay)},
	{"511", func() *classify.Result { return httpErr(511) }, nil, fail("not a transient failure")},

	// transport: body and stream
	{"empty response", func() *classify.Result { r := res(classify.EmptyResponse); r.Status = 202; return r }, nil, retrySafe(firstDelay)},
	{"unexpected content type", func() *classify.Result {
		r := res(classify.UnexpectedContentType)
		r.SetContentType("text/html")
		return r
	}, nil,
		fail(`Content-Type "text/html" is not an MCP answer`)},
	{"stream incomplete", func() *classify.Result { return res(classify.StreamIncomplete) }, nil, retrySafe(firstDelay)},
	// Not classified: no verdict, so no retry even of a safe call.
	{"not classified", func() *classify.Result {
		r := res(classify.NotClassified)
		r.Reason = "not classified: event 1 of the stream, which may hold the response, is 52428812 bytes, more than the 16777216 bytes the classifier holds (--max-event-size)"
		r.SetNotClassified(&classify.NotClassifiedDetails{Cause: classify.CauseEventTooLarge, Size: 52428812, Limit: 16777216, Event: 1})
		return r
	}, nil, fail("mcpdiag has no verdict on it")},
	{"stream incomplete, 2025-11-25 without an event id", func() *classify.Result { return era(res(classify.StreamIncomplete), classify.Protocol2025) }, nil, retrySafe(firstDelay)},
	{"stream incomplete, 2025-11-25 resumable", func() *classify.Result { return era(res(classify.StreamIncomplete), classify.Protocol2025) },
		func(f *retry.Facts) { f.LastEventID = "ev-7" }, firstPast(want{action: retry.Resume, delay: firstDelay, reason: "GET with Last-Event-ID"},
			want{action: retry.Fail, reason: "gave up after 2 resumptions"})},

	// protocol layer
	{"malformed JSON", func() *classify.Result { return res(classify.MalformedJSON) }, nil, retrySafe(firstDelay)},
	{"invalid envelope", func() *classify.Result { return res(classify.InvalidEnvelope) }, nil, retrySafe(firstDelay)},
	{"invalid tool result", func() *classify.Result { return res(classify.InvalidToolResult) }, nil, retrySafe(firstDelay)},
	{"invalid result (tools/list)", func() *classify.Result { return method(res(classify.InvalidResult), "tools/list") }, nil,
		func() expect {
			e := retrySafe(firstDelay)
			e.unsafeFirst.reason, e.unsafePast.reason = "unknown whether the server acted on tools/list", "unknown whether the server acted on tools/list"
			return e
		}()},
	{"JSON-RPC -32603", func() *classify.Result { return withRPC(res(classify.JSONRPCError), -32603, "boom", "") }, nil, retrySafe(firstDelay)},
	{"JSON-RPC -32602", func() *classify.Result { return withRPC(res(classify.JSONRPCError), -32602, "Unknown tool: nope", "") }, nil, fail("Unknown tool: nope")},
	{"JSON-RPC -32601", func() *classify.Result { return withRPC(res(classify.JSONRPCError), -32601, "nope", "") }, nil, fail("not retryable")},
	{"JSON-RPC -32700", func() *classify.Result { return withRPC(res(classify.JSONRPCError), -32700, "parse", "") }, nil, fail("a client bug")},
	{"JSON-RPC -32600", func() *classify.Result { return withRPC(res(classify.JSONRPCError), -32600, "invalid", "") }, nil, fail("a client bug")},
	{"JSON-RPC -32000 (legacy range)", func() *classify.Result { return withRPC(res(classify.JSONRPCError), -32000, "rate limited", "") }, nil,
		fail("no retry meaning")},
	{"JSON-RPC -32022", func() *classify.Result {
		return withRPC(res(classify.JSONRPCError), -32022, "Unsupported", `{"supported":["2026-07-28","2025-11-25"],"requested":"1900-01-01"}`)
	}, nil, firstPast(want{action: retry.Renegotiate, version: classify.Protocol2026, reason: "re-send at 2026-07-28"}, want{action: retry.Fail, reason: "already tried"})},
	{"JSON-RPC -32022 without data", func() *classify.Result { return withRPC(res(classify.JSONRPCError), -32022, "Unsupported", "") }, nil,
		fail("without data.supported")},
	{"JSON-RPC -32004 (draft) with data", func() *classify.Result {
		return withRPC(res(classify.JSONRPCError), -32004, "Unsupported", `{"supported":["2025-11-25"]}`)
	}, nil, renegotiate(classify.Protocol2025, "early-draft")},
	{"JSON-RPC -32020 about Mcp-Param", func() *classify.Result {
		return withRPC(res(classify.JSONRPCError), -32020, "mismatch", `{"header":"Mcp-Param-Region"}`)
	}, nil, recovery(retry.RefreshAndRetry, "Mcp-Param-*")},
	{"JSON-RPC -32021", func() *classify.Result { return withRPC(res(classify.JSONRPCError), -32021, "caps", "") }, nil, fail("declare the capabilities")},
	{"JSON-RPC -32042 (2025-11-25)", func() *classify.Result {
		return withRPC(era(res(classify.JSONRPCError), classify.Protocol2025), -32042, "URL elicitation required", `{"elicitations":[]}`)
	}, nil, firstPast(want{action: retry.ContinueInput, reason: "open the URL"}, want{action: retry.Fail, reason: "input rounds"})},
	{"JSON-RPC -32042 on 2026-07-28 (retired)", func() *classify.Result {
		return withRPC(res(classify.JSONRPCError), -32042, "URL elicitation required", `{"elicitations":[]}`)
	}, nil, fail("no retry meaning")},
	{"JSON-RPC -32602 on 2025-11-25 initialize with data.supported", func() *classify.Result {
		return method(withRPC(era(res(classify.JSONRPCError), classify.Protocol2025), -32602, "Unsupported protocol version", `{"supported":["2024-11-05","2025-11-25"],"requested":"2026-07-28"}`), "initialize")
	}, nil, renegotiate(classify.Protocol2025, "the 2025-11-25 version error")},
}

// TestDecideTable runs every row for every safety, on the first attempt and
// past every limit, with DefaultPolicy and a seeded random source.
func TestDecideTable(t *testing.T) {
	for _, r := range table {
		for _, safety := range retry.Safeties {
			for _, attempt := range []string{"first", "past"} {
				t.Run(r.name+"/"+string(safety)+"/"+attempt, func(t *testing.T) {
					f := retry.Facts{}
					if attempt == "past" {
						f = past
					}
					f.Safety, f.Rand = safety, seeded()
					if r.facts != nil {
						r.facts(&f)
					}
					e := r.want
					if e.key != nil && safety == retry.IdempotencyKey {
						e.safeFirst, e.safePast = e.key[0], e.key[1]
					}
					var w want
					switch {
					case safety.Safe() && attempt == "first":
						w = e.safeFirst
					case safety.Safe():
						w = e.safePast
					case attempt == "first":
						w = e.unsafeFirst
					default:
						w = e.unsafePast
					}
					d := retry.DefaultPolicy().Decide(r.res(), f)
					check(t, d, w)
				})
			}
		}
	}
}

func check(t *testing.T, d retry.Decision, w want) {
	t.Helper()
	if d.Action != w.action || d.Delay != w.delay || d.Version != w.version || d.StepUp != w.stepUp {
		t.Errorf("got %s (delay %d ns, version %q, stepUp %v)\nwant action %s, delay %d ns, version %q, stepUp %v",
			d, d.Delay, d.Version, d.StepUp, w.action, w.delay, w.version, w.stepUp)
	}
	if !strings.Contains(d.Reason, w.reason) {
		t.Errorf("reason %q\ndoes not contain %q", d.Reason, w.reason)
	}
	if d.Reason == "" {
		t.Error("empty reason")
	}
}

// TestTableCoversEveryOutcome keeps the table honest when classify grows an
// outcome.
func TestTableCoversEveryOutcome(t *testing.T) {
	seen := map[classify.Outcome]bool{}
	for _, r := range table {
		seen[r.res().Outcome] = true
	}
	for _, o := range classify.Outcomes {
		if !seen[o] {
			t.Errorf("no row for outcome %s", o)
		}
	}
}

func TestDecideUnknownOutcomeAndNil(t *testing.T) {
	p := retry.DefaultPolicy()
	if d := p.Decide(nil, retry.Facts{}); d.Action != retry.Fail {
		t.Errorf("nil result: %s", d)
	}
	if d := p.Decide(&classify.Result{Outcome: "NEW_THING"}, retry.Facts{}); d.Action != retry.Fail || !strings.Contains(d.Reason, "NEW_THING") {
		t.Errorf("unknown outcome: %s", d)
	}
}

// TestSafeReasons checks that a retry says why it is allowed.
func TestSafeReasons(t *testing.T) {
	for _, tc := range []struct {
		safety retry.Safety
		res    *classify.Result
		reason string
	}{
		{retry.ReadOnly, httpErr(502), "the call is read-only"},
		{retry.Idempotent, httpErr(502), "the call is idempotent"},
		{retry.IdempotencyKey, httpErr(502), "re-send the same idempotency key"},
		{retry.Unknown, network(false, "before-response", false), "the server did not act on the request"},
		{retry.Unsafe, httpErr(502), "the call is marked unsafe (destructive or not idempotent)"},
		{"", httpErr(502), "nothing says the call is safe to repeat"},
		{"bogus", httpErr(502), "nothing says the call is safe to repeat"},
	} {
		d := retry.DefaultPolicy().Decide(tc.res, retry.Facts{Safety: tc.safety, Rand: seeded()})
		if !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("%s: reason %q does not contain %q", tc.safety, d.Reason, tc.reason)
		}
	}
}

func TestIdempotencyKeyConflicts(t *testing.T) {
	p := retry.DefaultPolicy()
	d := p.Decide(httpErr(http.StatusConflict), retry.Facts{Safety: retry.IdempotencyKey, Rand: seeded()})
	check(t, d, want{action: retry.Retry, delay: firstDelay, reason: "same idempotency key is still running"})
	d = p.Decide(httpErr(http.StatusUnprocessableEntity), retry.Facts{Safety: retry.IdempotencyKey, Rand: seeded()})
	check(t, d, want{action: retry.Fail, reason: "used before with a different request"})
}

func TestDeadline(t *testing.T) {
	p := retry.DefaultPolicy()
	d := p.Decide(httpErr(502), retry.Facts{Safety: retry.ReadOnly, Rand: seeded(), Remaining: firstDelay})
	check(t, d, want{action: retry.Fail, reason: "would pass the deadline"})
	d = p.Decide(httpErr(502), retry.Facts{Safety: retry.ReadOnly, Rand: seeded(), Remaining: firstDelay + 1})
	check(t, d, want{action: retry.Retry, delay: firstDelay})
	r := withRetryAfter(httpErr(429), classify.RetryAfter{Raw: "30", Delay: 30 * time.Second, Valid: true})
	d = p.Decide(r, retry.Facts{Rand: seeded(), Remaining: 10 * time.Second})
	check(t, d, want{action: retry.Fail, reason: "waiting 30s would pass the deadline (10s left)"})
	d = p.Decide(era(res(classify.StreamIncomplete), classify.Protocol2025), retry.Facts{LastEventID: "1", Rand: seeded(), Remaining: time.Millisecond})
	check(t, d, want{action: retry.Fail, reason: "not resumed"})
	// The stream's retry field is the wait the client makes: the deadline
	// is judged on it, not on the backoff it replaces.
	d = p.Decide(era(res(classify.StreamIncomplete), classify.Protocol2025), retry.Facts{LastEventID: "1", RetryField: time.Minute, Rand: seeded(), Remaining: 10 * time.Second})
	check(t, d, want{action: retry.Fail, reason: "waiting 1m0s (the stream's retry field) would pass the deadline (10s left)"})
	d = p.Decide(era(res(classify.StreamIncomplete), classify.Protocol2025), retry.Facts{LastEventID: "1", RetryField: 2 * time.Second, Rand: seeded(), Remaining: 10 * time.Second})
	check(t, d, want{action: retry.Resume, delay: 2 * time.Second, reason: "resume 1 of 2 after 2s (the stream's retry field): "})
}

// TestBackoffGrows follows one call through its retries with one seeded
// source, as a client loop would.
func TestBackoffGrows(t *testing.T) {
	p := retry.DefaultPolicy()
	p.MaxRetries = 6
	f := retry.Facts{Safety: retry.ReadOnly, Rand: seeded()}
	wantDelays := []time.Duration{153874654, 246574490, 627542402, 1274554526, 749684066, 206026285}
	for i, w := range wantDelays {
		d := p.Decide(httpErr(503), f)
		if d.Action != retry.Retry || d.Delay != w {
			t.Fatalf("retry %d: got %s, want a retry after %s", i+1, d, w)
		}
		f.Count(d)
	}
	if d := p.Decide(httpErr(503), f); d.Action != retry.Fail || !strings.Contains(d.Reason, "gave up after 6 retries (limit 6)") {
		t.Errorf("after the limit: %s", d)
	}
}

func TestZeroPolicyNeverResends(t *testing.T) {
	var p retry.Policy
	for _, r := range table {
		for _, safety := range retry.Safeties {
			f := retry.Facts{Safety: safety, Rand: seeded()}
			if r.facts != nil {
				r.facts(&f)
			}
			if d := p.Decide(r.res(), f); !d.Action.Final() {
				t.Errorf("%s/%s: the zero policy decided %s", r.name, safety, d)
			}
		}
	}
}

func TestFactsCount(t *testing.T) {
	var f retry.Facts
	for _, a := range retry.Actions {
		f.Count(retry.Decision{Action: a})
	}
	f.Count(retry.Decision{Action: retry.Renegotiate, Version: classify.Protocol2025})
	want := retry.Facts{Retries: 1, Reauthorizations: 1, Renegotiations: 2, Refreshes: 1, Reinitializations: 1, Resumptions: 1, InputRounds: 1,
		Protocol: classify.Protocol2025}
	if f.Retries != want.Retries || f.Reauthorizations != want.Reauthorizations || f.Renegotiations != want.Renegotiations ||
		f.Refreshes != want.Refreshes || f.Reinitializations != want.Reinitializations || f.Resumptions != want.Resumptions ||
		f.InputRounds != want.InputRounds || f.Protocol != want.Protocol {
		t.Errorf("got %+v\nwant %+v", f, want)
	}
}

// TestProtocolFromResult checks that Facts.Protocol wins over res.Protocol.
func TestProtocolFromResult(t *testing.T) {
	p := retry.DefaultPolicy()
	r := era(httpErr(404), classify.Protocol2025)
	if d := p.Decide(r, retry.Facts{SessionHeld: true}); d.Action != retry.Reinitialize {
		t.Errorf("2025 from the result: %s", d)
	}
	if d := p.Decide(r, retry.Facts{SessionHeld: true, Protocol: classify.Protocol2026}); d.Action != retry.Renegotiate {
		t.Errorf("2026 from the facts: %s", d)
	}
	r.SetProtocol("")
	if d := p.Decide(r, retry.Facts{}); d.Action != retry.Renegotiate {
		t.Errorf("no protocol anywhere is 2026-07-28: %s", d)
	}
}

func TestActionNamesAreStable(t *testing.T) {
	want := []string{"done", "retry", "reauthorize", "renegotiate", "refresh-and-retry", "reinitialize", "resume",
		"continue-input", "poll-task", "surface-to-model", "fail"}
	if len(retry.Actions) != len(want) {
		t.Fatalf("%d actions, want %d", len(retry.Actions), len(want))
	}
	for i, a := range retry.Actions {
		if string(a) != want[i] {
			t.Errorf("action %d is %q, want %q", i, a, want[i])
		}
	}
	b, err := json.Marshal(retry.Decision{Action: retry.RefreshAndRetry, Reason: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"action":"refresh-and-retry","delayNs":0,"reason":"r"}` {
		t.Errorf("JSON %s", got)
	}
	safeties := []string{"read-only", "idempotent", "idempotency-key", "unsafe", "unknown"}
	for i, s := range retry.Safeties {
		if string(s) != safeties[i] {
			t.Errorf("safety %d is %q, want %q", i, s, safeties[i])
		}
	}
}

func TestActionKinds(t *testing.T) {
	final := map[retry.Action]bool{retry.Done: true, retry.SurfaceToModel: true, retry.PollTask: true, retry.Fail: true}
	resends := map[retry.Action]bool{retry.Retry: true, retry.Reauthorize: true, retry.Renegotiate: true, retry.RefreshAndRetry: true,
		retry.Reinitialize: true, retry.ContinueInput: true}
	for _, a := range retry.Actions {
		if a.Final() != final[a] || a.Resends() != resends[a] {
			t.Errorf("%s: Final %v Resends %v", a, a.Final(), a.Resends())
		}
		if a.Final() && a.Resends() {
			t.Errorf("%s is both final and a re-send", a)
		}
	}
}

func TestDecisionString(t *testing.T) {
	for _, tc := range []struct {
		d    retry.Decision
		want string
	}{
		{retry.Decision{Action: retry.Retry, Delay: 3 * time.Second, Reason: "r"}, "retry in 3s: r"},
		{retry.Decision{Action: retry.Renegotiate, Version: "2025-11-25", Reason: "r"}, "renegotiate to 2025-11-25: r"},
		{retry.Decision{Action: retry.Reauthorize, StepUp: true, Reason: "r"}, "reauthorize (step-up): r"},
		{retry.Decision{Action: retry.Fail, Reason: "r"}, "fail: r"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestSafetyFromHints(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		readOnly, destructive, idempotent *bool
		want                              retry.Safety
	}{
		{nil, nil, nil, retry.Unknown},
		{&yes, nil, nil, retry.ReadOnly},
		{&yes, &yes, &no, retry.ReadOnly},
		{&no, nil, &yes, retry.Idempotent},
		{nil, &yes, &yes, retry.Idempotent},
		{&no, nil, nil, retry.Unsafe},
		{nil, &no, nil, retry.Unsafe},
		{nil, nil, &no, retry.Unsafe},
	} {
		if got := retry.SafetyFromHints(tc.readOnly, tc.destructive, tc.idempotent); got != tc.want {
			t.Errorf("SafetyFromHints(%v, %v, %v) = %s, want %s", tc.readOnly, tc.destructive, tc.idempotent, got, tc.want)
		}
	}
	for m, want := range map[string]retry.Safety{
		"tools/list": retry.ReadOnly, "server/discover": retry.ReadOnly, "resources/templates/list": retry.ReadOnly,
		"tools/call": retry.Unknown, "resources/read": retry.Unknown, "initialize": retry.Unknown,
	} {
		if got := retry.MethodSafety(m); got != want {
			t.Errorf("MethodSafety(%s) = %s, want %s", m, got, want)
		}
	}
}

// TestEveryOutcomeIsKnown: every outcome a response can be judged, the
// classifier's and the ones only proxies produce, has a decision of its
// own. REQUEST_ACCEPTED (the proxy's 2024-11-05 HTTP+SSE POSTs) was added
// without one and read "unknown to the retry policy". The client's own
// conclusions (INPUT_ROUNDS_EXCEEDED, TOOL_EXCLUDED, STDIO_NOISE,
// AUTH_FAILED) are what follows a decision, never the input of one.
func TestEveryOutcomeIsKnown(t *testing.T) {
	conclusions := map[classify.Outcome]bool{classify.InputRoundsExceeded: true, classify.ToolExcluded: true,
		classify.StdioNoise: true, classify.AuthFailed: true}
	for _, o := range append(append([]classify.Outcome{}, classify.Outcomes...), classify.CallOutcomes...) {
		if conclusions[o] {
			continue
		}
		d := retry.Policy{}.Decide(res(o), retry.Facts{})
		if strings.Contains(d.Reason, "unknown to the retry policy") {
			t.Errorf("%s: %s: %s", o, d.Action, d.Reason)
		}
	}
}
