package proxy

import (
	"io"
	"net/http"

	"github.com/mcpdiag/mcpdiag/recorder"
)

// refuseMalformedBody answers a request whose body the proxy could not
// read because it was malformed (the chunked framing is broken) with 400,
// as a server reading it would (net/http and mcpdiag serve answer
// "400 reading the request body: …"). The request is not forwarded: the
// proxy re-frames the body it sends upstream, so the upstream could only
// have received a different, cut body. The record says the proxy answered.
func (p *Proxy) refuseMalformedBody(w http.ResponseWriter, ex *recorder.Exchange) {
	in, err := ex.Request(), ex.BodyError()
	p.log.Warn("refused a request with a malformed body", "method", in.Method, "path", in.URL.Path, "error", err)
	h := w.Header()
	h.Set("Proxy-Status", ProxyStatus(ProxyRequestError, "malformed request body: "+err.Error(), ""))
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, "reading the request body: "+err.Error()+"\n")
}
