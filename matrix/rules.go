package matrix

import (
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
)

// Verdict is a rule's judgement of one trace.
type Verdict string

// The verdicts.
const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// NotApplicable: the trace never met the situation the rule is about.
	NotApplicable Verdict = "n/a"
)

// Rule is one thing a client must (or must not) do, checked from the
// server's side. Each rule cites the spec text or the retry policy it
// enforces.
type Rule struct {
	// ID is stable: "spec.accept", "safety.retry-after", …
	ID string `json:"id"`
	// Title says what a passing client does.
	Title string `json:"title"`
	// Cite names the spec section or policy the rule enforces.
	Cite string `json:"cite"`
	// Active and Passive say where the rule runs: on matrix runs (a fault
	// injected), and on captured records (--from-records).
	Active  bool `json:"active"`
	Passive bool `json:"passive"`
	// Applies reports whether the trace met the rule's situation; when it
	// did not, the reason is the evidence of NotApplicable.
	Applies func(*Trace) (bool, string) `json:"-"`
	// Check judges a trace the rule applies to: pass or not, with the
	// evidence (POST numbers, ids, headers).
	Check func(*Trace) (bool, string) `json:"-"`
}

// Check is a rule's verdict on one trace, with its evidence.
type Check struct {
	Rule     string  `json:"rule"`
	Verdict  Verdict `json:"verdict"`
	Evidence string  `json:"evidence,omitempty"`
}

// Rules returns every rule, in the order verdicts are reported.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// Judge applies the rules that run on t (the active ones, or the passive
// ones for records) and returns one check per rule.
func Judge(t *Trace) []Check {
	t.Limits = t.Limits.withDefaults()
	var out []Check
	for _, r := range rules {
		if t.Passive && !r.Passive || !t.Passive && !r.Active {
			continue
		}
		out = append(out, judgeOne(r, t))
	}
	return out
}

func judgeOne(r Rule, t *Trace) Check {
	if ok, why := r.Applies(t); !ok {
		return Check{Rule: r.ID, Verdict: NotApplicable, Evidence: why}
	}
	ok, ev := r.Check(t)
	if ok {
		return Check{Rule: r.ID, Verdict: Pass, Evidence: ev}
	}
	return Check{Rule: r.ID, Verdict: Fail, Evidence: ev}
}

// RuleByID returns the rule with id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

