package recorder

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Exchange is the state of one request through the recorder. Its fields
// are written by the handler goroutine (and whatever it calls) and read by
// the exchange's finishing goroutine only after the handler returned,
// except where noted. A handler behind the recorder finds it with From.
type Exchange struct {
	rc    *Recorder
	in    *http.Request
	start time.Time
	ctx   exchangeCtx    // the context the request is passed on with
	rw    responseWriter // the response writer passed on

	// Tag is for the code that mounts the recorder (its Begin hook sets it,
	// its Finish hook reads it); the recorder does not look at it.
	Tag any
	// Up is the leg behind the recorder, as the handler that forwards the
	// request reports it (the proxy's transport and error handler); zero
	// when the handler answers itself.
	Up Upstream

	// The request.
	msg         wire.Message
	reqBody     []byte // the first maxParse bytes of the body
	reqBytes    atomic.Int64
	reqErr      error         // reading the client's body failed
	memBody     io.ReadCloser // the body passed on when reqBody is all of it: memReader behind io.NopCloser
	memReader   bytes.Reader
	protocol    string
	client      string
	session     string
	scenario    string
	url         string
	traceparent string
	tracestate  string

	// The downstream leg (set under responseWriter.mu).
	status     int
	respHeader http.Header
	respCopy   *headerCopy // respHeader's storage (releaseHeader), and the header names net/http does not send
	headersAt  time.Duration
	firstEvent time.Duration
	endAt      time.Duration // when the handler ended, since start (ended)
	arrivals   []arrival
	wrote      int64
	downErr    error
	closeErr   error // how the response body ended for the classifier
	pipe       *pipe

	rare *exchangeRare // what few exchanges have; nil when none of it

	// The flags, together: the Exchange is allocated for every exchange,
	// and each bool standing alone took 8 bytes with its padding. 1,024
	// bytes is a size class, 1,152 the next (docs/benchmarks.md, json8).
	//
	// bodyState says whether reqBody (and msg's slices of it) went out to
	// code the recorder does not follow (bodyShared), or went back to the
	// chunk pools (bodyReleased): see releaseBody.
	bodyState   atomic.Uint32
	probe       [1]byte // readPrefix's look past a body of exactly its Content-Length
	reqComplete bool    // reqBody is the whole body
	continued   bool    // the server answered the client's Expect: 100-continue (begin read the body)
	malformed   bool    // the recorder refused a malformed body
	hijacked    bool
	clientGone  bool
	shutdown    bool // the client was cut off because the owner shut down
	upReset     bool
	aborted     bool // the handler aborted the response itself
	started     bool // the finishing goroutine runs
	early       bool // the finishing goroutine started before the handler returned (startEarly): it waits for the pipe's endHandler
	ended       bool // endAt is set
}

// exchangeRare is what an Exchange holds only in some runs or for some
// requests, behind one pointer.
type exchangeRare struct {
	late    int64          // the bytes the handler wrote after the client was seen gone (responseWriter.gone): not delivered
	refused string         // a note: the handler answered itself (Refused)
	done    chan struct{}  // the record was handed to the sink (made with Options.Sync only)
	fault   *record.Fault  // the fault layer's decision, nil without one
	params  *record.Params // the fault endpoint's params facts (ServerFacts)
	// live marks a GET event stream whose first event was "endpoint"
	// (StreamEndpoint): it is read as it passes, not lazily, so that the
	// answers it carries reach StreamMessage when they arrive. Set by
	// beginWrite, on the handler's goroutine.
	live bool
	// sniffed holds the first bytes of a GET's event stream while its
	// first event is not whole (sniffEndpoint), on the writer's goroutine.
	sniffed []byte
	// copied counts the bytes the writer copied for the classifier (not
	// kept as ForwardChunk got them), with countCopies only (tests).
	copied int64
}

// rareFields returns ex.rare, made when ex had none. Only the handler's
// goroutine calls it (begin, Refused, the fault layer's tap).
func (ex *Exchange) rareFields() *exchangeRare {
	if ex.rare == nil {
		ex.rare = new(exchangeRare)
	}
	return ex.rare
}

