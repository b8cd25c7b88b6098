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

	// Stdio marks a line pair of the stdio transport, which has no HTTP
	// layer: its callers give Status 200 and a JSON Content-Type to have
	// the line read as a JSON body, and the warnings about HTTP statuses
	// (status-mismatch) are not given.
	Stdio bool

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

// Carries puts msg, one JSON-RPC message that came without an HTTP response
// of its own (a stdio line, an event of a 2024-11-05 HTTP+SSE stream, a
// client's answer POSTed back), into ex as a JSON body of HTTP 200: how
// such a message is judged as the answer to the request ex names.
func (ex *Exchange) Carries(msg []byte) {
	ex.Status, ex.Header, ex.BodyBytes = http.StatusOK, jsonBodyHeader, msg
}

// jsonBodyHeader is the header Carries gives; the classifier only reads it.
var jsonBodyHeader = http.Header{"Content-Type": {"application/json"}}

// Result is the classifier's verdict with the evidence behind it. Its
// layer is its outcome's (Layer). Only the outcome, the reason, the status
// and the body's size are fields; the rest is read and set through methods
// (ContentType, SetContentType, JSONRPC, Warning, SSE, …), so that the
// Result of a common verdict is 96 bytes: allocating it is most of what
// the allocating Classify of a small response costs. The content type,
// method, protocol version and result type are kept as indexes into tables
// of the usual values (any other value is kept as it is, behind one
// pointer with the evidence few verdicts carry), and so is the warning of
// a result without resultType (NumWarnings and Warning read the warnings
// without an allocation). A setter changes only the
// Result it is called on, not a copy made before. A Result encodes to JSON
// (MarshalJSON) with every member at the top level, as one struct with all
// of them would.
type Result struct {
	Outcome Outcome
	Reason  string
	// BodyBytes counts the response body bytes the classifier read.
	BodyBytes int64
	// Status is the HTTP status of the response (0 when none arrived).
	Status int

	// extra is the evidence that few verdicts carry; nil when none does.
	extra *extra

	// jsonrpc is what JSONRPC returns when codeJSONRPC is set.
	jsonrpc JSONRPCDetails
	// codes holds the table indexes of the strings above, isError, and
	// two flags: JSONRPC is set, and the first warning is a legacy
	// result's (the code* constants).
	codes uint16
	// idBuf holds an id of up to six bytes (a number below 10^6, as SDKs
	// count requests); a longer id is copied on its own.
	idBuf [6]byte
}

// The layout of Result.codes: the method's and the result type's table
// indexes, one number for three more fields (codeGroup), and two flags. A
// field's highest value means "the string is in extra".
const (
	codeMethodShift = 0  // 5 bits: methodNames
	codeGroupShift  = 5  // 7 bits: the protocol, the content type and isError (below)
	codeRTShift     = 12 // 2 bits: rtypeNames

	codeMethodMask = 31
	codeGroupMask  = 127
	codeRTMask     = 3

	codeJSONRPC = 1 << 14 // JSONRPC is set
	// codeWarnNoRT: the first warning is warnNoResultType, kept as this
	// bit (the rest follow it in extra). It is the warning of every result
	// without resultType on a 2026-07-28 exchange (a server of an earlier
	// revision), whose text is a package constant.
	codeWarnNoRT = 1 << 15
)

// codeGroup is one number in 7 bits for three fields: the protocol's index
// (7 values: protoNames and "in extra"), the content type's (6: ctNames and
// "in extra") and isError (3: none, false, true), as proto + 7*(ct + 6*ie).
// 7*6*3 = 126 values fit in 7 bits where three fields of their own take 8:
// the bit that keeps the first warning (codeWarnNoRT).
const (
	protoRadix    = 7
	ctRadix       = 6
	isErrorRadix  = 3
	ctStride      = protoRadix
	isErrorStride = protoRadix * ctRadix

	isErrorNone, isErrorFalse, isErrorTrue = 0, 1, 2
)

