package classify

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/mcpdiag/mcpdiag/wire"
)

// Exchange is one request's response as it came off the wire, plus the facts
// about the request that the classifier needs to judge it.
type Exchange struct {
	// Method is the JSON-RPC method of the request; "" means tools/call.
	Method string
	// ID is the request's id. A zero ID means "unknown": the response id is
	// then not checked, and a warning says so.
	ID wire.ID
	// Notification marks a request that was a JSON-RPC notification (no id):
	// 202 with no body is then the correct answer.
	Notification bool
	// ProtocolVersion is the protocol revision of the request; "" means
	// 2026-07-28.
	ProtocolVersion string
	// Extensions lists the extensions the request declared in its client
	// capabilities (for example "io.modelcontextprotocol/tasks").
	Extensions []string

	// Err is the transport error when no HTTP response arrived at all.
	Err error
	// RequestSent reports, with Err, whether the whole request had been
	// written before the failure (so the server may have processed it).
	RequestSent bool

	// Status, Header and the body describe the response.
	Status int
	Header http.Header
	// Body is read as a stream when set; otherwise BodyBytes is used.
	Body      io.Reader
	BodyBytes []byte
	// Events, when set, is the reader of the body's events where the
	// classifier reads it as an event stream: it is used instead of a
	// reader of Body of the classifier's own (other paths read Body). Its
	// caller made it with the classifier's MaxEventSize and Budget (a
	// recorder's chunk reader over the bytes it already holds, which also
	// times the events), and keeps it: the classifier does not recycle it.
	Events *wire.SSEReader
}

// Result is the classifier's verdict with the evidence behind it.
type Result struct {
	Layer       Layer     `json:"layer"`
	Outcome     Outcome   `json:"outcome"`
	Status      int       `json:"status,omitempty"`
	ContentType string    `json:"contentType,omitempty"`
	Method      string    `json:"method,omitempty"`
	Protocol    string    `json:"protocolVersion,omitempty"`
	Reason      string    `json:"reason"`
	Warnings    []Warning `json:"warnings"`

	JSONRPC    *JSONRPCDetails `json:"jsonrpc,omitempty"`
	ResultType string          `json:"resultType,omitempty"`
	IsError    *bool           `json:"isError,omitempty"`
	SSE        *SSEDetails     `json:"sse,omitempty"`
	HTTP       *HTTPDetails    `json:"http,omitempty"`
	Network    *NetworkDetails `json:"network,omitempty"`
	Input      *InputDetails   `json:"input,omitempty"`
	Task       *TaskDetails    `json:"task,omitempty"`
	// NotClassified says why there is no verdict (outcome NOT_CLASSIFIED).
	NotClassified *NotClassifiedDetails `json:"notClassified,omitempty"`
	// BodyBytes counts the response body bytes the classifier read.
	BodyBytes int64 `json:"bodyBytes"`
	// Response is the JSON-RPC response message, kept only when the
	// classifier's KeepResponse is set.
	Response []byte `json:"-"`

	// Storage for the details above, so that classifying a small response
	// allocates the Result and nothing else. idBuf holds an id of up to
	// seven bytes (a number below 10^7, as SDKs count requests): with
	// isError it fills the eight bytes that the 352-byte size class leaves
	// after the rest, where 40 bytes took the Result to 384. A longer id
	// is copied on its own.
	jsonrpc JSONRPCDetails
	isError bool
	idBuf   [7]byte
}

// ownID returns raw as an id whose bytes the result owns. Nothing in a
// Result aliases the bytes it was read from: an SSE event's data is
// overwritten by the next event, and a caller may reuse Exchange.BodyBytes.
func (r *Result) ownID(raw []byte) wire.ID {
	if len(raw) == 0 {
		return wire.ID{}
	}
	if len(raw) <= len(r.idBuf) {
		n := copy(r.idBuf[:], raw)
		return wire.IDFromRaw(r.idBuf[:n:n])
	}
	return wire.IDFromRaw(bytes.Clone(raw))
}