// faultOf returns the fault layer's decision, nil without one.
func (ex *Exchange) faultOf() *record.Fault {
	if ex.rare == nil {
		return nil
	}
	return ex.rare.fault
}

// Upstream is the leg behind the recorder: what a handler that forwards the
// request (a reverse proxy) reports about it through Exchange.Up. Its
// fields are written by the handler's goroutine and its transport before
// the handler returns.
type Upstream struct {
	// Start, Headers and End time the leg: the request sent, the response
	// headers, the body's end.
	Start, Headers, End time.Time
	// Err is why no response came (nil when one did).
	Err error
	// BodyErr is the error that cut the response body after it started.
	BodyErr error
	// Sent reports that the request was written out in full. Once a
	// handler sets it, nothing may read the request body the recorder
	// passed on any more: the recorder then reuses the bytes it read the
	// body into, once the exchange is recorded (Exchange.Body).
	Sent atomic.Bool
	// ProxyError is the RFC 9209 error type when the handler answered the
	// request itself because the upstream failed before responding.
	ProxyError string
	// Flag is the response flag of Err (UF, UC, UT, DF, UPE).
	Flag record.Flag
	// Mirrored reports that the upstream dropped the connection before any
	// response and the handler dropped the client's the same way.
	Mirrored bool
}

// arrival is when the bytes up to off had been flushed to the client.
type arrival struct {
	off int64
	at  time.Duration
}

type exchangeKey struct{}

// From returns the exchange a request belongs to, or nil.
func From(ctx context.Context) *Exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*Exchange)
	return ex
}

// exchangeCtx is the context the recorder passes a request on with: one
// node, part of the exchange, that answers for the exchange (From), the
// fault layer's tap (faults.WithTap) and the message parsed from a whole
// body (wire.WithMessage). Three context.WithValue nodes cost three
// allocations and three steps of every later lookup and cancel-parent walk
// down the request's chain (net/http's transport makes several per
// exchange).
type exchangeCtx struct {
	context.Context // the request's own
	ex              *Exchange
}

func (c *exchangeCtx) Value(key any) any {
	if _, ok := key.(exchangeKey); ok {
		return c.ex
	}
	if faults.IsTapKey(key) {
		return c.ex.rc.tap(c.ex)
	}
	if c.ex.reqComplete && wire.IsMessageKey(key) {
		// The one parse of the body: the faults and anything else down
		// the chain read the facts from the context (wire.MessageFor).
		// Its slices are the body's bytes, which are then never reused.
		if !c.ex.shareBody() {
			return nil // recorded and given back: the caller parses its own bytes
		}
		return &c.ex.msg
	}
	return c.Context.Value(key)
}

// Request returns the client's request as the recorder received it.
func (ex *Exchange) Request() *http.Request { return ex.in }

// Start returns when the exchange began.
func (ex *Exchange) Start() time.Time { return ex.start }

// End returns when the handler returned (zero before).
func (ex *Exchange) End() time.Time {
	if !ex.ended {
		return time.Time{}
	}
	return ex.start.Add(ex.endAt)
}

// parsedHead reports a request body over the parse limit: begin read the
// limit and found more, so ex.msg is wire.ParseMessageHead's reading of the
// bytes read, not a whole parse.
func (ex *Exchange) parsedHead() bool { return !ex.reqComplete && ex.reqErr == nil }

// Method returns the JSON-RPC method of the request ("" when it is none).
func (ex *Exchange) Method() string { return ex.msg.Method }

// ID returns the JSON-RPC id of a request (the zero ID for anything
// else). Its bytes alias the request body: copy what is kept past the
// Begin hook.
func (ex *Exchange) ID() wire.ID {
	if ex.msg.Kind != wire.MessageRequest {
		return wire.ID{}
	}
	return ex.msg.ID
}

// Protocol returns the protocol revision the exchange's request is judged
// by.
func (ex *Exchange) Protocol() string { return ex.protocol }

// Tool returns params.name of a tools/call or prompts/get ("" otherwise).
func (ex *Exchange) Tool() string { return ex.msg.Tool }

