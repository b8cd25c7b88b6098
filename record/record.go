package record

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// SchemaVersion is the value of the "v" field of records written by this
// package. It changes only if a field changes meaning; adding fields does not
// change it. Version 2 (issue 12) carries as typed members what version 1
// kept in the note or in members spliced into the line: flags, fault,
// params and sseArrivals; Decode upgrades a version-1 line (see Upgrade).
const SchemaVersion = 2

// Kind says what a record describes.
type Kind string

// The kinds of record.
const (
	// KindExchange is one HTTP exchange: one request and its response (or
	// the transport error that replaced it).
	KindExchange Kind = "exchange"
	// KindCall is the summary of one logical call: every exchange it took
	// (retries, MRTR input rounds) and the final verdict.
	KindCall Kind = "call"
	// KindServer is a fault server's line about one of its own events (a
	// scenario change, a reset, a refused endpoint, an authorization
	// server's request). Before issue 12 the fault server also wrote one for
	// every request it received, unclassified (version 1 with a "serve"
	// member, version 2 with Fault and Params); it now writes an exchange
	// record (with Fault and Params) instead. Decode still reads the old
	// lines, a "serve" member upgraded into the typed fields.
	KindServer Kind = "server"
	// KindDropped reports records an [Async] writer dropped because its
	// queue was full; Dropped holds the count.
	KindDropped Kind = "dropped"
)

// RetryOrigin says why a request was sent again.
type RetryOrigin string

// The retry origins. On an exchange record the origin is why that exchange
// was sent; on a call record it is the strongest origin among its exchanges,
// in the order user > policy > mrtr > none (see [Call.Summary]).
const (
	// OriginNone marks the first request of a call.
	OriginNone RetryOrigin = "none"
	// OriginPolicy marks a retry by this client's retry policy.
	OriginPolicy RetryOrigin = "policy"
	// OriginMRTR marks a new round of a multi-round tool call: the client
	// answers the server's inputRequests.
	OriginMRTR RetryOrigin = "mrtr"
	// OriginUser marks a call the user repeated (mcpdiag call --attempt-of).
	OriginUser RetryOrigin = "user"
)

// AnsweredOnStream is Record.AnsweredOn of a message whose answer travels
// on the 2024-11-05 HTTP+SSE transport's GET event stream.
const AnsweredOnStream = "stream"

// The reasons an answer on a 2024-11-05 HTTP+SSE stream was not paired with
// its POST (StreamAnswer.NotSeen).
const (
	// AnswerStreamEnded: the stream ended before the answer came.
	AnswerStreamEnded = "stream-ended"
	// AnswerTimeout: the answer did not come within the proxy's wait
	// (proxy.Options.LegacyAnswerWait) after the POST's response.
	AnswerTimeout = "timeout"
	// AnswerEvicted: more POSTs waited for their answers than the proxy
	// keeps (the oldest is written without its answer).
	AnswerEvicted = "evicted"
	// AnswerShutdown: the proxy shut down before the answer came.
	AnswerShutdown = "shutdown"
	// AnswerAmbiguous: another request of the same id waited for its
	// answer on the stream at the same time, so an answer of that id
	// cannot tell which of them it answers, and pairs with neither.
	AnswerAmbiguous = "ambiguous"
)

// StreamAnswer is, on the record of a request POSTed over the 2024-11-05
// HTTP+SSE transport, what became of its answer on the session's GET
// stream (Record.StreamAnswer).
type StreamAnswer struct {
	// Seen reports that the answer (a response of the request's id, of the
	// same JSON type) arrived on the stream and was judged: the record's
	// outcome is the answer's.
	Seen bool `json:"seen"`
	// NotSeen says why the answer was not seen (AnswerStreamEnded,
	// AnswerTimeout, AnswerEvicted, AnswerShutdown, AnswerAmbiguous); the
	// record is then REQUEST_ACCEPTED.
	NotSeen string `json:"notSeen,omitempty"`
	// After is when the answer's event was read, since the request
	// started.
	After Duration `json:"afterMs,omitempty"`
	// Bytes is the size of the answer (the event's data).
	Bytes int64 `json:"bytes,omitempty"`
}

// StreamAnswers counts the JSON-RPC responses a 2024-11-05 HTTP+SSE GET
// stream carried (Record.StreamAnswers).
type StreamAnswers struct {
	// Responses counts the responses (results and errors with an id).
	Responses int `json:"responses"`
	// Paired counts those paired with a POST: its record has the answer's
	// outcome.
	Paired int `json:"paired"`
	// Late counts those that answered a POST whose record had been written
	// without its answer (StreamAnswer.NotSeen timeout or evicted).
	Late int `json:"late"`
	// Unpaired counts those that answered no request the proxy saw POSTed
	// to this stream's endpoint.
	Unpaired int `json:"unpaired"`
	// Ambiguous counts those whose id two requests POSTed to the endpoint
	// waited under at once (StreamAnswer.NotSeen AnswerAmbiguous): an
	// answer of theirs pairs with neither.
	Ambiguous int `json:"ambiguous,omitempty"`
	// Unread counts the events read through without being kept (over the
	// classifier's event size or memory budget) that may be responses but
	// whose id did not show in their first bytes: a POST they answered is
	// written without its answer (timeout, stream-ended).
	Unread int `json:"unread,omitempty"`
}

