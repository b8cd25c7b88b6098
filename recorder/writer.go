package recorder

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/wire"
)

// countCopies makes the writer count in exchangeRare.copied the bytes it
// copies for the classifier (tests only).
var countCopies atomic.Bool

// pendingMax is how many written-but-unflushed bytes the writer keeps before
// it hands them to the classifier anyway (a handler in front of the upstream
// may write without flushing; the reverse proxy flushes every write).
const pendingMax = 64 << 10

// responseWriter is the recorder's tap on the response. It passes every call
// through unchanged and keeps a copy of the bytes written; the copy goes to
// the classifier only after the bytes were flushed to the client, so that
// classification never delays what the client receives.
type responseWriter struct {
	w  http.ResponseWriter
	ex *Exchange

	next http.Handler  // what the recorder passes the request to (prepare)
	fwd  *http.Request // the request it passes on

	mu          sync.Mutex
	wroteHeader bool
	writing     bool  // Write or forward is in the server's writer, without mu (see Write)
	stream      bool  // the response is an event stream: its chunks carry their flush times
	sniff       bool  // the first bytes of a GET's 2xx event stream are still to be looked at (StreamEndpoint)
	gone        bool  // the client was seen gone (goneSeen, a failed write or flush): later bytes were not delivered
	forwarding  bool  // the write is forward's (startInline)
	werr        error // the server's Write's error, from Write to wrote
	pending     []byte
	inl         *inlineClass  // the event stream's classification on the forwarding goroutine (inlineClass), nil when none
	watch       *requestWatch // an event stream's server requests, noted before they are forwarded (nil: not a stream, or it ended)
}

// Header returns the response headers.
func (rw *responseWriter) Header() http.Header { return rw.w.Header() }

// Unwrap lets http.ResponseController reach the server's writer for the
// methods this type does not intercept (deadlines, full duplex).
func (rw *responseWriter) Unwrap() http.ResponseWriter { return rw.w }

// WriteHeader sends the status and headers.
func (rw *responseWriter) WriteHeader(code int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.writeHeader(code)
}

func (rw *responseWriter) writeHeader(code int) {
	if code == http.StatusContinue && !rw.wroteHeader && rw.ex.continued {
		// The server sent the client its 100 Continue when the recorder
		// read the body: the upstream's, passed on, would be a second one
		// that a client talking to the upstream does not get.
		return
	}
	if rw.wroteHeader || rw.ex.hijacked || code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		// 1xx responses pass through; a second final status is net/http's
		// to complain about.
		rw.w.WriteHeader(code)
		return
	}
	h := rw.w.Header()
	// Transparency: net/http adds Date and sniffs a Content-Type when a
	// handler sets none. The upstream did not send them, so neither does
	// the proxy.
	if _, ok := h["Date"]; !ok {
		h["Date"] = nil
	}
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = nil
	}
	rw.wroteHeader = true
	ex := rw.ex
	ex.status = code
	ex.respCopy, _ = headerCopies.Get().(*headerCopy)
	if ex.respCopy == nil {
		ex.respCopy = new(headerCopy)
	}
	ex.respHeader = ex.respCopy.copy(h)
	ex.headersAt = time.Since(ex.start)
	if ex.msg.Method == "initialize" && code >= 200 && code <= 299 {
		// Remember the session's client now: its next request may arrive
		// before this exchange's record is finished.
		if sid := ex.respHeader.Get("Mcp-Session-Id"); sid != "" {
			ex.rc.sessions.put(sid, sessionInfo{client: ex.client, protocol: ex.protocol})
		}
	}
	rw.stream = isEventStream(h.Get("Content-Type"))
	if rw.stream {
		rw.watch = newRequestWatch()
	}
	rw.sniff = rw.stream && ex.rc.opts.StreamEndpoint != nil && ex.in.Method == http.MethodGet && code >= 200 && code <= 299
	rw.w.WriteHeader(code)
}

// headerCopy is the recorded copy of a response header: its map and the
// array of all its values, reused from headerCopies once the exchange's
// record was written and released (releaseHeader), as the record is.
type headerCopy struct {
	h       http.Header
	vals    []string
	invalid []string // the names net/http does not send (the record's note)
}

// headerCopies holds the headerCopy values given back.
var headerCopies sync.Pool