// Cancelled returns params.requestId of a notifications/cancelled request
// (the zero ID otherwise). Its bytes alias the request body: copy what is
// kept past the Begin hook.
func (ex *Exchange) Cancelled() wire.ID { return ex.msg.Cancelled }

// Body returns the request body bytes read before the request was passed
// on, and whether they are the whole body. The bytes are the exchange's
// own from then on (the recorder never reuses bytes it handed out); called
// only after the exchange was recorded, Body may find them reused and
// return nil, false (see Upstream.Sent).
func (ex *Exchange) Body() ([]byte, bool) {
	if !ex.shareBody() {
		return nil, false
	}
	return ex.reqBody, ex.reqComplete
}

// The states of Exchange.bodyState.
const (
	bodyHeld     = iota // only the recorder and the body passed on read reqBody
	bodyShared          // handed out (Body, the message on the context): never reused
	bodyReleased        // given back to the pools: nothing may read it
)

// shareBody marks reqBody as handed out, unless it was given back already
// (false).
func (ex *Exchange) shareBody() bool {
	ex.bodyState.CompareAndSwap(bodyHeld, bodyShared)
	return ex.bodyState.Load() == bodyShared
}

// releaseBody gives the buffer the request body was read into back to the
// chunk pools, when nothing can read it any more. It is called by the
// finishing goroutine once the record is made, the Finish hook returned and
// the records were written, so the recorder itself is done with it (the
// record copies what it keeps: the id, the body text; the rest are
// strings ParseMessage allocated). Three other readers are ruled out:
//   - code that took the bytes from Body or the message on the request's
//     context (the faults, a Begin or Finish hook): bodyShared, never reused;
//   - the body passed on (memReader): the handler reported it written in
//     full (Up.Sent, after which net/http's transport reads no more of it:
//     it closes the body after its one write, and without GetBody it
//     cannot rewind it for a retry); without that report the transport may
//     still be writing it after the handler returned (a response that came
//     before the whole request was written), and the buffer is left to
//     the collector;
//   - a body not read whole (requestBody, which reads reqBody and then the
//     client's): never given back.
func (ex *Exchange) releaseBody() {
	if ex.memBody == nil || !ex.Up.Sent.Load() || chunkClass(cap(ex.reqBody)) < 0 {
		return
	}
	if !ex.bodyState.CompareAndSwap(bodyHeld, bodyReleased) {
		return
	}
	putChunk(ex.reqBody)
	if releasedBodies != nil {
		releasedBodies.Add(1)
	}
}

// releasedBodies counts releaseBody's buffers given back, when a test sets it.
var releasedBodies *atomic.Int64

// InMemoryBody returns the request body the recorder passed on, when body
// is that very reader and it reads bytes the recorder holds in memory (the
// whole body was read before passing it on). A reverse proxy puts it back
// as its outgoing body in place of its own wrapper of it: net/http writes
// the headers of a body it knows to be in memory (a *bytes.Reader behind
// io.NopCloser) together with the body, and for any other body flushes the
// headers alone first (golang/go#22088), so the upstream would get two
// writes and make two reads for one request. It may be read after the
// handler returned, until the handler reports it written in full
// (Upstream.Sent): the recorder reuses its bytes only after that report.
func (ex *Exchange) InMemoryBody(body io.Reader) (io.ReadCloser, bool) {
	if ex.memBody == nil || body != io.Reader(ex.memBody) {
		return nil, false
	}
	return ex.memBody, true
}

// BodyError returns the error that ended the reading of the client's body,
// nil when none did.
func (ex *Exchange) BodyError() error { return ex.reqErr }

// TraceContext returns the W3C trace context the client sent, from
// params._meta (SEP-414) or else the traceparent header.
func (ex *Exchange) TraceContext() (parent, state string) { return ex.traceparent, ex.tracestate }

// Hijacked reports that a handler took over the connection.
func (ex *Exchange) Hijacked() bool { return ex.hijacked }

// ClientLeft notes that the client went away before the handler could
// answer (a handler that sees its request's context done says so before it
// returns without writing).
func (ex *Exchange) ClientLeft() { ex.clientGone = true }

// Refused notes that the handler answered the request itself instead of
// passing it on; note says why, in the record's note.
func (ex *Exchange) Refused(note string) { ex.rareFields().refused = note }

