// Package loopback is the DNS-rebinding defence shared by every listener
// mcpdiag opens on 127.0.0.1: a request must name a loopback host, and a
// browser's Origin, when present, must be loopback or the request's own host.
// A web page the user visits can reach 127.0.0.1, but it cannot make the
// browser send a loopback Host for its own origin.
package loopback

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// IsHost reports whether host (a name or an address, with or without a
// port or brackets) is a loopback host: localhost or a loopback IP.
func IsHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// OriginAllowed reports whether r's Origin, when present, is a loopback
// origin or the request's own host. Non-browser clients send no Origin.
func OriginAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if IsHost(host) {
		return true
	}
	reqHost := r.Host
	if h, _, err := net.SplitHostPort(reqHost); err == nil {
		reqHost = h
	}
	return strings.EqualFold(host, strings.Trim(reqHost, "[]"))
}

// Check reports whether r may be served by a loopback-only listener: its
// Host names a loopback host and its Origin is allowed. why says what was
// refused.
func Check(r *http.Request) (ok bool, why string) {
	if !IsHost(r.Host) {
		return false, "the Host " + r.Host + " is not a loopback name (DNS-rebinding protection)"
	}
	if !OriginAllowed(r) {
		return false, "the Origin " + r.Header.Get("Origin") + " is not allowed (DNS-rebinding protection)"
	}
	return true, ""
}

// forwardingHeaders name the headers by which a proxy says that it
// forwarded a request (RFC 7239 Forwarded, RFC 9110 Via) or for whom (the
// de-facto X-Forwarded-* family and its relatives). Any X-Forwarded-
// header counts, too.
var forwardingHeaders = []string{
	"Forwarded", "Via", "X-Real-Ip", "True-Client-Ip", "X-Client-Ip", "X-Cluster-Client-Ip",
	"Cf-Connecting-Ip", "Fastly-Client-Ip", "X-Original-Forwarded-For",
}

// Proxied reports whether r names a proxy it came through, and which header
// said so. A proxy on the same host connects from a loopback address and
// may send the upstream's own Host, so neither the peer address nor Host
// tells a forwarded request from a local one; only these headers can.
func Proxied(r *http.Request) (header string, ok bool) {
	for _, h := range forwardingHeaders {
		if _, ok := r.Header[h]; ok {
			return h, true
		}
	}
	for name := range r.Header {
		if strings.HasPrefix(name, "X-Forwarded-") {
			return name, true
		}
	}
	return "", false
}

// PeerIsLoopback reports whether r's TCP peer (RemoteAddr) is a loopback
// address.
func PeerIsLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckDirect is the rule of an API that only a local user may reach (the
// admin API of `mcpdiag serve`): the peer is a loopback address, the
// request names no proxy it came through, and Check passes.
func CheckDirect(r *http.Request) (ok bool, why string) {
	if !PeerIsLoopback(r) {
		return false, "the client " + r.RemoteAddr + " is not on loopback"
	}
	if h, proxied := Proxied(r); proxied {
		return false, "the request came through a proxy (it carries " + h + "); a proxy in front would hand this API to its own clients"
	}
	return Check(r)
}

// Guard wraps next with Check: a request that fails it gets 403 and one
// line naming what and why. Use it on every handler of a loopback listener.
func Guard(what string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, why := Check(r); !ok {
			http.Error(w, what+": "+why, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Listener reports whether a listener's address is a loopback address.
func Listener(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// Arrived reports whether r came in on a connection to a loopback address
// (the listener's side, http.LocalAddrContextKey): what a listener that
// applies Check only on loopback asks.
func Arrived(r *http.Request) bool {
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return addr != nil && Listener(addr)
}

// GuardLoopback is Guard for a handler that may be served on any
// listener: the check applies to requests that arrived at a loopback
// address, so code serving the handler keeps the defence whoever opens
// the listener.
func GuardLoopback(what string, next http.Handler) http.Handler {
	guarded := Guard(what, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Arrived(r) {
			guarded.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// DefaultHost returns addr with 127.0.0.1 as its host when it has none
// (":8080" binds loopback, not every interface; that takes an explicit
// "0.0.0.0:8080"). addr must be HOST:PORT or :PORT, PORT a port a
// listener can have (CheckPort).
func DefaultHost(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if err := CheckPort(port); err != nil {
		return "", err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// CheckPort refuses a listen address's port that no listener can have (a
// number outside 0-65535, a name /etc/services does not know) with net's
// "address 99999: invalid port", so that a command says so as bad input
// (exit 2) before it listens, rather than as a failed listen (exit 1, which
// a port in use is). An empty port, which picks a free one, is accepted.
func CheckPort(port string) error {
	if port == "" {
		return nil
	}
	_, err := net.LookupPort("tcp", port)
	return err
}