// Resume holds the event ids of an event-stream response, for the
// resumption of the 2025-11-25 Streamable HTTP transport ("Resumability
// and Redelivery"; SEP-1699 lets a server close a request's stream after
// an event with an id, and the client resumes it with a GET carrying
// Last-Event-ID, on which the rest, its response too, arrives):
// Record.Resume. Every member is a fact of the exchange's own bytes and
// headers; report links a resumable stream to the GET that resumed it.
type Resume struct {
	// After is the Last-Event-ID header the request carried: a GET that
	// resumes a stream after that event.
	After string `json:"after,omitempty"`
	// LastEventID is the stream's last event ID as it ended (WHATWG: the
	// id field of the last event that carried one), what a client resumes
	// the stream after.
	LastEventID string `json:"lastEventId,omitempty"`
	// RetryMs is the stream's last retry field, in milliseconds: the least
	// wait before a client reconnects. Absent when the stream had none.
	RetryMs *int64 `json:"retryMs,omitempty"`
	// Resumable marks the stream of a JSON-RPC request, in a session,
	// that ended without the request's response after an event with an id
	// (LastEventID): a cut the client may resume, not a plain one. The
	// record's outcome stays what the stream showed (STREAM_INCOMPLETE);
	// the request's verdict is that of its response on the GET that
	// resumes the stream, which report finds (docs/report.md, Resumed
	// streams).
	Resumable bool `json:"resumable,omitempty"`
	// Responses are the JSON-RPC responses a GET event stream carried, in
	// order, at most MaxStreamResponses of them.
	Responses []StreamResponse `json:"responses,omitempty"`
	// MoreResponses counts the responses past MaxStreamResponses.
	MoreResponses int `json:"moreResponses,omitempty"`
}

// MaxStreamResponses bounds Resume.Responses.
const MaxStreamResponses = 16

// StreamResponse is one JSON-RPC response a GET event stream carried
// (Resume.Responses), judged by the classifier as the response of the
// request the recorder knew of that id in the session (Method and Tool),
// or, when it knew none, with no method.
type StreamResponse struct {
	// ID is the response's id, with its JSON type.
	ID wire.ID `json:"id"`
	// EventID is the last event ID as of the event that carried it (its
	// own id field, else the one before it).
	EventID string `json:"eventId,omitempty"`
	// Method and Tool are those of the request it was judged the response
	// of: a request of its id (and JSON type) in the same session whose
	// own stream ended without its response; "" when the recorder knew
	// of none, and the outcome is then the classifier's on a response to no
	// known method (by its shape).
	Method string `json:"method,omitempty"`
	// Tool is the request's tool (or prompt) name, when it has one.
	Tool string `json:"tool,omitempty"`
	// Outcome, Layer and Reason are the classifier's verdict on the
	// response.
	Outcome classify.Outcome `json:"outcome"`
	// Layer is the outcome's layer.
	Layer classify.Layer `json:"layer,omitempty"`
	// Reason is the classifier's one-line explanation.
	Reason string `json:"reason,omitempty"`
	// IsError is a tool result's isError member, when present.
	IsError *bool `json:"isError,omitempty"`
	// ErrorCode is the JSON-RPC error code, when the response is an
	// error.
	ErrorCode *int64 `json:"errorCode,omitempty"`
	// After is when the event was read, since the GET started.
	After Duration `json:"afterMs,omitempty"`
}

// ResultType is the MCP resultType of a result ("complete",
// "input_required", "task"). The empty value means that the result carried
// none (or that there was no result) and is written as JSON null.
type ResultType string

// MarshalJSON writes the result type, or null when it is empty.
func (t ResultType) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(t))
}

