package retry_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestNetworkDecisionWordsSameForOneEvent: a server that closes the
// connection without answering reaches the client as EOF (it had read the
// request) or as "connection reset by peer" (it closed with the request
// unread, or reset it), by timing. The decision quoted Go's error, with the
// URL and its port: "the connection failed (Post \"http://127.0.0.1:40355/…\":
// EOF)" in one matrix run and another text in the next. Both timings are
// forced here on real sockets: the decision's words must be the same, and
// the raw text stays in the network details.
func TestNetworkDecisionWordsSameForOneEvent(t *testing.T) {
	closeAfterRead := func(c net.Conn) {
		r := bufio.NewReader(c)
		if req, err := http.ReadRequest(r); err == nil {
			_, _ = io.Copy(io.Discard, req.Body)
		}
		_ = c.Close()
	}
	resetUnread := func(c net.Conn) {
		_ = c.(*net.TCPConn).SetLinger(0) // close sends RST
		_ = c.Close()
	}
	var reasons, raws []string
	for _, serve := range []func(net.Conn){closeAfterRead, resetUnread} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err == nil {
				serve(c)
			}
		}()
		cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		_, err = cl.Post("http://"+ln.Addr().String()+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_item"}}`))
		_ = ln.Close()
		if err == nil {
			t.Fatal("the server answered")
		}
		res, _ := classify.Classify(&classify.Exchange{Err: err, RequestSent: true, ProtocolVersion: classify.Protocol2026})
		if res.Network() == nil || res.Network().Cause != classify.NetClosed {
			t.Fatalf("%v: network details %+v, want cause %q", err, res.Network(), classify.NetClosed)
		}
		d := retry.DefaultPolicy().Decide(res, retry.Facts{Safety: retry.Unsafe, Protocol: classify.Protocol2026})
		reasons, raws = append(reasons, d.Reason), append(raws, res.Network().Error)
	}
	if raws[0] == raws[1] {
		t.Fatalf("both timings gave %q: the test did not force two errors", raws[0])
	}
	if reasons[0] != reasons[1] {
		t.Errorf("one event, two decisions:\n%s\n%s", reasons[0], reasons[1])
	}
	for _, bad := range []string{"EOF", "reset by peer", "127.0.0.1", "Post "} {
		if strings.Contains(reasons[0], bad) {
			t.Errorf("decision quotes %q: %s", bad, reasons[0])
		}
	}
	if want := "the server closed or reset the connection"; !strings.Contains(reasons[0], want) {
		t.Errorf("decision %q does not say %q", reasons[0], want)
	}
}
