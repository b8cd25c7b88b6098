package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// rawExchange sends raw request bytes to the listener at u and returns the
// status line of the answer (or "" when the connection closed without
// one). With closeAfter the client closes its side once the bytes are sent.
func rawExchange(t *testing.T, u string, raw string, closeAfter bool) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, strings.ReplaceAll(raw, "HOST", pu.Host)); err != nil {
		t.Fatal(err)
	}
	if closeAfter {
		return ""
	}
	status, _ := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(status)
}

const malformedChunked = "POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
	"Transfer-Encoding: chunked\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n"

// TestMalformedChunkedBody: a request whose chunked framing is broken gets
// 400 from the proxy, as from the server directly (net/http, go-sdk), never
// 200 with an empty body; the upstream receives nothing, and the record
// says the proxy answered. A client that leaves in the middle of its body is
// a disconnect, not a malformed body.
func TestMalformedChunkedBody(t *testing.T) {
	var reached atomic.Int32
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		fixture.New(fixture.Options{}).ServeHTTP(w, r)
	}))
	direct := rawExchange(t, up, malformedChunked, false)
	if !strings.HasPrefix(direct, "HTTP/1.1 400 ") {
		t.Fatalf("directly: %q, want 400", direct)
	}
	reached.Store(0)
	u, p, sink, stop := startProxy(t, up, proxy.Options{Bodies: proxy.BodiesAll})
	if got := rawExchange(t, u, malformedChunked, false); got != direct {
		t.Errorf("through the proxy: %q, directly: %q", got, direct)
	}
	waitExchanges(t, p, 1)
	if n := reached.Load(); n != 0 {
		t.Errorf("the upstream received %d requests; a malformed body is not forwarded", n)
	}
	// A body cut by the client: it says 100 bytes and sends 5, then leaves.
	rawExchange(t, u, "POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n{\"jso", true)
	waitExchanges(t, p, 2)
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	bad, cut := recs[0], recs[1]
	if bad.Status != 400 || bad.Outcome != classify.HTTPError || !strings.Contains(bad.Note, "answered 400 itself") || strings.Contains(bad.Note, "(DC)") ||
		bad.ResponseBody == nil || !strings.Contains(bad.ResponseBody.Text, "invalid byte in chunk length") {
		t.Errorf("malformed body record: %d %s note %q", bad.Status, bad.Outcome, bad.Note)
	}
	if cut.Status == 400 || !strings.Contains(cut.Note, "client disconnected (DC)") {
		t.Errorf("cut body record: %d %s note %q", cut.Status, cut.Outcome, cut.Note)
	}
}

// TestGETStreamLeftByClient: a GET stream that the client leaves is
// recorded with the DC note, whether the upstream was sending, had sent
// only its headers, or had not answered yet, in every body mode.
func TestGETStreamLeftByClient(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("mode") {
		case "silent":
			<-r.Context().Done()
			return
		case "headers":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; r.Context().Err() == nil; i++ {
			fmt.Fprintf(w, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%d}}\n\n", i, i)
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}))
	for _, bodies := range []proxy.BodyMode{proxy.BodiesNone, proxy.BodiesErrors, proxy.BodiesFull} {
		u, p, sink, stop := startProxy(t, up, proxy.Options{Bodies: bodies})
		modes := []string{"sending", "headers", "silent"}
		for i, mode := range modes {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u+"?mode="+mode, nil)
			req.Header.Set("Accept", "text/event-stream")
			done := make(chan struct{})
			first := make(chan error, 1) // sending: the client's read of the first event's first line
			go func() {
				defer close(done)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					first <- err
					return
				}
				defer resp.Body.Close()
				if mode == "sending" {
					_, err := bufio.NewReader(resp.Body).ReadString('\n')
					first <- err
				}
				<-ctx.Done()
			}()
			time.Sleep(100 * time.Millisecond)
			// The client leaves only once the proxy has its request: on a
			// loaded machine 100 ms may pass before it arrives, and a
			// request cancelled before it is no exchange at all.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if st := p.Stats(); st.Exchanges+st.InFlight > int64(i) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: the request never reached the proxy", mode)
				}
			}
			if mode == "sending" {
				// The client leaves once it has an event: the record's
				// arrivals are of the events forwarded before it left, and
				// on a loaded machine none may have been by then (0 SSE
				// arrivals, seen once in idle18's run of the whole tree).
				if err := testwait.Recv(t, first, "sending: the client's first event"); err != nil {
					t.Fatalf("sending: the client's first event: %v", err)
				}
			}
			cancel()
			<-done
		}
		waitExchanges(t, p, int64(len(modes)))
		stop()
		byMode := map[string]*record.Record{}
		for _, r := range sink.exchanges(t) {
			byMode[strings.TrimPrefix(r.URL[strings.Index(r.URL, "?"):], "?mode=")] = r
		}
		for _, mode := range modes {
			r := byMode[mode]
			if r == nil || !strings.Contains(r.Note, "client disconnected (DC)") || !r.Flags.Has(record.FlagDC) || r.HTTPMethod != http.MethodGet {
				t.Fatalf("%s, bodies %s: record %+v", mode, bodies, r)
			}
			// The arrival times are a typed member, only in full records
			// of a stream that sent events: offsets grow, within the body.
			if (bodies == proxy.BodiesFull && mode == "sending") != (len(r.SSEArrivals) > 0) {
				t.Errorf("%s, bodies %s: %d SSE arrivals", mode, bodies, len(r.SSEArrivals))
			}
			for i, a := range r.SSEArrivals {
				if a.End <= 0 || a.End > r.ResponseBytes || i > 0 && (a.End <= r.SSEArrivals[i-1].End || a.At < r.SSEArrivals[i-1].At) {
					t.Errorf("%s: arrival %d %+v after %v, of %d bytes", mode, i, a, r.SSEArrivals[:i], r.ResponseBytes)
				}
			}
			if strings.Contains(r.Note, "sseArrivals") {
				t.Errorf("%s: the arrivals are in the note: %q", mode, r.Note)
			}
		}
	}
}

// TestCloseDelimitedEmptyBody: an upstream that frames an empty response by
// closing the connection (no Content-Length, no chunking) reaches the client
// with the same headers as directly: the proxy must not let net/http invent
// a Content-Length: 0 (the three-views test saw it on an empty SSE stream,
// depending on whether the upstream's close came before or after the body
// read ended cleanly).
func TestCloseDelimitedEmptyBody(t *testing.T) {
	for _, ct := range []string{"text/event-stream", "application/json"} {
		t.Run(ct, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						c.SetDeadline(time.Now().Add(10 * time.Second))
						req, err := http.ReadRequest(bufio.NewReader(c))
						if err != nil {
							return
						}
						io.Copy(io.Discard, req.Body) // read whole: the close is clean
						io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: "+ct+"\r\nConnection: close\r\n\r\n")
					}()
				}
			}()
			u, _, _, _ := startProxy(t, "http://"+ln.Addr().String()+"/mcp", proxy.Options{})
			for i := range 200 { // every time the same: net/http's flush timer races the end of the body
				_, hdr, body, err := post(t, http.DefaultClient, u, callBody(1, "echo", `{}`), modernHeaders("echo"))
				if err != nil || len(body) != 0 {
					t.Fatalf("#%d: body %q, err %v", i, body, err)
				}
				if cl, ok := hdr["Content-Length"]; ok {
					t.Fatalf("#%d: the proxy added Content-Length %v to a close-delimited empty body", i, cl)
				}
			}
		})
	}
}