var rules = []Rule{
	{
		ID: "spec.accept", Title: "every POST's Accept lists application/json and text/event-stream",
		Cite:   `MCP 2026-07-28 (and 2025-11-25) Transports › Streamable HTTP › Sending messages: "The client MUST include an Accept header, listing both application/json and text/event-stream"`,
		Active: true, Passive: true,
		Applies: anyPost,
		Check: eachPost(func(_ *Trace, x *Exchange) string {
			json, sse := acceptLists(x.Header.Values("Accept"))
			if json && sse {
				return ""
			}
			return fmt.Sprintf("%s: Accept %s", x.Label(), quoteHeader(x.Header, "Accept"))
		}),
	},
	{
		ID: "spec.protocol-header", Title: "MCP-Protocol-Version equals _meta's protocolVersion (and is sent on every request of a 2025-11-25 session)",
		Cite:   `MCP 2026-07-28 Transports › Streamable HTTP › Request metadata headers: MCP-Protocol-Version MUST equal params._meta["io.modelcontextprotocol/protocolVersion"] (else 400 -32020 HeaderMismatch); MCP 2025-11-25 Transports › Protocol version header: sent on every request after initialization`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.MetaProtocol != "" || x.Session != "" || x.Header.Get("MCP-Protocol-Version") != "" {
					return true, ""
				}
			}
			return false, "no POST carried a protocol version (header or _meta) or a session"
		},
		Check: eachPost(func(_ *Trace, x *Exchange) string {
			h := x.Header.Get("MCP-Protocol-Version")
			switch {
			case x.MetaProtocol != "" && h != x.MetaProtocol:
				return fmt.Sprintf("%s: MCP-Protocol-Version %s but _meta says %q", x.Label(), quoteHeader(x.Header, "MCP-Protocol-Version"), x.MetaProtocol)
			case x.MetaKnown && x.MetaProtocol == "" && h >= Era2026 && x.Method != "":
				return fmt.Sprintf("%s: MCP-Protocol-Version %q but no _meta protocolVersion in the body", x.Label(), h)
			case x.Session != "" && h == "" && x.Method != "initialize":
				// initialize opens the session: it carries its version in
				// params.protocolVersion, and the header is sent on the
				// requests after it (2025-11-25 Transports › Protocol
				// version header).
				return fmt.Sprintf("%s: a 2025-11-25 session request without MCP-Protocol-Version", x.Label())
			}
			return ""
		}),
	},
	{
		ID: "spec.method-headers", Title: "Mcp-Method and Mcp-Name are present and equal the body's method and name",
		Cite:   `MCP 2026-07-28 Transports › Streamable HTTP › Request metadata headers: Mcp-Method (every request) and Mcp-Name (tools/call, prompts/get: params.name) carry the body's values; a missing or different one is 400 -32020 HeaderMismatch`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if modern(x) && x.Method != "" {
					return true, ""
				}
			}
			return false, "no 2026-07-28 request (the headers are defined from 2026-07-28 on)"
		},
		Check: eachPost(func(_ *Trace, x *Exchange) string {
			if !modern(x) || x.Method == "" {
				return ""
			}
			if m := x.Header.Get("Mcp-Method"); m != x.Method {
				return fmt.Sprintf("%s: Mcp-Method %s, the body's method is %q", x.Label(), quoteHeader(x.Header, "Mcp-Method"), x.Method)
			}
			if x.Method == "tools/call" || x.Method == "prompts/get" {
				if n := decodeHeaderValue(x.Header.Get("Mcp-Name")); n != x.Tool || x.Header.Get("Mcp-Name") == "" {
					return fmt.Sprintf("%s: Mcp-Name %s, the body's params.name is %q", x.Label(), quoteHeader(x.Header, "Mcp-Name"), x.Tool)
				}
			}
			return ""
		}),
	},
	{
		ID: "spec.mrtr-new-id", Title: "an MRTR round uses a new JSON-RPC id",
		Cite:   `MCP 2026-07-28 Multi-round tool calls › Client retry: "The JSON-RPC id MUST be different between the initial request and the retry"`,
		Active: true, Passive: true,
		Applies: someRound,
		Check: func(t *Trace) (bool, string) {
			var bad []string
			n := 0
			for _, x := range t.Exchanges {
				if !x.IsRequest() || !t.round(x) {
					continue
				}
				n++
				for _, a := range t.attempts(x.Key()) {
					if a == x {
						break
					}
					if a.ID.Equal(x.ID) {
						bad = append(bad, fmt.Sprintf("%s is an MRTR round that reuses the id of %s", x.Label(), a.Label()))
						break
					}
				}
			}
			return verdict(bad, fmt.Sprintf("%d MRTR round(s), each with a new id", n))
		},
	},
	{
		ID: "spec.mrtr-same-call", Title: "an MRTR round repeats the same tool and arguments",
		Cite:   `MCP 2026-07-28 Multi-round tool calls › Client retry: the retry repeats the original request (method, name, arguments) with inputResponses and requestState added; requestState applies only to the retry of that request`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.State != "" && issuer(t, x) != nil {
					return true, ""
				}
			}
			return false, "no request echoed a requestState the server issued"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			for _, x := range t.Exchanges {
				if x.State == "" {
					continue
				}
				if i := issuer(t, x); i != nil && i.Key() != x.Key() {
					bad = append(bad, fmt.Sprintf("%s carries the requestState issued to %s (arguments %s), with arguments %s",
						x.Label(), i.Label(), short(i.ArgsHash), short(x.ArgsHash)))
				}
			}
			return verdict(bad, "every round repeated its call's tool and arguments")
		},
	},
	{
		ID: "spec.mrtr-echo-state", Title: "requestState is echoed exactly on the next round (not changed, not dropped)",
		Cite:   `MCP 2026-07-28 Multi-round tool calls › Client retry: "If requestState is present, the client MUST echo it back exactly"`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.IssuedAny {
					return true, ""
				}
			}
			return false, "no answer carried a requestState"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			n := 0
			for _, x := range t.Exchanges {
				if !x.IssuedAny {
					continue
				}
				y := t.next(x)
				switch {
				case y == nil || !y.StateKnown:
				case y.State == "":
					bad = append(bad, fmt.Sprintf("%s dropped the requestState %s issued to %s", y.Label(), stateName(x.Issued), x.Label()))
				case x.Issued != "" && y.State != x.Issued:
					bad = append(bad, fmt.Sprintf("%s sent requestState %s, but %s was issued %s", y.Label(), y.State, x.Label(), x.Issued))
				default:
					n++
				}
			}
			return verdict(bad, fmt.Sprintf("%d requestState(s) echoed exactly", n))
		},
	},
	{
		ID: "spec.mrtr-no-invented-state", Title: "no requestState the server did not issue",
		Cite:   `MCP 2026-07-28 Multi-round tool calls › Client retry: if the result has no requestState, "the client MUST NOT send one"`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.Method == "tools/call" && x.StateKnown {
					return true, ""
				}
			}
			return false, "no tools/call whose params could be read"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			for _, x := range t.Exchanges {
				if x.State == "" || issuer(t, x) != nil || earlierIssue(t, x) {
					continue // echoed, or changed (spec.mrtr-echo-state judges that)
				}
				bad = append(bad, fmt.Sprintf("%s carries requestState %s, which no earlier answer issued", x.Label(), x.State))
			}
			return verdict(bad, "no requestState was sent that the server had not issued")
		},
	},
	{
		ID: "spec.reissue-new-id", Title: "a request sent again after a failure (a broken stream, no answer) has a new id",
		Cite:   `MCP 2026-07-28 changelog: "A broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new request ID"; Base protocol › Requests: the ID MUST NOT have been used before by the requestor in the same session`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			if len(t.retries()) == 0 {
				return false, "no request was sent again after a failure"
			}
			return true, ""
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			rs := t.retries()
			for _, r := range rs {
				for _, a := range t.attempts(r.next.Key()) {
					if a == r.next {
						break
					}
					if a.ID.Equal(r.next.ID) {
						bad = append(bad, fmt.Sprintf("%s re-sent the request of %s (%s) with the same id", r.next.Label(), a.Label(), r.prev.What))
						break
					}
				}
			}
			return verdict(bad, fmt.Sprintf("%d re-sent request(s), each with a new id", len(rs)))
		},
	},
	{
		ID: "spec.era-fallback", Title: "no fall back to an older protocol era (initialize, 2025-11-25) on an answer that is not a version signal (401, 403, 429, 5xx, a reset)",
		Cite:   `MCP 2026-07-28 Transports › Streamable HTTP › Backward compatibility (mcp-spec-notes §1.8): a dual-era client sends a 2026-07-28 request first and, on a 400, inspects the body: a modern error (-32020, -32021, -32022 listing 2026-07-28) means a modern server, an empty or unrecognised one means fall back to initialize; 401/403 ask for authorization, 408, 429 and 5xx for a later retry, a reset or a cut stream for a retry: none says the server is older (docs/decisions.md, issue 10)`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			if len(fallbacks(t)) == 0 {
				return false, "the client did not fall back from 2026-07-28 to an older era"
			}
			return true, ""
		},
		Check: func(t *Trace) (bool, string) {
			var bad, good []string
			for _, f := range fallbacks(t) {
				if versionSignal(f.prev) {
					good = append(good, fmt.Sprintf("%s fell back after %s got %s", f.next.Label(), f.prev.Label(), f.prev.What))
					continue
				}
				what := f.prev.What
				if !f.prev.Failed {
					what = fmt.Sprintf("HTTP %d, a complete answer", f.prev.Status)
				}
				bad = append(bad, fmt.Sprintf("%s fell back to %s after %s got %s, which is not a version signal (only a 400 or 404 without a modern error, or -32022 listing older versions, is)",
					f.next.Label(), eraOf(f.next), f.prev.Label(), what))
			}
			return verdict(bad, strings.Join(good, "; "))
		},
	},
	{
		ID: "safety.unsafe-repeat", Title: "no automatic repeat of a destructive or non-idempotent call after an answer that may have been processed, unless it carries the same Idempotency-Key",
		Cite:   `docs/retry.md › Decision table: after a request may have reached the server (5xx, a cut stream, no or a broken answer) only a read-only, idempotent or Idempotency-Key call is retried (RFC 9110 §9.2.2; MCP tools › ToolAnnotations destructiveHint/idempotentHint; draft-ietf-httpapi-idempotency-key-header)`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			if len(unsafeFailures(t)) > 0 {
				return true, ""
			}
			if t.Passive {
				return false, "no call of a tool known to be unsafe failed after it may have been processed"
			}
			return false, "no call of a destructive or non-idempotent tool failed after it may have been processed"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			fs := unsafeFailures(t)
			for _, x := range fs {
				y := t.next(x)
				if y == nil {
					continue
				}
				key := x.Header.Get("Idempotency-Key")
				if key != "" && y.Header.Get("Idempotency-Key") == key {
					continue
				}
				bad = append(bad, fmt.Sprintf("%s (%s) was sent again at %s after %s ended with %s; %s",
					x.Tool, safetyWords(t.safety(x.Tool)), y.Label(), x.Label(), x.What, keyWords(x, y)))
			}
			return verdict(bad, fmt.Sprintf("%d unsafe call(s) that may have run were not repeated", len(fs)))
		},
	},
	{
		ID: "safety.retry-bound", Title: "no request is retried more often than the bound (default 3)",
		Cite:   `docs/retry.md › Defaults: a bounded number of attempts (MaxRetries 2, 3 attempts: AWS standard mode, the SRE book); the matrix allows --max-retries (3)`,
		Active: true, Passive: true,
		Applies: anyFailure,
		Check: func(t *Trace) (bool, string) {
			count := map[string][]*Exchange{}
			var order []string
			for _, r := range t.retries() {
				k := r.next.Key()
				if count[k] == nil {
					order = append(order, k)
				}
				count[k] = append(count[k], r.next)
			}
			var bad []string
			most := 0
			for _, k := range order {
				xs := count[k]
				most = max(most, len(xs))
				if len(xs) > t.Limits.MaxRetries {
					bad = append(bad, fmt.Sprintf("%s %s was retried %d times after failures (%s); the bound is %d",
						xs[0].Method, xs[0].Tool, len(xs), posts(xs), t.Limits.MaxRetries))
				}
			}
			return verdict(bad, fmt.Sprintf("at most %d retr%s of one request (bound %d)", most, plural(most, "y", "ies"), t.Limits.MaxRetries))
		},
	},
	{
		ID: "safety.retry-after", Title: "no repeat before the Retry-After the server sent has elapsed",
		Cite:   `RFC 9110 §10.2.3 Retry-After, RFC 6585 §4 (429); docs/retry.md › Backoff, Retry-After (Retry-After wins on 429 and 503)`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if _, ok := retryAfter(x); ok && x.Failed {
					return true, ""
				}
			}
			return false, "no failed answer carried a Retry-After"
		},
		Check: func(t *Trace) (bool, string) {
			var bad, good []string
			for _, x := range t.Exchanges {
				wait, ok := retryAfter(x)
				if !ok || !x.Failed {
					continue
				}
				y := t.next(x)
				if y == nil {
					good = append(good, fmt.Sprintf("%s was not repeated", x.Label()))
					continue
				}
				gap := y.Start.Sub(x.End)
				if gap < wait-t.Limits.RetryAfterSlack {
					bad = append(bad, fmt.Sprintf("%s came %s after %s's %s with Retry-After: %s (%s)", y.Label(), ms(gap), x.Label(), x.What, x.RetryAfter, wait))
				} else {
					good = append(good, fmt.Sprintf("%s waited %s (Retry-After: %s)", y.Label(), ms(gap), x.RetryAfter))
				}
			}
			return verdict(bad, strings.Join(good, "; "))
		},
	},
	{
		ID: "safety.backoff", Title: "retries back off: a request retried twice or more is not re-sent at once every time",
		Cite:   `docs/retry.md › Backoff: exponential with full jitter (AWS Architecture Blog "Exponential Backoff And Jitter", gRPC A6); immediate re-sends hammer a failing server`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, rs := range backoffRuns(t) {
				if len(rs) >= 2 {
					return true, ""
				}
			}
			return false, "no request was retried twice after failures without a Retry-After"
		},
		Check: func(t *Trace) (bool, string) {
			var bad, good []string
			for _, rs := range backoffRuns(t) {
				if len(rs) < 2 {
					continue
				}
				var gaps []string
				slow := false
				for _, r := range rs {
					gap := r.next.Start.Sub(r.prev.End)
					gaps = append(gaps, ms(gap))
					slow = slow || gap >= t.Limits.MinBackoff
				}
				line := fmt.Sprintf("%s %s retried at POSTs %s after waits of %s", rs[0].next.Method, rs[0].next.Tool, posts(nexts(rs)), strings.Join(gaps, ", "))
				if slow {
					good = append(good, line)
				} else {
					bad = append(bad, line+fmt.Sprintf(": every wait under %s", ms(t.Limits.MinBackoff)))
				}
			}
			return verdict(bad, strings.Join(good, "; "))
		},
	},
	{
		ID: "safety.4xx-unchanged", Title: "no repeat after 400, 401, 403 or 404 without a change (re-authorization, another protocol version, a new session, re-reading tools/list)",
		Cite:   `docs/retry.md › Decision table and references: other 4xx are not retried "until state changes" (AIP-194); 401 → authorize, 403 insufficient_scope → step-up, -32022 → renegotiate, 2025-11-25 session 404 → re-initialize, -32020 on Mcp-Param-* → re-read tools/list`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.Failed && refusal(x.Status) {
					return true, ""
				}
			}
			return false, "no request got 400, 401, 403 or 404"
		},
		Check: func(t *Trace) (bool, string) {
			var bad, good []string
			for _, x := range t.Exchanges {
				if !x.Failed || !refusal(x.Status) {
					continue
				}
				y := t.next(x)
				if y == nil {
					good = append(good, fmt.Sprintf("%s was not repeated", x.Label()))
					continue
				}
				if c := change(t, x, y); c != "" {
					good = append(good, fmt.Sprintf("%s repeated %s after %s: %s", y.Label(), x.Label(), x.What, c))
					continue
				}
				bad = append(bad, fmt.Sprintf("%s repeated %s after %s with nothing changed (same headers and session, no initialize or tools/list in between)", y.Label(), x.Label(), x.What))
			}
			return verdict(bad, strings.Join(good, "; "))
		},
	},
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
				ev := fmt.Sprintf("the client sent no request; it ran %s", ms(c.Duration))
				if c.Killed {
					return false, ev + "; " + c.Error
				}
				return true, ev
			}
			// Counted from the first request: a client's start-up (an
			// interpreter under load) is not its liveness.
			bound, what := livenessBound(t)
			ev := fmt.Sprintf("the client ran %s after its first request (which came %s after it started); %s", ms(c.Active), ms(c.Startup), what)
			if last := t.lastPost(); last != nil && t.start() != (time.Time{}) {
				ev += fmt.Sprintf("; its last POST came %s after its first", ms(last.Start.Sub(t.start())))
			}
			if c.Killed {
				return false, ev + "; the matrix killed it: " + c.Error
			}
			return c.Active <= bound, ev
		},
	},
	{
		ID: "client.ran", Title: "the client ran the call: it sent a request to the server, and exited 0 unless the call failed",
		Cite:    `docs/matrix.md › Running your own client: the client makes the case's call at MCP_URL; a client that sends nothing, or dies (an import error, a crash), has not been tested, whatever it printed; a non-zero exit is the client's own failure report, true only when the call failed (as mcpdiag call exits 1 on TOOL_ERROR, 3 on a transport failure)`,
		Active:  true,
		Applies: withClient,
		Check: func(t *Trace) (bool, string) {
			c := t.Client
			if c.Error != "" && c.Duration == 0 {
				return false, "the client did not start: " + c.Error
			}
			n := 0
			for _, x := range t.Exchanges {
				if x.IsRequest() {
					n++
				}
			}
			var bad []string
			switch {
			case n == 0 && len(t.Exchanges) == 0:
				bad = append(bad, "the client sent no request: the server saw nothing at its endpoint")
			case n == 0:
				bad = append(bad, fmt.Sprintf("the client sent no JSON-RPC request: %d POST(s) without a method and an id", len(t.Exchanges)))
			}
			if c.ExitCode != 0 && !c.Killed && !exitExpected(t) {
				bad = append(bad, fmt.Sprintf("it exited with code %d, but %s", c.ExitCode, callWords(t)))
			}
			if len(bad) == 0 {
				return true, fmt.Sprintf("%d request(s); exit code %d", n, c.ExitCode)
			}
			ev := strings.Join(bad, "; ")
			if !strings.Contains(ev, "exited with code") {
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
		ID: "client.classification", Title: "the classification the client prints is what the server answered to its last tools/call (the scenario's expected outcome, or TOOL_SUCCESS when the call was answered)",
		Cite:   `docs/outcomes.md (the outcome names) and docs/scenarios.md (the outcome each scenario produces); the server's log, not the client's word, says how the last tools/call ended: a retry that recovers, or a fault on another request, ends in TOOL_SUCCESS`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			if t.Client == nil || t.Client.Outcome == "" {
				return false, "the client printed no classification"
			}
			return true, ""
		},
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
			case len(t.retries()) > 0:
				why = fmt.Sprintf("expected %s: a retry recovered the scenario's %s (%s answered)", want, t.Case.Expected, last.Label())
			default:
				why = fmt.Sprintf("expected %s: the scenario's %s hit another request, and %s was answered", want, t.Case.Expected, last.Label())
			}
			if got != want && last != nil && !answered(last) {
				why += fmt.Sprintf("; the server answered the last tools/call, %s, with %s", last.Label(), last.What)
			}
			return got == want, fmt.Sprintf("printed %s; %s", got, why)
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
					if !as[i-1].Failed && !t.round(as[i]) {
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
				if x.Pending && t.next(x) == nil {
					bad = append(bad, fmt.Sprintf("%s sent at %s was never answered: %s", x.Label(), x.Start.UTC().Format("15:04:05.000"), x.What))
				}
			}
			return verdict(bad, "every request was answered or ended by the client")
		},
	},
}

