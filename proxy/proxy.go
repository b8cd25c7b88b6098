package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// BodyMode says which bodies the proxy puts into records (see
// recorder.BodyMode). Forwarded bodies are never affected: only what is
// recorded.
type BodyMode = recorder.BodyMode

// The body modes.
const (
	// BodiesNone records no body text (sizes, hashes and the verdict only).
	BodiesNone = recorder.BodiesNone
	// BodiesErrors records the response body of every exchange that did not
	// succeed (the default).
	BodiesErrors = recorder.BodiesErrors
	// BodiesAll records the request and response bodies of every exchange,
	// each capped at the body limit.
	BodiesAll = recorder.BodiesAll
	// BodiesFull records the complete request and response bytes (raw SSE
	// framing included) with each event's arrival time.
	BodiesFull = recorder.BodiesFull
)

// ParseBodyMode reads the value of a --record-bodies flag ("" is
// BodiesErrors).
func ParseBodyMode(s string) (BodyMode, error) { return recorder.ParseBodyMode(s) }

// Limits.
const (
	// DefaultBodyLimit caps each recorded body in the excerpt modes.
	DefaultBodyLimit = recorder.DefaultBodyLimit
	// DefaultFullBodyLimit caps each recorded body in BodiesFull.
	DefaultFullBodyLimit = recorder.DefaultFullBodyLimit
	// DefaultMaxRequestParse is how much of a request body the proxy reads
	// before forwarding it, to learn the JSON-RPC id, method and protocol
	// version the classifier needs. A larger body is forwarded whole all the
	// same; its exchange is then classified without the request id.
	DefaultMaxRequestParse = recorder.DefaultMaxRequestParse
	// DefaultClassifyMemory is the default of Options.ClassifyMemory.
	DefaultClassifyMemory = recorder.DefaultClassifyMemory
)

// Connection timeouts of the server HTTPServer returns.
const (
	// DefaultReadHeaderTimeout is how long a client may take to send a
	// request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request. It is longer than the idle time of Go's client pool
	// (90 s), so that a Go client closes first and never reuses a
	// connection the proxy is closing.
	DefaultIdleTimeout = 120 * time.Second
)

// ProxyName identifies this proxy in Proxy-Status headers (RFC 9209).
const ProxyName = "mcpdiag"

// Sink receives records; *record.Async, *record.FileWriter and
// *record.StreamWriter are sinks. Write may be called from many goroutines.
type Sink = recorder.Sink

// UpstreamIdleConnTimeout is how long the proxy keeps an idle upstream
// connection: less than the 5 s keep-alive of Node's HTTP server (the
// TypeScript SDK's servers, server-everything), so the proxy does not
// forward a request into a connection the upstream is closing at that
// moment, which would answer the client 502 and record a NETWORK_ERROR
// that neither side caused (a POST is not retried by net/http). The same
// bound as client.IdleConnTimeout; Go's default is 90 s.
const UpstreamIdleConnTimeout = 4 * time.Second