// Errors that end a response body as the classifier sees it.
var (
	errClientGone error = &classify.WordedError{Text: "the client disconnected before the response ended", Err: context.Canceled}
	errHijacked         = errors.New("a handler took over the connection")
	errAborted          = errors.New("the response was aborted")
)

// Serve passes r to next and records the exchange.
//
// Its own frame, and those of the writer's Write and FlushError, lie under
// every write of the response, and net/http's first write of a response
// (writing its head) is the deepest call of a request: the work before and
// after next runs in the methods Serve calls (prepare, recovered), so that
// the handler goroutine's stack stays within the 8 KiB it grows to in a
// plain reverse proxy (a stack grown to 16 KiB stays so for as long as the
// connection holds an idle stream, docs/benchmarks.md idlettfe, and grows
// again after every garbage collection that halved it, record3). A Front
// is the same with one frame less for its owner.
func (rc *Recorder) Serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	rw := rc.prepare(w, r, next)
	defer rw.recovered()
	rw.next.ServeHTTP(rw, rw.fwd)
}

// A Front is a Recorder in front of the handlers a route chooses: its
// ServeHTTP is Serve, with the handler to pass each request to chosen by
// the route. A type that embeds a *Front serves through it with no frame
// of its own (the promoted method is a jump), which keeps the recorder's
// frames under net/http's writing of a response head as few as Serve's
// (see Serve): how the proxy serves.
type Front struct {
	rc    *Recorder
	route func(http.ResponseWriter, *http.Request) http.Handler
}

// Front returns rc in front of the handlers route chooses: route returns
// the handler to pass r to, or nil when it answered r itself (that request
// is not recorded).
func (rc *Recorder) Front(route func(w http.ResponseWriter, r *http.Request) http.Handler) *Front {
	return &Front{rc: rc, route: route}
}

// ServeHTTP passes r to the handler the route chooses and records the
// exchange (see Serve).
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := f.prepare(w, r)
	if rw == nil {
		return
	}
	defer rw.recovered()
	rw.next.ServeHTTP(rw, rw.fwd)
}

// prepare is Recorder.prepare with the handler the route chooses; nil when
// the route answered r itself.
func (f *Front) prepare(w http.ResponseWriter, r *http.Request) *responseWriter {
	next := f.route(w, r)
	if next == nil {
		return nil
	}
	return f.rc.prepare(w, r, next)
}

// prepare begins the exchange: its response writer, which holds the
// handler to pass the request to and the request to pass (next and the
// request with the exchange's context, or refuser and r when the request
// body broke).
func (rc *Recorder) prepare(w http.ResponseWriter, r *http.Request, next http.Handler) *responseWriter {
	rc.wg.Add(1)
	rc.inFlight.Add(1)
	ex := rc.begin(r)
	rw := &ex.rw
	rw.w, rw.ex = w, ex
	ex.ctx = exchangeCtx{Context: r.Context(), ex: ex}
	fwd := r.WithContext(&ex.ctx)
	switch {
	case r.Body == nil || r.Body == http.NoBody:
	case ex.reqComplete && ex.reqErr == nil:
		// The whole body is in memory: passed on as a reader net/http
		// knows (see InMemoryBody); begin closed the client's body.
		ex.memReader.Reset(ex.reqBody)
		ex.memBody = io.NopCloser(&ex.memReader)
		fwd.Body = ex.memBody
	default:
		fwd.Body = &requestBody{ex: ex, r: r.Body}
	}
	if rc.opts.Begin != nil {
		rc.opts.Begin(ex)
	}
	rw.next, rw.fwd = next, fwd
	if ex.reqErr != nil && !bodyLeft(ex.reqErr) {
		ex.malformed = true
		rw.next, rw.fwd = refuser{}, r
	}
	return rw
}

// recovered is Serve's deferred call: it ends the exchange when the
// handler returned, or panicked.
func (rw *responseWriter) recovered() { rw.served(recover()) }

// refuser is the handler of a request whose body broke: refuse answers it.
type refuser struct{}