// The tables of the usual strings, index 0 being "": a table has fewer
// entries than its field's values (the highest is "in extra",
// TestResultTables). The methods are those of the requests and
// notifications a client sends and of the requests a server sends (a
// proxy records both), so that a Result of any of them costs no allocation
// beside its own.
var (
	methodNames = [...]string{"", "tools/call", "initialize", "tools/list", "resources/read", "prompts/get",
		"resources/list", "resources/templates/list", "prompts/list", "ping", "completion/complete",
		"logging/setLevel", AnswerAckMethod, "notifications/initialized", "notifications/cancelled",
		"notifications/progress", "notifications/message", "notifications/roots/list_changed",
		"resources/subscribe", "resources/unsubscribe", "roots/list", "elicitation/create",
		"sampling/createMessage", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"}
	protoNames = [...]string{"", Protocol2026, Protocol2025, "2025-06-18", "2025-03-26", "2024-11-05"}
	ctNames    = [...]string{"", "application/json", "text/event-stream", "application/json; charset=utf-8",
		"text/event-stream; charset=utf-8"}
	rtypeNames = [...]string{"", "complete", "input_required"}
)

// The indexes the classifier writes without looking them up.
const (
	methodToolsCall    = 1
	protoIndex2026     = 1
	rtypeComplete      = 1
	rtypeInputRequired = 2
)

// codeField names one field of Result.codes. Its methods switch on it and
// divide by constants (a multiplication): with the radixes in variables
// the divisions cost 10-25 ns per verdict (legacy18's profile).
type codeField uint8

const (
	codeFieldMethod codeField = iota
	codeFieldProto
	codeFieldCT
	codeFieldRT
	codeFieldIsError
)

// radix returns how many values the field has.
func (f codeField) radix() uint16 {
	switch f {
	case codeFieldMethod:
		return codeMethodMask + 1
	case codeFieldProto:
		return protoRadix
	case codeFieldCT:
		return ctRadix
	case codeFieldRT:
		return codeRTMask + 1
	}
	return isErrorRadix
}

// index returns the field's value in r.
func (f codeField) index(r *Result) uint16 {
	switch f {
	case codeFieldMethod:
		return r.codes >> codeMethodShift & codeMethodMask
	case codeFieldRT:
		return r.codes >> codeRTShift & codeRTMask
	}
	g := r.codes >> codeGroupShift & codeGroupMask
	switch f {
	case codeFieldProto:
		return g % protoRadix
	case codeFieldCT:
		return g / ctStride % ctRadix
	}
	return g / isErrorStride
}

// setIndex stores i (below the field's radix) as its value in r, leaving
// the other fields as they were (those of codeGroup too).
func (f codeField) setIndex(r *Result, i uint16) {
	switch f {
	case codeFieldMethod:
		r.codes = r.codes&^(codeMethodMask<<codeMethodShift) | i<<codeMethodShift
		return
	case codeFieldRT:
		r.codes = r.codes&^(codeRTMask<<codeRTShift) | i<<codeRTShift
		return
	}
	g := r.codes >> codeGroupShift & codeGroupMask
	switch f {
	case codeFieldProto:
		g += i - g%protoRadix
	case codeFieldCT:
		g += (i - g/ctStride%ctRadix) * ctStride
	default:
		g += (i - g/isErrorStride) * isErrorStride
	}
	r.codes = r.codes&^(codeGroupMask<<codeGroupShift) | g<<codeGroupShift
}

// stringField is one of the strings Result keeps as a table index.
type stringField struct {
	codeField
	names []string
}

var (
	fieldMethod = stringField{codeFieldMethod, methodNames[:]}
	fieldProto  = stringField{codeFieldProto, protoNames[:]}
	fieldCT     = stringField{codeFieldCT, ctNames[:]}
	fieldRT     = stringField{codeFieldRT, rtypeNames[:]}
)

// get returns the field's string in r (in is the string when it is kept
// in extra).
func (f *stringField) get(r *Result, in func(*rare) string) string {
	i := f.index(r)
	if i == f.radix()-1 {
		return in(r.rare())
	}
	return f.names[i]
}

// put stores s as the field's index in r and reports whether s is in no
// table (the caller then keeps it in extra).
func (f *stringField) put(r *Result, s string) (outside bool) {
	i := f.radix() - 1
	for k, t := range f.names {
		if t == s {
			i = uint16(k)
			break
		}
	}
	f.setIndex(r, i)
	return i == f.radix()-1
}

// extra holds the evidence of the verdicts that have it (see Result): the
// warnings and input requests of some common verdicts, and the rest that
// few have behind one more pointer.
type extra struct {
	warnings []Warning
	rare     *rare
	// input points at the input requests packed (inputpack.go), nil when
	// there are none.
	input *byte
	// room is the room the classifier packed input requests into, kept
	// for ClassifyInto to write the next ones (nil when they are in the
	// verdict's own allocation, or none were written).
	room *inputRoom
}

// rare holds what few verdicts carry.
type rare struct {
	sse           *SSEDetails
	http          *HTTPDetails
	network       *NetworkDetails
	task          *TaskDetails
	notClassified *NotClassifiedDetails
	response      []byte
	// The strings that are in no table of Result.codes.
	contentType, method, protocol, resultType string
}

// more returns r's extra evidence, allocated on first use. Only the
// classifier calls it, on a Result it is writing (whose extra is its own);
// the exported setters copy instead (set).
func (r *Result) more() *extra {
	if r.extra == nil {
		r.extra = new(extra)
	}
	return r.extra
}

// moreRare is more for the rare evidence: allocated with the extra
// evidence when there is none yet (an event stream's counts come first).
func (r *Result) moreRare() *rare {
	if r.extra == nil {
		both := new(struct {
			e extra
			x rare
		})
		both.e.rare = &both.x
		r.extra = &both.e
		return &both.x
	}
	if r.extra.rare == nil {
		r.extra.rare = new(rare)
	}
	return r.extra.rare
}

// set returns a copy of r's extra evidence for a setter to change and
// store: a copy of a Result shares the evidence with the original, and a
// setter called on one must not change the other.
func (r *Result) set() *extra {
	e := new(extra)
	if r.extra != nil {
		*e = *r.extra
	}
	e.room = nil // the original's: ClassifyInto into it may write it again
	r.extra = e
	return e
}

// setRare is set for the rare evidence (both levels copied).
func (r *Result) setRare() *rare {
	e := r.set()
	x := new(rare)
	if e.rare != nil {
		*x = *e.rare
	}
	e.rare = x
	return x
}

// rare returns r's rare evidence, nil when there is none.
func (r *Result) rare() *rare {
	if r.extra == nil {
		return nil
	}
	return r.extra.rare
}

// setString stores s in field f of r, and in the rare evidence (through
// keep) when no table has it; write is moreRare for the classifier and
// setRare for the exported setters. (A string kept before is not cleared:
// the index says it is not the field's.)
func (r *Result) setString(f *stringField, s string, write func(*Result) *rare, keep func(*rare, string)) {
	if f.put(r, s) {
		keep(write(r), s)
	}
}

func rareMethod(x *rare) string      { return x.method }
func rareProtocol(x *rare) string    { return x.protocol }
func rareContentType(x *rare) string { return x.contentType }
func rareResultType(x *rare) string  { return x.resultType }

func keepMethod(x *rare, s string)      { x.method = s }
func keepProtocol(x *rare, s string)    { x.protocol = s }
func keepContentType(x *rare, s string) { x.contentType = s }
func keepResultType(x *rare, s string)  { x.resultType = s }

// ContentType returns the Content-Type of the response ("" when it had
// none).
func (r *Result) ContentType() string { return fieldCT.get(r, rareContentType) }

// SetContentType sets what ContentType returns.
func (r *Result) SetContentType(s string) {
	r.setString(&fieldCT, s, (*Result).setRare, keepContentType)
}

// setContentType is SetContentType for the classifier (see more).
func (r *Result) setContentType(s string) {
	r.setString(&fieldCT, s, (*Result).moreRare, keepContentType)
}

// Method returns the JSON-RPC method of the request (tools/call when the
// Exchange named none).
func (r *Result) Method() string { return fieldMethod.get(r, rareMethod) }

// SetMethod sets what Method returns.
func (r *Result) SetMethod(s string) {
	r.setString(&fieldMethod, s, (*Result).setRare, keepMethod)
}

// setMethod is SetMethod for the classifier (see more).
func (r *Result) setMethod(s string) {
	r.setString(&fieldMethod, s, (*Result).moreRare, keepMethod)
}

// Protocol returns the protocol revision of the request (2026-07-28 when
// the Exchange named none).
func (r *Result) Protocol() string { return fieldProto.get(r, rareProtocol) }

// SetProtocol sets what Protocol returns.
func (r *Result) SetProtocol(s string) {
	r.setString(&fieldProto, s, (*Result).setRare, keepProtocol)
}

// setProtocol is SetProtocol for the classifier (see more).
func (r *Result) setProtocol(s string) {
	r.setString(&fieldProto, s, (*Result).moreRare, keepProtocol)
}

// ResultType returns the result's resultType member ("" when it had none,
// or was no string).
func (r *Result) ResultType() string { return fieldRT.get(r, rareResultType) }

// SetResultType sets what ResultType returns.
func (r *Result) SetResultType(s string) {
	r.setString(&fieldRT, s, (*Result).setRare, keepResultType)
}

// setResultType is SetResultType for the classifier (see more).
func (r *Result) setResultType(s string) {
	r.setString(&fieldRT, s, (*Result).moreRare, keepResultType)
}

// JSONRPC returns the JSON-RPC facts of the response (its id, its error
// object's members), nil when it was no JSON-RPC response. They are r's
// own: changing them changes r.
func (r *Result) JSONRPC() *JSONRPCDetails {
	if r.codes&codeJSONRPC == 0 {
		return nil
	}
	return &r.jsonrpc
}

// SetJSONRPC sets what JSONRPC returns to a copy of *d (nil: none).
func (r *Result) SetJSONRPC(d *JSONRPCDetails) {
	if d == nil {
		r.jsonrpc, r.codes = JSONRPCDetails{}, r.codes&^codeJSONRPC
		return
	}
	r.jsonrpc, r.codes = *d, r.codes|codeJSONRPC
}

// IsError returns the result's isError member and true, or false when the
// result had none that is a boolean (or was no result).
func (r *Result) IsError() (isError, ok bool) {
	i := codeFieldIsError.index(r)
	return i == isErrorTrue, i != isErrorNone
}

// SetIsError sets what IsError returns: v and true.
func (r *Result) SetIsError(v bool) {
	if v {
		codeFieldIsError.setIndex(r, isErrorTrue)
	} else {
		codeFieldIsError.setIndex(r, isErrorFalse)
	}
}

// NumWarnings returns how many warnings r carries (Warning reads each).
func (r *Result) NumWarnings() int {
	n := 0
	if r.extra != nil {
		n = len(r.extra.warnings)
	}
	if r.codes&codeWarnNoRT != 0 {
		n++
	}
	return n
}

// Warning returns r's warning i (0 ≤ i < NumWarnings, in the order
// Warnings has them) by value, allocating nothing: the way to read a
// verdict's warnings on a hot path. It panics when i is out of range, as
// indexing a slice does.
func (r *Result) Warning(i int) Warning {
	if r.codes&codeWarnNoRT != 0 {
		if i == 0 {
			return warnNoResultType
		}
		i--
	}
	if r.extra == nil {
		panic("classify: Result.Warning: index out of range")
	}
	return r.extra.warnings[i]
}

// Warnings returns the spec violations and oddities that do not change the
// outcome, in the order they were found (nil or empty when none). When the
// first is a warning kept inside the Result (a result without resultType,
// codeWarnNoRT) it allocates a new slice; NumWarnings and Warning read the
// same warnings without allocating. Change them with SetWarnings: changing
// the slice returned may or may not change r.
func (r *Result) Warnings() []Warning {
	if r.codes&codeWarnNoRT == 0 {
		if r.extra == nil {
			return nil
		}
		return r.extra.warnings
	}
	w := make([]Warning, 0, r.NumWarnings())
	w = append(w, warnNoResultType)
	if r.extra != nil {
		w = append(w, r.extra.warnings...)
	}
	return w
}

// SetWarnings sets what Warnings returns.
func (r *Result) SetWarnings(w []Warning) {
	r.codes &^= codeWarnNoRT
	if w != nil || r.extra != nil {
		r.set().warnings = w
	}
}

// Input returns the input requests of an INPUT_REQUIRED verdict, nil for
// any other. The Result keeps them packed (a smaller verdict), so each call
// allocates new details equal to the last: changing them does not change
// r (SetInput does). NumInputRequests, InputRequest and HasRequestState
// read the same without allocating.
func (r *Result) Input() *InputDetails {
	if r.extra == nil || r.extra.input == nil {
		return nil
	}
	return unpack(r.extra.input)
}

// SetInput sets what Input returns to details equal to *d (nil: none).
func (r *Result) SetInput(d *InputDetails) {
	if d == nil {
		if r.extra != nil {
			r.set().input = nil
		}
		return
	}
	buf := make([]byte, packedLen(packedDetailsRest(d)))
	r.set().input = packDetails(buf, d)
}

// Layer returns the layer of the result's outcome (Outcome.Layer): "" for
// an outcome it does not know, LayerNone for NOT_CLASSIFIED.
func (r *Result) Layer() Layer { return r.Outcome.Layer() }

// SSE returns the counts of an event-stream response, nil for any other.
func (r *Result) SSE() *SSEDetails {
	if x := r.rare(); x != nil {
		return x.sse
	}
	return nil
}

// SetSSE sets the counts SSE returns.
func (r *Result) SetSSE(d *SSEDetails) {
	if d != nil || r.extra != nil {
		r.setRare().sse = d
	}
}

// HTTP returns the evidence parsed from an HTTP error's headers
// (Retry-After, WWW-Authenticate), nil when there is none.
func (r *Result) HTTP() *HTTPDetails {
	if x := r.rare(); x != nil {
		return x.http
	}
	return nil
}

// SetHTTP sets the evidence HTTP returns.
func (r *Result) SetHTTP(d *HTTPDetails) {
	if d != nil || r.extra != nil {
		r.setRare().http = d
	}
}

// Network returns the failure of a NETWORK_ERROR (or of a body cut after
// its headers), nil for any other verdict.
func (r *Result) Network() *NetworkDetails {
	if x := r.rare(); x != nil {
		return x.network
	}
	return nil
}

// SetNetwork sets the failure Network returns.
func (r *Result) SetNetwork(d *NetworkDetails) {
	if d != nil || r.extra != nil {
		r.setRare().network = d
	}
}

// Task returns the task of a TASK_CREATED verdict, nil for any other.
func (r *Result) Task() *TaskDetails {
	if x := r.rare(); x != nil {
		return x.task
	}
	return nil
}

// SetTask sets the task Task returns.
func (r *Result) SetTask(d *TaskDetails) {
	if d != nil || r.extra != nil {
		r.setRare().task = d
	}
}

// NotClassified says why there is no verdict (outcome NOT_CLASSIFIED); nil
// for a verdict.
func (r *Result) NotClassified() *NotClassifiedDetails {
	if x := r.rare(); x != nil {
		return x.notClassified
	}
	return nil
}

// SetNotClassified sets the details NotClassified returns.
func (r *Result) SetNotClassified(d *NotClassifiedDetails) {
	if d != nil || r.extra != nil {
		r.setRare().notClassified = d
	}
}

// Response returns the JSON-RPC response message, kept only when the
// classifier's KeepResponse is set (nil otherwise). It is not part of the
// Result's JSON.
func (r *Result) Response() []byte {
	if x := r.rare(); x != nil {
		return x.response
	}
	return nil
}

// SetResponse sets the message Response returns.
func (r *Result) SetResponse(b []byte) {
	if b != nil || r.extra != nil {
		r.setRare().response = b
	}
}

// resultJSON is a Result as JSON: every member at the top level, in the
// order and with the names records, goldens and scripts know.
type resultJSON struct {
	Layer         Layer                 `json:"layer"`
	Outcome       Outcome               `json:"outcome"`
	Status        int                   `json:"status,omitempty"`
	ContentType   string                `json:"contentType,omitempty"`
	Method        string                `json:"method,omitempty"`
	Protocol      string                `json:"protocolVersion,omitempty"`
	Reason        string                `json:"reason"`
	Warnings      []Warning             `json:"warnings"`
	JSONRPC       *JSONRPCDetails       `json:"jsonrpc,omitempty"`
	ResultType    string                `json:"resultType,omitempty"`
	IsError       *bool                 `json:"isError,omitempty"`
	SSE           *SSEDetails           `json:"sse,omitempty"`
	HTTP          *HTTPDetails          `json:"http,omitempty"`
	Network       *NetworkDetails       `json:"network,omitempty"`
	Input         *InputDetails         `json:"input,omitempty"`
	Task          *TaskDetails          `json:"task,omitempty"`
	NotClassified *NotClassifiedDetails `json:"notClassified,omitempty"`
	BodyBytes     int64                 `json:"bodyBytes"`
}

// MarshalJSON encodes the result with its layer and every detail as
// top-level members (the response kept is not encoded).
func (r Result) MarshalJSON() ([]byte, error) {
	var isErr *bool
	if v, ok := r.IsError(); ok {
		isErr = &v
	}
	warnings := r.Warnings()
	if warnings == nil {
		warnings = []Warning{}
	}
	return json.Marshal(resultJSON{
		Layer: r.Layer(), Outcome: r.Outcome, Status: r.Status, ContentType: r.ContentType(), Method: r.Method(),
		Protocol: r.Protocol(), Reason: r.Reason, Warnings: warnings, JSONRPC: r.JSONRPC(), ResultType: r.ResultType(),
		IsError: isErr, SSE: r.SSE(), HTTP: r.HTTP(), Network: r.Network(), Input: r.Input(), Task: r.Task(),
		NotClassified: r.NotClassified(), BodyBytes: r.BodyBytes,
	})
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

// JSONRPCDetails are the JSON-RPC facts of the response: its id, and the
// members of its error object when it is an error. It encodes to JSON
// (MarshalJSON) as one object: the id, then the error's members.
type JSONRPCDetails struct {
	// ID is the response's id as it arrived (null when absent).
	ID wire.ID
	// Error holds what was read of the response's error member; nil for a
	// result, and when nothing of it could be read.
	Error *ErrorObject
}

// ErrorObject holds the members of a JSON-RPC error object.
type ErrorObject struct {
	// Code is the error code, nil when it is not an integer.
	Code     *int64
	code     int64
	CodeName string
	Message  string
	Data     json.RawMessage
}

// ErrorCode returns the error code of the response and true, or false when
// d is nil or holds no integer code.
func (d *JSONRPCDetails) ErrorCode() (int64, bool) {
	if d == nil || d.Error == nil || d.Error.Code == nil {
		return 0, false
	}
	return *d.Error.Code, true
}

// jsonrpcJSON is JSONRPCDetails as JSON.
type jsonrpcJSON struct {
	ID       wire.ID         `json:"id"`
	Code     *int64          `json:"code,omitempty"`
	CodeName string          `json:"codeName,omitempty"`
	Message  string          `json:"message,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// MarshalJSON encodes d as one object: "id", then the error's "code",
// "codeName", "message" and "data" when set.
func (d JSONRPCDetails) MarshalJSON() ([]byte, error) {
	j := jsonrpcJSON{ID: d.ID}
	if e := d.Error; e != nil {
		j.Code, j.CodeName, j.Message, j.Data = e.Code, e.CodeName, e.Message, e.Data
	}
	return json.Marshal(j)
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
	// Cause is the error in a word (NetCauseOf), for words that must be
	// the same for the same event; Error is the raw text.
	Cause NetCause `json:"cause,omitempty"`
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
	for i := range r.NumWarnings() {
		if r.Warning(i).Code == code {
			return true
		}
	}
	return false
}