// Record is one line of a record file. The same type serves every kind; a
// field that does not apply to a kind is left empty (and, except for the
// article's fields, omitted). See docs/records.md for each field.
type Record struct {
	// V is the schema version (SchemaVersion; the encoder fills it in).
	V int `json:"v"`
	// Kind says what the record describes.
	Kind Kind `json:"kind"`
	// ID identifies the record (see NewID; the encoder fills in a new one
	// when it is empty).
	ID string `json:"id"`
	// CallID is, on an exchange, the ID of the call record it belongs to.
	CallID string `json:"callId,omitempty"`
	// Seq is, on an exchange, its 1-based position among the exchanges of
	// its call.
	Seq int `json:"seq,omitempty"`
	// Exchanges is, on a call, how many exchange records it summarises.
	Exchanges int `json:"exchanges,omitempty"`
	// AttemptOf is, on a call, the ID of the earlier call record the user
	// repeated (retryOrigin "user").
	AttemptOf string `json:"attemptOf,omitempty"`
	// Time is when the exchange or call started (the request was about to
	// be sent). The encoder uses the time of writing when it is zero.
	Time time.Time `json:"time,omitzero"`

	// The article's fields: always present.

	// Client names the client, as "name@version" (clientInfo, or the
	// User-Agent when that is all a proxy sees).
	Client string `json:"client"`
	// ProtocolVersion is the MCP protocol revision of the request.
	ProtocolVersion string `json:"protocolVersion"`
	// Scenario is the fault scenario id when one is known, else "".
	Scenario string `json:"scenario"`
	// Method is the JSON-RPC method of the request.
	Method string `json:"method"`
	// PostCount counts the POST requests of the call, attempts that never
	// connected included (HTTPStatuses 0 and Network.RequestSent tell them
	// apart): on an exchange, up to and including this one; on a call, all
	// of them.
	PostCount int `json:"postCount"`
	// HTTPStatuses are the HTTP statuses of the call in order, 0 where no
	// response arrived: on an exchange, up to and including this one.
	HTTPStatuses []int `json:"httpStatuses"`
	// JSONRPC holds the request id and the JSON-RPC error code.
	JSONRPC JSONRPC `json:"jsonrpc"`
	// ResultType is the result's resultType (null when absent).
	ResultType ResultType `json:"resultType"`
	// Outcome is the classifier's verdict (classify.Outcome).
	Outcome classify.Outcome `json:"outcome"`
	// RetryOrigin says why the request was sent (the encoder writes "none"
	// when it is empty on an exchange or call).
	RetryOrigin RetryOrigin `json:"retryOrigin"`

	// Layer is the layer of the outcome.
	Layer classify.Layer `json:"layer,omitempty"`
	// Reason is the classifier's one-line explanation.
	Reason string `json:"reason,omitempty"`
	// Tool is the tool name of a tools/call (params.name; for prompts/get,
	// the prompt name).
	Tool string `json:"tool,omitempty"`
	// ArgsHash identifies the call's arguments (see ArgsHash).
	ArgsHash string `json:"argsHash,omitempty"`
	// ClientCapabilities are the top-level names of the capabilities the
	// client declared on this request (names only, never their values),
	// sorted and without repeats: the keys of _meta's clientCapabilities
	// (2026-07-28) or of initialize's params.capabilities (2025-11-25 and
	// earlier; wire.Message.Capabilities()). Absent when the request declares
	// none this way (a 2025-11-25 request after initialize: its session's
	// initialize carries them); [] when it declares an empty object, or a
	// member that is no object (null, a string: it declares none). At
	// most wire.MaxCapabilityNames: the schema's names, then the smallest
	// others (ClientCapabilitiesTruncated says when some were left out).
	// A line holds each name at most MaxCapabilityNameBytes long, cut
	// and ending in "…" past it (the encoder cuts it once scrubbed).
	ClientCapabilities []string `json:"clientCapabilities,omitzero"`
	// ClientCapabilitiesTruncated marks a declaration of more than
	// wire.MaxCapabilityNames distinct names: ClientCapabilities holds the
	// schema's names (elicitation, sampling, roots, tasks, experimental,
	// extensions) it declared and the smallest others, and left the rest
	// out, so that a client declaring 10^5 keys does not make every
	// record carry them; or of a name longer than MaxCapabilityNameBytes,
	// which the line holds cut.
	ClientCapabilitiesTruncated bool `json:"clientCapabilitiesTruncated,omitempty"`
	// Session is the hashed Mcp-Session-Id ("sha256:" and 16 hex digits).
	// A raw value is hashed by the encoder.
	Session string `json:"session,omitempty"`
	// Conn is the client connection the request came on, as the HTTP
	// recorder names it ("RUN-N": a random id of the recording process and
	// the connection's number; or the connection's remote address): what
	// tells apart two clients without a session (2026-07-28).
	Conn string `json:"conn,omitempty"`
	// HTTPMethod is the request's HTTP method (POST, GET, DELETE).
	HTTPMethod string `json:"httpMethod,omitempty"`
	// URL is the request URL, with userinfo and credential query
	// parameters redacted by the encoder.
	URL string `json:"url,omitempty"`
	// Status is this exchange's HTTP status, 0 when no response arrived.
	Status int `json:"status,omitempty"`
	// ContentType is the response's Content-Type.
	ContentType string `json:"contentType,omitempty"`
	// IsError is the tool result's isError member, when present.
	IsError *bool `json:"isError,omitempty"`
	// ErrorMessage is the JSON-RPC error message.
	ErrorMessage string `json:"errorMessage,omitempty"`
	// ErrorData is the JSON-RPC error data, redacted like a JSON body and
	// capped; when it was too large it becomes a JSON string excerpt and
	// ErrorDataTruncated is set.
	ErrorData json.RawMessage `json:"errorData,omitempty"`
	// ErrorDataTruncated reports that ErrorData was cut.
	ErrorDataTruncated bool `json:"errorDataTruncated,omitempty"`
	// ErrorDataCutRedacted is Body.CutRedacted for ErrorData: set by the
	// encoder on data it wrote truncated, whose cut holds no unfinished
	// token. A reader trims the last token of truncated data without it.
	ErrorDataCutRedacted bool `json:"errorDataCutRedacted,omitempty"`
	// RetryAfter is the raw Retry-After header of the response.
	RetryAfter string `json:"retryAfter,omitempty"`
	// Timings are the exchange's (or call's) durations.
	Timings Timings `json:"timings,omitzero"`
	// SSE counts the events of an event-stream response.
	SSE *SSE `json:"sse,omitempty"`
	// Network describes a transport failure.
	Network *Network `json:"network,omitempty"`
	// Input describes an InputRequiredResult (MRTR).
	Input *Input `json:"input,omitempty"`
	// Task describes a CreateTaskResult (tasks extension).
	Task *Task `json:"task,omitempty"`
	// NotClassified says why the exchange has no verdict (outcome
	// NOT_CLASSIFIED): the cause, the size and the limit.
	NotClassified *NotClassified `json:"notClassified,omitempty"`
	// Auth is the exchange's part in an OAuth authorization chain (MCP
	// authorization): its step and what it did; on a call, the step where
	// the chain failed (outcome AUTH_FAILED). It never holds a secret.
	Auth *Auth `json:"auth,omitempty"`
	// Decision is what the client decided after this exchange (retry,
	// stop, …), or on a call, the final decision.
	Decision *Decision `json:"decision,omitempty"`
	// EraFallback marks, on an exchange, the client's first 2026-07-28
	// request in auto mode (the probe that decides the era) that the
	// server refused as a 2025-11-25-era server: the client fell back to
	// initialize, as the spec's backward-compatibility rule says. Its
	// outcome is what the server answered (HTTP_ERROR, say); report counts
	// it apart, as a negotiation step, not as a failure.
	EraFallback bool `json:"eraFallback,omitempty"`
	// AnsweredOn is AnsweredOnStream on the record of a message POSTed to
	// the endpoint a 2024-11-05 HTTP+SSE event stream named and answered
	// 202: its answer, if it has one, travels on that GET stream, not in
	// this response (StreamAnswer says whether it was seen there).
	AnsweredOn string `json:"answeredOn,omitempty"`
	// StreamAnswer is, on the record of a request POSTed to the endpoint
	// of a 2024-11-05 HTTP+SSE event stream (answeredOn "stream"), what
	// became of its answer on that stream: seen (the record's outcome,
	// layer and JSON-RPC facts are the answer's) or why it was not.
	StreamAnswer *StreamAnswer `json:"streamAnswer,omitempty"`
	// StreamAnswers counts, on the record of a 2024-11-05 HTTP+SSE GET
	// event stream, the JSON-RPC responses it carried and how they were
	// paired with the POSTs they answer.
	StreamAnswers *StreamAnswers `json:"streamAnswers,omitempty"`
	// Resume holds an event stream's ids for resumption (2025-11-25
	// Streamable HTTP): on a request's record whose stream the server
	// closed without the response after an event with an id, that it is
	// resumable and after which event; on a GET's, the Last-Event-ID it
	// resumed after and the JSON-RPC responses its stream carried.
	Resume *Resume `json:"resume,omitempty"`
	// PolicyRetries counts, on a call, the exchanges sent by the retry
	// policy.
	PolicyRetries int `json:"policyRetries,omitempty"`
	// InputRounds counts, on a call, the exchanges that answered the
	// server's input requests: MRTR rounds (inputRequests) and the answers
	// to a 2025-11-25 server request (elicitation/create on a stream).
	InputRounds int `json:"inputRounds,omitempty"`
	// ClientAnswer marks the record of a client's answer to a server
	// request (elicitation/create, sampling/createMessage, roots/list):
	// over HTTP the POST carrying the answer, over stdio the server
	// request with the client's answer line. Its method is the server
	// request's (over HTTP, when the proxy saw the request on a stream),
	// its id the answer's, and its outcome judges the client's answer
	// (RESULT_SUCCESS, JSONRPC_ERROR), the same through both transports.
	ClientAnswer bool `json:"clientAnswer,omitempty"`
	// AnswerRefused marks, on the record of a client's answer POSTed over
	// HTTP (ClientAnswer), that the server refused it with a JSON-RPC error
	// in a 2xx's body (an unknown id, say): the outcome (JSONRPC_ERROR),
	// jsonrpc.errorCode and the reason are the server's refusal, not the
	// client's answer. Without it, a JSONRPC_ERROR on such a record is the
	// error the client answered with. A refusal with a non-2xx status keeps
	// its HTTP verdict and is not marked.
	AnswerRefused bool `json:"answerRefused,omitempty"`
	// Warnings are the classifier's warnings (code and message; the rule a
	// code cites is classify.Rule(code)).
	Warnings []Warning `json:"warnings,omitempty"`
	// RequestHeaders are the request's headers, redacted by the encoder.
	RequestHeaders http.Header `json:"requestHeaders,omitempty"`
	// ResponseHeaders are the response's headers, redacted by the encoder.
	ResponseHeaders http.Header `json:"responseHeaders,omitempty"`
	// RequestBytes is the size of the request body.
	RequestBytes int64 `json:"requestBytes,omitempty"`
	// ResponseBytes is the number of response body bytes read.
	ResponseBytes int64 `json:"responseBytes,omitempty"`
	// RequestBody is an excerpt of the request body (opt-in: it holds the
	// tool arguments).
	RequestBody *Body `json:"requestBody,omitempty"`
	// ResponseBody is an excerpt of the response body.
	ResponseBody *Body `json:"responseBody,omitempty"`
	// Dropped is, on a "dropped" record, how many records were dropped.
	Dropped int64 `json:"dropped,omitempty"`
	// Summarized is, on a summary record (the stdio proxy's lines past its
	// per-kind record cap), how many lines the record stands for.
	Summarized int64 `json:"summarized,omitempty"`
	// Batch is, on the record of a request sent in a JSON-RPC batch (a
	// JSON array of messages: 2025-03-26 batching), how many messages the
	// batch held (also on the record of a member that is not a JSON-RPC
	// message); 0 for a request sent on its own.
	Batch int64 `json:"batch,omitempty"`
	// Flags are the response flags of the exchange (UF, UC, UR, DC, FI, …;
	// see Flag): the facts a reader judges by, where the note says them in
	// words.
	Flags Flags `json:"flags,omitempty"`
	// Fault is the fault layer's decision about the request, when one was
	// in front of the handler.
	Fault *Fault `json:"fault,omitempty"`
	// Params are the _meta and MRTR facts of the request's params.
	Params *Params `json:"params,omitempty"`
	// Probe says which probe of mcpdiag probe sent the request (its kind,
	// seed and index), so the probe rules know what the answer must be.
	Probe *Probe `json:"probe,omitempty"`
	// SSEArrivals are the arrival times of the response's SSE events
	// (proxy, --record-bodies full).
	SSEArrivals []Arrival `json:"sseArrivals,omitempty"`
	// Note is free text from the producer, such as a classifier limit that
	// was hit. It is for people: no code judges by it (version-1 notes are
	// read once, by Upgrade).
	Note string `json:"note,omitempty"`
}