func (refuser) ServeHTTP(w http.ResponseWriter, _ *http.Request) { w.(*responseWriter).refuse() }

// refuse answers a request whose body broke (malformed framing) without
// passing it on.
func (rw *responseWriter) refuse() {
	ex := rw.ex
	if ex.rc.opts.Refuse != nil {
		ex.rc.opts.Refuse(rw, ex)
	} else {
		http.Error(rw, "reading the request body: "+ex.reqErr.Error(), http.StatusBadRequest)
	}
}

// served ends the exchange when the handler returned, or panicked with v.
func (rw *responseWriter) served(v any) {
	ex := rw.ex
	if rw.writing {
		// A panic came from the server's Write, under Write (or forward),
		// which marks the writer as writing until wrote (Write has no
		// defer: its frame is under the deepest call of a request); v is
		// nil when a handler recovered it and returned.
		rw.mu.Lock()
		rw.writing = false
		rw.mu.Unlock()
	}
	// Whether the client had left by the time the handler returned: the
	// head flushed below reaches the client before the record is made,
	// and a client that then closes (one that does not read an empty
	// chunked body to its end) left after the answer, not during it.
	inCtx := ex.in.Context().Err()
	if v != nil && ex.Up.BodyErr != nil {
		// The upstream's body broke before its first byte: the client
		// must still see the status and headers that came before the
		// break, as it would directly.
		rw.flushHead()
	}
	if v == nil && rw.unframedEmpty() {
		// The response ended an empty body by closing (no
		// Content-Length): send the head now, or net/http invents a
		// Content-Length: 0 whenever a flush timer loses its race with
		// the end of the body.
		rw.flushHead()
	}
	if rw.end(v, inCtx) && v == nil {
		// The owner's shutdown cut a response that had no head yet: the
		// record says no response reached the client, so none must.
		// Returning would let net/http answer 200 with an empty body.
		v = http.ErrAbortHandler
	}
	if ex.rc.opts.Sync {
		<-ex.rare.done
	}
	if v != nil {
		panic(v) // http.ErrAbortHandler: the server drops the connection
	}
}

// tap is the fault endpoint's way to tell the exchange its decision: it is
// called in the request's goroutine, before the handler returns.
func (rc *Recorder) tap(ex *Exchange) func(*faults.Observation) {
	return func(o *faults.Observation) {
		rare := ex.rareFields()
		if rc.opts.ServerFacts {
			rare.fault, rare.params = o.Facts()
		} else {
			rare.fault = o.Fault()
		}
	}
}

// begin reads what the recorder needs to know about the request: the first
// maxParse bytes of its body (passed on afterwards unchanged), its JSON-RPC
// facts, the client and the protocol version.
func (rc *Recorder) begin(r *http.Request) *Exchange {
	ex := &Exchange{rc: rc, in: r, start: time.Now()}
	if rc.opts.Sync {
		ex.rareFields().done = make(chan struct{})
	}
	if rc.opts.URL != nil {
		ex.url = rc.opts.URL(r)
	} else {
		ex.url = r.URL.RequestURI()
	}
	if r.Body != nil && r.Body != http.NoBody {
		// Reading the body makes the server send an Expect:
		// 100-continue client its 100 Continue.
		ex.continued = r.ProtoAtLeast(1, 1) && strings.EqualFold(r.Header.Get("Expect"), "100-continue")
		limit := rc.maxParse
		if rc.opts.MaxRequestParseOf != nil {
			if n := rc.opts.MaxRequestParseOf(r); n > 0 {
				limit = n
			}
		}
		ex.reqBody, ex.reqComplete, ex.reqErr = readPrefix(r.Body, r.ContentLength, limit, ex.probe[:])
		if ex.reqComplete {
			// Read to its end: close it now, as the server would when the
			// handler returns. Left open (ReverseProxy never closes the
			// inbound body before it returns), net/http's first write of
			// the response tries to drain it (io.CopyN into io.Discard
			// inside chunkWriter.writeHeader), the deepest call of the
			// request: it grows the handler goroutine's stack to 16 KiB,
			// which an idle stream then keeps (docs/benchmarks.md,
			// idlettfe).
			r.Body.Close()
		}
	} else {
		ex.reqComplete = true
	}
	switch {
	case ex.reqComplete:
		ex.msg = wire.ParseMessage(ex.reqBody)
	case ex.reqErr == nil:
		// Larger than the limit: the limit bounds what is parsed, not
		// what the head says. Its method, id and tool are read from the
		// members whole in the bytes read (a JSON-RPC message names its
		// method first, and often its id); the rest is forwarded unread.
		ex.msg = wire.ParseMessageHead(ex.reqBody)
	default:
		ex.msg = wire.Message{Kind: wire.MessageInvalid}
	}
	ex.session = r.Header.Get("Mcp-Session-Id")
	sess := rc.sessions.get(ex.session)
	ex.protocol = r.Header.Get("Mcp-Protocol-Version")
	if ex.protocol == "" {
		ex.protocol = ex.msg.Protocol
	}
	if ex.protocol == "" {
		ex.protocol = sess.protocol
	}
	ex.client = ex.msg.Client
	if ex.client == "" {
		ex.client = sess.client
	}
	if ex.client == "" {
		ex.client = r.Header.Get("User-Agent")
	}
	ex.traceparent, ex.tracestate = ex.msg.Traceparent, ex.msg.Tracestate
	if ex.traceparent == "" {
		ex.traceparent, ex.tracestate = r.Header.Get("Traceparent"), r.Header.Get("Tracestate")
	}
	ex.scenario = rc.opts.Scenario
	if rc.opts.ScenarioOf != nil {
		if s := rc.opts.ScenarioOf(r); s != "" {
			ex.scenario = s
		}
	}
	return ex
}

