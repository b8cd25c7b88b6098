package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// BodyMode says which bodies the proxy puts into records. Forwarded bodies
// are never affected: only what is recorded.
type BodyMode string

// The body modes.
const (
	// BodiesNone records no body text (sizes, hashes and the verdict only).
	BodiesNone BodyMode = "none"
	// BodiesErrors records the response body of every exchange that did not
	// succeed (the default): what a failure looked like, without keeping
	// tool results or arguments of calls that worked.
	BodiesErrors BodyMode = "errors"
	// BodiesAll records the request and response bodies of every exchange,
	// each capped at the body limit.
	BodiesAll BodyMode = "all"
	// BodiesFull records the complete request and response bytes (raw SSE
	// framing included) with each event's arrival time, so that an exchange
	// can be replayed exactly. Credentials are still redacted.
	BodiesFull BodyMode = "full"
)

// ParseBodyMode reads the value of a --record-bodies flag ("" is
// BodiesErrors).
func ParseBodyMode(s string) (BodyMode, error) {
	switch m := BodyMode(s); m {
	case "":
		return BodiesErrors, nil
	case BodiesNone, BodiesErrors, BodiesAll, BodiesFull:
		return m, nil
	}
	return "", fmt.Errorf("proxy: body mode %q: want none, errors, all or full", s)
}

// Limits.
const (
	// DefaultBodyLimit caps each recorded body in the excerpt modes.
	DefaultBodyLimit = record.DefaultBodyLimit
	// DefaultFullBodyLimit caps each recorded body in BodiesFull: request and
	// response together stay below the record line limit
	// (record.DefaultMaxLineSize), so a full record is still one readable
	// line. A body beyond it is kept up to the limit and marked truncated.
	DefaultFullBodyLimit = 3 << 20
	// DefaultMaxRequestParse is how much of a request body the proxy reads
	// before forwarding it, to learn the JSON-RPC id, method and protocol
	// version the classifier needs. A larger body is forwarded whole all the
	// same (the read part first, then the rest as it arrives); its exchange
	// is then classified without the request id.
	DefaultMaxRequestParse = 4 << 20
	// DefaultClassifyMemory is the default of Options.ClassifyMemory: eight
	// events of the default maximum size (wire.DefaultMaxEventSize) at
	// once.
	DefaultClassifyMemory = 128 << 20
	// maxArrivals bounds the event arrival times kept for one full record.
	maxArrivals = 100000
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
type Sink interface {
	Write(rec *record.Record) error
}

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
	// (DefaultMaxRequestParse when 0).
	MaxRequestParse int
	// PreserveHost forwards the client's Host header. By default the
	// upstream's host is sent, as a client talking to it directly would:
	// go-sdk servers on a loopback address refuse (403) a request whose
	// Host is not a loopback name.
	PreserveHost bool
	// Transport sends requests upstream; a clone of http.DefaultTransport
	// when nil.
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
	// Shutdown says how Serve stops (serve.go).
	Shutdown ShutdownOptions
}

// Proxy is the recording reverse proxy: an http.Handler that forwards every
// request to one upstream unchanged and writes one classified record per
// exchange. Build it with New; Close it after the server stopped.
type Proxy struct {
	opts      Options
	upstream  *url.URL
	handler   http.Handler
	transport http.RoundTripper
	bodyLimit int
	maxParse  int
	budget    *wire.Budget // nil: no overall bound
	log       *slog.Logger

	sessions sessionStore
	drift    driftTracker

	wg       sync.WaitGroup
	inFlight atomic.Int64
	closing  atomic.Bool
	stats    struct {
		exchanges, recordErrors, clientGone, cutByShutdown, upstreamErrors, upstreamResets, notClassified atomic.Int64
	}
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
	if opts.Bodies == "" {
		opts.Bodies = BodiesErrors
	}
	if _, err := ParseBodyMode(string(opts.Bodies)); err != nil {
		return nil, err
	}
	p := &Proxy{opts: opts, upstream: u, log: opts.Logger}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.bodyLimit = opts.BodyLimit
	if p.bodyLimit == 0 {
		p.bodyLimit = DefaultBodyLimit
		if opts.Bodies == BodiesFull {
			p.bodyLimit = DefaultFullBodyLimit
		}
	}
	p.maxParse = opts.MaxRequestParse
	if p.maxParse <= 0 {
		p.maxParse = DefaultMaxRequestParse
	}
	switch {
	case opts.ClassifyMemory == 0:
		p.budget = wire.NewBudget(DefaultClassifyMemory)
	case opts.ClassifyMemory > 0:
		p.budget = wire.NewBudget(opts.ClassifyMemory)
	}
	rt := opts.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Many concurrent clients share one upstream: keep enough idle
		// connections for them (the default of 2 per host would open and
		// close a connection for most requests under load).
		t.MaxIdleConnsPerHost = 256
		t.MaxIdleConns = 1024
		rt = t
	}
	rp := &httputil.ReverseProxy{
		Rewrite:       p.rewrite,
		Transport:     &upstreamTransport{rt: rt},
		FlushInterval: -1,
		ErrorHandler:  p.upstreamError,
		ErrorLog:      slogLogger(p.log),
		BufferPool:    bufferPool{},
	}
	p.handler = rp
	p.transport = rt
	if opts.Middleware != nil {
		p.handler = opts.Middleware(p.handler)
	}
	if opts.Faults != nil {
		p.handler = p.newFaultLayer(*opts.Faults, p.handler)
	}
	if !opts.ForwardAdmin {
		p.handler = p.adminGuard(p.handler)
	}
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
	t := p.targetURL(pr.In.URL)
	pr.Out.URL = t
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
	t := &url.URL{Scheme: p.upstream.Scheme, Host: p.upstream.Host, User: p.upstream.User}
	if in.Path == "" || in.Path == "/" {
		t.Path, t.RawPath = p.upstream.Path, p.upstream.RawPath
		t.RawQuery = p.upstream.RawQuery
		if in.RawQuery != "" {
			t.RawQuery = in.RawQuery
		}
		if t.Path == "" {
			t.Path = "/"
		}
		return t
	}
	t.Path, t.RawPath, t.RawQuery = in.Path, in.RawPath, in.RawQuery
	return t
}