// JSONRPCDetails are the JSON-RPC facts of the response.
type JSONRPCDetails struct {
	// ID is the response's id as it arrived (null when absent).
	ID       wire.ID `json:"id"`
	Code     *int64  `json:"code,omitempty"`
	code     int64
	CodeName string          `json:"codeName,omitempty"`
	Message  string          `json:"message,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// SSEDetails describe an event-stream response.
type SSEDetails struct {
	Events        int  `json:"events"`
	Notifications int  `json:"notifications"`
	Progress      int  `json:"progress"`
	Messages      int  `json:"messages"`
	Requests      int  `json:"requests"`
	Comments      int  `json:"comments"`
	Terminal      bool `json:"terminal"`
	// TerminalEvent is the 1-based index of the event that carried the
	// response, 0 when none did.
	TerminalEvent int `json:"terminalEvent,omitempty"`
	// AfterTerminal counts events that arrived after the response.
	AfterTerminal int `json:"afterTerminal,omitempty"`
	// Skipped counts the events read through without being parsed: over
	// MaxEventSize, or refused by the memory budget (they are counted in
	// Events too).
	Skipped int `json:"skipped,omitempty"`
	// Unterminated reports a final event that lacked its blank line.
	Unterminated bool `json:"unterminated,omitempty"`
	// End says how the stream ended: "eof", "unterminated-event",
	// "error: …", "stopped-at-terminal", or "stopped-at-error" (a message
	// that was not JSON or not JSON-RPC ended the classification).
	End string `json:"end,omitempty"`
}

// The causes of NOT_CLASSIFIED (NotClassifiedDetails.Cause).
const (
	// CauseEventTooLarge: an SSE event is larger than MaxEventSize.
	CauseEventTooLarge = "event-too-large"
	// CauseBodyTooLarge: a JSON body is larger than MaxEventSize.
	CauseBodyTooLarge = "body-too-large"
	// CauseMemoryBudget: holding the event or body would take
	// classification past the shared memory budget (Classifier.Budget).
	CauseMemoryBudget = "memory-budget"
)

// NotClassifiedDetails say why an exchange has no verdict. The response
// was read to its end (or to where it ended); only its classification was
// given up.
type NotClassifiedDetails struct {
	// Cause is CauseEventTooLarge, CauseBodyTooLarge or CauseMemoryBudget.
	Cause string `json:"cause"`
	// Size is the size in bytes of what could not be held: the SSE event's
	// raw bytes (its lines and blank line) or the JSON body.
	Size int64 `json:"size"`
	// Limit is the limit in bytes that was reached: MaxEventSize, or the
	// memory budget's size.
	Limit int64 `json:"limit"`
	// InUse is, for CauseMemoryBudget, the bytes the budget had reserved
	// (for every exchange sharing it) when it refused.
	InUse int64 `json:"inUse,omitempty"`
	// Event is the 1-based index of the SSE event, 0 for a JSON body.
	Event int `json:"event,omitempty"`
}

// HTTPDetails hold HTTP-level evidence parsed from headers.
type HTTPDetails struct {
	RetryAfter      *RetryAfter      `json:"retryAfter,omitempty"`
	WWWAuthenticate *WWWAuthenticate `json:"wwwAuthenticate,omitempty"`
}

// RetryAfter is a parsed Retry-After header.
type RetryAfter struct {
	Raw string `json:"raw"`
	// Delay is the wait it asks for (seconds, or the HTTP-date minus the
	// response's Date header or the classification time).
	Delay time.Duration `json:"delayNs"`
	Valid bool          `json:"valid"`
}

// WWWAuthenticate is a parsed Bearer challenge (RFC 6750, RFC 9728).
type WWWAuthenticate struct {
	Raw              string `json:"raw"`
	Scheme           string `json:"scheme"`
	ResourceMetadata string `json:"resourceMetadata,omitempty"`
	Scope            string `json:"scope,omitempty"`
	Error            string `json:"error,omitempty"`
	ErrorDescription string `json:"errorDescription,omitempty"`
}

// NetworkDetails describe a failure before or while reading the response.
type NetworkDetails struct {
	Error string `json:"error"`
	// Phase is "before-response" (no headers arrived) or "body" (the body
	// was cut after the headers).
	Phase       string `json:"phase"`
	RequestSent bool   `json:"requestSent"`
	Timeout     bool   `json:"timeout,omitempty"`
}

// InputDetails describe an InputRequiredResult (MRTR).
type InputDetails struct {
	Requests        []InputRequest `json:"requests"`
	HasRequestState bool           `json:"hasRequestState"`
}

// InputRequest is one entry of inputRequests.
type InputRequest struct {
	Key    string `json:"key"`
	Method string `json:"method"`
	Mode   string `json:"mode,omitempty"`
}

// TaskDetails describe a CreateTaskResult (tasks extension).
type TaskDetails struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}

// Warning is a spec violation or oddity that does not change the outcome.
type Warning struct {
	// Code is a stable identifier such as "missing-result-type".
	Code string `json:"code"`
	// Message says what was seen.
	Message string `json:"message"`
	// Rule cites the spec text the warning is about.
	Rule string `json:"rule"`
}

// HasWarning reports whether the result carries a warning with code.
func (r *Result) HasWarning(code string) bool {
	for _, w := range r.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}
