package classify

// Layer names where a call failed or finished: the HTTP exchange, the
// JSON-RPC envelope and MCP result shape, an unfinished interaction, or the
// tool itself.
type Layer string

// The layers, from the wire up.
const (
	LayerTransport   Layer = "transport"
	LayerProtocol    Layer = "protocol"
	LayerInteraction Layer = "interaction"
	LayerApplication Layer = "application"
	// LayerNone is the layer of NOT_CLASSIFIED: no layer was judged.
	LayerNone Layer = "none"
)

// Outcome is the classifier's verdict on one exchange. The names are stable:
// records, reports and scripts match on them.
type Outcome string

// The outcomes. The article this product grew from defined the first eight
// (TOOL_SUCCESS, HTTP_ERROR, JSONRPC_ERROR, TOOL_ERROR, INPUT_REQUIRED,
// MALFORMED_JSON, INVALID_ENVELOPE, INVALID_TOOL_RESULT); their meaning is
// unchanged.
const (
	NetworkError          Outcome = "NETWORK_ERROR"
	HTTPError             Outcome = "HTTP_ERROR"
	EmptyResponse         Outcome = "EMPTY_RESPONSE"
	UnexpectedContentType Outcome = "UNEXPECTED_CONTENT_TYPE"
	StreamIncomplete      Outcome = "STREAM_INCOMPLETE"
	NotificationAccepted  Outcome = "NOTIFICATION_ACCEPTED"

	MalformedJSON     Outcome = "MALFORMED_JSON"
	InvalidEnvelope   Outcome = "INVALID_ENVELOPE"
	JSONRPCError      Outcome = "JSONRPC_ERROR"
	InvalidToolResult Outcome = "INVALID_TOOL_RESULT"
	InvalidResult     Outcome = "INVALID_RESULT"

	InputRequired Outcome = "INPUT_REQUIRED"
	TaskCreated   Outcome = "TASK_CREATED"

	ToolError     Outcome = "TOOL_ERROR"
	ToolSuccess   Outcome = "TOOL_SUCCESS"
	ResultSuccess Outcome = "RESULT_SUCCESS"

	// NotClassified is no verdict: the classifier stopped at one of its
	// own limits (an event or body over MaxEventSize, or a proxy's memory
	// budget) before it could judge the exchange. Result.NotClassified
	// says which, with the size and the limit. It says nothing about the
	// server or the call: not a failure, not a cut, not a reason to retry.
	NotClassified Outcome = "NOT_CLASSIFIED"
)

// Outcomes lists every outcome the classifier can produce, in layer order.
var Outcomes = []Outcome{
	NetworkError, HTTPError, EmptyResponse, UnexpectedContentType, StreamIncomplete, NotificationAccepted,
	MalformedJSON, InvalidEnvelope, JSONRPCError, InvalidToolResult, InvalidResult,
	InputRequired, TaskCreated,
	ToolError, ToolSuccess, ResultSuccess,
	NotClassified,
}

// Outcomes of something larger than one response, produced by the client
// and the proxy rather than by the classifier. They are defined here so that
// every reader of records (report, matrix) knows every name.
const (
	// InputRoundsExceeded: the server still asked for input after the
	// client's bound on MRTR rounds (package client).
	InputRoundsExceeded Outcome = "INPUT_ROUNDS_EXCEEDED"
	// ToolExcluded: the tool's x-mcp-header annotations break the
	// 2026-07-28 rules, so the client dropped it and sent nothing (package
	// client).
	ToolExcluded Outcome = "TOOL_EXCLUDED"
	// StdioNoise: a line on a stdio server's stdout that is not JSON
	// (package proxy).
	StdioNoise Outcome = "STDIO_NOISE"
	// AuthFailed: the client's OAuth authorization chain (MCP
	// authorization, 2026-07-28) could not get a token the server accepts;
	// the record's auth member names the step and the rule it broke
	// (package client). On an auth-chain exchange it is an answer that is
	// well-formed but breaks a rule (an issuer or resource mismatch, no
	// authorization_servers, an iss that is not the issuer's).
	AuthFailed Outcome = "AUTH_FAILED"
	// HTTPSuccess: a 2xx answer to an exchange that is not a JSON-RPC
	// request (a standalone GET event stream, a DELETE of a session,
	// metadata, a batch, a body that is not JSON-RPC), judged at the HTTP
	// layer only: nothing above it was read, so no layer above transport
	// is named (package recorder: proxy and serve). Not RESULT_SUCCESS,
	// which says a method returned a result. Also a 2026-07-28
	// subscriptions/listen stream its client closed: a subscription ends so,
	// and no response is due; over stdio (proxy --stdio), a subscription
	// its client cancelled (notifications/cancelled) or left (closing the
	// server's stdin), or its server cancelled, and a server request the
	// client left unanswered when it ended the session.
	HTTPSuccess Outcome = "HTTP_SUCCESS"
	// RequestAccepted: a JSON-RPC request POSTed to the endpoint that a
	// 2024-11-05 HTTP+SSE event stream named (its first event, endpoint)
	// was answered 202: in that transport the server accepted it, and its
	// answer travels on that GET event stream, not in this response (the
	// record's answeredOn is "stream"). The exchange did what the transport
	// asks of it: not a failure. Which outcome the answer has is the
	// stream's to show (package proxy).
	RequestAccepted Outcome = "REQUEST_ACCEPTED"
)

// CallOutcomes lists the outcomes that are not the classifier's.
var CallOutcomes = []Outcome{InputRoundsExceeded, ToolExcluded, StdioNoise, AuthFailed, HTTPSuccess, RequestAccepted}

// Layer returns the layer an outcome belongs to ("" for an unknown name).
func (o Outcome) Layer() Layer {
	switch o {
	case InputRoundsExceeded:
		return LayerInteraction
	case ToolExcluded:
		return LayerProtocol
	case StdioNoise, AuthFailed, HTTPSuccess, RequestAccepted:
		return LayerTransport
	case NetworkError, HTTPError, EmptyResponse, UnexpectedContentType, StreamIncomplete, NotificationAccepted:
		return LayerTransport
	case MalformedJSON, InvalidEnvelope, JSONRPCError, InvalidToolResult, InvalidResult:
		return LayerProtocol
	case InputRequired, TaskCreated:
		return LayerInteraction
	case ToolError, ToolSuccess, ResultSuccess:
		return LayerApplication
	case NotClassified:
		return LayerNone
	}
	return ""
}

// Success reports whether the outcome is a finished, successful exchange:
// the tool or method succeeded, a notification was accepted, an exchange
// that is not a JSON-RPC request got a 2xx, or a 2024-11-05 HTTP+SSE
// request was accepted (its answer travels on the event stream).
func (o Outcome) Success() bool {
	return o == ToolSuccess || o == ResultSuccess || o == NotificationAccepted || o == HTTPSuccess || o == RequestAccepted
}
