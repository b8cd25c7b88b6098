package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/mcpdiag/mcpdiag/wire"
)

// Protocol revisions the classifier knows.
const (
	Protocol2026 = wire.Protocol2026
	Protocol2025 = wire.Protocol2025
)

// TasksExtension is the extension id that makes resultType "task" legal.
const TasksExtension = wire.TasksExtension

// errorBodyLimit bounds how much of an HTTP error body is read for a
// JSON-RPC error: error bodies are small, and a proxy's HTML page need not be
// read whole.
const errorBodyLimit = 64 << 10

// ErrTooLarge is matched (errors.Is) by the error of a NOT_CLASSIFIED
// result whose JSON body or SSE event exceeds the classifier's
// MaxEventSize. It is a limit of the classifier, not a verdict on the
// server.
var ErrTooLarge = wire.ErrEventTooLarge

// NotClassifiedError is the error Classify returns with a NOT_CLASSIFIED
// result. Its text is the result's reason; errors.Is matches ErrTooLarge
// or wire.ErrBudgetExhausted.
type NotClassifiedError struct {
	Details NotClassifiedDetails
	Reason  string
}

func (e *NotClassifiedError) Error() string { return e.Reason }

// Unwrap returns ErrTooLarge or wire.ErrBudgetExhausted.
func (e *NotClassifiedError) Unwrap() error {
	if e.Details.Cause == CauseMemoryBudget {
		return wire.ErrBudgetExhausted
	}
	return ErrTooLarge
}

// Classifier classifies exchanges. The zero value is ready to use.
type Classifier struct {
	// MaxEventSize bounds a JSON body or one SSE event held in memory
	// (wire.DefaultMaxEventSize when 0).
	MaxEventSize int
	// StopAtTerminal stops reading an event stream once the response has
	// arrived, as a client does; otherwise the stream is read to its end so
	// that messages after the response are noticed.
	StopAtTerminal bool
	// KeepResponse copies the JSON-RPC response message into
	// Result.Response, for callers that need the result itself (a client
	// reading tools/list, or the next MRTR round).
	KeepResponse bool
	// OnServerRequest, when set, is called with each JSON-RPC request the
	// server sends on a response stream (legal in 2025-11-25, where
	// elicitation arrives this way). The bytes are only valid during the call.
	OnServerRequest func(msg []byte)
	// OnLateServerRequest, when set, is called with each JSON-RPC request
	// the server sends on a response stream after the response (no part
	// of the exchange: OnServerRequest is not called with it), for a
	// reader that goes on reading: the recorder notes it, so that a
	// client's answer to it names its method. Nothing after the response
	// is read with StopAtTerminal. The bytes are only valid during the
	// call.
	OnLateServerRequest func(msg []byte)

	// Budget, when set, is the memory that classifiers running at the same
	// time share (a proxy's in-flight exchanges): an event or body whose
	// bytes it refuses is read through without being held, and an exchange
	// that cannot be judged without it is NOT_CLASSIFIED (cause
	// memory-budget). Nil means no budget beyond MaxEventSize.
	Budget *wire.Budget

	// noFastPath makes every body take the general path (tests compare).
	noFastPath bool
	// Now returns the time used to turn a Retry-After HTTP-date into a delay
	// when the response has no Date header; time.Now when nil.
	Now func() time.Time
}

// Classify classifies ex with the default classifier.
func Classify(ex *Exchange) (*Result, error) {
	var c Classifier
	return c.Classify(ex)
}

// Classify reads the response in ex and returns the verdict. The error is
// non-nil only when the classifier could not finish for its own reasons (a
// body or event beyond MaxEventSize, or past the Budget): it is then a
// *NotClassifiedError, and the result is a complete NOT_CLASSIFIED verdict
// that says why (Result.NotClassified), with the rest of the response read.
func (c *Classifier) Classify(ex *Exchange) (*Result, error) {
	if ct, ok := c.shaped(ex); ok {
		if ex.Body == nil {
			return c.classifyShaped(ex, ct, ex.BodyBytes), nil
		}
		return c.readShaped(ex, ct)
	}
	r := new(Result) // already zero: no need to clear it as ClassifyInto does
	err := c.into(ex, r)
	return r, err
}

// shaped reports whether into would take ex straight to message with a
// JSON body (a 2xx tools/call response of Content-Type application/json to
// a request with an id), and returns the Content-Type. Classify then reads
// the body before it allocates the Result, so that the Result and what its
// verdict must own (an error's details and reason, a warning, input
// requests) take one allocation of the size needed.
func (c *Classifier) shaped(ex *Exchange) (string, bool) {
	if c.noFastPath || ex.Err != nil || ex.Notification || ex.ID.IsZero() || ex.Status < 200 || ex.Status > 299 ||
		ex.Status == http.StatusAccepted ||
		ex.Header == nil || ex.Method != "" && ex.Method != "tools/call" {
		return "", false
	}
	v := ex.Header["Content-Type"]
	if len(v) == 0 || mediaType(v[0]) != "application/json" || ex.Body == nil && len(ex.BodyBytes) == 0 {
		return "", false
	}
	return v[0], true
}

