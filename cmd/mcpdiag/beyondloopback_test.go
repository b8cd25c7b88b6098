package main

import (
	"net"
	"strings"
	"testing"
)

// TestProxyWarnsBeyondLoopback (attack8): `mcpdiag proxy` said nothing
// when --listen or --metrics bound an address beyond loopback, where its
// DNS-rebinding check does not apply and every host that reaches the
// address can send through it (serve warns). The warning is judged on the
// listener's address; the tests bind loopback only, so a non-loopback
// address is judged as given, and the real proxy on 127.0.0.1 prints no
// warning.
func TestProxyWarnsBeyondLoopback(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		warn bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000}, false},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 9000}, false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9000}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9000}, true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9000}, true},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 9000}, true},
	} {
		w := beyondLoopback("--listen", c.addr)
		if c.warn != (w != "") || c.warn && (!strings.Contains(w, "--listen "+c.addr.String()) || !strings.Contains(w, "beyond loopback")) {
			t.Errorf("beyondLoopback(%s) = %q, want a warning: %v", c.addr, w, c.warn)
		}
	}
	su, _ := startServe(t, serveOptions{})
	p := runHTTPProxyForTest(t, proxyOptions{upstream: su, listen: "127.0.0.1:0", metricsAddr: "127.0.0.1:0"})
	p.stop()
	if out := p.stderr.String(); strings.Contains(out, "beyond loopback") || !strings.Contains(out, "metrics at") {
		t.Errorf("the proxy on loopback: %s", out)
	}
}