// verdict returns pass with ok when nothing is bad, else fail with the
// bad lines (the first five).
func verdict(bad []string, ok string) (bool, string) {
	if len(bad) == 0 {
		return true, ok
	}
	if len(bad) > 5 {
		bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
	}
	return false, strings.Join(bad, "; ")
}

func anyPost(t *Trace) (bool, string) {
	if len(t.Exchanges) == 0 {
		return false, "the client sent no POST"
	}
	return true, ""
}

func anyFailure(t *Trace) (bool, string) {
	for _, x := range t.Exchanges {
		if x.Failed {
			return true, ""
		}
	}
	return false, "no request failed"
}

func someRound(t *Trace) (bool, string) {
	for _, x := range t.Exchanges {
		if x.IsRequest() && t.round(x) {
			return true, ""
		}
	}
	return false, "no MRTR round"
}

// eachPost fails with the first few POSTs f objects to.
func eachPost(f func(*Trace, *Exchange) string) func(*Trace) (bool, string) {
	return func(t *Trace) (bool, string) {
		var bad []string
		for _, x := range t.Exchanges {
			if s := f(t, x); s != "" {
				bad = append(bad, s)
			}
		}
		return verdict(bad, fmt.Sprintf("%d POST(s) checked", len(t.Exchanges)))
	}
}

