package record

import "github.com/mcpdiag/mcpdiag/classify"

// Designed names why an exchange's non-2xx answer is one the spec designs
// for a request that is no JSON-RPC message, not a failure
// (Record.DesignedAnswer). The empty value is no designed answer.
type Designed string

const (
	// DesignedNoStream: a GET (no JSON-RPC message) answered 405. The
	// server does not offer an SSE stream at this endpoint (Streamable
	// HTTP, "Listening for Messages from the Server": the server MUST
	// either answer text/event-stream or 405).
	DesignedNoStream Designed = "no-sse-stream"
	// DesignedNoSessionEnd: a DELETE (no JSON-RPC message) answered 405.
	// The server does not let the client end the session (Streamable
	// HTTP, "Session Management").
	DesignedNoSessionEnd Designed = "no-session-end"
	// DesignedRedirect: a GET (no JSON-RPC message: an OAuth authorize
	// endpoint, a metadata document) answered 3xx, a step of the OAuth
	// flow.
	DesignedRedirect Designed = "redirect"
)

// DesignedRule is one rule of DesignedRules: an exchange of HTTPMethod
// answered a status in [StatusMin, StatusMax] is a designed answer for
// Reason.
type DesignedRule struct {
	// HTTPMethod is the request's HTTP method (GET, DELETE).
	HTTPMethod string `json:"httpMethod"`
	// StatusMin and StatusMax bound the answer's HTTP status.
	StatusMin int `json:"statusMin"`
	// StatusMax is the largest status of the rule.
	StatusMax int `json:"statusMax"`
	// Reason is the designed answer the rule names.
	Reason Designed `json:"reason"`
}

// DesignedRules are the answers Record.DesignedAnswer takes for designed,
// in order: the page (ui/assets/app.js) gets them from here.
var DesignedRules = []DesignedRule{
	{HTTPMethod: "GET", StatusMin: 405, StatusMax: 405, Reason: DesignedNoStream},
	{HTTPMethod: "DELETE", StatusMin: 405, StatusMax: 405, Reason: DesignedNoSessionEnd},
	{HTTPMethod: "GET", StatusMin: 300, StatusMax: 399, Reason: DesignedRedirect},
}

// DesignedOutcome is the only outcome a designed answer has: the
// classifier's verdict of a non-2xx answer (the record keeps it: HTTP 405
// is what happened; only the counting of failures leaves it out).
const DesignedOutcome = classify.HTTPError

// DesignedAnswer says why r is the record of an answer the spec designs,
// not a failure, or "" when it is not: an exchange of a request that is no
// JSON-RPC message (a GET or a DELETE: no JSON-RPC method, a null id, no
// client's answer, no batch) answered with HTTP_ERROR under one of
// DesignedRules (a GET answered 405: no SSE stream; a DELETE answered 405:
// the session cannot be ended by the client; a GET answered 3xx: a
// redirect of the OAuth flow). A JSON-RPC message's exchange (a POST) is
// never one: its verdict is the classifier's.
func (r *Record) DesignedAnswer() Designed {
	if r.Kind != KindExchange || r.Outcome != DesignedOutcome || r.Method != "" ||
		!(r.JSONRPC.ID.IsZero() || r.JSONRPC.ID.IsNull()) || r.ClientAnswer || r.Batch != 0 {
		return ""
	}
	for _, d := range DesignedRules {
		if r.HTTPMethod == d.HTTPMethod && r.Status >= d.StatusMin && r.Status <= d.StatusMax {
			return d.Reason
		}
	}
	return ""
}
