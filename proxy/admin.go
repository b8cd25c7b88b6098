package proxy

import (
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/recorder"
)

// ViaValue is the Via header (RFC 9110 §7.6.3) the proxy adds to an admin
// request it forwards (Options.ForwardAdmin), so that the upstream can tell
// it came through a proxy: `mcpdiag serve` then wants its admin token.
const ViaValue = "1.1 " + ProxyName

// IsAdminPath reports whether a request path names an admin API: /admin or
// anything below it, after decoding and cleaning, in any case ("/%61dmin/log",
// "/mcp/../admin/log" and "/ADMIN/" are admin paths).
//
// A path that is already clean and ASCII, as nearly every request's is,
// costs no allocation (the proxy asks twice per request, for the client's
// path and the upstream's): "/"+p made "//mcp", which path.Clean had to
// rewrite.
func IsAdminPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	c := path.Clean(p) // (p itself when it is clean)
	for i := 0; i < len(c); i++ {
		if c[i] >= utf8.RuneSelf {
			// strings.ToLower's Unicode mapping (U+0130 is "i"), as before.
			c = strings.ToLower(c)
			return c == "/admin" || strings.HasPrefix(c, "/admin/")
		}
	}
	const admin = "/admin"
	return len(c) >= len(admin) && strings.EqualFold(c[:len(admin)], admin) && (len(c) == len(admin) || c[len(admin)] == '/')
}

// refusesAdmin reports whether the proxy answers r itself with 403 (see
// refuseAdmin): r is for an admin path, of the client's URL or of the
// upstream URL it maps to, and Options.ForwardAdmin is off. An upstream's
// loopback-only admin API sees the proxy as a loopback client, so
// forwarding would hand the API to every client of the proxy.
//
// ServeHTTP decides it before the recorder begins and hands the recorder
// refuseAdmin in place of the forwarding chain, rather than wrapping the
// chain in a guard handler: the request's URL is the same on both sides of
// the recorder, and the frames of a guard would sit under every forwarded
// response's writes (those writes are the deepest calls of a request, and
// a stack that grew past 8 KiB there stays 16 KiB for as long as an idle
// stream is held: docs/benchmarks.md, idlettfe).
func (p *Proxy) refusesAdmin(r *http.Request) bool {
	return !p.opts.ForwardAdmin && (IsAdminPath(r.URL.Path) || IsAdminPath(p.targetPath(r.URL)))
}

// refuseAdmin answers 403 itself, with a Proxy-Status naming the refusal,
// to a request for an admin path (refusesAdmin).
func (p *Proxy) refuseAdmin(w http.ResponseWriter, r *http.Request) {
	if ex := recorder.From(r.Context()); ex != nil {
		ex.Refused("proxy-generated: mcpdiag proxy answered 403 itself: admin paths are not forwarded (--forward-admin)")
	}
	p.log.Warn("refused to forward an admin path (--forward-admin forwards it)", "method", r.Method, "path", r.URL.Path)
	h := w.Header()
	h.Set("Proxy-Status", ProxyStatus("http_request_denied", "admin paths are not forwarded", ""))
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte("mcpdiag proxy: /admin/ is not forwarded to the upstream: an admin API must not be reachable through the proxy (start the proxy with --forward-admin to forward it)\n"))
}
