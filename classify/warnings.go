package classify

import "fmt"

// Warning codes. Each is documented in docs/outcomes.md with the rule it cites.
const (
	WarnIDNotChecked          = "id-not-checked"
	WarnMissingResultType     = "missing-result-type"
	WarnErrorWithoutID        = "error-without-id"
	WarnLegacyErrorCode       = "legacy-error-code"
	WarnRetiredErrorCode      = "retired-error-code"
	WarnDraftErrorCode        = "draft-error-code"
	WarnReservedErrorCode     = "reserved-error-code"
	WarnStatusMismatch        = "status-mismatch"
	WarnServerRequestOnStream = "server-request-on-stream"
	WarnUnknownContentBlock   = "unknown-content-block"
	WarnProtocolErrorAsTool   = "protocol-error-as-tool-error"
	WarnMissingContentType    = "missing-content-type"
	WarnMessageAfterTerminal  = "message-after-terminal"
	WarnResponseForOtherID    = "response-for-other-id"
	WarnUnknownEventType      = "unknown-event-type"
	WarnEmptyEvent            = "empty-event"
	WarnInputRequired2025     = "input-required-on-2025-11-25"
	WarnNotificationWithBody  = "notification-answered-with-body"
	WarnEventNotRead          = "event-not-read"
	WarnRequestAnswered202    = "request-answered-202"
	WarnRequestIDNull         = "request-id-null"
	WarnSecondResponse        = "second-response"
	WarnIDNotMCP              = "id-not-mcp"
	WarnIDBeyondSafeInteger   = "id-beyond-safe-integer"
)

// rules maps each warning code to the spec rule it cites.
var rules = map[string]string{
	WarnIDNotChecked:          "JSON-RPC 2.0 / MCP basic: result responses MUST include the same id as the request; without the request id this could not be checked",
	WarnMissingResultType:     "MCP 2026-07-28 basic §ResultType: servers MUST include resultType; clients MUST treat an absent resultType as \"complete\"",
	WarnErrorWithoutID:        "MCP basic §Responses: an error response may omit the id only when the request id could not be read",
	WarnLegacyErrorCode:       "MCP 2026-07-28 basic §Error Codes: -32000..-32019 is legacy; new implementations SHOULD NOT use it and receivers MUST NOT assume a meaning (except -32002)",
	WarnRetiredErrorCode:      "MCP 2026-07-28: -32002 (resource not found) and -32042 (URL elicitation required) are retired; implementations MUST NOT emit them",
	WarnDraftErrorCode:        "MCP 2026-07-28 changelog item 12: pre-release drafts used -32001/-32003/-32004 for HeaderMismatch/MissingRequiredClientCapability/UnsupportedProtocolVersion (now -32020/-32021/-32022)",
	WarnReservedErrorCode:     "MCP 2026-07-28 basic §Error Codes: -32020..-32099 is reserved for the spec; implementations MUST NOT emit an undefined code from it",
	WarnStatusMismatch:        "MCP 2026-07-28 Streamable HTTP: -32020/-32021/-32022 MUST be sent with HTTP 400 and -32601 with HTTP 404",
	WarnServerRequestOnStream: "MCP 2026-07-28 Streamable HTTP §Receiving: the server MUST NOT send JSON-RPC requests on a response stream (use MRTR inputRequests)",
	WarnUnknownContentBlock:   "MCP 2026-07-28 schema ContentBlock: text, image, audio, resource_link, resource",
	WarnProtocolErrorAsTool:   "MCP 2026-07-28 tools §Error Handling: unknown tools and malformed requests are protocol errors (JSON-RPC error), not tool execution errors (isError)",
	WarnMissingContentType:    "MCP Streamable HTTP §Sending: the server MUST reply with Content-Type application/json or text/event-stream",
	WarnMessageAfterTerminal:  "MCP 2026-07-28 Streamable HTTP: the final response SHOULD terminate the stream, and after cancellation or completion the server MUST NOT send further messages for the request",
	WarnResponseForOtherID:    "JSON-RPC 2.0: a response carries the id of the request it answers; a response stream relates to its originating request only",
	WarnUnknownEventType:      "WHATWG SSE: an event with a type other than \"message\" is not delivered to a message listener; MCP defines no other event types",
	WarnEmptyEvent:            "MCP 2025-11-25 Streamable HTTP allowed a priming event with empty data; it carries no JSON-RPC message",
	WarnInputRequired2025:     "MCP 2025-11-25 has no MRTR: resultType \"input_required\" is defined from 2026-07-28",
	WarnNotificationWithBody:  "MCP Streamable HTTP §Sending: an accepted notification MUST be answered 202 Accepted with no body",
	WarnRequestAnswered202:    "MCP Streamable HTTP §Sending: a request is answered with application/json or text/event-stream; 202 Accepted with no body is for accepted notifications and responses, and clients (the TypeScript SDK) discard a 202's body",
	WarnRequestIDNull:         "MCP basic §Requests: a request's id MUST be a string or an integer, and unlike JSON-RPC it MUST NOT be null; JSON-RPC 2.0 §4: a message with an id member is a request, not a notification",
	WarnSecondResponse:        "JSON-RPC 2.0 §5: the server replies to a request with a Response (one); MCP 2026-07-28 Streamable HTTP: after the response the server MUST NOT send further messages for the request",
	WarnIDNotMCP:              "MCP basic §Requests and schema RequestId: an id is a string or an integer (JSON Schema's integer: a number with a zero fractional part, so 1.0, 1e2 and -0 are integers); JSON-RPC 2.0 §4 allows a fractional number (it SHOULD NOT have a fractional part), MCP does not",
	WarnIDBeyondSafeInteger:   "RFC 8259 §6 and I-JSON (RFC 7493 §2.2): an integer beyond ±(2^53-1) is not interoperable, since a receiver may hold numbers as IEEE 754 doubles; the MCP schema allows it as an integer",
	WarnEventNotRead:          "not a spec rule but a limit of mcpdiag: an event over the classifier's --max-event-size (or its share of the proxy's --classify-memory) is read through, not parsed; its first bytes showed it was not the response",
}