// start writes what into writes first: the request's facts and the status.
func (r *Result) start(ex *Exchange) {
	r.Status = ex.Status
	if ex.Method == "" {
		r.codes |= methodToolsCall << codeMethodShift
	} else {
		r.setMethod(ex.Method)
	}
	if ex.ProtocolVersion == "" {
		r.codes |= protoIndex2026 << codeGroupShift // codes is zero here; the protocol is codeGroup's units
	} else {
		r.setProtocol(ex.ProtocolVersion)
	}
}

// end writes what into writes last: a warning when the request's id, or
// else the response's (when its text differs), is not an id MCP allows
// (wire.ID.MCPProblem). A small integer or a string id costs a byte scan.
func (r *Result) end(ex *Exchange) {
	if p := ex.ID.MCPProblem(); p != wire.IDAllowed {
		r.warnID("request", ex.ID, p)
		return
	}
	if r.codes&codeJSONRPC == 0 {
		return
	}
	if id := r.jsonrpc.ID; !bytes.Equal(id.Raw(), ex.ID.Raw()) {
		if p := id.MCPProblem(); p != wire.IDAllowed {
			r.warnID("response", id, p)
		}
	}
}

// warnID adds the warning for an id (the request's or the response's:
// which) that MCP does not allow, or that not every peer can read (p).
func (r *Result) warnID(which string, id wire.ID, p wire.IDProblem) {
	if w, ok := idWarning(which, id, p); ok {
		r.warnText(w.Code, w.Message)
	}
}

// IDWarning returns the warning Classify gives for an id MCP does not
// allow (id-not-mcp) or not every peer can read (id-beyond-safe-integer),
// which naming whose id it is ("request", "response"); ok is false for an
// id that is allowed. A verdict made without the classifier (a record its
// producer builds itself) takes it from here, so that the same id gets the
// same word either way.
func IDWarning(which string, id wire.ID) (w Warning, ok bool) {
	return idWarning(which, id, id.MCPProblem())
}

func idWarning(which string, id wire.ID, p wire.IDProblem) (Warning, bool) {
	var code, msg string
	switch p {
	case wire.IDNotInteger:
		code, msg = WarnIDNotMCP, fmt.Sprintf("the %s's id %s is a number with a fractional part, which MCP forbids: an id is a string or an integer (JSON-RPC allows it; servers differ: the TypeScript SDK 1.32 refuses it, HTTP 400 -32700, and drops it over stdio; go-sdk 1.8 answers under the id cut to an integer)", which, id)
	case wire.IDBeyondSafeInteger:
		code, msg = WarnIDBeyondSafeInteger, fmt.Sprintf("the %s's id %s is an integer beyond ±(2^53-1): MCP allows it, but a peer that reads JSON numbers as doubles cannot hold it exactly (the TypeScript SDK 1.32 refuses it: HTTP 400 -32700, dropped over stdio)", which, id)
	default:
		return Warning{}, false
	}
	return Warning{Code: code, Message: msg, Rule: rules[code]}, true
}

// readShaped is classifyShaped for a body to read (jsonReader's reading,
// before the Result is allocated).
func (c *Classifier) readShaped(ex *Exchange, ct string) (*Result, error) {
	data, reserved, err := readBounded(ex.Body, c.maxSize(), bodySize(ex.Body, ex.Header), c.Budget)
	defer c.Budget.Release(reserved)
	if err == nil && len(data) > 0 {
		return c.classifyShaped(ex, ct, data), nil
	}
	r := new(Result)
	r.start(ex)
	r.setContentType(ct)
	err = c.jsonRead(r, ex, ex.Body, data, err)
	r.end(ex)
	return r, err
}

// resultError is the Result of a JSON-RPC error of the fast path with its
// details and reason (an input_required result's: newInputVerdict).
type resultError struct {
	r  Result
	st errorStore
}