// Options configure an HTTP proxy.
type Options struct {
	// Upstream is the MCP endpoint to forward to (http or https).
	Upstream *url.URL
	// Records receives one record per exchange; nil records nothing. Use a
	// *record.Async so that no handler waits for the disk.
	Records Sink
	// Bodies says which bodies go into records; BodiesErrors when empty.
	Bodies BodyMode
	// BodyLimit caps each recorded body; DefaultBodyLimit (or
	// DefaultFullBodyLimit with BodiesFull) when 0.
	BodyLimit int
	// MaxEventSize bounds one JSON body or SSE event the classifier holds
	// (wire.DefaultMaxEventSize when 0): the memory of an in-flight stream
	// is bounded by it, not by the stream.
	MaxEventSize int
	// ClassifyMemory is the memory, in bytes, that classifying responses
	// may hold at once over all in-flight exchanges: the SSE events and
	// JSON bodies being parsed (DefaultClassifyMemory when 0; negative for
	// no overall bound, only MaxEventSize per exchange). An exchange whose
	// response needs more than is left is forwarded untouched and recorded
	// NOT_CLASSIFIED with cause "memory-budget". Forwarded bytes are never
	// bounded by it.
	ClassifyMemory int64
	// MaxRequestParse bounds the request bytes read before forwarding
	// (when 0: DefaultMaxRequestParse, or faults.DefaultMaxBody for a
	// request that reaches a fault endpoint, which reads that much of a
	// body before forwarding it: every request with a Faults.Selection,
	// with Faults.AllowHeader alone only one whose HeaderScenario header
	// names a scenario).
	MaxRequestParse int
	// PreserveHost forwards the client's Host header. By default the
	// upstream's host is sent, as a client talking to it directly would:
	// go-sdk servers on a loopback address refuse (403) a request whose
	// Host is not a loopback name.
	PreserveHost bool
	// Transport sends requests upstream; a clone of http.DefaultTransport
	// when nil (an idle pool of 256 per host, UpstreamIdleConnTimeout, no
	// compression of its own).
	Transport http.RoundTripper
	// Faults, when set, puts fault scenarios of the catalogue (package
	// faults) in front of the upstream. Records name the scenarios that
	// fired on each request.
	Faults *FaultOptions
	// Middleware, when set, wraps the reverse proxy (inside Faults): records
	// see what the client saw, after the middleware acted.
	Middleware func(http.Handler) http.Handler
	// Scenario is noted in every record (the fault scenario applied).
	Scenario string
	// ScenarioOf, when set, names the scenario applied to one request (a
	// per-request fault header); "" falls back to Scenario.
	ScenarioOf func(*http.Request) string
	// ForwardAdmin forwards requests for /admin/ paths (see IsAdminPath) to
	// the upstream, with a Via header. By default the proxy answers them 403
	// itself: an upstream's loopback-only admin API would take the proxy for
	// a local client.
	ForwardAdmin bool
	// AllowForeignHost turns off the DNS-rebinding check the proxy makes on
	// a loopback listener (a loopback Host, an allowed Origin; see package
	// internal/loopback). The proxy sends the upstream the upstream's own
	// Host, which switches off the upstream's check, so the proxy makes it
	// itself, inside ServeHTTP, whoever serves it. Leave it false.
	AllowForeignHost bool
	// Observer sees every finished exchange (metrics, traces); nil for none.
	Observer Observer
	// Logger receives the proxy's own warnings (tool drift, record write
	// failures); nil discards them.
	Logger *slog.Logger
	// ReadHeaderTimeout bounds the time a client may take to send a
	// request's headers, from the moment its connection is accepted or its
	// previous response ended (DefaultReadHeaderTimeout when 0; negative for
	// none). It closes connections that send nothing or drip (slowloris).
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that has no request in
	// flight after this long (DefaultIdleTimeout when 0; negative for none).
	// A response in progress is never idle, however slowly it streams.
	IdleTimeout time.Duration
	// LegacyAnswerWait bounds how long the record of a request POSTed over
	// the 2024-11-05 HTTP+SSE transport waits, after its 202, for the
	// answer on the session's event stream (DefaultLegacyAnswerWait when
	// 0): past it, the record is written REQUEST_ACCEPTED with
	// streamAnswer.notSeen "timeout".
	LegacyAnswerWait time.Duration
	// HeadFlushDelay is how long the head of a response of known length
	// (a Content-Length) waits for the first bytes of its body before the
	// proxy sends it alone (DefaultHeadFlushDelay when 0; negative: at
	// once). A body that comes in time goes out with the head in one
	// write, as the upstream sent them; a late one follows the head. An
	// event stream, a body of unknown length, and every response through
	// Faults or a Middleware have their head sent at once.
	HeadFlushDelay time.Duration
	// Shutdown says how Serve stops (serve.go).
	Shutdown ShutdownOptions
}

// Proxy is the recording reverse proxy: an http.Handler that forwards every
// request to one upstream unchanged and writes one classified record per
// exchange. Build it with New; Close it after the server stopped.
//
// Its ServeHTTP forwards r to the upstream and records the exchange (route
// says through what). It is its recorder's (a recorder.Front, embedded),
// so that the server calls it with no frame of the proxy's own in between:
// every frame there lies under net/http's writing of the response head, the
// deepest call of a request (recorder.Recorder.Serve, docs/benchmarks.md
// record3).
type Proxy struct {
	*front

	opts       Options
	upstream   *url.URL
	handler    http.Handler // the forwarding chain: fault layer, middleware, reverse proxy
	refuse     http.Handler // refuseAdmin, in place of handler (refusesAdmin)
	refuseHost http.Handler // refuseForeign, in place of handler (the loopback guard)
	transport  http.RoundTripper
	rec        *recorder.Recorder // the exchange records (package recorder)
	log        *slog.Logger

	drift      driftTracker
	cancels    cancelTracker
	legacy     legacyStreams
	lastTarget atomic.Pointer[targetCache] // targetString's
}

