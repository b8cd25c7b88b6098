package judge

import (
	"fmt"
	"net/http"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Exchange is one request as the rules see it, read from the fault
// server's log line or from a record captured on the way (mcpdiag proxy,
// mcpdiag call).
type Exchange struct {
	// N numbers the POSTs of a trace from 1, in arrival order (the server's
	// POST count, or the order of the records).
	N int `json:"post"`
	// Start is when the request arrived; End when its answer ended.
	Start time.Time `json:"-"`
	End   time.Time `json:"-"`
	// HTTPMethod is POST, GET or DELETE.
	HTTPMethod string `json:"-"`
	// Method, ID, Tool and ArgsHash come from the request body.
	Method string `json:"method,omitempty"`
	// ClientAnswer marks the record of a client's answer to a server
	// request (record.Record's ClientAnswer); AnswerTo is then the method
	// of the request it answers ("" when not known; over HTTP Method is
	// "").
	ClientAnswer bool    `json:"-"`
	AnswerTo     string  `json:"-"`
	ID           wire.ID `json:"id,omitzero"`
	Tool         string  `json:"tool,omitempty"`
	ArgsHash     string  `json:"-"`
	// Header holds the request headers (credentials redacted).
	Header http.Header `json:"-"`
	// Stdio marks an exchange over a stdio pipe (a record's url
	// "stdio:NAME"): it has no headers or status.
	Stdio bool `json:"-"`
	// Legacy marks a message POSTed over the 2024-11-05 HTTP+SSE
	// transport (a record's answeredOn "stream"): its answer travels on
	// the session's GET stream, and Streamable HTTP's POST rules (Accept)
	// are not its.
	Legacy bool `json:"-"`
	// Session is the hashed Mcp-Session-Id.
	Session string `json:"-"`
	// MetaProtocol is params._meta's protocol version; MetaKnown says
	// whether the request's _meta could be read at all.
	MetaProtocol string `json:"-"`
	MetaKnown    bool   `json:"-"`
	// Capabilities identifies the declared client capabilities (a hash of
	// _meta's clientCapabilities, or its canonical JSON from a captured
	// body): equal declarations give equal values.
	Capabilities string `json:"-"`
	// ClientCapabilities are the top-level names of the capabilities the
	// request declared, sorted (record.Record's ClientCapabilities): from
	// _meta's clientCapabilities (2026-07-28) or initialize's capabilities
	// (2025-11-25). nil when the request declared none this way, or the
	// record does not say (a 2025-11-25 request after initialize, a record
	// of an older mcpdiag without a whole request body); empty, not nil, for
	// a declaration of no capability.
	ClientCapabilities []string `json:"-"`
	// NoCapabilities reports a request whose _meta the record shows (the
	// fault server's params facts, or a whole captured body) without
	// clientCapabilities: over 2026-07-28 it declared none. False when
	// the record does not show the _meta.
	NoCapabilities bool `json:"-"`
	// State is the StateHash of the requestState sent ("" when none);
	// StateKnown says whether the request's params could be read.
	State      string   `json:"-"`
	StateKnown bool     `json:"-"`
	Inputs     []string `json:"-"`
	// Issued is the StateHash of the requestState the answer carried;
	// IssuedAny reports an answer that carried one (even when its value is
	// unknown).
	Issued    string `json:"-"`
	IssuedAny bool   `json:"-"`
	// ProxyRefused reports an answer a proxy in front of the server made
	// itself, refusing the request (a Proxy-Status header with an error,
	// RFC 9209, as mcpdiag proxy's guard sends): the server never saw it.
	ProxyRefused bool `json:"-"`
	// Status is the HTTP status sent (0: none); RetryAfter its Retry-After.
	Status     int    `json:"status"`
	RetryAfter string `json:"-"`
	// Outcome is the classification of the answer, when the source knows
	// it: records do; the server log only for a 2xx answer that a fired
	// scenario broke (the scenario's expected outcome).
	Outcome classify.Outcome `json:"-"`
	// Failed reports an answer that did not finish the request: a non-2xx
	// status, no response, a cut stream or a broken body. Rejected reports
	// a failure the server made before acting on the request (4xx), or a
	// request that never left the client.
	Failed   bool `json:"-"`
	Rejected bool `json:"-"`
	// What says how the answer failed, for evidence ("HTTP 503", "the
	// stream was cut", …); "" when it did not.
	What string `json:"-"`
	// Tag is What in a word, for the table: the status ("503"), "reset",
	// "drop" (the connection was closed), "gone" (no answer), "cut" (a cut
	// stream) or "body" (a broken body).
	Tag string `json:"-"`
	// Pending reports a request the capture shows was never answered.
	Pending bool `json:"-"`
	// Fired names the fault scenarios that fired on the request.
	Fired string `json:"-"`

	// Probe says which probe of mcpdiag probe sent the request (nil for
	// any other request): the probe rules judge only these.
	Probe *record.Probe `json:"-"`
	// ResponseID is the answer's id when it differs from ID by value or
	// JSON type (wire.ID.Equal: 1.0 answering 1 is the same); zero when it
	// is the same or there was none.
	ResponseID wire.ID `json:"-"`
	// ErrorCode is the JSON-RPC error code of the answer (nil: none);
	// IsError its tool result's isError member (nil: absent).
	ErrorCode *int64 `json:"-"`
	IsError   *bool  `json:"-"`
	// ResponseBody is the recorded response body ("" when none was
	// recorded); ResponseBytes how many bytes the answer had.
	ResponseBody  string `json:"-"`
	ResponseBytes int64  `json:"-"`
	// Warnings are the codes of the classifier's warnings on the answer;
	// Protocol is the revision of the request; ContentType the answer's
	// Content-Type (records only).
	Warnings    []string `json:"-"`
	Protocol    string   `json:"-"`
	ContentType string   `json:"-"`
	// ServerRequests counts the JSON-RPC requests the server sent on the
	// answer's event stream (elicitation/create, sampling/createMessage,
	// roots/list) before its response, or instead of it; for a probe, on
	// any channel it read while it waited (record.Probe.Asked), when that
	// is more.
	ServerRequests int `json:"-"`
}

// Key identifies "the same request": method, tool and arguments hash. An
// MRTR round and a retry have the key of the request they repeat. A request
// whose arguments were not read (a method and no hash: a body over the
// recorder's parse limit, record.Record.SetMessageHead) is the same as no
// other: its key is its own.
func (x *Exchange) Key() string {
	if x.Method != "" && x.ArgsHash == "" {
		return fmt.Sprintf("%s\x00%s\x00unread %p", x.Method, x.Tool, x)
	}
	return x.Method + "\x00" + x.Tool + "\x00" + x.ArgsHash
}

// Round reports an MRTR round: a request that carries requestState or
// inputResponses.
func (x *Exchange) Round() bool { return x.State != "" || len(x.Inputs) > 0 }

// IsRequest reports a JSON-RPC request (a POST with a method and an id).
func (x *Exchange) IsRequest() bool {
	return x.HTTPMethod == http.MethodPost && x.Method != "" && !x.ID.IsZero() && !x.ID.IsNull()
}

// Label names the exchange in evidence: "POST 3 (tools/call delete_item, id 3)".
func (x *Exchange) Label() string {
	what := x.Method
	if x.Tool != "" {
		what += " " + x.Tool
	}
	if what == "" {
		what = "not JSON-RPC"
	}
	if !x.ID.IsZero() && !x.ID.IsNull() {
		what += ", id " + x.ID.String()
	}
	return fmt.Sprintf("POST %d (%s)", x.N, what)
}

// healthy are the outcomes that finish a request (a tool error and an
// unfinished interaction are answers too).
func healthy(o classify.Outcome) bool {
	switch o {
	case classify.ToolSuccess, classify.ResultSuccess, classify.NotificationAccepted, classify.HTTPSuccess, classify.RequestAccepted,
		classify.ToolError, classify.InputRequired, classify.TaskCreated:
		return true
	}
	return false
}

// bodyFailure reports the outcomes a scenario produces in a 2xx answer (so
// a 2xx answer of a scenario that fired with one of them failed); an
// HTTP_ERROR or NETWORK_ERROR scenario that lets a request through with 2xx
// sent a healthy answer.
func bodyFailure(o classify.Outcome) bool {
	switch o {
	case classify.EmptyResponse, classify.UnexpectedContentType, classify.StreamIncomplete,
		classify.MalformedJSON, classify.InvalidEnvelope, classify.JSONRPCError,
		classify.InvalidToolResult, classify.InvalidResult:
		return true
	}
	return false
}

// rejected reports a status by which the server refused a request before
// acting on it: 4xx, except 408 (an intermediary may time out after
// forwarding the request).
func rejected(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusRequestTimeout
}

// bodyWords says what a broken 2xx answer was.
func bodyWords(o classify.Outcome) string {
	switch o {
	case classify.StreamIncomplete:
		return "a stream that ended before the response"
	case classify.MalformedJSON:
		return "a body that is not JSON"
	case classify.InvalidEnvelope:
		return "a message that is not the JSON-RPC response to it"
	case classify.JSONRPCError:
		return "a JSON-RPC error"
	case classify.EmptyResponse:
		return "no body"
	case classify.UnexpectedContentType:
		return "a body that is not MCP"
	}
	return "a malformed result"
}

// bodyTag names a failed answer's outcome in a word.
func bodyTag(o classify.Outcome) string {
	switch o {
	case classify.StreamIncomplete:
		return "cut"
	case classify.NetworkError:
		return "gone"
	}
	return "body"
}
