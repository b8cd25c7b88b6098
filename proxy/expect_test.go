package proxy_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// expectUpstream is a listener on 127.0.0.1 that reads each request's headers
// and then does what answer says with the connection; it reports the body
// bytes it received after the headers.
func expectUpstream(t *testing.T, answer func(c net.Conn, br *bufio.Reader)) (string, <-chan int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan int, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				answer(c, br)
				_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				n, _ := io.Copy(io.Discard, br)
				got <- int(n) + br.Buffered()
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp", got
}

// TestExpectContinueRequestSent: a request with Expect: 100-continue whose
// upstream closes the connection after the headers (no 100 Continue, no
// answer) never had its body sent: the record says requestSent false (the
// server cannot have processed it), where it said true (net/http reports
// such a request written without error). An upstream that takes the body
// without a 100 Continue (net/http sends it after its wait) got it: true.
func TestExpectContinueRequestSent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  func(c net.Conn, br *bufio.Reader)
		sent    bool
		bodyGot bool
		outcome classify.Outcome
		reason  string
	}{
		{"closed after the headers", func(c net.Conn, _ *bufio.Reader) { c.(*net.TCPConn).CloseWrite() }, false, false, classify.NetworkError,
			"no HTTP response; the request was not fully sent: EOF"},
		{"body taken without 100 Continue, then closed", func(c net.Conn, br *bufio.Reader) {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, _ = br.Peek(1) // the body comes after the client's wait
			c.(*net.TCPConn).CloseWrite()
		}, true, true, classify.NetworkError, "no HTTP response after the request was sent (the server may have processed it): EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, got := expectUpstream(t, tc.answer)
			u, _, sink, stop := startProxy(t, up, proxy.Options{})
			body := callBody(5, "delete_item", `{"id":"x"}`)
			req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Expect", "100-continue")
			tr := &http.Transport{ExpectContinueTimeout: time.Second}
			defer tr.CloseIdleConnections()
			if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			var n int
			select {
			case n = <-got:
			case <-time.After(testwait.Bound):
				t.Fatal("the upstream got no request")
			}
			stop()
			if (n == len(body)) != tc.bodyGot || !tc.bodyGot && n != 0 {
				t.Fatalf("the upstream got %d body bytes (the body is %d), want the body: %v", n, len(body), tc.bodyGot)
			}
			recs := sink.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			r := recs[0]
			if r.Outcome != tc.outcome || r.Network == nil || r.Network.RequestSent != tc.sent {
				t.Errorf("record %s, network %+v: want %s, requestSent %v (the upstream got %d body bytes)", r.Outcome, r.Network, tc.outcome, tc.sent, n)
			}
			if r.Reason != tc.reason {
				t.Errorf("reason %q, want %q", r.Reason, tc.reason)
			}
		})
	}
}
