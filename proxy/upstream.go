package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// upstreamTransport times the upstream leg and watches the upstream body for
// the error that cuts it.
type upstreamTransport struct {
	rt http.RoundTripper
	// forward makes the response bodies forward themselves to the client
	// through the recorder (upstreamBody.forward): set when the reverse
	// proxy writes straight to the recorder's response writer (no fault
	// layer, no middleware) and its BufferPool is forwardBuffers.
	forward bool
}

func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := recorder.From(req.Context())
	if ex == nil {
		return t.rt.RoundTrip(req)
	}
	up := &ex.Up
	up.Start = time.Now()
	wrote := func(i httptrace.WroteRequestInfo) { up.Sent.Store(i.Err == nil) }
	if req.Body != nil && req.Body != http.NoBody && strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		// net/http waits for the upstream's 100 Continue before the body
		// and, when a final answer or the connection's end comes instead,
		// never writes the body yet reports the request written without
		// error: the request was sent only if its body was read.
		body := &continueBody{ReadCloser: req.Body}
		req.Body = body
		wrote = func(i httptrace.WroteRequestInfo) { up.Sent.Store(i.Err == nil && body.read.Load()) }
	}
	if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.WroteRequest == nil {
		// The trace ReverseProxy made for this request alone (its
		// Got1xxResponse, composed with any trace a handler before it put
		// on the context): the hook goes into it. A trace of our own
		// would cost a copy of the request, a context node every later
		// lookup walks, and ClientTrace's reflective compose with
		// ReverseProxy's, on every exchange.
		trace.WroteRequest = wrote
	} else {
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{WroteRequest: wrote}))
	}
	resp, err := t.rt.RoundTrip(req)
	up.Headers = time.Now()
	if err != nil {
		up.Err = err
		up.End = up.Headers
		return nil, err
	}
	body := &upstreamBody{rc: resp.Body, up: up}
	if t.forward {
		body.ex = ex
		body.stream = resp.ContentLength < 0
		body.wait = body.stream
	}
	resp.Body = body
	return resp, nil
}

// continueBody is the body of a request with Expect: 100-continue, noting
// whether net/http began to send it.
type continueBody struct {
	io.ReadCloser
	read atomic.Bool
}

func (b *continueBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.ReadCloser.Read(p)
}

// upstreamBody notes how the upstream body ended.
type upstreamBody struct {
	rc io.ReadCloser
	up *recorder.Upstream
	ex *recorder.Exchange // set: the first Read forwards the body (forward)
	// stream: a forwarding body of unknown length (an event stream, or a
	// chunked answer), whose reads may wait for the upstream (see Read).
	stream bool
	wait   bool // the next read may wait: hold no chunk until it returns
}

// Read reads the body; or, on the first call of a forwarding body, copies
// all of it to the client itself. ReverseProxy's copyBuffer calls it with
// its buffer p, from forwardBuffers (a chunk of the recorder's), and Read
// reads the body into chunks, p the first, and passes each piece to the
// client through the recorder (recorder.Exchange.ForwardChunk), which then
// keeps the chunk itself for the record and the classifier instead of
// copying the bytes out of the one buffer ReverseProxy reuses for every
// read. The reads, writes and flushes are those of ReverseProxy's copy with
// FlushInterval -1, and so is what the client sees.
//
// Read then returns no bytes, and the error that makes copyBuffer end as it
// would have: io.EOF for a clean end (copyBuffer returns nil); a read
// error as it is (copyBuffer logs it and returns it, ReverseProxy aborts
// the handler); a write error as context.Canceled, the one error
// copyBuffer does not log, since it logs no write error either
// (ReverseProxy aborts the handler all the same; the recorder noted the
// real error).
//
// A body of unknown length (stream) holds no chunk while its upstream sends
// nothing: before its first read, and before any read that follows a short
// one (the upstream had no more to give, so the next read is likely to
// wait: an idle event stream), the loop gives its chunk back and waits in
// a read of no bytes, then takes a chunk for the read of what arrived. On
// a chunked HTTP/1.1 body the empty read returns once the next chunk's
// header is in (it reads no byte of the chunk's data, and it is the read
// the next one would have begun with: the reads return the same bytes as
// before, with no other system call); on an HTTP/2 body, once data is
// there; on other bodies (an HTTP/1.0 body read to the connection's end)
// at once, and the read that follows then waits holding its chunk, as it
// did before (docs/decisions.md, idle18).
//
// The loop is here, not in a function of its own: its frame and
// ForwardChunk's lie under net/http's writing of the response head, where
// ReverseProxy's copy has two frames of its own (see recorder.Recorder.Serve).
func (b *upstreamBody) Read(p []byte) (int, error) {
	ex := b.ex
	if ex == nil {
		return b.read(p)
	}
	b.ex = nil // (ReverseProxy reads no more)
	c := p
	for {
		n, rerr := b.readChunk(&c)
		var werr error
		if n > 0 {
			c, werr = ex.ForwardChunk(c, n)
		}
		if rerr != nil || werr != nil {
			recorder.PutChunk(c)
			switch {
			case rerr != nil && rerr != io.EOF && rerr != context.Canceled:
				return 0, rerr
			case werr != nil:
				return 0, context.Canceled
			}
			return 0, rerr
		}
	}
}