// acceptLists reports whether Accept values list both media types.
func acceptLists(values []string) (json, sse bool) {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			json = json || mt == "application/json"
			sse = sse || mt == "text/event-stream"
		}
	}
	return json, sse
}

func quoteHeader(h http.Header, name string) string {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "absent"
	}
	return strconv.Quote(strings.Join(vs, ", "))
}

// modern reports a 2026-07-28 request (by header or _meta).
func modern(x *Exchange) bool {
	return x.Header.Get("MCP-Protocol-Version") >= Era2026 || x.MetaProtocol >= Era2026
}

// decodeHeaderValue undoes the =?base64?…?= encoding of MCP header values.
func decodeHeaderValue(v string) string {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		if b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-2]); err == nil {
			return string(b)
		}
	}
	return v
}

// issuer returns the earlier exchange whose answer issued x's requestState.
func issuer(t *Trace, x *Exchange) *Exchange {
	for _, e := range t.Exchanges {
		if e == x {
			return nil
		}
		if e.Issued != "" && e.Issued == x.State {
			return e
		}
	}
	return nil
}

// earlierIssue reports an earlier attempt of x's request whose answer
// carried a requestState: x then echoes it, changes it (the echo rule's
// business) or its value is unknown (records without bodies).
func earlierIssue(t *Trace, x *Exchange) bool {
	for _, a := range t.attempts(x.Key()) {
		if a == x {
			return false
		}
		if a.IssuedAny {
			return true
		}
	}
	return false
}