// Rule returns the spec rule that a warning code cites.
func Rule(code string) string { return rules[code] }

// WarningCodes lists every warning code the classifier can emit.
func WarningCodes() []string {
	return []string{
		WarnIDNotChecked, WarnMissingResultType, WarnErrorWithoutID, WarnLegacyErrorCode, WarnRetiredErrorCode,
		WarnDraftErrorCode, WarnReservedErrorCode, WarnStatusMismatch, WarnServerRequestOnStream,
		WarnUnknownContentBlock, WarnProtocolErrorAsTool, WarnMissingContentType, WarnMessageAfterTerminal,
		WarnResponseForOtherID, WarnUnknownEventType, WarnEmptyEvent, WarnInputRequired2025,
		WarnNotificationWithBody, WarnEventNotRead, WarnRequestAnswered202, WarnRequestIDNull,
		WarnSecondResponse, WarnIDNotMCP, WarnIDBeyondSafeInteger,
	}
}

// warnNoResultType is the warning on a 2026-07-28 result without
// resultType, built once (it is on the path of every legacy result).
var warnNoResultType = Warning{Code: WarnMissingResultType,
	Message: "the result has no resultType; it was read as \"complete\"", Rule: rules[WarnMissingResultType]}

// addWarnNoResultType adds warnNoResultType to r's warnings: as the bit
// codeWarnNoRT when it is the first (no allocation), in extra after the
// others when it is not.
func (r *Result) addWarnNoResultType() {
	if r.codes&codeWarnNoRT == 0 && (r.extra == nil || len(r.extra.warnings) == 0) {
		r.codes |= codeWarnNoRT
		return
	}
	e := r.more()
	e.warnings = append(e.warnings, warnNoResultType)
}

func (r *Result) warn(code, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	r.warnText(code, msg)
}

// warnText adds a warning whose message is msg.
func (r *Result) warnText(code, msg string) {
	e := r.more()
	e.warnings = append(e.warnings, Warning{Code: code, Message: msg, Rule: rules[code]})
}

// CodeName returns the schema name of a JSON-RPC error code, or "".
func CodeName(code int64) string {
	if k := codeIndex(code); k >= 0 {
		return codeNames[k].name
	}
	return ""
}

// codeNames are the codes CodeName names, with their names.
var codeNames = [...]struct {
	code int64
	name string
}{
	{-32700, "ParseError"},
	{-32600, "InvalidRequest"},
	{-32601, "MethodNotFound"},
	{-32602, "InvalidParams"},
	{-32603, "InternalError"},
	{-32020, "HeaderMismatch"},
	{-32021, "MissingRequiredClientCapability"},
	{-32022, "UnsupportedProtocolVersion"},
	{-32002, "ResourceNotFound (retired)"},
	{-32042, "URLElicitationRequired (retired)"},
	{-32001, "HeaderMismatch (draft numbering)"},
	{-32003, "MissingRequiredClientCapability (draft numbering)"},
	{-32004, "UnsupportedProtocolVersion (draft numbering)"},
}

// codeReasons are the start of a JSON-RPC error verdict's reason for each
// of codeNames ("JSON-RPC error <code> <name>: "), made once.
var codeReasons = func() (p [len(codeNames)]string) {
	for k, c := range codeNames {
		p[k] = string(appendErrorReason(nil, c.code, c.name, ""))
	}
	return p
}()

// codeIndex returns the index of code in codeNames, or -1.
func codeIndex(code int64) int {
	for k := range codeNames {
		if codeNames[k].code == code {
			return k
		}
	}
	return -1
}