// JSONRPC holds the JSON-RPC facts of a record, in the article's shape.
type JSONRPC struct {
	// ID is the request's id (null for a notification or when unknown).
	ID wire.ID `json:"id"`
	// ErrorCode is the JSON-RPC error code, null when there was no error.
	ErrorCode *int64 `json:"errorCode"`
	// ErrorName is the schema name of ErrorCode (classify.CodeName).
	ErrorName string `json:"errorName,omitempty"`
	// ResponseID is the response's id, as the response spelled it, when its
	// text differs from ID's: another id (99 answering 1, "7" answering 7),
	// or the same id spelled otherwise (1.0 or 1e0 answering 1, "\u0061"
	// answering "a": equal by wire.ID.Equal, so not a mismatch, kept so that
	// a reader sees what was on the wire). Zero when the texts are the same.
	ResponseID wire.ID `json:"responseId,omitzero"`
}

// Timings are durations measured from the moment the request started. A
// duration that was not measured is zero and omitted.
type Timings struct {
	// Headers is the time until the response headers arrived.
	Headers Duration `json:"headersMs,omitempty"`
	// FirstEvent is the time until the first SSE event arrived.
	FirstEvent Duration `json:"firstEventMs,omitempty"`
	// Total is the time until the response was read (or failed); on a call,
	// from its first request to the end of its last exchange.
	Total Duration `json:"totalMs,omitempty"`
}

