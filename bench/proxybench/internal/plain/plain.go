// Package plain is proxybench's baseline: the plain httputil.ReverseProxy a
// user could write with the knobs mcpdiag proxy turns for itself, and
// nothing of mcpdiag's. It imports only the standard library, so that the
// plainproxy binary built from it carries no live heap of mcpdiag's
// packages (docs/decisions.md, "the plain proxy in its own binary").
package plain

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// CopyBufferSize is the size of the reverse proxy's pooled copy buffers:
// proxy.CopyBufferSize, mcpdiag's own (a test of proxybench holds the two
// equal; this package cannot import proxy).
const CopyBufferSize = 16 << 10

// HeadFlushDelay is the reverse proxy's FlushInterval:
// proxy.DefaultHeadFlushDelay, mcpdiag's own (held equal by the same
// test). A response of known length whose body comes within it reaches
// the client in one write, head and body, as it does through mcpdiag
// proxy; with -1 a goroutine per response flushed the head alone first
// (docs/decisions.md, "The head of a response of known length waits up to
// 1 ms"). ReverseProxy flushes event streams and bodies of unknown length
// at once whatever this is.
const HeadFlushDelay = time.Millisecond

// Transport returns the transport mcpdiag proxy builds for itself
// (proxy.New): http.DefaultTransport cloned, with an idle pool for many
// clients and its idle timeout.
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 256
	t.MaxIdleConns = 1024
	t.IdleConnTimeout = 4 * time.Second // proxy.UpstreamIdleConnTimeout
	return t
}

// New returns the plain reverse proxy to upstream over rt: Rewrite with
// SetURL and the upstream's own Host, FlushInterval HeadFlushDelay (every
// write of an event stream flushed at once, as mcpdiag does), pooled copy
// buffers of CopyBufferSize (without a BufferPool, ReverseProxy allocates
// 32 KiB per response, which an idle stream holds while it waits), and
// full duplex.
//
// Full duplex: without it net/http closes the inbound body when the
// response starts, and the transport's last read of a Content-Length body
// then tears the upstream connection down mid-response (golang/go#40747;
// 1-2% of the SSE requests here). mcpdiag reads the request body before
// forwarding, so it does not need this.
func New(upstream *url.URL, rt http.RoundTripper) http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(upstream); pr.Out.Host = "" },
		FlushInterval: HeadFlushDelay,
		Transport:     rt,
		BufferPool:    buffers{},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	})
}

// buffers is the plain proxy's httputil.BufferPool: a sync.Pool of
// CopyBufferSize buffers, as mcpdiag's.
type buffers struct{}

var pool = sync.Pool{New: func() any { b := make([]byte, CopyBufferSize); return &b }}

func (buffers) Get() []byte  { return *pool.Get().(*[]byte) }
func (buffers) Put(b []byte) { pool.Put(&b) }

// BufferPool returns the plain proxy's pool of copy buffers (the floor
// proxy's ReverseProxy takes its buffer from it too).
func BufferPool() httputil.BufferPool { return buffers{} }