// classifyShaped classifies a shaped exchange (see shaped) whose JSON body
// is data, as into would.
func (c *Classifier) classifyShaped(ex *Exchange, ct string, data []byte) *Result {
	protocol := ex.ProtocolVersion
	if protocol == "" {
		protocol = Protocol2026
	}
	var f fastFacts
	var r *Result
	if !c.fastScan(ex, data, false, "tools/call", protocol, &f) {
		r = new(Result)
		r.start(ex)
		r.setContentType(ct)
		r.BodyBytes = int64(len(data))
		c.general(r, ex, data)
		r.end(ex)
		return r
	}
	switch {
	case f.kind == fastError:
		s := new(resultError)
		r, f.errStore = &s.r, &s.st
	case f.kind == fastInput:
		r, f.inBuf = newInputVerdict(packedLen(f.inputs.packedRest()))
	default:
		r = new(Result)
	}
	r.start(ex)
	r.setContentType(ct)
	r.BodyBytes = int64(len(data))
	c.fastApply(r, ex, data, false, &f)
	r.end(ex)
	return r
}

// ClassifyInto is Classify writing into a Result the caller owns, so that a
// loop over many exchanges (a proxy, a benchmark) allocates nothing for
// small responses. Everything r held before is overwritten, and so is what
// its methods returned: the storage of its evidence (the warnings' array,
// the room of its input requests, the JSON-RPC details) is reused, also by a
// copy of r made before. A caller that keeps an earlier verdict must
// deep-copy it first.
func (c *Classifier) ClassifyInto(ex *Exchange, r *Result) error {
	e := r.extra
	*r = Result{}
	if e != nil {
		*e = extra{warnings: e.warnings[:0], room: e.room}
		r.extra = e
	}
	return c.into(ex, r)
}

// into classifies ex into r, which is zero but for its Warnings' backing
// array.
func (c *Classifier) into(ex *Exchange, r *Result) error {
	if ex.Notification && ex.ID.IsNull() {
		return c.nullIDRequest(ex, r)
	}
	r.start(ex)
	err := c.classify(r, ex)
	r.end(ex)
	return err
}

// nullIDRequest classifies the answer to a message with a method and an id
// member that is null: a caller that follows wire calls it a notification
// (nothing can be answered by a null id), but JSON-RPC 2.0 §4 makes it a
// request, so the answer is classified as one (a JSON-RPC error is that, a
// result under id null cannot be paired), with the warning that MCP forbids
// the null id. As a notification, a JSON-RPC error answered under 200 was
// NOTIFICATION_ACCEPTED.
func (c *Classifier) nullIDRequest(ex *Exchange, r *Result) error {
	req := *ex
	req.Notification = false
	r.start(&req)
	err := c.classify(r, &req)
	r.warn(WarnRequestIDNull, "the request has id null, which MCP forbids: a request's id is a string or an integer")
	r.end(&req)
	return err
}

func (c *Classifier) maxSize() int {
	if c.MaxEventSize > 0 {
		return c.MaxEventSize
	}
	return wire.DefaultMaxEventSize
}

func (c *Classifier) classify(r *Result, ex *Exchange) error {
	if ex.Err != nil {
		networkError(r, ex.Err, "before-response", ex.RequestSent)
		return nil
	}
	if ex.Header != nil {
		if v := ex.Header["Content-Type"]; len(v) > 0 {
			r.setContentType(v[0])
		} else {
			r.setContentType(ex.Header.Get("Content-Type"))
		}
	}
	if ex.Status < 200 || ex.Status > 299 {
		c.httpError(r, ex)
		return nil
	}
	if !ex.Notification && ex.ID.IsZero() {
		r.warn(WarnIDNotChecked, "no request id was given, so the response id was not checked")
	}

	mt := mediaType(r.ContentType())
	var body io.Reader
	data := ex.BodyBytes
	if ex.Body != nil {
		body = ex.Body
	}
	var err error
	if mt == "" {
		err = c.sniffed(r, ex, body, data)
	} else {
		err = c.body(r, ex, mt, body, data)
	}
	if ex.Status == http.StatusAccepted && !ex.Notification && err == nil && r.Outcome != EmptyResponse {
		r.warn(WarnRequestAnswered202, "the response to a request came with HTTP 202, which clients read as \"accepted, no body\": the TypeScript SDK discards the body, so its caller never gets this answer (%s)", r.Outcome)
	}
	return err
}

