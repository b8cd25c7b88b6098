package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
)

// bodyLeft reports whether an error reading the client's request body
// means that the client went away (the connection ended mid-body), as
// opposed to a body that arrived malformed (a broken chunked framing).
func bodyLeft(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne)
}

// refuseMalformedBody answers a request whose body the proxy could not
// read because it was malformed (the chunked framing is broken) with 400,
// as a server reading it would (net/http and mcpdiag serve answer
// "400 reading the request body: …"). The request is not forwarded: the
// proxy re-frames the body it sends upstream, so the upstream could only
// have received a different, cut body. The record says the proxy answered.
func (p *Proxy) refuseMalformedBody(w http.ResponseWriter, ex *exchange) {
	ex.malformedBody = true
	p.log.Warn("refused a request with a malformed body", "method", ex.in.Method, "path", ex.in.URL.Path, "error", ex.reqErr)
	h := w.Header()
	h.Set("Proxy-Status", ProxyStatus(ProxyRequestError, "malformed request body: "+ex.reqErr.Error(), ""))
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, "reading the request body: "+ex.reqErr.Error()+"\n")
}
