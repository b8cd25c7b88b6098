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
)

// Outcomes lists every outcome the classifier can produce, in layer order.
var Outcomes = []Outcome{
	NetworkError, HTTPError, EmptyResponse, UnexpectedContentType, StreamIncomplete, NotificationAccepted,
	MalformedJSON, InvalidEnvelope, JSONRPCError, InvalidToolResult, InvalidResult,
	InputRequired, TaskCreated,
	ToolError, ToolSuccess, ResultSuccess,
}

// Layer returns the layer an outcome belongs to.
func (o Outcome) Layer() Layer {
	switch o {
	case NetworkError, HTTPError, EmptyResponse, UnexpectedContentType, StreamIncomplete, NotificationAccepted:
		return LayerTransport
	case MalformedJSON, InvalidEnvelope, JSONRPCError, InvalidToolResult, InvalidResult:
		return LayerProtocol
	case InputRequired, TaskCreated:
		return LayerInteraction
	case ToolError, ToolSuccess, ResultSuccess:
		return LayerApplication
	}
	return ""
}

// Success reports whether the outcome is a finished, successful exchange:
// the tool or method succeeded, or a notification was accepted.
func (o Outcome) Success() bool {
	return o == ToolSuccess || o == ResultSuccess || o == NotificationAccepted
}