// Duration is a time.Duration written in JSON as milliseconds, a number with
// up to three decimals (microsecond precision).
type Duration time.Duration

// MarshalJSON writes d in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	us := time.Duration(d).Round(time.Microsecond)
	return strconv.AppendFloat(nil, float64(us)/float64(time.Millisecond), 'f', -1, 64), nil
}

// UnmarshalJSON reads milliseconds (null leaves d unchanged).
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*d = Duration(f * float64(time.Millisecond))
	return nil
}

// SSE is a copy of the classifier's event-stream counts
// (classify.SSEDetails), with the same JSON names.
type SSE struct {
	// Events counts the events read.
	Events int `json:"events"`
	// Notifications counts JSON-RPC notifications among them.
	Notifications int `json:"notifications"`
	// Progress counts notifications/progress.
	Progress int `json:"progress"`
	// Messages counts notifications/message (log messages).
	Messages int `json:"messages"`
	// Requests counts server-to-client requests on the stream.
	Requests int `json:"requests"`
	// Comments counts comment lines (keep-alives).
	Comments int `json:"comments"`
	// Terminal reports that the response for the request arrived.
	Terminal bool `json:"terminal"`
	// TerminalEvent is the 1-based index of the event that carried it.
	TerminalEvent int `json:"terminalEvent,omitempty"`
	// AfterTerminal counts events after the response.
	AfterTerminal int `json:"afterTerminal,omitempty"`
	// Skipped counts events read through without being parsed (over the
	// classifier's limit or its memory budget).
	Skipped int `json:"skipped,omitempty"`
	// Unterminated reports a final event without its blank line.
	Unterminated bool `json:"unterminated,omitempty"`
	// End says how the stream ended ("eof", "unterminated-event",
	// "stopped-at-terminal", "stopped-at-error", "error: …").
	End string `json:"end,omitempty"`
}