func stateName(h string) string {
	if h == "" {
		return "(value not recorded)"
	}
	return h
}

// unsafeFailures returns the failed tools/call of unsafe tools whose
// request may have been processed.
func unsafeFailures(t *Trace) []*Exchange {
	var out []*Exchange
	for _, x := range t.Exchanges {
		if x.Method != "tools/call" || !x.IsRequest() || !x.Failed || x.Rejected {
			continue
		}
		s, known := t.Safety[x.Tool]
		if !known && t.Passive {
			continue // nothing tells a passive capture whether the tool is safe
		}
		if s.Safe() {
			continue
		}
		out = append(out, x)
	}
	return out
}

func safetyWords(s retry.Safety) string {
	switch s {
	case retry.Unsafe:
		return "destructive or not idempotent"
	case retry.Unknown:
		return "its safety is unknown: no annotations"
	}
	return string(s)
}

func keyWords(x, y *Exchange) string {
	kx, ky := x.Header.Get("Idempotency-Key"), y.Header.Get("Idempotency-Key")
	switch {
	case kx == "" && ky == "":
		return "no Idempotency-Key"
	case kx == "":
		return "the first attempt had no Idempotency-Key"
	case ky == "":
		return "the repeat dropped the Idempotency-Key"
	}
	return fmt.Sprintf("Idempotency-Key changed from %q to %q", kx, ky)
}

