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