// Network is a copy of the classifier's transport-failure details
// (classify.NetworkDetails).
type Network struct {
	// Error is the transport error's text.
	Error string `json:"error"`
	// Phase is "before-response" (no headers arrived) or "body" (the body
	// was cut after the headers).
	Phase string `json:"phase"`
	// RequestSent reports whether the whole request had been written, so
	// that the server may have processed it.
	RequestSent bool `json:"requestSent"`
	// Timeout reports a timeout.
	Timeout bool `json:"timeout,omitempty"`
	// Cause is the failure in a word (classify.NetCauseOf: closed,
	// refused, timeout, cancelled, unreachable, other), the same for the
	// same event where Error's text varies between runs (EOF or "connection
	// reset by peer" for one close).
	Cause classify.NetCause `json:"cause,omitempty"`
}

// Input is a copy of the classifier's InputRequiredResult details.
type Input struct {
	// Requests are the entries of inputRequests.
	Requests []InputRequest `json:"requests"`
	// HasRequestState reports that the result carried requestState.
	HasRequestState bool `json:"hasRequestState"`
}

// InputRequest is one entry of inputRequests.
type InputRequest struct {
	// Key is the entry's key in inputRequests.
	Key string `json:"key"`
	// Method is the request's method, such as "elicitation/create".
	Method string `json:"method"`
	// Mode is the elicitation mode, when given.
	Mode string `json:"mode,omitempty"`
}

// NotClassified is a copy of the classifier's reason for giving no verdict
// (classify.NotClassifiedDetails).
type NotClassified struct {
	// Cause is "event-too-large", "body-too-large" or "memory-budget".
	Cause string `json:"cause"`
	// Size is the size in bytes of the SSE event or JSON body.
	Size int64 `json:"size"`
	// Limit is the limit in bytes that was reached (the classifier's
	// --max-event-size, or the proxy's --classify-memory).
	Limit int64 `json:"limit"`
	// InUse is, for a memory budget, the bytes it had reserved when it
	// refused.
	InUse int64 `json:"inUse,omitempty"`
	// Event is the 1-based index of the SSE event, absent for a JSON body.
	Event int `json:"event,omitempty"`
}

// Auth describes one step of an OAuth authorization chain. Only facts that
// are not secrets are kept: no token, code, verifier, client secret or
// assertion (docs/records.md "auth").
type Auth struct {
	// Step is challenge (an MCP answer 401/403 with a Bearer challenge),
	// request (an MCP request that carried the chain's token),
	// resource-metadata, as-metadata, registration, authorize, token,
	// refresh, or step-up (on a call: the decision that stopped).
	Step string `json:"step"`
	// StepUp numbers the step-up round of an authorize or token exchange.
	StepUp int `json:"stepUp,omitempty"`
	// Issuer and Resource are the authorization server and the protected
	// resource the step is about.
	Issuer   string `json:"issuer,omitempty"`
	Resource string `json:"resource,omitempty"`
	// Scope is the scope requested (or, on a challenge, the scope the
	// server named); Granted is the scope of the token issued.
	Scope   string `json:"scope,omitempty"`
	Granted string `json:"granted,omitempty"`
	// Grant is the grant type of a token request; ClientAuth its token
	// endpoint authentication method; Registration how the client was
	// registered (pre-registered, cimd, dynamic); ClientID the client id.
	Grant        string `json:"grant,omitempty"`
	ClientAuth   string `json:"clientAuth,omitempty"`
	Registration string `json:"registration,omitempty"`
	ClientID     string `json:"clientId,omitempty"`
	// PKCE is "S256" when a code_challenge (authorize) or a code_verifier
	// (token) was sent with that method. On an authorization server's log
	// line it is the code_challenge_method an authorization request sent
	// ("plain" for a challenge without one), and CodeChallenge reports that
	// it carried a code_challenge.
	PKCE          string `json:"pkce,omitempty"`
	CodeChallenge bool   `json:"codeChallenge,omitempty"`
	// Via is how an authorization code arrived: fetch, browser or paste.
	Via string `json:"via,omitempty"`
	// Error and ErrorDescription are the OAuth error the peer sent.
	Error            string `json:"error,omitempty"`
	ErrorDescription string `json:"errorDescription,omitempty"`
	// Failure says what rule the answer broke, Rule cites it.
	Failure string `json:"failure,omitempty"`
	Rule    string `json:"rule,omitempty"`
	// TokenResource and TokenIssuer are, on an MCP exchange that carried a
	// token of the chain, what it was issued for and by whom.
	TokenResource string `json:"tokenResource,omitempty"`
	TokenIssuer   string `json:"tokenIssuer,omitempty"`
	// The facts of an authorization server's log line (mcpdiag serve),
	// where Resource and Scope are the request's parameters, Granted the
	// scope of the token it issued, and TokenResource the protected
	// resource this server issues tokens for.
	//
	// Server is the authorization server's path (/oauth/N) and For the
	// MCP endpoint it serves (its key, path and query, URL-redacted).
	Server string `json:"server,omitempty"`
	For    string `json:"for,omitempty"`
	// BearerSent reports that the request carried, in its Authorization
	// header, an access token this server issued for TokenResource: a
	// token sent to a server it was not issued for.
	BearerSent bool `json:"bearerSent,omitempty"`
	// RefreshIn says where a refresh token arrived: "body" (RFC 6749 §6),
	// "url" or "body+url".
	RefreshIn string `json:"refreshIn,omitempty"`
	// InURL names the credential parameters the request URL's query held
	// (refresh_token, access_token, code_verifier, client_secret,
	// client_assertion, or code at the token endpoint): names, never
	// values.
	InURL []string `json:"inURL,omitempty"`
	// Note says what the step learned, in a few words.
	Note string `json:"note,omitempty"`
}