// copy returns a copy of the header fields h sends (its nil values, the
// fields net/http must not add, left out) in hc's map, the values of all in
// hc's one array (each field's slice capped at its own), and the names
// net/http does not send in hc.invalid. What hc held before is overwritten.
func (hc *headerCopy) copy(h http.Header) http.Header {
	if hc.h == nil {
		hc.h = make(http.Header, len(h))
	} else {
		clear(hc.h)
	}
	c := hc.h
	hc.invalid = hc.invalid[:0]
	n := 0
	for _, v := range h {
		n += len(v)
	}
	vals := hc.vals[:0]
	if cap(vals) < n {
		vals = make([]string, 0, n)
	}
	for k, v := range h {
		if v != nil {
			if len(v) == 0 {
				c[k] = nil
			} else {
				start := len(vals)
				vals = append(vals, v...)
				c[k] = vals[start:len(vals):len(vals)]
			}
			if !validFieldName(k) {
				// net/http does not send it: the record says so.
				hc.invalid = append(hc.invalid, k)
			}
		}
	}
	hc.vals = vals
	return c
}

// releaseHeader gives the exchange's recorded response header back to
// headerCopies; nothing may read ex.respHeader afterwards. finish calls it
// when it releases the record (the one other holder of the header: the
// record's ResponseHeaders).
func (ex *Exchange) releaseHeader() {
	hc := ex.respCopy
	if hc == nil {
		return
	}
	ex.respCopy = nil
	all := hc.vals[:cap(hc.vals)]
	for i := range all {
		all[i] = "" // (nothing kept alive by a copy in the pool)
		if poisonRecycled {
			all[i] = "poisoned"
		}
	}
	clear(hc.invalid)
	hc.invalid = hc.invalid[:0]
	if poisonRecycled {
		for k := range hc.h {
			hc.h[k] = []string{"poisoned"}
		}
	}
	headerCopies.Put(hc)
}

// Write forwards b and keeps a copy for the recorder.
//
// mu is not held across the server's Write (nor across forward's Write and
// Flush): beginWrite marks the writer as writing under mu, and FlushError,
// finding it so, returns without touching the server's writer. ReverseProxy's
// delayed flush (copyResponse's timer, started even with a FlushInterval of
// -1) calls FlushError from its own goroutine while holding its own
// writer's lock, which copyResponse's deferred stop waits for; with mu held
// across a server's Write that panicked, that flush waited for mu, stop for
// the flush, and the exchange for ever (TestForwardLoopPanickingClientWrite,
// with ReverseProxy's copy as with the forwarding loop: a108c9f). The
// server's writer is still called by one goroutine at a time.
//
// Its frame lies under net/http's writing of the response head, the
// deepest call of a request (see Recorder.Serve), so it is as small as a
// method that calls two can be: no defer, no locals across its calls but
// the parameters the caller holds.
func (rw *responseWriter) Write(b []byte) (int, error) {
	rw.beginWrite(b)
	n, err := rw.w.Write(b)
	if err != nil {
		rw.werr = err // to wrote: one argument less, 8 bytes of frame
	}
	return rw.wrote(b[:n])
}

// beginWrite writes the status when it was not, and marks the writer as
// writing to the server's writer (see Write). A mark left by a server's
// Write that panicked (a handler recovered it and carries on) is this
// Write's. The first bytes b of a GET's event stream are looked at for the
// endpoint event (StreamEndpoint) before the client can have them: a
// client's POST to that endpoint cannot finish before the hook ran.
//
//go:noinline
func (rw *responseWriter) beginWrite(b []byte) {
	rw.mu.Lock()
	if !rw.wroteHeader {
		rw.writeHeader(http.StatusOK)
	}
	if rw.sniff && len(b) > 0 {
		rw.sniffEndpoint(b)
	}
	if (rw.watch != nil || rw.ex.rare != nil) && len(b) > 0 {
		rw.watchRequests(b)
	}
	if !rw.gone {
		rw.goneSeen()
	}
	rw.writing = true
	rw.mu.Unlock()
}

