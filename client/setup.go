package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

// prepare decides the era (initializing a 2025-11-25 session when needed)
// and reads tools/list. It reports false when the call cannot go on; the
// exchange that stopped it is then st.call.Final.
func (c *Client) prepare(ctx context.Context, st *callState) bool {
	if !c.prepareEra(ctx, st) {
		c.legacyHint(ctx, st)
		return false
	}
	return true
}

// prepareEra is prepare without the check for the older transport.
func (c *Client) prepareEra(ctx context.Context, st *callState) bool {
	if c.protocol == Protocol2025 && c.session == "" {
		if !c.initialize(ctx, st) {
			return false
		}
	}
	if !c.listed {
		return c.listTools(ctx, st)
	}
	return true
}

// setup sends a set-up request (tools/list, initialize, initialized) and
// applies only the policy's Retry: the request is safe to repeat. Any other
// failure stops the call with that exchange as its final word.
func (c *Client) setup(ctx context.Context, st *callState, build func() *request) (*Exchange, bool) {
	return c.setupWith(ctx, st, retry.Facts{Safety: retry.ReadOnly, Rand: c.opts.Rand}, build)
}

// setupWith is setup with the facts so far (a probe that already re-sent
// once passes its count on). Besides Retry it follows a Renegotiate to the
// version the request already used (see versionListedAnyway): a set-up
// request never changes the era.
func (c *Client) setupWith(ctx context.Context, st *callState, facts retry.Facts, build func() *request) (*Exchange, bool) {
	for {
		rq := build()
		ex := c.send(ctx, rq)
		c.record(ex)
		d := c.decide(ctx, c.pol, ex, &facts)
		if ex.Result.Outcome.Success() {
			return ex, true
		}
		if d.Action == retry.Retry {
			if c.sleep(ctx, d.Delay) {
				facts.Count(d)
				st.call.Retries++
				continue
			}
			fail := stoppedBefore(ctx, d)
			ex.Decision = &fail
			return ex, false
		}
		if d.Action == retry.Renegotiate && d.Version == c.protocol {
			facts.Count(d)
			st.call.Recoveries = append(st.call.Recoveries, "renegotiate: "+d.Reason)
			continue
		}
		return ex, false
	}
}

// stop ends the call at a set-up exchange.
func (st *callState) stop(ex *Exchange) bool {
	st.call.Final = ex.Result
	if ex.Decision != nil {
		st.call.Decision = *ex.Decision
	}
	return false
}

// initialize runs the 2025-11-25 handshake: initialize, then
// notifications/initialized, keeping the session id.
func (c *Client) initialize(ctx context.Context, st *callState) bool {
	c.protocol = Protocol2025
	c.session = ""
	caps := c.opts.capabilities()
	info, _ := json.Marshal(c.opts.clientInfo())
	ex, ok := c.setup(ctx, st, func() *request {
		rq := c.buildRequest("initialize", "", map[string]json.RawMessage{
			"protocolVersion": json.RawMessage(`"` + Protocol2025 + `"`),
			"capabilities":    caps,
			"clientInfo":      info,
		}, nil, OriginNone)
		// The version header belongs to the requests after initialize.
		rq.header.Del("MCP-Protocol-Version")
		return rq
	})
	if !ok {
		return st.stop(ex)
	}
	c.session = ex.ResponseHeader.Get("Mcp-Session-Id")
	var res struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	_ = json.Unmarshal(ex.Result.Response(), &res)
	c.sessionVersion = Protocol2025
	if v := res.Result.ProtocolVersion; v != "" && v != Protocol2025 {
		// The server chose an older revision: every later request names
		// that one (MCP lifecycle: the negotiated version is what the
		// MCP-Protocol-Version header carries).
		c.sessionVersion = v
		c.eraReason += fmt.Sprintf(" (the server answered initialize with protocolVersion %s, used from here on)", v)
	}
	ex, ok = c.setup(ctx, st, func() *request {
		rq := c.buildRequest("notifications/initialized", "", nil, nil, OriginNone)
		rq.notification, rq.id = true, wire.ID{}
		return rq
	})
	if !ok {
		return st.stop(ex)
	}
	return true
}

// Tool is what tools/list says about one tool.
type Tool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations struct {
		ReadOnlyHint    *bool `json:"readOnlyHint"`
		DestructiveHint *bool `json:"destructiveHint"`
		IdempotentHint  *bool `json:"idempotentHint"`
	} `json:"annotations"`
}