// sniffed classifies a response without a Content-Type by what its body
// starts with. (Its own function, as are the others below, so that
// classify has no defer: a defer that cannot be open-coded costs every
// call, the smallest responses' included.)
func (c *Classifier) sniffed(r *Result, ex *Exchange, body io.Reader, data []byte) error {
	// Sniff: the spec requires a Content-Type, but a body is still worth
	// reading.
	const blank = " \t\r\n\xef\xbb\xbf"
	var head []byte
	var skipped int64 // leading blank bytes dropped before the sniff
	if body != nil {
		br := bufio.NewReaderSize(body, 512)
		head, _ = br.Peek(512)
		// 512 blank bytes say nothing yet: look past them, so that the
		// verdict does not depend on where the body's bytes are cut.
		for len(head) == 512 && len(bytes.TrimLeft(head, blank)) == 0 {
			n, _ := br.Discard(len(head))
			skipped += int64(n)
			head, _ = br.Peek(512)
		}
		body = br
	} else {
		head = data
	}
	head = bytes.TrimLeft(head, blank)
	var mt string
	switch {
	case len(head) == 0:
		// Nothing but blank bytes: count them all, from a stream as
		// from bytes.
		if body != nil {
			n, _ := io.Copy(io.Discard, body)
			r.BodyBytes = n + skipped
		} else {
			r.BodyBytes = int64(len(data))
		}
		return c.empty(r, ex)
	case head[0] == '{' || head[0] == '[':
		mt = "application/json"
		r.warn(WarnMissingContentType, "the response has no Content-Type; the body was sniffed as JSON")
	case hasAnyPrefix(head, "data:", "event:", ":", "id:", "retry:"):
		mt = "text/event-stream"
		r.warn(WarnMissingContentType, "the response has no Content-Type; the body was sniffed as an event stream")
	default:
		r.Outcome = UnexpectedContentType
		r.Reason = "the response has no Content-Type and its body is neither JSON nor an event stream"
		r.BodyBytes += skipped
		return nil
	}
	err := c.body(r, ex, mt, body, data)
	r.BodyBytes += skipped
	return err
}

// body classifies the body of a 2xx response of media type mt (lower-cased,
// without parameters).
func (c *Classifier) body(r *Result, ex *Exchange, mt string, body io.Reader, data []byte) error {
	switch mt {
	case "text/event-stream":
		if ex.Notification {
			return c.notification(r, ex, body, data)
		}
		if body == nil {
			body = bytes.NewReader(data)
		}
		return c.stream(r, ex, body)
	case "application/json":
		if body != nil {
			return c.jsonReader(r, ex, body)
		}
		r.BodyBytes = int64(len(data))
		return c.jsonBody(r, ex, data)
	}
	if ex.Status == http.StatusAccepted || ex.Status == http.StatusNoContent {
		if body == nil && len(data) == 0 || body != nil && isEmpty(body) {
			return c.empty(r, ex)
		}
	}
	r.Outcome = UnexpectedContentType
	r.Reason = fmt.Sprintf("HTTP %d with Content-Type %q: a response to a request must be application/json or text/event-stream", ex.Status, r.ContentType())
	return nil
}

// jsonReader reads a JSON body from body, within the classifier's bounds,
// and classifies it.
func (c *Classifier) jsonReader(r *Result, ex *Exchange, body io.Reader) error {
	data, reserved, err := readBounded(body, c.maxSize(), bodySize(body, ex.Header), c.Budget)
	defer c.Budget.Release(reserved)
	return c.jsonRead(r, ex, body, data, err)
}

// jsonRead classifies what readBounded returned for a JSON body.
func (c *Classifier) jsonRead(r *Result, ex *Exchange, body io.Reader, data []byte, err error) error {
	r.BodyBytes = int64(len(data))
	var over *bodyOverError
	if errors.As(err, &over) {
		// Read the rest through, to know the body's size and that
		// it arrived whole.
		n, rerr := io.Copy(io.Discard, body)
		r.BodyBytes = over.read + n
		if rerr != nil {
			networkError(r, rerr, "body", true)
			return nil
		}
		d := &NotClassifiedDetails{Cause: CauseBodyTooLarge, Size: r.BodyBytes, Limit: int64(c.maxSize())}
		if over.budget {
			d.Cause, d.Limit, d.InUse = CauseMemoryBudget, c.Budget.Limit(), over.inUse
		}
		return c.notClassified(r, d)
	}
	if err != nil {
		networkError(r, err, "body", true)
		return nil
	}
	return c.jsonBody(r, ex, data)
}

// jsonBody classifies a JSON body held whole.
func (c *Classifier) jsonBody(r *Result, ex *Exchange, data []byte) error {
	if len(data) == 0 {
		return c.empty(r, ex)
	}
	if ex.Notification {
		r.Outcome = NotificationAccepted
		r.Reason = fmt.Sprintf("the notification was accepted with HTTP %d", ex.Status)
		r.warn(WarnNotificationWithBody, "the notification was answered %d with a %d-byte body", ex.Status, len(data))
		return nil
	}
	c.message(r, ex, data)
	return nil
}

func isEmpty(body io.Reader) bool {
	var b [1]byte
	n, _ := io.ReadFull(body, b[:])
	return n == 0
}

func hasAnyPrefix(b []byte, prefixes ...string) bool {
	for _, p := range prefixes {
		if bytes.HasPrefix(b, []byte(p)) {
			return true
		}
	}
	return false
}