// goneSeen marks the client as gone (gone) when the request's context
// ended before a write: net/http ends it when the client's connection
// closes, and the bytes written after that were not delivered (keepCopy
// counts them apart, and the classifier never reads them). The owner's
// shutdown, which ends the context of a connection it may still answer
// on, is told apart (end). Called with mu held, before each write; a
// non-blocking receive, no allocation.
//
//go:noinline
func (rw *responseWriter) goneSeen() {
	select {
	case <-rw.ex.in.Context().Done():
		if !rw.ex.rc.closing.Load() {
			rw.gone = true
		}
	default:
	}
}

// sniffEndpoint looks for the endpoint event (StreamEndpoint) in the
// first bytes of a GET's event stream, b the next bytes to be written: the
// first event may come in more than one write (a server that flushed it
// in pieces), so the bytes before b are kept until it is whole, up to
// maxSniff bytes. The client cannot read an endpoint before the write
// that completes its event. Called with mu held, by the writer's
// goroutine.
//
//go:noinline
func (rw *responseWriter) sniffEndpoint(b []byte) {
	ex := rw.ex
	chunk := b
	if ex.rare != nil && ex.rare.sniffed != nil {
		chunk = append(ex.rare.sniffed, b...)
	}
	endpoint, ok, partial := firstEndpoint(chunk)
	switch {
	case ok:
		rw.sniff = false
		ex.rc.opts.StreamEndpoint(ex, endpoint)
		if ex.rc.opts.StreamMessage != nil {
			ex.rareFields().live = true
		}
	case partial && len(chunk) < maxSniff:
		// Kept until the next write (a copy: b is the caller's).
		ex.rareFields().sniffed = append(chunk[:0:0], chunk...)
		return
	default:
		rw.sniff = false
	}
	if ex.rare != nil {
		ex.rare.sniffed = nil
	}
}

// watchRequests notes the server requests whose events b, the next bytes
// of an event stream, completes, before the client can have them: the
// client's answer, POSTed as soon as it read the request, finds the
// request noted (requestWatch). Called with mu held, by the writer's
// goroutine.
//
//go:noinline
func (rw *responseWriter) watchRequests(b []byte) {
	w := rw.watch
	if w != nil && !w.tried {
		w.tried = true
		if rw.forwarding && rw.startInline() {
			// The classifier does the watch's work (inlineClass).
			w.release()
			rw.watch, w = nil, nil
		}
	}
	if ic := rw.inline(); ic != nil {
		// The classifier reads b once it was written (forwardedInline),
		// unless the client left (goneSeen): then b is not delivered, and
		// the classifier never reads it.
		if !rw.gone {
			rw.goneSeen()
		}
		if !rw.gone {
			// Its bytes may reach the client from now on: an answer
			// whose request the classifier has not noted waits for it
			// (pieceWatch).
			ic.begin()
		}
		return
	}
	if w != nil {
		w.feed(b, &rw.ex.rc.srvReqs, rw.ex.session)
	}
}

// maxSniff bounds the bytes kept while the first event of a GET's event
// stream is not whole yet (sniffEndpoint): an endpoint event is a URL.
const maxSniff = 4 << 10

// wrote keeps a copy of the bytes b that Write passed on (werr: how the
// write failed, if it did), ends the writing mark and returns what Write
// returns. It is not inlined into Write (see Write).
//
//go:noinline
func (rw *responseWriter) wrote(b []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.writing = false
	err := rw.werr
	rw.werr = nil
	rw.keepCopy(b, err)
	return len(b), err
}

// keepCopy keeps a copy of the bytes b written, and hands what is pending
// to the classifier when the write failed (err) or pendingMax is reached.
// Called with mu held.
func (rw *responseWriter) keepCopy(b []byte, err error) {
	if ic := rw.inline(); ic != nil {
		// A Write's bytes, read by the classifier once written, and
		// copied for the capture.
		at := time.Since(rw.ex.start)
		if n := len(b); n > 0 && !rw.gone {
			rw.ex.wrote += int64(n)
			ic.feed(b)
			c := append(getChunk(n), b...)
			if c = ic.written(c, n, true, at); c != nil {
				putChunk(c)
			}
		} else if n > 0 {
			rw.ex.rareFields().late += int64(n)
		}
		rw.ex.rc.pieces.landed(ic)
		if err != nil {
			if rw.ex.downErr == nil {
				rw.ex.downErr = err
			}
			rw.gone = true
		}
		return
	}
	if n := len(b); n > 0 && rw.gone {
		// Not delivered: the client had left (goneSeen).
		rw.ex.rareFields().late += int64(n)
	} else if n > 0 {
		if rw.pending == nil {
			rw.pending = getChunk(n)
		}
		rw.pending = append(rw.pending, b...)
		rw.ex.wrote += int64(n)
		if countCopies.Load() {
			rw.ex.rareFields().copied += int64(n)
		}
	}
	if err != nil {
		if rw.ex.downErr == nil {
			rw.ex.downErr = err
		}
		rw.gone = true // (the bytes after a failed write were not delivered)
		rw.handoff()
	} else if len(rw.pending) >= pendingMax {
		rw.handoff()
	}
}

