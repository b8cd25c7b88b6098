package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// exchange is the state of one request through the proxy. Its fields are
// written by the handler goroutine (and the transport it calls) and read by
// the exchange's finishing goroutine only after ended is closed, except
// where noted.
type exchange struct {
	p     *Proxy
	in    *http.Request
	start time.Time
	out   *url.URL // the upstream URL

	// The request.
	msg         wire.Message
	listing     *listingToken // a tools/list in flight (drift.go)
	reqBody     []byte        // the first maxParse bytes of the body
	reqComplete bool          // reqBody is the whole body
	reqBytes    atomic.Int64
	reqErr      error // reading the client's body failed
	protocol    string
	client      string
	session     string
	scenario    string
	traceparent string
	tracestate  string

	// The upstream leg (set by upstreamTransport and upstreamError).
	upStart, upHeaders, upEnd time.Time
	upErr                     error // no response from upstream
	upBodyErr                 error // the upstream body broke
	reqSent                   atomic.Bool
	proxyError                string // RFC 9209 error type of a response the proxy made
	mirrored                  bool   // the client's connection was dropped as the upstream's was
	adminRefused              bool   // the proxy refused an admin path (Options.ForwardAdmin)
	malformedBody             bool   // the proxy answered 400: the request body was malformed

	// The downstream leg (set under responseWriter.mu).
	status         int
	respHeader     http.Header
	invalidHeaders []string // upstream header names net/http does not send
	headersAt      time.Duration
	firstEvent     time.Duration
	arrivals       []arrival
	wrote          int64
	downErr        error
	hijacked       bool
	clientGone     bool
	shutdown       bool // the client was cut off because the proxy shut down
	upReset        bool
	aborted        any
	closeErr       error // how the response body ended for the classifier
	pipe           *pipe
	started        bool // the finishing goroutine runs
	end            time.Time
	ended          chan struct{}
	fault          *record.Fault // the fault layer's decision, nil without one
}

// arrival is when the bytes up to off had been flushed to the client.
type arrival struct {
	off int64
	at  time.Duration
}

type exchangeKey struct{}

// exchangeFrom returns the exchange a request belongs to, or nil.
func exchangeFrom(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

// Errors that end a response body as the classifier sees it.
var (
	errClientGone = errors.New("the client disconnected before the response ended")
	errHijacked   = errors.New("a handler in front of the upstream took over the connection")
	errShutdown   = errors.New("the proxy shut down before the response ended")
)

// ServeHTTP forwards r to the upstream and records the exchange.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.opts.AllowForeignHost && onLoopbackListener(r) {
		if ok, why := loopback.Check(r); !ok {
			http.Error(w, "mcpdiag proxy: "+why, http.StatusForbidden)
			return
		}
	}
	p.wg.Add(1)
	p.inFlight.Add(1)
	ex := p.begin(r)
	rw := &responseWriter{w: w, rc: http.NewResponseController(w), ex: ex}
	ctx := context.WithValue(r.Context(), exchangeKey{}, ex)
	if ex.reqComplete {
		// The one parse of the body: the faults and anything else down
		// the chain read the facts from the context (wire.MessageFor).
		ctx = wire.WithMessage(ctx, &ex.msg)
	}
	fwd := r.WithContext(ctx)
	if r.Body != nil && r.Body != http.NoBody {
		fwd.Body = &requestBody{ex: ex, r: r.Body}
	}
	defer func() {
		v := recover()
		if v != nil && ex.upBodyErr != nil {
			// The upstream's body broke before its first byte: the
			// client must still see the status and headers that came
			// before the break, as it would directly.
			rw.flushHead()
		}
		if v == nil && rw.unframedEmpty() {
			// The upstream ended an empty body by closing (no
			// Content-Length): send the head now, or net/http invents
			// a Content-Length: 0 whenever the reverse proxy's flush
			// timer loses its race with the end of the body.
			rw.flushHead()
		}
		rw.end(v)
		if v != nil {
			panic(v) // http.ErrAbortHandler: the server drops the connection
		}
	}()
	if ex.reqErr != nil && !bodyLeft(ex.reqErr) {
		p.refuseMalformedBody(rw, ex)
		return
	}
	p.handler.ServeHTTP(rw, fwd)
}