func (c *Classifier) empty(r *Result, ex *Exchange) error {
	if ex.Notification {
		r.Outcome = NotificationAccepted
		r.Reason = fmt.Sprintf("the notification was accepted (HTTP %d, no body)", ex.Status)
		if ex.Status != http.StatusAccepted {
			r.warn(WarnNotificationWithBody, "an accepted notification should be answered 202, not %d", ex.Status)
		}
		return nil
	}
	r.Outcome = EmptyResponse
	r.Reason = fmt.Sprintf("HTTP %d with no body: a request needs a JSON-RPC response, and 202 is only for notifications", ex.Status)
	return nil
}

func (c *Classifier) notification(r *Result, ex *Exchange, body io.Reader, data []byte) error {
	r.Outcome = NotificationAccepted
	r.Reason = fmt.Sprintf("the notification was accepted with HTTP %d", ex.Status)
	r.warn(WarnNotificationWithBody, "the notification was answered %d with an event stream", ex.Status)
	return nil
}

// bodySize returns the length of the body when it is known in advance (an
// in-memory reader, or a Content-Length header), or -1. It is only a hint
// for the read buffer: the body is still read to its end or to the bound.
func bodySize(body io.Reader, h http.Header) int64 {
	switch b := body.(type) {
	case *bytes.Reader:
		return int64(b.Len())
	case *bytes.Buffer:
		return int64(b.Len())
	case *strings.Reader:
		return int64(b.Len())
	}
	if h != nil {
		if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
			return n
		}
	}
	return -1
}

// bodyOverError reports a JSON body that readBounded gave up: over the
// bound, or refused by the budget, after read bytes.
type bodyOverError struct {
	budget bool
	read   int64
	inUse  int64
}

func (e *bodyOverError) Error() string { return "the JSON body is over the classifier's limit" }

// readBounded reads body to its end, up to max bytes, reserving what it
// holds from b first. With a size hint (bodySize) the buffer is allocated
// once at that size, instead of growing through chunks and a final copy as
// io.ReadAll does: a 4 MiB body then costs 4 MiB, not 10. It returns the
// bytes reserved (to release when the data is dropped); past the bound or
// the budget, a *bodyOverError and no data.
func readBounded(body io.Reader, max int, sizeHint int64, b *wire.Budget) (data []byte, reserved int64, err error) {
	size := 512
	if sizeHint >= 0 {
		// One byte more than the body lets the read that meets EOF happen
		// without growing.
		size = int(min(sizeHint, int64(max))) + 1
	}
	size = min(size, max+1)
	if !b.Reserve(int64(size)) {
		return nil, 0, &bodyOverError{budget: true, inUse: b.InUse()}
	}
	reserved = int64(size)
	buf := make([]byte, 0, size)
	for {
		n, rerr := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > max {
			b.Release(reserved)
			return nil, 0, &bodyOverError{read: int64(len(buf))}
		}
		if rerr != nil {
			if rerr == io.EOF {
				rerr = nil
			}
			return buf, reserved, rerr
		}
		if len(buf) == cap(buf) {
			grow := min(2*cap(buf), max+1) - cap(buf)
			if !b.Reserve(int64(grow)) {
				b.Release(reserved)
				return nil, 0, &bodyOverError{budget: true, read: int64(len(buf)), inUse: b.InUse()}
			}
			reserved += int64(grow)
			nb := make([]byte, len(buf), cap(buf)+grow)
			copy(nb, buf)
			buf = nb
		}
	}
}

// notClassified makes r the NOT_CLASSIFIED verdict d describes, and
// returns its error.
func (c *Classifier) notClassified(r *Result, d *NotClassifiedDetails) error {
	r.Outcome = NotClassified
	r.moreRare().notClassified = d
	what := "the JSON body"
	if d.Event > 0 {
		what = fmt.Sprintf("event %d of the stream, which may hold the response,", d.Event)
	}
	switch d.Cause {
	case CauseMemoryBudget:
		r.Reason = fmt.Sprintf("not classified: %s is %d bytes, and holding it would take classification past its memory budget of %d bytes (%d in use; --classify-memory)", what, d.Size, d.Limit, d.InUse)
	default:
		r.Reason = fmt.Sprintf("not classified: %s is %d bytes, more than the %d bytes the classifier holds (--max-event-size)", what, d.Size, d.Limit)
	}
	return &NotClassifiedError{Details: *d, Reason: r.Reason}
}