// Task is a copy of the classifier's CreateTaskResult details.
type Task struct {
	// TaskID is the task's id.
	TaskID string `json:"taskId"`
	// Status is the task's status when it was created.
	Status string `json:"status"`
}

// Warning is a classifier warning without its rule text.
type Warning struct {
	// Code is the stable warning code, such as "missing-result-type".
	Code string `json:"code"`
	// Message says what was seen.
	Message string `json:"message"`
}

// Decision is what the client decided after an exchange. The fields are
// plain strings so that this package does not depend on the retry policy.
type Decision struct {
	// Action is the decision, such as "retry", "stop" or "reauthorize".
	Action string `json:"action"`
	// DelayMs is the wait before the next attempt, in milliseconds.
	DelayMs int64 `json:"delayMs,omitempty"`
	// Reason says why.
	Reason string `json:"reason,omitempty"`
}

// Body is an excerpt of a request or response body. Producers may put the
// raw body in Text: the encoder redacts it and caps it (Encoder.BodyLimit).
type Body struct {
	// Text is the (redacted) excerpt. Bytes that are not UTF-8 are
	// replaced by U+FFFD.
	Text string `json:"text"`
	// Truncated reports that Text is shorter than the body.
	Truncated bool `json:"truncated,omitempty"`
	// CutRedacted reports, with Truncated, that the cut holds no part of
	// a credential: the writer redacted the whole text before cutting it,
	// or dropped the unfinished last token a capture's cut left
	// (redact_cut.go). The encoder sets it on every truncated body it
	// writes. A truncated body without it (a record file written before
	// the mark, or by another producer) gets its last token trimmed when
	// it is encoded or read; with it the text is kept as written.
	CutRedacted bool `json:"cutRedacted,omitempty"`
}

// NewBody returns a redacted excerpt of b capped at DefaultBodyLimit, using
// the Default redactor.
func NewBody(b []byte) *Body {
	text, truncated := Default.Body(b, DefaultBodyLimit)
	return &Body{Text: text, Truncated: truncated, CutRedacted: truncated}
}