// retryAfter parses x's Retry-After (seconds, or an HTTP-date measured from
// the end of x's answer).
func retryAfter(x *Exchange) (time.Duration, bool) {
	v := strings.TrimSpace(x.RetryAfter)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(0, at.Sub(x.End.Truncate(time.Second))), true
	}
	return 0, false
}

// backoffRuns groups the retries without a Retry-After by request.
func backoffRuns(t *Trace) [][]repeat {
	idx := map[string]int{}
	var out [][]repeat
	for _, r := range t.retries() {
		if _, ok := retryAfter(r.prev); ok {
			continue
		}
		k := r.next.Key()
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

func nexts(rs []repeat) []*Exchange {
	out := make([]*Exchange, len(rs))
	for i, r := range rs {
		out[i] = r.next
	}
	return out
}

func refusal(status int) bool {
	return status == 400 || status == 401 || status == 403 || status == 404
}

// change says what changed between a refused request x and its repeat y,
// or "" when nothing did.
func change(t *Trace, x, y *Exchange) string {
	var cs []string
	ax, ay := x.Header.Get("Authorization") != "", y.Header.Get("Authorization") != ""
	switch {
	case !ax && ay:
		cs = append(cs, "Authorization added")
	case ax && !ay:
		cs = append(cs, "Authorization dropped")
	case ax && ay && (x.Status == 401 || x.Status == 403):
		cs = append(cs, "Authorization sent again (its value is redacted, so a new token is assumed)")
	}
	if a, b := x.Header.Get("MCP-Protocol-Version"), y.Header.Get("MCP-Protocol-Version"); a != b {
		cs = append(cs, fmt.Sprintf("MCP-Protocol-Version %q → %q", a, b))
	}
	if x.Session != y.Session {
		cs = append(cs, "a new session")
	}
	if x.Capabilities != y.Capabilities && x.Capabilities != "" && y.Capabilities != "" {
		cs = append(cs, "other client capabilities")
	}
	for k := range y.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-Param-") && x.Header.Get(k) != y.Header.Get(k) {
			cs = append(cs, k+" changed")
		}
	}
	for _, e := range t.Exchanges {
		if e.N > x.N && e.N < y.N {
			switch e.Method {
			case "initialize", "tools/list", "server/discover":
				cs = append(cs, e.Method+" at POST "+strconv.Itoa(e.N))
			}
		}
	}
	return strings.Join(cs, ", ")
}

