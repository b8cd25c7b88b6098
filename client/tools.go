package client

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
)

// WarnToolExcluded is the warning code, on a tools/list exchange, for a
// tool the client excluded because its x-mcp-header annotations break the
// 2026-07-28 rules.
const WarnToolExcluded = "tool-excluded"

// ToolExcluded is the call-level outcome of calling a tool that the client
// excluded from tools/list (its x-mcp-header annotations break the
// 2026-07-28 rules). No tools/call is sent: a conforming client never calls
// such a tool, so the call fails at the protocol layer, exit code 3.
const ToolExcluded = classify.ToolExcluded

// ExcludedTool is a tool that tools/list named and the client left out.
type ExcludedTool struct {
	Name string
	// Reasons has one sentence per broken rule.
	Reasons []string
}

// Listing is the outcome of ListTools.
type Listing struct {
	// Tools are the tools the client keeps, in the server's order.
	Tools []Tool
	// Excluded are the tools left out (2026-07-28 only), by name.
	Excluded []ExcludedTool
	// Protocol is the era used and EraReason why.
	Protocol  string
	EraReason string
	// Exchanges are the exchanges of the listing, set-up included.
	Exchanges []*Exchange
	// Final is the classification of the last exchange, and Decision the
	// policy's verdict on it.
	Final    *classify.Result
	Decision retry.Decision
	// OK reports that every page of tools/list was read.
	OK bool
	// Auth, when the authorization chain stopped the listing, says where.
	Auth *AuthFailure
	// LegacyTransport, when the listing failed because the server speaks
	// the 2024-11-05 HTTP+SSE transport, is the path its endpoint event
	// named (Decision and EraReason say so).
	LegacyTransport string
}

// ListTools reads tools/list now, every page (deciding the era and
// initializing a 2025-11-25 session first when needed), and returns the
// tools the client keeps. Later calls use this listing. A failure is in
// the Listing (OK false, Final and Decision say why), never an error.
func (c *Client) ListTools(ctx context.Context) *Listing {
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	first := len(c.exchanges)
	st := &callState{call: &Call{}, origin: OriginNone}
	c.listed = false
	c.startAuth()
	ok := c.prepare(ctx, st)
	l := &Listing{OK: ok, Protocol: c.protocol, EraReason: c.eraReason}
	l.Exchanges = append([]*Exchange(nil), c.exchanges[first:]...)
	sort.SliceStable(l.Exchanges, func(i, j int) bool { return l.Exchanges[i].Seq < l.Exchanges[j].Seq })
	if !ok {
		st.call.Exchanges = l.Exchanges
		c.finishAuth(st.call)
		l.Final, l.Decision, l.Auth = st.call.Final, st.call.Decision, st.call.Auth
		l.LegacyTransport, l.EraReason = st.call.LegacyTransport, c.eraReason
		return l
	}
	l.Tools, l.Excluded = c.Tools(), c.ExcludedTools()
	if n := len(l.Exchanges); n > 0 {
		last := l.Exchanges[n-1]
		l.Final = last.Result
		if last.Decision != nil {
			l.Decision = *last.Decision
		}
	}
	return l
}

// Tools returns the tools of the last tools/list the client kept, in the
// server's order (nil before any listing).
func (c *Client) Tools() []Tool {
	var out []Tool
	for _, name := range c.toolOrder {
		out = append(out, c.tools[name])
	}
	return out
}

// ExcludedTools returns the tools the last tools/list named but the client
// left out, sorted by name.
func (c *Client) ExcludedTools() []ExcludedTool {
	var out []ExcludedTool
	for name, reasons := range c.excluded {
		out = append(out, ExcludedTool{Name: name, Reasons: reasons})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// excludedCall ends a call of an excluded tool before anything is sent.
func (c *Client) excludedCall(call *Call, reasons []string) {
	call.Outcome = ToolExcluded
	call.Decision = retry.Decision{Action: retry.Fail, Reason: fmt.Sprintf(
		"tool %q was excluded from tools/list, so no tools/call was sent: %s (a conforming 2026-07-28 client never calls a tool whose x-mcp-header annotations break the rules; fix the tool's inputSchema)",
		call.Tool, strings.Join(reasons, "; "))}
}

// warnUnknownTool adds the protocol-error-as-tool-error warning to a tool
// error (isError) of a tool that the last tools/list, read to its end, did
// not name. The spec makes a call of an unknown tool a protocol error
// (JSON-RPC -32602); the Python SDK answers it with isError "Unknown tool:
// X", which the classifier alone cannot tell from a tool that ran and
// failed. A listing cut short proves nothing, so it gives no warning; nor
// does a response that already carries the warning (the TypeScript SDK's
// "MCP error -32602" wording).
func (c *Client) warnUnknownTool(tool string, ex *Exchange) {
	r := ex.Result
	if r == nil || r.Outcome != classify.ToolError || !c.listed || !c.listComplete {
		return
	}
	if _, ok := c.tools[tool]; ok {
		return
	}
	if _, ok := c.excluded[tool]; ok {
		return
	}
	if r.HasWarning(classify.WarnProtocolErrorAsTool) {
		return
	}
	r.SetWarnings(append(r.Warnings(), classify.Warning{
		Code: classify.WarnProtocolErrorAsTool,
		Message: fmt.Sprintf("tool %q is not in the server's tools/list (%d tools, every page read), yet the server answered with a tool result (isError) instead of a JSON-RPC error: an unknown tool is a protocol error (-32602 Invalid params)",
			tool, len(c.tools)),
		Rule: classify.Rule(classify.WarnProtocolErrorAsTool),
	}))
}