func networkError(r *Result, err error, phase string, sent bool) {
	r.Outcome = NetworkError
	nd := &NetworkDetails{Error: err.Error(), Phase: phase, RequestSent: sent, Cause: NetCauseOf(err)}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
		nd.Timeout = true
	}
	r.moreRare().network = nd
	switch {
	case phase == "body":
		r.Reason = "the response body was cut after the headers: " + err.Error()
	case sent:
		r.Reason = "no HTTP response after the request was sent (the server may have processed it): " + err.Error()
	default:
		r.Reason = "no HTTP response; the request was not fully sent: " + err.Error()
	}
}

// mediaType returns the lower-cased media type of a Content-Type value,
// without parameters.
func mediaType(ct string) string {
	switch ct { // the usual values, without a search or a copy
	case "application/json", "text/event-stream":
		return ct
	}
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	switch {
	case strings.EqualFold(ct, "application/json"):
		return "application/json"
	case strings.EqualFold(ct, "text/event-stream"):
		return "text/event-stream"
	}
	return strings.ToLower(ct)
}

func (c *Classifier) httpError(r *Result, ex *Exchange) {
	r.Outcome = HTTPError
	r.Reason = fmt.Sprintf("HTTP %d %s", ex.Status, http.StatusText(ex.Status))
	if ex.Header != nil {
		if v := ex.Header.Get("Retry-After"); v != "" {
			ra := ParseRetryAfter(v, ex.Header.Get("Date"), c.now())
			r.moreRare().http = &HTTPDetails{RetryAfter: &ra}
		}
		if v := ex.Header.Get("WWW-Authenticate"); v != "" {
			if r.HTTP() == nil {
				r.moreRare().http = &HTTPDetails{}
			}
			r.HTTP().WWWAuthenticate = ParseWWWAuthenticate(v)
		}
	}
	data := ex.BodyBytes
	if ex.Body != nil {
		var err error
		data, err = io.ReadAll(io.LimitReader(ex.Body, errorBodyLimit))
		if err != nil && len(data) == 0 {
			return
		}
	}
	r.BodyBytes = int64(len(data))
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !wire.Valid(data) {
		return
	}
	env := scanEnvelope(data)
	if !env.hasError || wire.Kind(env.err) != '{' {
		return
	}
	e := new(ErrorObject)
	if !errorObject(env.err, e) {
		return
	}
	d := &r.jsonrpc
	*d = JSONRPCDetails{ID: r.ownID(env.id), Error: e}
	r.codes |= codeJSONRPC
	if e.Code != nil {
		r.Reason += ", " + jsonrpcErrorReason(*e.Code, e.CodeName, e.Message)
	}
	// The status decides the outcome, but an error for another id is as
	// wrong under a 400 as under a 200 (the Python SDK v1 answers a
	// missing session with "id":"server-error").
	if !ex.ID.IsZero() && !d.ID.IsZero() && !d.ID.IsNull() && !d.ID.Equal(ex.ID) {
		r.warn(WarnResponseForOtherID, "the HTTP %d error response carries id %s, not the request's %s", ex.Status, d.ID.String(), ex.ID.String())
	}
}

func (c *Classifier) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// envelope holds the raw members of a JSON-RPC message.
type envelope struct {
	jsonrpc, id, result, err, method []byte
	hasJSONRPC, hasID, hasResult     bool
	hasError, hasMethod              bool

	// errParsed: the fast path already read a well-formed error object.
	errParsed       bool
	errCode         int64
	errMsg, errData []byte
	// store, when set, is the room for the error's details and reason,
	// in the Result's allocation (Classify); otherwise they get their own.
	store *errorStore
}

func scanEnvelope(obj []byte) envelope {
	var e envelope
	_ = wire.EachField(obj, func(k, v []byte) bool {
		switch string(wire.Key(k)) {
		case "jsonrpc":
			e.jsonrpc, e.hasJSONRPC = v, true
		case "id":
			e.id, e.hasID = v, true
		case "result":
			e.result, e.hasResult = v, true
		case "error":
			e.err, e.hasError = v, true
		case "method":
			e.method, e.hasMethod = v, true
		}
		return true
	})
	return e
}

// errorObject fills d from a JSON-RPC error object and reports whether it is
// well formed (integer code, string message).
func errorObject(obj []byte, d *ErrorObject) bool {
	var code, msg, data []byte
	var hasCode, hasMsg bool
	_ = wire.EachField(obj, func(k, v []byte) bool {
		switch string(wire.Key(k)) {
		case "code":
			code, hasCode = v, true
		case "message":
			msg, hasMsg = v, true
		case "data":
			data = v
		}
		return true
	})
	ok := true
	if hasCode && wire.Kind(code) == '0' && wire.IsIntegerNumber(code) {
		// A code past int64 (1e300) has no integer value to report: the
		// error object is not well formed for us.
		if n, err := strconv.ParseFloat(string(code), 64); err == nil && n >= -9.2e18 && n <= 9.2e18 {
			d.code = int64(n)
			d.Code = &d.code
			d.CodeName = CodeName(d.code)
		} else {
			ok = false
		}
	} else {
		ok = false
	}
	if s, isStr := wire.StringValue(msg); hasMsg && isStr {
		d.Message = s
	} else {
		ok = false
	}
	if data != nil {
		d.Data = json.RawMessage(bytes.Clone(data))
	}
	return ok
}