// New checks opts and returns a proxy.
func New(opts Options) (*Proxy, error) {
	u := opts.Upstream
	if u == nil {
		return nil, errors.New("proxy: no upstream URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("proxy: upstream %q: want an http:// or https:// URL with a host", u.Redacted())
	}
	p := &Proxy{opts: opts, upstream: u, log: opts.Logger}
	p.drift.upstream, p.drift.upstreamKey, p.drift.defPath = u, u.String(), p.targetPath(&url.URL{})
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	maxParse := opts.MaxRequestParse
	var maxParseOf func(*http.Request) int
	if maxParse <= 0 && opts.Faults != nil {
		// The fault endpoint reads and parses a request body up to
		// faults.DefaultMaxBody before anything is forwarded: the
		// recorder reads as much of a request that reaches one, so that
		// a request a scenario acted on has its method, id and tool in
		// its record (docs/decisions.md, ids20). With no selection of its
		// own (--allow-fault-header alone), only a request that names a
		// scenario in its header reaches an endpoint; any other is read
		// as without faults (docs/decisions.md, mend21).
		if len(opts.Faults.Selection) > 0 {
			maxParse = faults.DefaultMaxBody
		} else if opts.Faults.AllowHeader {
			maxParseOf = func(r *http.Request) int {
				if r.Header.Get(HeaderScenario) != "" {
					return faults.DefaultMaxBody
				}
				return 0
			}
		}
	}
	rec, err := recorder.New(recorder.Options{
		Records: opts.Records, Bodies: opts.Bodies, BodyLimit: opts.BodyLimit, MaxEventSize: opts.MaxEventSize,
		ClassifyMemory: opts.ClassifyMemory, MaxRequestParse: maxParse, MaxRequestParseOf: maxParseOf,
		Scenario: opts.Scenario, ScenarioOf: opts.ScenarioOf, FaultScenario: opts.Faults != nil,
		URL:  func(r *http.Request) string { return p.targetString(r.URL) },
		Name: "proxy", Upstream: "upstream",
		Begin: p.beginExchange, Finish: p.finishExchange, Refuse: p.refuseMalformedBody,
		StreamEndpoint: p.legacy.opened, StreamMessage: p.legacy.answered, StreamSkipped: p.legacy.skipped,
		Logger: p.log,
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p.rec = rec
	p.front = rec.Front(p.route)
	p.legacy.wait, p.legacy.max, p.legacy.write = opts.LegacyAnswerWait, legacyPendingMax, rec.Write
	p.legacy.bodies = opts.Bodies
	if p.legacy.bodies == "" {
		p.legacy.bodies = BodiesErrors
	}
	p.legacy.bodyLimit = p.legacy.bodies.Limit(opts.BodyLimit)
	if p.legacy.wait <= 0 {
		p.legacy.wait = DefaultLegacyAnswerWait
	}
	if opts.Observer != nil {
		p.legacy.observe = opts.Observer.Observe
	}
	rt := opts.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Many concurrent clients share one upstream: keep enough idle
		// connections for them (the default of 2 per host would open and
		// close a connection for most requests under load).
		t.MaxIdleConnsPerHost = 256
		t.MaxIdleConns = 1024
		t.IdleConnTimeout = UpstreamIdleConnTimeout
		// Forward the client's Accept-Encoding as it is: with compression
		// on, the transport asks a client's request without one for gzip
		// and unpacks the answer itself, so the upstream would see another
		// request and the client other bytes (no Content-Length, and an
		// SSE stream held back by the upstream's compressor).
		t.DisableCompression = true
		rt = t
	}
	// Without a fault layer or a middleware, the reverse proxy writes to
	// the recorder's response writer itself, and the response bodies
	// forward themselves through it (upstreamBody.forward).
	forward := opts.Middleware == nil && opts.Faults == nil
	rp := &httputil.ReverseProxy{
		Rewrite:       p.rewrite,
		Transport:     &upstreamTransport{rt: rt, forward: forward},
		FlushInterval: -1,
		ErrorHandler:  p.upstreamError,
		ErrorLog:      slogLogger(p.log),
		BufferPool:    bufferPool{},
	}
	if forward {
		rp.BufferPool = forwardBuffers{}
		// The forwarding body writes and flushes every piece itself, so
		// ReverseProxy's own flush of a response of known length only
		// ever sends the head early, before a body that is late: after
		// HeadFlushDelay rather than at once, from a timer that is
		// stopped, never run, when the body comes in time. At once (-1),
		// it started a goroutine per exchange whose flush nearly always
		// won the race with the body: the head and the body in two writes
		// to the client (docs/benchmarks.md, fixed21). An event stream
		// and a body of unknown length are flushed at once as before
		// (ReverseProxy's own rule for them).
		rp.FlushInterval = opts.HeadFlushDelay
		if rp.FlushInterval == 0 {
			rp.FlushInterval = DefaultHeadFlushDelay
		}
	}
	p.handler = rp
	p.transport = rt
	if opts.Middleware != nil {
		p.handler = opts.Middleware(p.handler)
	}
	if opts.Faults != nil {
		p.handler = p.newFaultLayer(*opts.Faults, p.handler)
	}
	p.refuse = http.HandlerFunc(p.refuseAdmin)
	p.refuseHost = http.HandlerFunc(p.refuseForeign)
	return p, nil
}

// HTTPServer returns an http.Server that serves h (the proxy, or a handler
// in front of it) with the proxy's connection timeouts (Options.
// ReadHeaderTimeout and IdleTimeout) and its logger. It sets no read or
// write timeout: a long request body or a long stream is not cut.
func (p *Proxy) HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: timeoutOr(p.opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       timeoutOr(p.opts.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          slogLogger(p.log),
		ConnContext:       recorder.ConnContext, // the records' conn
	}
}

// timeoutOr is d, def when d is 0, and none (0 for net/http) when d is
// negative.
func timeoutOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Upstream returns the upstream URL.
func (p *Proxy) Upstream() *url.URL { return p.upstream }

// rewrite builds the upstream request: the upstream's scheme and host, the
// request's path and query (see targetURL), the client's headers unchanged
// (hop-by-hop ones excepted, which ReverseProxy strips), and the client's own
// forwarding headers, which ReverseProxy removes before Rewrite.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	// Out's URL is ReverseProxy's copy of In's: set in place.
	t := pr.Out.URL
	p.targetInto(t, pr.In.URL)
	if ex := recorder.From(pr.In.Context()); ex != nil && pr.Out.Body != nil {
		// The body the recorder read whole goes out with the headers in
		// one write (see recorder.Exchange.InMemoryBody); a body a fault
		// or a middleware replaced is sent as ReverseProxy wraps it, and
		// an empty one stays nil, as ReverseProxy leaves it (retries).
		if body, ok := ex.InMemoryBody(pr.In.Body); ok {
			pr.Out.Body = body
		}
	}
	pr.Out.Host = ""
	if p.opts.PreserveHost {
		pr.Out.Host = pr.In.Host
	}
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v, ok := pr.In.Header[h]; ok {
			pr.Out.Header[h] = v
		}
	}
	if p.opts.ForwardAdmin && IsAdminPath(t.Path) {
		// The upstream's admin API must know a proxy forwarded this.
		pr.Out.Header.Add("Via", ViaValue)
	}
	if p.opts.Faults != nil {
		// The fault layer's own headers are for the proxy, not the upstream.
		pr.Out.Header.Del(HeaderScenario)
		pr.Out.Header.Del(HeaderParams)
	}
}