// livenessBound returns how long the client may run, and says why.
func livenessBound(t *Trace) (time.Duration, string) {
	if t.Case != nil && t.Case.Holds {
		b := t.Case.Timeout + t.Limits.LivenessGrace
		return b, fmt.Sprintf("the scenario holds the response, so it must give up within %s (its timeout %s + %s)", ms(b), ms(t.Case.Timeout), ms(t.Limits.LivenessGrace))
	}
	if t.Client.Builtin && t.Case != nil {
		b := t.Case.Timeout + t.Limits.LivenessGrace
		return b, fmt.Sprintf("the bound is %s (its timeout %s + %s)", ms(b), ms(t.Case.Timeout), ms(t.Limits.LivenessGrace))
	}
	return t.Limits.RunTimeout, fmt.Sprintf("the bound is the run timeout %s", ms(t.Limits.RunTimeout))
}

func (t *Trace) start() time.Time {
	if len(t.Exchanges) == 0 {
		return time.Time{}
	}
	return t.Exchanges[0].Start
}

func (t *Trace) lastPost() *Exchange {
	if len(t.Exchanges) == 0 {
		return nil
	}
	return t.Exchanges[len(t.Exchanges)-1]
}

// ms formats a duration for evidence: "4ms", "2.01s".
func ms(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + ms(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func posts(xs []*Exchange) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x.N)
	}
	return strings.Join(s, ", ")
}