// message classifies one JSON body that must be the response.
func (c *Classifier) message(r *Result, ex *Exchange, data []byte) {
	if !c.noFastPath && c.fastToolCall(r, ex, data, false) {
		return
	}
	c.general(r, ex, data)
}

// general is message's general path: any JSON body.
func (c *Classifier) general(r *Result, ex *Exchange, data []byte) {
	if !wire.Valid(data) {
		r.Outcome = MalformedJSON
		r.Reason = "the response body is not valid JSON"
		if len(data) > 3 && string(data[:3]) == "\xef\xbb\xbf" && wire.Valid(data[3:]) {
			// Said as it is: the JSON is valid, the BOM before it is
			// what a reader may refuse.
			r.Reason = "the response body is JSON after a UTF-8 byte order mark (EF BB BF), which JSON sent over a network must not start with (RFC 8259 §8.1): " +
				"a reader that drops it (fetch's Response.json()) takes the body, one that does not (Go's encoding/json, Python's json.loads) refuses it"
		}
		return
	}
	switch wire.Kind(data) {
	case '{':
	case '[':
		r.Outcome = InvalidEnvelope
		r.Reason = "the response is a JSON array (a batch); MCP responses are single JSON-RPC objects"
		return
	default:
		r.Outcome = InvalidEnvelope
		r.Reason = "the response is JSON but not an object"
		return
	}
	env := scanEnvelope(data)
	if !env.hasResult && !env.hasError && env.hasMethod {
		r.Outcome = InvalidEnvelope
		r.Reason = "the body is a JSON-RPC request or notification, not a response"
		return
	}
	c.response(r, ex, &env)
	if c.KeepResponse {
		r.moreRare().response = c.ownBody(ex, data)
	}
}

// ownBody returns data for Result.Response: the body the classifier read
// is its own, but Exchange.BodyBytes is the caller's, who may reuse it.
func (c *Classifier) ownBody(ex *Exchange, data []byte) []byte {
	if ex.Body == nil {
		return bytes.Clone(data)
	}
	return data
}

// response judges a JSON-RPC response envelope and, for a result, the result.
func (c *Classifier) response(r *Result, ex *Exchange, env *envelope) {
	// (The fast path read "2.0" exactly: errParsed.)
	if !env.hasJSONRPC || !env.errParsed && !wire.StringIs(env.jsonrpc, "2.0") {
		r.Outcome = InvalidEnvelope
		if env.hasJSONRPC {
			r.Reason = fmt.Sprintf("jsonrpc is %s, not \"2.0\"", env.jsonrpc)
		} else {
			r.Reason = "the jsonrpc member is missing"
		}
		return
	}
	if env.hasResult == env.hasError {
		r.Outcome = InvalidEnvelope
		if env.hasResult {
			r.Reason = "the response has both result and error"
		} else {
			r.Reason = "the response has neither result nor error"
		}
		return
	}
	d := &r.jsonrpc
	if env.hasID {
		d.ID = r.ownID(env.id)
	}
	r.codes |= codeJSONRPC
	idAbsent := !env.hasID || d.ID.IsNull()
	if !idAbsent {
		if !d.ID.IsString() && !d.ID.IsNumber() {
			r.Outcome = InvalidEnvelope
			r.Reason = fmt.Sprintf("the response id %s is neither a string nor a number", env.id)
			return
		}
		if !ex.ID.IsZero() && !d.ID.Equal(ex.ID) {
			r.Outcome = InvalidEnvelope
			r.Reason = fmt.Sprintf("the response id %s does not match the request id %s", env.id, ex.ID.String())
			return
		}
	}
	if env.hasError {
		var reason string
		if env.errParsed {
			// The message is the tail of the reason, and the reason's
			// text is stored with the error: one allocation for all.
			st := env.store
			if st == nil {
				st = new(errorStore)
			}
			e := &st.e
			e.code = env.errCode
			e.Code = &e.code
			var start string // the reason's text before the message
			if k := codeIndex(env.errCode); k >= 0 {
				e.CodeName, start = codeNames[k].name, codeReasons[k]
			}
			reason = errorReasonIn(st.text[:0], start, *e.Code, e.CodeName, env.errMsg)
			e.Message = reason[len(reason)-len(env.errMsg):]
			if env.errData != nil {
				e.Data = bytes.Clone(env.errData)
			}
			d.Error = e
		} else if wire.Kind(env.err) != '{' {
			r.Outcome = InvalidEnvelope
			r.Reason = "the error member is not an object with an integer code and a string message"
			return
		} else if e := new(ErrorObject); !errorObject(env.err, e) {
			d.Error = e
			r.Outcome = InvalidEnvelope
			r.Reason = "the error member is not an object with an integer code and a string message"
			return
		} else {
			d.Error = e
			reason = jsonrpcErrorReason(*e.Code, e.CodeName, e.Message)
		}
		r.Outcome = JSONRPCError
		r.Reason = reason
		switch {
		case !env.hasID:
			r.warn(WarnErrorWithoutID, "the error response has no id member (JSON-RPC 2.0 §5 requires one, null when the request id could not be read)")
		case idAbsent:
			r.warn(WarnErrorWithoutID, "the error response's id is null: the server could not read the request id")
		}
		c.codeWarnings(r, *d.Error.Code, ex)
		return
	}
	if idAbsent {
		r.Outcome = InvalidEnvelope
		r.Reason = "a result response must carry the request id"
		return
	}
	c.result(r, ex, env.result)
}