// listTools reads every page of tools/list. In auto mode its first request
// is the probe that decides the era.
func (c *Client) listTools(ctx context.Context, st *callState) bool {
	tools := map[string]Tool{}
	excluded := map[string][]string{}
	complete := true
	var order []string
	var cursor *string
	seen := map[string]bool{}
	// The probe is a read-only request: the policy may retry it, and its
	// retries count across attempts.
	probeFacts := retry.Facts{Safety: retry.ReadOnly, Rand: c.opts.Rand}
	for page := 0; page < DefaultMaxPages; page++ {
		probing := c.protocol == ""
		if probing {
			c.protocol = Protocol2026
		}
		build := func() *request {
			var p map[string]json.RawMessage
			if cursor != nil {
				cb, _ := json.Marshal(*cursor)
				p = map[string]json.RawMessage{"cursor": cb}
			}
			return c.buildRequest("tools/list", "", p, nil, OriginNone)
		}
		var ex *Exchange
		var ok bool
		if probing {
			ex = c.send(ctx, build())
			c.record(ex)
			c.decideSetup(ctx, ex, probeFacts)
			ok = ex.Result.Outcome.Success()
			// The policy's verdict comes first (a 429 or a 503 on the probe
			// is a reason to wait, not a sign of a legacy server); the
			// backward-compatibility rule decides what it leaves open.
			era, why := eraFromProbe(ex.Result)
			c.eraReason = why
			d := *ex.Decision
			// The switch below's fallback case, with the cases before it
			// ruled out: one expression marks the exchange and takes the
			// branch.
			fallback := !ok && d.Action != retry.Retry && !(d.Action == retry.Renegotiate && d.Version == Protocol2026) &&
				(d.Action == retry.Renegotiate && d.Version == Protocol2025 || era == Protocol2025)
			if fallback {
				// The exchange's decision is what the client does: fall
				// back to initialize, not the policy's "fail" on a 400
				// it read as a client bug.
				ex.EraFallback = true
				if d.Action != retry.Renegotiate {
					ex.Decision = &retry.Decision{Action: retry.Renegotiate, Version: Protocol2025, Reason: why}
				}
			}
			c.emit(ex)
			switch {
			case ok:
				c.eraReason = "the server answered a 2026-07-28 request"
			case d.Action == retry.Retry:
				// The era is still unknown: probe again after the delay.
				c.protocol = ""
				if !c.sleep(ctx, d.Delay) {
					fail := stoppedBefore(ctx, d)
					ex.Decision = &fail
					return st.stop(ex)
				}
				probeFacts.Count(d)
				st.call.Retries++
				page--
				continue
			case d.Action == retry.Renegotiate && d.Version == Protocol2026:
				// A -32022 that lists 2026-07-28 anyway: re-send the
				// listing once at that version (the era is decided).
				c.eraReason = "renegotiated: " + d.Reason
				st.call.Recoveries = append(st.call.Recoveries, "renegotiate: "+d.Reason)
				facts := retry.Facts{Safety: retry.ReadOnly, Rand: c.opts.Rand}
				facts.Count(d)
				if ex, ok = c.setupWith(ctx, st, facts, build); !ok {
					return st.stop(ex)
				}
			case fallback:
				if d.Action == retry.Renegotiate {
					c.eraReason = "renegotiated: " + d.Reason
				}
				if !c.initialize(ctx, st) {
					return false
				}
				page--
				continue
			default:
				// A modern server refused the probe for a reason the call
				// itself would hit too, or the era could not be decided:
				// the call stops here with the policy's verdict.
				c.protocol = ""
				return st.stop(ex)
			}
		} else {
			ex, ok = c.setup(ctx, st, build)
			if !ok {
				return st.stop(ex)
			}
		}
		var res struct {
			Result struct {
				Tools      []Tool  `json:"tools"`
				NextCursor *string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(ex.Result.Response(), &res); err != nil {
			complete = false
			ex.Result.SetWarnings(append(ex.Result.Warnings(), classify.Warning{Code: "tools-list-unreadable", Message: err.Error(), Rule: "MCP tools §Listing Tools: ListToolsResult"}))
		}
		for _, t := range res.Result.Tools {
			if _, dup := tools[t.Name]; dup {
				continue
			}
			if _, dup := excluded[t.Name]; dup {
				continue
			}
			// x-mcp-header belongs to the 2026-07-28 transport: a tool
			// listed on that era whose annotations break the rules is
			// excluded, as the spec requires, and the exclusion is reported.
			if c.protocol == Protocol2026 {
				if problems := headerAnnotationProblems(t.InputSchema); len(problems) > 0 {
					excluded[t.Name] = problems
					ex.Result.SetWarnings(append(ex.Result.Warnings(), classify.Warning{
						Code:    WarnToolExcluded,
						Message: fmt.Sprintf("tool %q excluded: %s", t.Name, strings.Join(problems, "; ")),
						Rule:    headerRule,
					}))
					continue
				}
			}
			tools[t.Name] = t
			order = append(order, t.Name)
		}
		if res.Result.NextCursor == nil || *res.Result.NextCursor == "" {
			break
		}
		if seen[*res.Result.NextCursor] {
			complete = false
			ex.Result.SetWarnings(append(ex.Result.Warnings(), classify.Warning{Code: "cursor-loop", Message: fmt.Sprintf("nextCursor %q was already followed; pagination stopped", *res.Result.NextCursor), Rule: "MCP pagination: cursors are opaque; a repeated cursor means the list never ends"}))
			break
		}
		seen[*res.Result.NextCursor] = true
		cursor = res.Result.NextCursor
		if page == DefaultMaxPages-1 {
			complete = false
			ex.Result.SetWarnings(append(ex.Result.Warnings(), classify.Warning{Code: "pagination-cut", Message: fmt.Sprintf("tools/list still had a nextCursor after %d pages; the rest of the list was not read", DefaultMaxPages), Rule: "mcpdiag bounds tools/list pagination (client.DefaultMaxPages); a tool on a later page is treated as not listed"}))
		}
	}
	c.tools, c.toolOrder, c.excluded, c.listed, c.listComplete = tools, order, excluded, true, complete
	return true
}

// decideSetup attaches the policy's verdict to a set-up exchange that
// stopped the call.
func (c *Client) decideSetup(ctx context.Context, ex *Exchange, f retry.Facts) {
	if dl, ok := ctx.Deadline(); ok {
		f.Remaining = max(0, timeUntil(dl))
	}
	d := c.pol.Decide(ex.Result, f)
	if alt, ok := versionListedAnyway(c.pol, ex, d, f); ok {
		d = alt
	}
	if alt, ok := authStopped(ex); ok {
		d = alt
	}
	switch {
	case ex.cutByStop:
		d = stoppedDuring(ctx, ex)
	case ctx.Err() != nil && (d.Action == retry.Retry || d.Action == retry.Resume):
		d = stoppedBefore(ctx, d)
	}
	ex.Decision = &d
}

// versionListedAnyway turns the policy's Fail on an UnsupportedProtocolVersion
// error whose data.supported lists the very version the request used into
// one Renegotiate to that version. The answer contradicts itself; it often
// comes from another instance behind the same URL (a rolling upgrade), so
// the re-send is likely to reach one that accepts it. The re-send counts as
// the call's renegotiation, so it happens at most Policy.MaxRecoveries times.
func versionListedAnyway(pol retry.Policy, ex *Exchange, d retry.Decision, f retry.Facts) (retry.Decision, bool) {
	r := ex.Result
	if d.Action != retry.Fail || ex.Protocol == "" || r == nil {
		return d, false
	}
	if code, ok := r.JSONRPC().ErrorCode(); !ok || code != -32022 {
		return d, false
	}
	supported, _, ok := retry.UnsupportedVersion(r)
	if !ok || !slices.Contains(supported, ex.Protocol) || f.Renegotiations >= pol.MaxRecoveries {
		return d, false
	}
	return retry.Decision{Action: retry.Renegotiate, Version: ex.Protocol, Reason: fmt.Sprintf(
		"-32022 UnsupportedProtocolVersion, yet data.supported (%s) lists %s, the version this request used: the answer contradicts itself "+
			"(often another instance behind the same URL); re-send once at %s", strings.Join(supported, ", "), ex.Protocol, ex.Protocol)}, true
}

// eraFromProbe applies the spec's backward-compatibility rule to the answer
// to a modern request: success or a recognised modern error means modern; an
// UnsupportedProtocolVersion error naming only older versions, or an empty or
// unrecognised 4xx, means fall back to initialize (2025-11-25).
func eraFromProbe(r *classify.Result) (era, why string) {
	if r.Outcome.Success() || r.Outcome == classify.JSONRPCError && r.Status >= 200 && r.Status < 300 {
		return Protocol2026, "the server answered a 2026-07-28 request"
	}
	if supported, _, ok := retry.UnsupportedVersion(r); ok {
		if slices.Contains(supported, Protocol2026) {
			return Protocol2026, "the server rejected the version but lists 2026-07-28 as supported"
		}
		if v, ok := retry.PickVersion(supported, []string{Protocol2025}); ok {
			return v, fmt.Sprintf("HTTP %d with -32022 UnsupportedProtocolVersion, supported %v: falling back to initialize", r.Status, supported)
		}
		return "", fmt.Sprintf("the server supports only %v; this client speaks 2026-07-28 and 2025-11-25", supported)
	}
	if r.Outcome == classify.HTTPError && r.Status >= 400 && r.Status < 500 {
		if code, ok := r.JSONRPC().ErrorCode(); ok {
			switch code {
			case -32020, -32021, -32602, -32601:
				return Protocol2026, fmt.Sprintf("HTTP %d with the modern error %d: the server speaks 2026-07-28", r.Status, code)
			}
		}
		if r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden {
			return "", fmt.Sprintf("HTTP %d before the era could be decided: authorization is needed first", r.Status)
		}
		return Protocol2025, fmt.Sprintf("HTTP %d without a recognised modern error: a legacy server, falling back to initialize", r.Status)
	}
	return "", "the probe failed before the era could be decided: " + r.Reason
}

// fixedEraRefused turns the decision on a 2026-07-28 request that the
// caller fixed (--protocol 2026-07-28) and that a session-era server
// refused into a Fail that names the likely cause and the way out. The
// Python SDK v1 answers 400 -32600 "Bad Request: Missing session ID" (the
// policy alone reads -32600 as a client bug); the go-sdk v1 answers -32022
// listing only older versions (the policy alone says renegotiate, which
// the fixed era forbids: nothing more is sent). A 400 that carries a
// 2026-07-28 error (-32020, -32021, -32601, -32602) is the modern server's
// own answer and keeps the policy's decision.
func (c *Client) fixedEraRefused(ex *Exchange, d retry.Decision) (retry.Decision, bool) {
	r := ex.Result
	if c.opts.Protocol != Protocol2026 || ex.Protocol != Protocol2026 || r == nil || r.Outcome.Success() {
		return d, false
	}
	if d.Action == retry.Renegotiate && d.Version == Protocol2026 {
		return d, false // versionListedAnyway: a re-send at the same version
	}
	var cause string
	if supported, _, ok := retry.UnsupportedVersion(r); ok {
		if slices.Contains(supported, Protocol2026) {
			return d, false
		}
		cause = fmt.Sprintf("the server refused 2026-07-28 (-32022) and supports only %s: a server of the session era", strings.Join(supported, ", "))
	} else {
		if r.Status != http.StatusBadRequest {
			return d, false
		}
		what := r.Reason
		if j := r.JSONRPC(); j != nil && j.Error != nil {
			if j.Error.Code != nil {
				switch *j.Error.Code {
				case -32020, -32021, -32601, -32602:
					return d, false
				}
			}
			if j.Error.Message != "" {
				what = fmt.Sprintf("%q", j.Error.Message)
			}
		}
		if strings.Contains(strings.ToLower(what), "session") {
			cause = fmt.Sprintf("HTTP 400 %s: the server wants an Mcp-Session-Id, which only initialize gives, so it is likely a 2025-11-25 (session-era) server", what)
		} else {
			cause = fmt.Sprintf("HTTP 400 without a 2026-07-28 error (%s): likely a 2025-11-25 (session-era) server, which expects initialize first", what)
		}
	}
	return retry.Decision{Action: retry.Fail, Reason: cause + "; --protocol 2026-07-28 forbids falling back to initialize, so nothing more was sent: run with --protocol 2025-11-25, or --protocol auto (the default), which falls back as the spec's backward-compatibility rule says"}, true
}

// safety says how safe the tool is to repeat, and why.
func (c *Client) safety(tool string) (retry.Safety, string) {
	if c.opts.IdempotencyKey != "" {
		return retry.IdempotencyKey, "an Idempotency-Key is sent"
	}
	if c.opts.Safety != "" {
		return c.opts.Safety, "set by the caller (--safe/--unsafe)"
	}
	t, ok := c.tools[tool]
	if !ok {
		return retry.Unknown, "the tool is not in tools/list"
	}
	a := t.Annotations
	s := retry.SafetyFromHints(a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint)
	if s == retry.Unknown {
		return s, "tools/list gives no annotations (hints default to destructive, not idempotent)"
	}
	return s, "tools/list annotations"
}

func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	if c.opts.Sleep != nil {
		return c.opts.Sleep(ctx.Done(), d)
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func timeUntil(t time.Time) time.Duration { return time.Until(t) }