// readPrefix reads up to limit bytes of body. complete reports that the
// whole body was read. A body of a declared length is read into a buffer of
// that length, from the chunk pools when it is one of their sizes (1 to 64
// KiB, each length rounded up to a power of two; releaseBody gives it
// back), else of its own: net/http's server returns EOF with a body's last
// bytes, and for a reader that does not, the one byte of probe meets the
// EOF (or the byte beyond the declared length, and the buffer then grows).
// A body of 512 bytes to 1 KiB takes a pooled 1 KiB chunk too, under the
// same rule (less than twice its length): many a tools/call is that long,
// and its buffer was ~1 KB of garbage per exchange.
func readPrefix(body io.Reader, contentLength int64, limit int, probe []byte) (buf []byte, complete bool, err error) {
	size := 512
	if contentLength > 0 && contentLength < int64(limit) {
		size = int(contentLength)
		if size >= minPooledChunk/2 {
			buf = getChunk(max(size, minPooledChunk))
		}
	}
	if buf == nil {
		buf = make([]byte, 0, min(size, limit))
	}
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			if len(buf) == int(contentLength) {
				n, rerr := body.Read(probe)
				if n == 0 && rerr == io.EOF {
					return buf, true, nil
				}
				if n == 0 && rerr != nil {
					return buf, false, rerr
				}
				buf = append(buf, probe[:n]...)
				if rerr == io.EOF {
					return buf, true, nil
				}
				if rerr != nil {
					return buf, false, rerr
				}
				continue
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, rerr := body.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if rerr == io.EOF {
			return buf, true, nil
		}
		if rerr != nil {
			return buf, false, rerr
		}
	}
	return buf, false, nil
}

// bodyLeft reports whether an error reading the client's request body
// means that the client went away (the connection ended mid-body), as
// opposed to a body that arrived malformed (a broken chunked framing).
func bodyLeft(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne)
}

// requestBody is the body passed on: the bytes begin read, then the rest of
// the client's body as it arrives (or the error that ended it).
type requestBody struct {
	ex   *Exchange
	r    io.ReadCloser
	sent int
}