// targetURL maps a request URL to the upstream: the proxy mirrors the
// upstream's origin, so a path is kept as it is (a client points at
// http://127.0.0.1:PORT/mcp for an upstream at https://host/mcp, and the
// OAuth metadata paths under /.well-known/ reach the upstream host); only the
// bare path "/" is mapped to the upstream URL's own path and query, so that
// the proxy's base URL works as the MCP endpoint too.
func (p *Proxy) targetURL(in *url.URL) *url.URL {
	t := new(url.URL)
	p.targetInto(t, in)
	return t
}

// targetInto sets *t to targetURL(in) (t and in are not the same URL).
func (p *Proxy) targetInto(t, in *url.URL) {
	*t = url.URL{Scheme: p.upstream.Scheme, Host: p.upstream.Host, User: p.upstream.User}
	if in.Path == "" || in.Path == "/" {
		t.Path, t.RawPath = p.upstream.Path, p.upstream.RawPath
		t.RawQuery = p.upstream.RawQuery
		if in.RawQuery != "" {
			t.RawQuery = in.RawQuery
		}
		if t.Path == "" {
			t.Path = "/"
		}
		return
	}
	t.Path, t.RawPath, t.RawQuery = in.Path, in.RawPath, in.RawQuery
}

// targetPath is targetURL(in).Path, without building the URL.
func (p *Proxy) targetPath(in *url.URL) string {
	if in.Path == "" || in.Path == "/" {
		if p.upstream.Path == "" {
			return "/"
		}
		return p.upstream.Path
	}
	return in.Path
}