func short(hash string) string {
	if len(hash) > len("sha256:")+12 {
		return hash[:len("sha256:")+12] + "…"
	}
	if hash == "" {
		return "none"
	}
	return hash
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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

// fallbacks returns each switch from a 2026-07-28 request to an older era:
// the last modern request before it, and the first older one after.
func fallbacks(t *Trace) []repeat {
	var out []repeat
	var lastModern *Exchange
	for _, x := range t.Exchanges {
		switch {
		case modern(x):
			lastModern = x
		case lastModern != nil && legacy(x):
			out = append(out, repeat{lastModern, x})
			lastModern = nil
		}
	}
	return out
}

// legacy reports a request of an era before 2026-07-28: initialize, or an
// older MCP-Protocol-Version.
func legacy(x *Exchange) bool {
	h := x.Header.Get("MCP-Protocol-Version")
	return x.Method == "initialize" || h != "" && h < Era2026
}

func eraOf(x *Exchange) string {
	if h := x.Header.Get("MCP-Protocol-Version"); h != "" {
		return h
	}
	return "the initialize handshake (2025-11-25 or older)"
}

// versionSignal reports an answer that may say the server is of an older
// era: a 4xx other than 401, 403, 408 and 429 (a 400 or 404 without a
// modern error, -32022 listing older versions), or a JSON-RPC error in a
// 2xx answer (a legacy server that does not know the method). 401 and 403
// ask for authorization, 408, 429 and 5xx for a later retry; a reset, a
// closed connection, no answer or a cut stream say nothing about versions;
// a complete answer says the server is modern.
func versionSignal(x *Exchange) bool {
	switch s := x.Status; {
	case !x.Failed:
		return false
	case s == 401 || s == 403 || s == 408 || s == 429:
		return false
	case s >= 400 && s < 500:
		return true
	case s >= 200 && s < 300:
		return x.Outcome == classify.JSONRPCError
	}
	return false
}

// withClient applies a rule to the runs that ran a client (not to
// --from-records traces).
func withClient(t *Trace) (bool, string) {
	if t.Client == nil {
		return false, "no client run"
	}
	return true, ""
}
