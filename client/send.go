package client

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Request is one JSON-RPC message a caller builds itself (mcpdiag probe):
// Send adds the era's headers, params._meta (2026-07-28) and the session
// (2025-11-25), sends it once without the retry policy, and classifies the
// answer.
type Request struct {
	// Method is the JSON-RPC method.
	Method string
	// ID is the request id, with its JSON type; the zero ID takes the
	// client's next integer id. Notification sends no id at all.
	ID           wire.ID
	Notification bool
	// Name is the tool (or prompt) the request names, for the Mcp-Name
	// header; "" sends none. Params may hold another name, or none.
	Name string
	// Params are the members of params, raw ("name", "arguments", …);
	// nil with no _meta to add sends no params member.
	Params map[string]json.RawMessage
	// Header is set on the request after the era's headers (a value
	// replaces theirs); a name with no values removes that header (a probe
	// of a request without MCP-Protocol-Version).
	Header http.Header
}

// Send sends r once and returns the classified exchange; it is recorded
// among Exchanges and passed to OnExchange. The era must be decided (a
// ListTools before, or a fixed Options.Protocol on 2026-07-28). Nothing is
// retried or re-sent: a failure is in the Exchange. For a tools/call on
// 2025-11-25 with Options.Inputs, the standalone GET stream is open while
// it runs and the server requests on it are answered (see CallTool).
func (c *Client) Send(ctx context.Context, r Request) *Exchange {
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	var params map[string]json.RawMessage
	if r.Params != nil {
		params = make(map[string]json.RawMessage, len(r.Params)+1)
		for k, v := range r.Params {
			params[k] = v
		}
	}
	hdr := http.Header{}
	// A tools/call of a listed tool carries its x-mcp-header arguments as
	// Mcp-Param-* headers on 2026-07-28, as CallTool's do (a value that
	// cannot be a header is left out).
	if t, ok := c.tools[r.Name]; ok && c.protocol == Protocol2026 && r.Method == "tools/call" {
		for k, v := range paramHeaders(t.InputSchema, r.Params["arguments"]) {
			hdr.Set(k, v)
		}
	}
	rq := c.buildRequest(r.Method, r.Name, params, hdr, OriginNone)
	for k, vs := range r.Header {
		k = http.CanonicalHeaderKey(k)
		if len(vs) == 0 {
			rq.header.Del(k)
			continue
		}
		rq.header[k] = vs
	}
	switch {
	case r.Notification:
		rq.notification, rq.id = true, wire.ID{}
	case !r.ID.IsZero():
		rq.id = r.ID
	}
	// A 2025-11-25 server may ask its questions of a tools/call on the
	// standalone GET stream instead of the call's response: open it for
	// the call, as CallTool does (only with Inputs, on a session).
	stop := func() {}
	if r.Method == "tools/call" && !r.Notification {
		stop = c.listen(ctx)
	}
	ex := c.send(ctx, rq)
	stop()
	c.record(ex)
	c.emit(ex)
	return ex
}

// Protocol returns the era in use ("" until it is decided).
func (c *Client) Protocol() string { return c.protocol }

// ExchangeRecords turns exchanges (a Listing's, Send's) into exchange
// records, as Call.Records does for a call's: base carries what the caller
// knows (Client, Scenario); the URL is url. Records hold raw headers: the
// record encoder redacts them.
func ExchangeRecords(exs []*Exchange, base record.Record, url string) []*record.Record {
	call := &Call{Exchanges: exs, Protocol: base.ProtocolVersion}
	recs, _ := call.Records(base, url)
	for _, r := range recs {
		// Each exchange stands alone: no call links them.
		r.CallID, r.Seq, r.PostCount, r.HTTPStatuses = "", 0, 0, []int{r.Status}
		if r.HTTPMethod == http.MethodPost {
			r.PostCount = 1
		}
	}
	return recs
}