// Stats are the proxy's counters.
type Stats struct {
	// Exchanges counts finished exchanges (each wrote one record, or
	// tried to).
	Exchanges int64 `json:"exchanges"`
	// InFlight counts exchanges not finished yet.
	InFlight int64 `json:"inFlight"`
	// RecordErrors counts records the sink refused.
	RecordErrors int64 `json:"recordErrors"`
	// ClientGone counts exchanges the client left before the end.
	ClientGone int64 `json:"clientGone"`
	// CutByShutdown counts exchanges the proxy's own shutdown cut (see
	// BeginShutdown); they are not in ClientGone.
	CutByShutdown int64 `json:"cutByShutdown"`
	// UpstreamErrors counts exchanges the proxy answered itself because
	// the upstream could not be reached or failed before responding.
	UpstreamErrors int64 `json:"upstreamErrors"`
	// UpstreamResets counts responses the upstream cut after they started.
	UpstreamResets int64 `json:"upstreamResets"`
	// NotClassified counts exchanges recorded NOT_CLASSIFIED (over
	// MaxEventSize or the classification memory budget).
	NotClassified int64 `json:"notClassified"`
	// ClassifyMemory is the classification memory budget in bytes (0 when
	// there is none), ClassifyMemoryInUse what it holds now,
	// ClassifyMemoryPeak the most it held at once and
	// ClassifyMemoryRefused how many reservations it refused (each makes an
	// event or body be read through without being held).
	ClassifyMemory        int64 `json:"classifyMemory"`
	ClassifyMemoryInUse   int64 `json:"classifyMemoryInUse"`
	ClassifyMemoryPeak    int64 `json:"classifyMemoryPeak"`
	ClassifyMemoryRefused int64 `json:"classifyMemoryRefused"`
}

// Stats returns the counters so far.
func (p *Proxy) Stats() Stats {
	return Stats{
		Exchanges: p.stats.exchanges.Load(), InFlight: p.inFlight.Load(),
		RecordErrors: p.stats.recordErrors.Load(), ClientGone: p.stats.clientGone.Load(), CutByShutdown: p.stats.cutByShutdown.Load(),
		UpstreamErrors: p.stats.upstreamErrors.Load(), UpstreamResets: p.stats.upstreamResets.Load(),
		NotClassified:  p.stats.notClassified.Load(),
		ClassifyMemory: p.budget.Limit(), ClassifyMemoryInUse: p.budget.InUse(), ClassifyMemoryPeak: p.budget.Peak(),
		ClassifyMemoryRefused: p.budget.Refused(),
	}
}

// Wait blocks until every exchange that has started is finished and its
// record handed to the sink, or ctx is done. Call it after the HTTP server
// stopped accepting requests (http.Server.Shutdown or Close) and before
// closing the sink.
func (p *Proxy) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("proxy: %d exchanges still in flight: %w", p.inFlight.Load(), ctx.Err())
	}
}

// BeginShutdown tells the proxy that its server is about to cut the
// connections still open (http.Server.Close, or Shutdown's deadline): an
// exchange cut from now on is recorded as cut by the shutdown ("the proxy
// shut down after N response bytes"), not as left by its client (DC). Call
// it before closing the server; Close calls it too.
func (p *Proxy) BeginShutdown() { p.closing.Store(true) }

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

// sessionStore remembers, per 2025-11-25 session, the client and the
// negotiated protocol version, which later requests of the session do not
// repeat. It is bounded: past maxSessions an arbitrary entry is forgotten.
type sessionStore struct {
	mu sync.Mutex
	m  map[string]sessionInfo
}

type sessionInfo struct {
	client, protocol string
}

const maxSessions = 10000

func (s *sessionStore) get(id string) sessionInfo {
	if id == "" {
		return sessionInfo{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

func (s *sessionStore) put(id string, info sessionInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]sessionInfo{}
	}
	if _, ok := s.m[id]; !ok && len(s.m) >= maxSessions {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[id] = info
}

func (s *sessionStore) del(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// bufferPool gives ReverseProxy its copy buffers, pooled, so that finished
// responses give theirs back. 16 KiB: half ReverseProxy's own default, since
// an idle stream holds its buffer while it waits, and a read returns what
// has arrived anyway.
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

// idOrNil returns the id, or a zero id for a notification.
func idOrNil(m wire.Message) wire.ID {
	if m.Kind == wire.MessageRequest {
		return m.ID
	}
	return wire.ID{}
}