// errorStore is an ErrorObject with room for the text of its verdict's
// reason (which ends with the message), so that a JSON-RPC error whose
// reason fits costs one allocation beside the Result. 144 bytes: a size
// class.
type errorStore struct {
	e    ErrorObject
	text [72]byte
}

// jsonrpcErrorReason returns "JSON-RPC error <code>[ <name>]: <message>".
func jsonrpcErrorReason(code int64, name string, message string) string {
	var buf [128]byte
	return string(appendErrorReason(buf[:0], code, name, message))
}

// errorReasonIn is jsonrpcErrorReason built in room (a zero-length slice of
// storage that the caller dedicates to it: nothing else may write there)
// when it fits, without an allocation, and otherwise in one allocation.
// start, when not "", is the reason's text before the message (codeReasons).
func errorReasonIn(room []byte, start string, code int64, name string, message []byte) string {
	var buf [64]byte
	if start == "" {
		b := appendErrorReason(buf[:0], code, name, "")
		start = unsafe.String(unsafe.SliceData(b), len(b))
	}
	if len(start)+len(message) > cap(room) {
		return start + string(message)
	}
	room = append(room[:0], start...)
	room = append(room, message...)
	// The string shares room's storage, which nothing writes after this
	// (see errorStore).
	return unsafe.String(unsafe.SliceData(room), len(room))
}

func appendErrorReason[S string | []byte](b []byte, code int64, name string, message S) []byte {
	b = append(b, "JSON-RPC error "...)
	b = strconv.AppendInt(b, code, 10)
	if name != "" {
		b = append(b, ' ')
		b = append(b, name...)
	}
	b = append(b, ": "...)
	return append(b, message...)
}

func (c *Classifier) codeWarnings(r *Result, code int64, ex *Exchange) {
	if r.Protocol() == Protocol2025 {
		// The legacy, reserved and retired ranges are 2026-07-28 rules:
		// -32002 and -32042 are current codes on a 2025-11-25 exchange.
		switch code {
		case -32002:
			r.jsonrpc.Error.CodeName = "ResourceNotFound"
		case -32042:
			r.jsonrpc.Error.CodeName = "URLElicitationRequired"
		case -32001, -32003, -32004:
			r.jsonrpc.Error.CodeName = ""
		}
		return
	}
	switch {
	case code == -32002 || code == -32042:
		r.warn(WarnRetiredErrorCode, "error code %d is retired in 2026-07-28", code)
	case code == -32001 || code == -32003 || code == -32004:
		r.warn(WarnDraftErrorCode, "error code %d is early-draft numbering", code)
	case code >= -32019 && code <= -32000:
		r.warn(WarnLegacyErrorCode, "error code %d is in the legacy range -32000..-32019", code)
	case code >= -32099 && code <= -32023:
		r.warn(WarnReservedErrorCode, "error code %d is in the reserved range -32020..-32099 but undefined", code)
	}
	if r.Protocol() == Protocol2026 && !ex.Stdio && ex.Status >= 200 && ex.Status <= 299 {
		switch code {
		case -32020, -32021, -32022:
			r.warn(WarnStatusMismatch, "error %d came with HTTP %d; the spec requires 400", code, ex.Status)
		case -32601:
			r.warn(WarnStatusMismatch, "error -32601 came with HTTP %d; the spec requires 404", ex.Status)
		}
	}
}