// SetResult copies the classifier's verdict and evidence into r: layer,
// outcome, reason, status, content type, result type, JSON-RPC error, SSE
// counts, network failure, MRTR and task details, why it was not
// classified, Retry-After, warnings and the body size. Method and ProtocolVersion are set only when r has none,
// and JSONRPC.ID only when the request id is unknown; a response id whose
// text differs from the request id's (another id, or the same one spelled
// otherwise) goes to JSONRPC.ResponseID.
func (r *Record) SetResult(res *classify.Result) {
	if res == nil {
		return
	}
	r.Layer, r.Outcome, r.Reason = res.Layer(), res.Outcome, res.Reason
	if res.Status != 0 {
		r.Status = res.Status
	}
	if res.ContentType() != "" {
		r.ContentType = res.ContentType()
	}
	if r.Method == "" {
		r.Method = res.Method()
	}
	if r.ProtocolVersion == "" {
		r.ProtocolVersion = res.Protocol()
	}
	r.ResultType = ResultType(res.ResultType())
	if v, ok := res.IsError(); ok {
		r.IsError = &v
	}
	if d := res.JSONRPC(); d != nil {
		// The response's id is copied only when the record keeps it: most
		// responses answer with the request's id, byte for byte, which
		// SetMessage set. One that differs only in its spelling (1.0 for
		// 1) is the same id, and still kept: the record says what was on
		// the wire, and whether it is a mismatch is wire.ID.Equal's answer
		// for whoever reads it.
		switch {
		case r.JSONRPC.ID.IsZero():
			r.JSONRPC.ID = wire.IDFromRaw(bytes.Clone(d.ID.Raw()))
		case !d.ID.IsZero() && !bytes.Equal(d.ID.Raw(), r.JSONRPC.ID.Raw()):
			r.JSONRPC.ResponseID = wire.IDFromRaw(bytes.Clone(d.ID.Raw()))
		}
		if e := d.Error; e != nil {
			if e.Code != nil {
				c := *e.Code
				r.JSONRPC.ErrorCode = &c
				r.JSONRPC.ErrorName = e.CodeName
				r.ErrorMessage = e.Message
			}
			if len(e.Data) > 0 {
				r.ErrorData = bytes.Clone(e.Data)
			}
		}
	}
	if s := res.SSE(); s != nil {
		r.SSE = &SSE{
			Events: s.Events, Notifications: s.Notifications, Progress: s.Progress, Messages: s.Messages,
			Requests: s.Requests, Comments: s.Comments, Terminal: s.Terminal, TerminalEvent: s.TerminalEvent,
			AfterTerminal: s.AfterTerminal, Skipped: s.Skipped, Unterminated: s.Unterminated, End: s.End,
		}
	}
	if d := res.NotClassified(); d != nil {
		r.NotClassified = &NotClassified{Cause: d.Cause, Size: d.Size, Limit: d.Limit, InUse: d.InUse, Event: d.Event}
	}
	if n := res.Network(); n != nil {
		r.Network = &Network{Error: n.Error, Phase: n.Phase, RequestSent: n.RequestSent, Timeout: n.Timeout, Cause: n.Cause}
	}
	if state, ok := res.HasRequestState(); ok {
		// Read in place: Input would build the details only to be copied.
		r.Input = &Input{HasRequestState: state, Requests: make([]InputRequest, res.NumInputRequests())}
		for i := range r.Input.Requests {
			r.Input.Requests[i] = InputRequest(res.InputRequest(i))
		}
	}
	if t := res.Task(); t != nil {
		r.Task = &Task{TaskID: t.TaskID, Status: t.Status}
	}
	if res.HTTP() != nil && res.HTTP().RetryAfter != nil {
		r.RetryAfter = res.HTTP().RetryAfter.Raw
	}
	// Read by index: a warning the Result keeps inside itself (a legacy
	// result's) is read without the slice Warnings would allocate, and the
	// record's own slice is made once at its length.
	r.Warnings = nil
	if n := res.NumWarnings(); n > 0 {
		r.Warnings = make([]Warning, n)
		for i := range n {
			w := res.Warning(i)
			r.Warnings[i] = Warning{Code: w.Code, Message: w.Message}
		}
	}
	r.ResponseBytes = res.BodyBytes
}

// SetRequest reads the facts of a JSON-RPC request body into r (see
// SetMessage). It parses body once; a caller that has the body's
// wire.Message already calls SetMessage.
func (r *Record) SetRequest(body []byte) {
	m := wire.ParseMessage(body)
	r.SetMessage(&m)
}

// SetMessageHead sets the facts a request body larger than was parsed
// showed in its head (wire.ParseMessageHead): its id (with its JSON type)
// when seen there, its method and its tool. Its arguments were not read, so
// it sets no args hash and no client capabilities.
func (r *Record) SetMessageHead(m *wire.Message) {
	if !m.ID.IsZero() {
		r.JSONRPC.ID = wire.IDFromRaw(bytes.Clone(m.ID.Raw()))
	}
	r.Method, r.Tool = m.Method, m.Tool
}

// SetMessage reads the facts of a client's JSON-RPC message into r: Method,
// JSONRPC.ID, Tool, ArgsHash, ClientCapabilities and
// ClientCapabilitiesTruncated (m.CapabilityNames()) and
// RequestBytes (the length of m.Body). For
// tools/call and prompts/get the tool is params.name and the hashed
// arguments are params.arguments; for other methods the tool is empty and
// the hashed arguments are params without its "_meta" member (which carries
// per-request values such as a progress token). It does not store the body:
// set RequestBody when body capture is wanted. A body that is no JSON-RPC
// request, notification or response only sets RequestBytes (and the id, when
// a JSON object has one).
func (r *Record) SetMessage(m *wire.Message) {
	r.RequestBytes = int64(len(m.Body))
	if !m.ID.IsZero() {
		r.JSONRPC.ID = wire.IDFromRaw(bytes.Clone(m.ID.Raw()))
	}
	if !m.IsRPC() {
		return
	}
	r.Method = m.Method
	args, skipMeta := m.Params, true
	r.Tool = ""
	if m.Method == "tools/call" || m.Method == "prompts/get" {
		r.Tool, args, skipMeta = m.Tool, m.Arguments, false
	}
	r.ArgsHash = argsHash(r.Method, r.Tool, args, skipMeta, true)
	r.ClientCapabilities, r.ClientCapabilitiesTruncated = m.CapabilityNames()
}