// targetString is targetURL(in).String(), the URL a record names: kept for
// the last path and query asked for (a client's requests go to one
// endpoint), so that the URL is not built and written out per exchange.
func (p *Proxy) targetString(in *url.URL) string {
	if c := p.lastTarget.Load(); c != nil && c.path == in.Path && c.rawPath == in.RawPath && c.rawQuery == in.RawQuery {
		return c.s
	}
	c := &targetCache{path: in.Path, rawPath: in.RawPath, rawQuery: in.RawQuery, s: p.targetURL(in).String()}
	p.lastTarget.Store(c)
	return c.s
}

// targetCache is targetString's: targetURL depends on these three fields
// of the request's URL only.
type targetCache struct {
	path, rawPath, rawQuery string
	s                       string
}

// Stats are the proxy's counters (the recorder's; see recorder.Stats).
type Stats = recorder.Stats

// Stats returns the counters so far.
func (p *Proxy) Stats() Stats { return p.rec.Stats() }

// Wait blocks until every exchange that has started is finished and its
// record handed to the sink, or ctx is done. Call it after the HTTP server
// stopped accepting requests (http.Server.Shutdown or Close) and before
// closing the sink.
func (p *Proxy) Wait(ctx context.Context) error {
	err := p.rec.Wait(ctx)
	// The records held for an answer that can no longer come: written
	// even when exchanges are still in flight (err), since theirs are
	// finished and the sink is closed next.
	if herr := p.legacy.shutdown(ctx); err == nil {
		err = herr
	}
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	return nil
}

// BeginShutdown tells the proxy that its server is about to cut the
// connections still open (http.Server.Close, or Shutdown's deadline): an
// exchange cut from now on is recorded as cut by the shutdown ("the proxy
// shut down after N response bytes"), not as left by its client (DC). Call
// it before closing the server; Close calls it too.
func (p *Proxy) BeginShutdown() { p.rec.BeginShutdown() }

// Close marks the proxy as shutting down (BeginShutdown), waits for every
// exchange, as Wait, and closes the idle connections to the upstream.
func (p *Proxy) Close(ctx context.Context) error {
	p.BeginShutdown()
	err := p.Wait(ctx)
	if c, ok := p.transport.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	return err
}

// DefaultHeadFlushDelay is the default of Options.HeadFlushDelay.
const DefaultHeadFlushDelay = time.Millisecond

// CopyBufferSize is the size of the buffers the reverse proxy copies
// response bodies through (httputil.ReverseProxy.BufferPool). 16 KiB: half
// ReverseProxy's own default, since an idle stream holds its buffer while it
// waits, and a read returns what has arrived anyway.
const CopyBufferSize = 16 << 10

// bufferPool gives ReverseProxy its copy buffers, pooled, so that finished
// responses give theirs back.
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, CopyBufferSize); return &b }}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }

// ProxyStatusRefused is the Proxy-Status header (RFC 9209) of the proxy's
// own 403 to a foreign Host or Origin (the DNS-rebinding guard): the answer
// is the proxy's, the request never reached the server.
const ProxyStatusRefused = `mcpdiag; error=http_request_denied; details="foreign Host or Origin refused by mcpdiag proxy"`

// forwardBuffers is the reverse proxy's BufferPool when the response
// bodies forward themselves (upstreamBody.forward): its buffers are the
// recorder's chunks, which the body's first Read hands to the recorder, so
// Put leaves them alone (a buffer no forwarding body took, which does not
// happen, is left to the garbage collector).
type forwardBuffers struct{}

func (forwardBuffers) Get() []byte { return recorder.Chunk(CopyBufferSize) }
func (forwardBuffers) Put([]byte)  {}