func (b *requestBody) Read(p []byte) (int, error) {
	ex := b.ex
	if b.sent < len(ex.reqBody) {
		n := copy(p, ex.reqBody[b.sent:])
		b.sent += n
		ex.reqBytes.Add(int64(n))
		return n, nil
	}
	switch {
	case ex.reqErr != nil:
		return 0, ex.reqErr
	case ex.reqComplete:
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	ex.reqBytes.Add(int64(n))
	return n, err
}

func (b *requestBody) Close() error { return b.r.Close() }

// end is called once, when the handler returns (or panics): it hands the
// last bytes to the classifier, says how the response ended, and lets the
// finishing goroutine write the record. inCtx is the request context's
// error as the handler returned. It reports whether the owner's shutdown
// cut the exchange before a response head was written.
func (rw *responseWriter) end(panicked any, inCtx error) (shutNoHead bool) {
	ex := rw.ex
	rw.mu.Lock()
	rw.handoff()
	switch {
	case ex.hijacked:
		ex.closeErr = errHijacked
	case ex.Up.Mirrored:
		ex.closeErr = ex.Up.Err
	case ex.downErr != nil || ex.clientGone || rw.gone || ex.reqErr != nil && !ex.malformed || inCtx != nil && ex.rc.closing.Load():
		// (A request whose context the owner's shutdown ended is cut by
		// the shutdown below.)
		ex.clientGone = true
		ex.closeErr = errClientGone
	case ex.Up.BodyErr != nil && inCtx != nil,
		inCtx != nil && (ex.status == 0 || ex.rc.opts.Upstream == ""):
		// The request's context ends when the client's connection does
		// (the owner's shutdown is told apart below): a handler that
		// returned without an answer, or one that answers itself and
		// stopped because its client left, was left by the client. In
		// front of an upstream, the upstream leg says how it was cut.
		ex.clientGone = true
		ex.closeErr = errClientGone
	case ex.Up.BodyErr != nil:
		ex.upReset = true
		ex.closeErr = ex.Up.BodyErr
	case panicked != nil:
		ex.aborted = true
		ex.closeErr = errAborted
	}
	if ex.clientGone && ex.rc.closing.Load() {
		ex.shutdown = true
		ex.closeErr = ex.rc.shutErr
		shutNoHead = ex.status == 0
	}
	if opensResume(ex) {
		// Before the client can see the stream end, and resume it.
		ex.rc.resumes.open(ex)
	}
	if ex.pipe != nil {
		ex.pipe.closeWithError(ex.closeErr)
	}
	ex.endAt, ex.ended = time.Since(ex.start), true
	if rw.inl != nil {
		// (rw.inline is nil from here on: a write after the handler's
		// end is not the classification's.)
		rw.inl.finish(ex.closeErr)
	}
	if rw.watch != nil {
		rw.watch.release()
		rw.watch = nil
	}
	start := !ex.started
	ex.started = true
	var early *pipe
	if ex.early {
		early = ex.pipe
	}
	rw.mu.Unlock()
	if early != nil {
		early.endHandler()
	}
	if start {
		if ex.rc.opts.Sync {
			ex.rc.run(ex)
		} else {
			ex.rc.fin.dispatch(ex)
		}
	}
	return shutNoHead
}

// startEarly starts the finishing goroutine while the handler still runs
// (the response is streaming): it waits for the handler's end on the
// exchange's pipe (waitHandler), which end tells (endHandler); a channel
// made for it was 96 bytes of garbage per streamed exchange. It is an idle finisher when there is one, as for an
// exchange that ended: a new goroutine's stack grew on every streamed
// exchange as the record's encoding went deeper than its first stack
// (docs/benchmarks.md, ssecopy). Called with the writer's mu held.
func (ex *Exchange) startEarly() {
	ex.started, ex.early = true, true
	ex.rc.fin.dispatch(ex)
}

// bodyReader returns what the classifier reads: the pipe when the response
// streamed, or the empty body.
func (ex *Exchange) bodyReader() io.Reader {
	if ex.pipe != nil {
		return ex.pipe
	}
	if ex.closeErr != nil {
		return io.MultiReader(bytes.NewReader(nil), errReader{ex.closeErr})
	}
	return bytes.NewReader(nil)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// idOrNil returns the id, or a zero id for a notification (a method without
// an id member).
func idOrNil(m *wire.Message) wire.ID {
	// A request of id null: the classifier judges its answer as a
	// request's, with the id it carried.
	if m.Kind == wire.MessageRequest || m.IsNullIDRequest() {
		return m.ID
	}
	return wire.ID{}
}