// Chunk returns a buffer of size bytes from the recorder's chunk pools
// (size a power of two from 1 KiB to 64 KiB), for ForwardChunk.
func Chunk(size int) []byte {
	if chunkClass(size) < 0 {
		panic("recorder: Chunk: the size is not a pooled chunk size")
	}
	return getChunk(size)[:size]
}

// PutChunk gives back a buffer of Chunk that nothing uses any more (nil
// is ignored).
func PutChunk(c []byte) { putChunk(c) }

// ForwardChunk writes c[:n] to the client and flushes it, as
// httputil.ReverseProxy's copy with a FlushInterval of -1 does each piece
// it read (Write, then Flush), for a handler that copies a response body
// itself into buffers of Chunk (no middleware between it and the
// recorder's writer). Unlike a Write, whose bytes the recorder copies for
// its classifier and record (the caller may reuse them), the chunk itself
// is kept when n is over half its capacity: ForwardChunk then returns nil
// and c is the recorder's. A smaller piece is copied as a Write's is (a
// record of a stream of small events holds no more memory than before),
// and c, returned, stays the caller's for its next read. err is the
// write's, or io.ErrShortWrite.
func (ex *Exchange) ForwardChunk(c []byte, n int) ([]byte, error) {
	return ex.rw.forward(c, n)
}

// forward writes c[:n] to the client and flushes it, as ReverseProxy's
// flushing writer's Write and Flush. c is a chunk of the pools: when it is
// more than half full and no other bytes are pending, the writer keeps it
// and hands it to the classifier as it is (forward returns nil); otherwise
// its bytes are copied as Write's are and c, which forward returns, stays
// the caller's. err is the write's (or io.ErrShortWrite). As with Write, mu
// is not held across the server's Write and Flush, and its frame lies under
// net/http's writing of the head and is kept as small (see Write).
func (rw *responseWriter) forward(c []byte, n int) ([]byte, error) {
	rw.forwarding = true
	rw.beginWrite(c[:n])
	rw.forwarding = false
	m, err := rw.w.Write(c[:n])
	if err == nil && m != n {
		err = io.ErrShortWrite
	}
	rw.werr = err // to forwarded: two arguments less
	return rw.forwarded(c, m)
}

// forwarded flushes the m bytes of c forward wrote (werr: how the write
// failed), then keeps them, as the chunk itself or as a copy, hands them
// to the classifier, and ends the writing mark. It returns c when it is
// still the caller's (nil when the writer kept it) and the write's error.
//
//go:noinline
func (rw *responseWriter) forwarded(c []byte, m int) ([]byte, error) {
	ferr := rw.clientFlush()
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.writing = false
	werr := rw.werr
	rw.werr = nil
	b := c[:m]
	if rw.inline() != nil {
		return rw.forwardedInline(c, m, werr, ferr)
	}
	if m > 0 && rw.pending == nil && 2*m > cap(c) && !rw.gone {
		rw.pending, c, b = b, nil, nil
		rw.ex.wrote += int64(m)
	}
	rw.keepCopy(b, werr)
	if ferr != nil {
		if rw.ex.downErr == nil {
			rw.ex.downErr = ferr
		}
		rw.gone = true
	}
	rw.handoff()
	return c, werr
}

// FlushError flushes to the client, then hands the flushed bytes to the
// classifier.
func (rw *responseWriter) FlushError() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.writing {
		// A Write or forward is in the server's writer, without mu (see
		// Write): the writer's own flush follows it (ReverseProxy flushes
		// after every write), or it panicked.
		return nil
	}
	if !rw.wroteHeader {
		rw.writeHeader(http.StatusOK)
	}
	err := rw.clientFlush()
	if err != nil {
		if rw.ex.downErr == nil {
			rw.ex.downErr = err
		}
		rw.gone = true
	}
	rw.handoff()
	return err
}