// readChunk reads the upstream body into *c, a chunk, taking one when *c
// is nil. When the read may wait (b.wait), it first gives *c back and
// waits in a read of no bytes (see Read). Not in Read: its frame lies
// under net/http's writing of the response head, this one does not.
//
//go:noinline
func (b *upstreamBody) readChunk(c *[]byte) (int, error) {
	if b.wait {
		recorder.PutChunk(*c)
		*c = nil
		if _, err := b.read(nil); err != nil {
			return 0, err
		}
	}
	if *c == nil {
		*c = recorder.Chunk(CopyBufferSize)
	}
	n, err := b.read(*c)
	b.wait = b.stream && n < len(*c)
	return n, err
}

// read reads the upstream body and notes how it ended.
func (b *upstreamBody) read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		if b.up.End.IsZero() {
			b.up.End = time.Now()
		}
		if err != io.EOF && b.up.BodyErr == nil {
			b.up.BodyErr = err
		}
	}
	return n, err
}

func (b *upstreamBody) Close() error {
	if b.up.End.IsZero() {
		b.up.End = time.Now()
	}
	return b.rc.Close()
}

// RFC 9209 Proxy-Status error types the proxy uses.
const (
	ProxyDNSError             = "dns_error"
	ProxyDestUnavailable      = "destination_unavailable"
	ProxyConnectionRefused    = "connection_refused"
	ProxyConnectionTerminated = "connection_terminated"
	ProxyConnectionTimeout    = "connection_timeout"
	ProxyTLSProtocolError     = "tls_protocol_error"
	ProxyTLSCertificateError  = "tls_certificate_error"
	ProxyResponseTimeout      = "http_response_timeout"
	ProxyProtocolError        = "http_protocol_error"
	ProxyRequestError         = "http_request_error"
	ProxyInternalError        = "proxy_internal_error"
)

// upstreamFailure maps an error of the upstream round trip to the RFC 9209
// error type, the status the proxy answers with, and Envoy's response flag
// (for the record's flags and note).
func upstreamFailure(err error, sent bool) (errType string, status int, flag record.Flag) {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		return ProxyDNSError, http.StatusBadGateway, record.FlagDF
	case errors.Is(err, syscall.ECONNREFUSED):
		return ProxyConnectionRefused, http.StatusBadGateway, record.FlagUF
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ProxyDestUnavailable, http.StatusBadGateway, record.FlagUF
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return ProxyTLSCertificateError, http.StatusBadGateway, record.FlagUF
	case errors.As(err, &recErr):
		return ProxyTLSProtocolError, http.StatusBadGateway, record.FlagUF
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		if sent {
			return ProxyResponseTimeout, http.StatusGatewayTimeout, record.FlagUT
		}
		return ProxyConnectionTimeout, http.StatusGatewayTimeout, record.FlagUF
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		if sent {
			return ProxyConnectionTerminated, http.StatusBadGateway, record.FlagUC
		}
		return ProxyConnectionTerminated, http.StatusBadGateway, record.FlagUF
	case strings.Contains(err.Error(), "malformed HTTP"), strings.Contains(err.Error(), "bogus"):
		return ProxyProtocolError, http.StatusBadGateway, record.FlagUPE
	case errors.As(err, &netErr):
		return ProxyDestUnavailable, http.StatusBadGateway, record.FlagUF
	}
	return ProxyInternalError, http.StatusBadGateway, record.FlagUF
}

// ProxyStatus formats a Proxy-Status header value (RFC 9209) for an error
// the proxy answers itself: `mcpdiag; error=connection_refused;
// details="…"; next-hop="127.0.0.1:9"`.
func ProxyStatus(errType, details, nextHop string) string {
	var b strings.Builder
	b.WriteString(ProxyName)
	b.WriteString("; error=")
	b.WriteString(errType)
	if details != "" {
		b.WriteString("; details=")
		b.WriteString(strconv.Quote(sanitizeDetails(details)))
	}
	if nextHop != "" {
		b.WriteString("; next-hop=")
		b.WriteString(strconv.Quote(nextHop))
	}
	return b.String()
}

// sanitizeDetails keeps a Proxy-Status details string a valid sf-string:
// printable ASCII only, bounded.
func sanitizeDetails(s string) string {
	b := make([]byte, 0, min(len(s), 200))
	for i := 0; i < len(s) && len(b) < 200; i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		b = append(b, c)
	}
	return string(b)
}

// upstreamError is the reverse proxy's ErrorHandler: the upstream gave no
// response. When the client is still there, the proxy answers 502 (504 for a
// timeout) with a Proxy-Status header naming the cause, so the client can
// tell it from an upstream 5xx; the record says the proxy produced it. When
// the upstream accepted the connection and then closed or reset it before
// responding, the proxy drops the client's connection the same way instead,
// so that the client sees what it would have seen directly.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	ex := recorder.From(r.Context())
	if ex == nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	up := &ex.Up
	if up.Err == nil {
		up.Err = err
	}
	if ex.Request().Context().Err() != nil || ex.BodyError() != nil {
		// The client left (or its request body broke): nobody to answer.
		ex.ClientLeft()
		return
	}
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err // without the URL, which may carry credentials
	}
	errType, status, flag := upstreamFailure(err, up.Sent.Load())
	up.Flag = flag
	if errType == ProxyConnectionTerminated {
		// The upstream took the connection and then closed or reset it
		// without a response. The client would have seen exactly that, so
		// it sees it here too: its connection is dropped, not answered.
		up.Mirrored = true
		panic(http.ErrAbortHandler)
	}
	up.ProxyError = errType
	h := w.Header()
	h.Set("Proxy-Status", ProxyStatus(errType, cause.Error(), p.upstream.Host))
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "mcpdiag proxy: the upstream %s failed (%s): %s\n", p.upstream.Host, errType, sanitizeDetails(cause.Error()))
}