// begin reads what the proxy needs to know about the request: the first
// maxParse bytes of its body (forwarded afterwards unchanged), its JSON-RPC
// facts, the client and the protocol version.
func (p *Proxy) begin(r *http.Request) *exchange {
	ex := &exchange{p: p, in: r, start: time.Now(), ended: make(chan struct{})}
	ex.out = p.targetURL(r.URL)
	if r.Body != nil && r.Body != http.NoBody {
		ex.reqBody, ex.reqComplete, ex.reqErr = readPrefix(r.Body, r.ContentLength, p.maxParse)
	} else {
		ex.reqComplete = true
	}
	if ex.reqComplete {
		ex.msg = wire.ParseMessage(ex.reqBody)
	} else {
		ex.msg = wire.Message{Kind: wire.MessageInvalid}
	}
	if ex.msg.Method == "tools/list" {
		ex.listing = p.drift.listingStarted(p.upstream.String(), ex.start)
	}
	ex.session = r.Header.Get("Mcp-Session-Id")
	sess := p.sessions.get(ex.session)
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
	ex.scenario = p.opts.Scenario
	if p.opts.ScenarioOf != nil {
		if s := p.opts.ScenarioOf(r); s != "" {
			ex.scenario = s
		}
	}
	return ex
}

// readPrefix reads up to limit bytes of body. complete reports that the
// whole body was read.
func readPrefix(body io.Reader, contentLength int64, limit int) (buf []byte, complete bool, err error) {
	size := 512
	if contentLength >= 0 && contentLength < int64(limit) {
		size = int(contentLength) + 1 // room to meet EOF without growing
	}
	buf = make([]byte, 0, min(size, limit))
	for len(buf) < limit {
		if len(buf) == cap(buf) {
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

// requestBody is the body forwarded upstream: the bytes begin read, then the
// rest of the client's body as it arrives (or the error that ended it).
type requestBody struct {
	ex   *exchange
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
// finishing goroutine write the record.
func (rw *responseWriter) end(panicked any) {
	ex := rw.ex
	rw.mu.Lock()
	rw.handoff()
	ex.aborted = panicked
	inCtx := ex.in.Context().Err()
	switch {
	case ex.hijacked:
		ex.closeErr = errHijacked
	case ex.mirrored:
		ex.closeErr = ex.upErr
	case ex.downErr != nil || ex.clientGone || ex.reqErr != nil && !ex.malformedBody:
		ex.clientGone = true
		ex.closeErr = errClientGone
	case ex.upBodyErr != nil && inCtx != nil:
		ex.clientGone = true
		ex.closeErr = errClientGone
	case ex.upBodyErr != nil:
		ex.upReset = true
		ex.closeErr = ex.upBodyErr
	case panicked != nil:
		ex.closeErr = errors.New("the response was aborted")
	}
	if ex.clientGone && ex.p.closing.Load() {
		ex.shutdown = true
		ex.closeErr = errShutdown
	}
	if ex.pipe != nil {
		ex.pipe.closeWithError(ex.closeErr)
	}
	ex.end = time.Now()
	if !ex.started {
		ex.started = true
		go ex.p.run(ex)
	}
	rw.mu.Unlock()
	close(ex.ended)
}

// slogLogger adapts the proxy's logger for ReverseProxy.ErrorLog.
func slogLogger(l *slog.Logger) *log.Logger {
	return slog.NewLogLogger(l.Handler(), slog.LevelDebug)
}

// bodyReader returns what the classifier reads: the pipe when the response
// streamed, or the empty body.
func (ex *exchange) bodyReader() io.Reader {
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

// onLoopbackListener reports whether r came in on a loopback address of
// the server that serves the proxy.
func onLoopbackListener(r *http.Request) bool {
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return addr != nil && loopback.Listener(addr)
}