// clientFlush flushes the server's writer.
func (rw *responseWriter) clientFlush() error {
	if f, ok := rw.w.(interface{ FlushError() error }); ok {
		// The server's own writer, called directly rather than through
		// the ResponseController: one frame less under the deepest call
		// of a request (net/http writing the response head).
		return f.FlushError()
	}
	return http.NewResponseController(rw.w).Flush()
}

// flushHead sends the status and headers to the client when they were
// written but not sent yet (no body byte came): net/http keeps them until
// the first write or flush, and an aborted handler would drop them.
func (rw *responseWriter) flushHead() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.wroteHeader && rw.ex.wrote == 0 && !rw.ex.hijacked && rw.ex.downErr == nil {
		if err := http.NewResponseController(rw.w).Flush(); err != nil {
			rw.ex.downErr = err
		}
	}
}

// unframedEmpty reports a response that ended with no body byte and that
// the upstream framed by neither a Content-Length nor a status without a
// body.
func (rw *responseWriter) unframedEmpty() bool {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	ex := rw.ex
	if !rw.wroteHeader || ex.wrote != 0 || ex.in.Method == http.MethodHead {
		return false
	}
	if ex.status == http.StatusNoContent || ex.status == http.StatusNotModified || ex.status < 200 {
		return false
	}
	_, framed := ex.respHeader["Content-Length"]
	return !framed
}

// Flush implements http.Flusher.
func (rw *responseWriter) Flush() { _ = rw.FlushError() }

// Hijack hands the connection to a handler in front of the upstream (a
// fault scenario that resets the connection). The bytes it writes on the
// raw connection bypass the recorder: the record says so.
func (rw *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.handoff()
	conn, brw, err := http.NewResponseController(rw.w).Hijack()
	if err == nil {
		rw.ex.hijacked = true
	}
	return conn, brw, err
}

// handoff passes the pending bytes to the classifier, with when they were
// flushed for an event stream (the classifier's one scan of the stream
// finds where its events end, and so when they arrived: see pipe). Called
// with mu held.
func (rw *responseWriter) handoff() {
	if len(rw.pending) == 0 {
		return
	}
	ex := rw.ex
	chunk := rw.pending
	rw.pending = nil
	var at time.Duration
	if rw.stream {
		at = time.Since(ex.start)
	}
	live := ex.rare != nil && ex.rare.live
	if ex.pipe == nil {
		ex.pipe = newPipe()
	}
	if live && !ex.started {
		// (The reader has not started: it reads eager once it has.)
		ex.pipe.eager = true
	}
	ex.pipe.write(chunk, at)
	if !ex.started && (live || ex.pipe.buffered() >= lazyStart) {
		ex.startEarly()
	}
}

// firstEndpoint returns the data of the first event in chunk, the first
// bytes of an event stream, when that event is whole in chunk and its type
// is "endpoint" (the 2024-11-05 HTTP+SSE transport's first event); partial
// reports that no event is whole in chunk yet (more bytes may make one).
// The stream is parsed by wire's reader, as every stream is (one parse).
func firstEndpoint(chunk []byte) (endpoint string, ok, partial bool) {
	r := wire.NewPooledSSEReader(bytes.NewReader(chunk), len(chunk)+1)
	defer r.Recycle()
	ev, err := r.Next()
	if err != nil {
		return "", false, err == io.EOF || errors.As(err, new(*wire.UnterminatedEventError))
	}
	if ev.Type != "endpoint" {
		return "", false, false
	}
	return string(ev.Data), true, false
}

// lazyStart is how many bytes a response may hold in its pipe before the
// classifier starts reading them. Most responses end first, and are
// classified in one go when they do; a stream that goes idle after a few
// events (a priming event, keep-alives) costs no goroutine and no parser
// buffer while it waits. Event timings do not depend on it: they are taken
// as the bytes are flushed.
const lazyStart = 16 << 10

// validFieldName reports whether name is an RFC 9110 field name (a token):
// net/http's server drops any other from a response, so the client never
// receives it.
func validFieldName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}
