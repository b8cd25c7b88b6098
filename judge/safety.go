package judge

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/retry"
)

var safetyRules = []Rule{
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
				y := t.after(x)
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
		Applies: failureFollowed,
		Check: func(t *Trace) (bool, string) {
			var retried []*Exchange
			for _, r := range t.Retries() {
				retried = append(retried, r.Next)
			}
			var bad []string
			most := 0
			for _, xs := range groupByKey(retried) {
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
				y := t.after(x)
				if y == nil {
					good = append(good, fmt.Sprintf("%s was not repeated", x.Label()))
					continue
				}
				gap := y.Start.Sub(x.End)
				if gap < wait-t.Limits.RetryAfterSlack {
					bad = append(bad, fmt.Sprintf("%s came %s after %s's %s with Retry-After: %s (%s)", y.Label(), FormatDuration(gap), x.Label(), x.What, x.RetryAfter, wait))
				} else {
					good = append(good, fmt.Sprintf("%s waited %s (Retry-After: %s)", y.Label(), FormatDuration(gap), x.RetryAfter))
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
					gap := r.Next.Start.Sub(r.Prev.End)
					gaps = append(gaps, FormatDuration(gap))
					slow = slow || gap >= t.Limits.MinBackoff
				}
				line := fmt.Sprintf("%s %s retried at POSTs %s after waits of %s", rs[0].Next.Method, rs[0].Next.Tool, posts(nexts(rs)), strings.Join(gaps, ", "))
				if slow {
					good = append(good, line)
				} else {
					bad = append(bad, line+fmt.Sprintf(": every wait under %s", FormatDuration(t.Limits.MinBackoff)))
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
				y := t.after(x)
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

// backoffRuns groups the retries without a Retry-After by request (a
// request sent again with a new token after 401 or 403 is not a retry of a
// failing server: the auth.* rules and safety.retry-bound bound those).
func backoffRuns(t *Trace) [][]Repeat {
	idx := map[string]int{}
	var out [][]Repeat
	for _, r := range t.Retries() {
		if _, ok := retryAfter(r.Prev); ok || reauthorized(t, r) {
			continue
		}
		k := r.Next.Key()
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

func nexts(rs []Repeat) []*Exchange {
	out := make([]*Exchange, len(rs))
	for i, r := range rs {
		out[i] = r.Next
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
