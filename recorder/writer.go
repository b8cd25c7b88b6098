package recorder

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

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
	writing     bool  // mu is held by Write, around the server's Write (see served)
	stream      bool  // the response is an event stream: its chunks carry their flush times
	werr        error // the server's Write's error, from Write to wrote
	pending     []byte
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
// Its frame lies under net/http's writing of the response head, the
// deepest call of a request (see Recorder.Serve), so it is as small as a
// method that calls two can be: no defer (wrote unlocks mu; served unlocks
// it when the server's Write panicked), no locals across its calls but the
// parameters the caller holds.
func (rw *responseWriter) Write(b []byte) (int, error) {
	rw.lockWrite()
	n, err := rw.w.Write(b)
	if err != nil {
		rw.werr = err // to wrote: one argument less, 8 bytes of frame
	}
	return rw.wrote(b[:n])
}

// lockWrite takes mu for Write, and writes the status when it was not.
//
//go:noinline
func (rw *responseWriter) lockWrite() {
	if !rw.writing {
		rw.mu.Lock()
	}
	// (Else the server's Write panicked under an earlier Write, which kept
	// mu, and a handler recovered and carries on: mu is this Write's.)
	rw.writing = true
	if !rw.wroteHeader {
		rw.writeHeader(http.StatusOK)
	}
}

// wrote keeps a copy of the bytes b that Write passed on (werr: how the
// write failed, if it did), unlocks mu (which lockWrite took) and returns
// what Write returns. It is not inlined into Write (see Write).
//
//go:noinline
func (rw *responseWriter) wrote(b []byte) (int, error) {
	defer rw.mu.Unlock()
	rw.writing = false
	n, err := len(b), rw.werr
	rw.werr = nil
	if n > 0 {
		if rw.pending == nil {
			rw.pending = getChunk(n)
		}
		rw.pending = append(rw.pending, b...)
		rw.ex.wrote += int64(n)
	}
	if err != nil {
		if rw.ex.downErr == nil {
			rw.ex.downErr = err
		}
		rw.handoff()
	} else if len(rw.pending) >= pendingMax {
		rw.handoff()
	}
	return n, err
}

// FlushError flushes to the client, then hands the flushed bytes to the
// classifier.
func (rw *responseWriter) FlushError() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if !rw.wroteHeader {
		rw.writeHeader(http.StatusOK)
	}
	var err error
	if f, ok := rw.w.(interface{ FlushError() error }); ok {
		// The server's own writer, called directly rather than through
		// the ResponseController: one frame less under the deepest call
		// of a request (net/http writing the response head).
		err = f.FlushError()
	} else {
		err = http.NewResponseController(rw.w).Flush()
	}
	if err != nil && rw.ex.downErr == nil {
		rw.ex.downErr = err
	}
	rw.handoff()
	return err
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
	if ex.pipe == nil {
		ex.pipe = newPipe()
	}
	ex.pipe.write(chunk, at)
	if !ex.started && ex.pipe.buffered() >= lazyStart {
		ex.startEarly()
	}
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
