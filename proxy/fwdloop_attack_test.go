package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// crosstalkUpstream answers each tools/call with a body made of its id's
// token only: /sse four events of 16 KiB, each written in two halves with
// a flush between (an event split across reads), the last without its
// final newline; /json a 40 KiB JSON result.
func crosstalkUpstream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID int `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		path := "/json"
		if strings.HasSuffix(r.URL.Path, "/sse") {
			path = "/sse"
		}
		body := crosstalkBody(path, req.ID)
		if path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			for len(body) > 0 {
				k := min(len(body), 8<<10+13)
				w.Write(body[:k])
				f.Flush()
				body = body[k:]
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
}

// crosstalkBody is the response crosstalkUpstream sends for id at path.
func crosstalkBody(path string, id int) []byte {
	tok := fmt.Sprintf("<%06d>", id)
	result := func(n int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, strings.Repeat(tok, n))
	}
	if path == "/sse" {
		var b bytes.Buffer
		for i := range 3 {
			fmt.Fprintf(&b, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%d,\"progress\":%d,\"message\":\"%s\"}}\n\n", id, i, strings.Repeat(tok, 2000))
		}
		fmt.Fprintf(&b, "event: message\ndata: %s\n", result(2000)) // no final blank line
		return b.Bytes()
	}
	return []byte(result(5000))
}

// TestForwardLoopNoCrosstalk: many concurrent exchanges through the
// forwarding loop, each body made of its own token: every client gets its
// own bytes exactly, and every record holds its own exchange's body
// (whole under a large limit, its prefix under the default one), no byte
// of another's (pooled chunks kept by one record and reused by another
// would show here; run with -race).
func TestForwardLoopNoCrosstalk(t *testing.T) {
	up := serve(t, crosstalkUpstream())
	for _, limit := range []int{256 << 10, 0, 3000} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			base, _, sink, _ := startProxy(t, up+"/", proxy.Options{Bodies: proxy.BodiesFull, BodyLimit: limit})
			base = strings.TrimSuffix(base, "/")
			const clients, each = 16, 12
			var wg sync.WaitGroup
			errs := make(chan error, clients*each)
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					hc := &http.Client{Transport: &http.Transport{}}
					defer hc.CloseIdleConnections()
					for i := range each {
						id := c*each + i + 1
						path := []string{"/sse", "/json"}[id%2]
						_, _, got, err := post(t, hc, base+path, callBody(id, "echo", `{}`), nil)
						if err != nil || !bytes.Equal(got, crosstalkBody(path, id)) {
							errs <- fmt.Errorf("id %d %s: %d bytes, %v", id, path, len(got), err)
						}
					}
				}()
			}
			testwait.Wait(t, &wg, "the 16 clients' calls through the proxy")
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			waitRecords(t, sink, clients*each)
			seen := map[int]bool{}
			for _, r := range sink.exchanges(t) {
				if r.ResponseBody == nil {
					t.Errorf("a record without a response body: %s %s", r.Outcome, r.Reason)
					continue
				}
				text := unmarked(r.ResponseBody)
				// The id: a JSON response's, or the progress token of the
				// stream's first event (a body cut at 3,000 bytes keeps no
				// token of the text, one unfinished token to the cut).
				var id int
				if i := strings.Index(text, `"progressToken":`); i >= 0 {
					fmt.Sscanf(text[i+16:], "%d", &id)
				} else if i := strings.Index(text, `"id":`); i >= 0 {
					fmt.Sscanf(text[i+5:], "%d", &id)
				} else {
					t.Errorf("a record's body holds no id: %.80q", text)
					continue
				}
				path := "/json"
				if strings.HasPrefix(text, "event:") {
					path = "/sse"
				}
				want := string(crosstalkBody(path, id))
				if limit == 3000 && !r.ResponseBody.Truncated {
					t.Errorf("id %d: a %d-byte body recorded whole under a 3,000-byte limit", id, len(want))
				}
				if r.ResponseBody.Truncated {
					if !strings.HasPrefix(want, text) || len(text) == 0 {
						t.Errorf("id %d: the truncated record's %d bytes are not the body's prefix", id, len(text))
					}
				} else if text != want {
					t.Errorf("id %d: the record's body (%d bytes) is not the exchange's (%d)", id, len(text), len(want))
				}
				if r.ResponseBytes != int64(len(want)) {
					t.Errorf("id %d: responseBytes %d, want %d", id, r.ResponseBytes, len(want))
				}
				if seen[id] {
					t.Errorf("id %d recorded twice", id)
				}
				seen[id] = true
			}
			if len(seen) != clients*each {
				t.Errorf("%d exchanges recorded, want %d", len(seen), clients*each)
			}
		})
	}
}

// TestForwardLoopClientGoesAway: a client that reads the first event of a
// stream and closes its connection: the forwarding loop and ReverseProxy's
// copy (a middleware in front) give the same record, and the upstream's
// request is cancelled (its handler sees its context done).
func TestForwardLoopClientGoesAway(t *testing.T) {
	cancelled := make(chan struct{}, 4)
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				cancelled <- struct{}{}
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := io.WriteString(w, ": keepalive "+strings.Repeat("k", 4000)+"\n\n"); err != nil {
					cancelled <- struct{}{}
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}))
	var views []string
	for _, mw := range []func(http.Handler) http.Handler{nil, passThrough} {
		base, _, sink, _ := startProxy(t, up+"/mcp", proxy.Options{Bodies: proxy.BodiesAll, Middleware: mw})
		addr := strings.TrimPrefix(base, "http://")
		addr = addr[:strings.IndexByte(addr, '/')]
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		body := callBody(1, "echo", `{}`)
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
		br := bufio.NewReader(conn)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(line, "data:") {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		conn.Close()
		select {
		case <-cancelled:
		case <-time.After(testwait.Bound):
			t.Fatal("the upstream's request was not cancelled")
		}
		waitRecords(t, sink, 1)
		r := sink.exchanges(t)[0]
		views = append(views, fmt.Sprintf("outcome %s layer %s flags %v reason %q", r.Outcome, r.Layer, r.Flags, r.Reason))
	}
	if views[0] != views[1] {
		t.Errorf("the records differ:\nforwarding %s\ncopying    %s", views[0], views[1])
	}
	t.Log(views[0])
}

// panickyWriter passes writes on until limit bytes, then panics.
type panickyWriter struct {
	http.ResponseWriter
	n, limit int
}

func (w *panickyWriter) Write(b []byte) (int, error) {
	if w.n += len(b); w.n > w.limit {
		panic(http.ErrAbortHandler)
	}
	return w.ResponseWriter.Write(b)
}

func (w *panickyWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// TestForwardLoopPanickingClientWrite: a server whose response writer
// panics part-way through a streamed body (a library user's wrapper around
// the proxy) gets the same record from the forwarding loop as from
// ReverseProxy's copy, and the proxy serves the next exchange.
func TestForwardLoopPanickingClientWrite(t *testing.T) {
	up := serve(t, crosstalkUpstream())
	var views []string
	for _, mw := range []func(http.Handler) http.Handler{nil, passThrough} {
		sink := &memSink{}
		u, _ := url.Parse(up + "/")
		p, err := proxy.New(proxy.Options{Upstream: u, Records: sink, Bodies: proxy.BodiesAll, Middleware: mw})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Has("panic") {
				w = &panickyWriter{ResponseWriter: w, limit: 20000}
			}
			p.ServeHTTP(w, r)
		}))
		base := ts.URL + u.Path
		_, _, b, err := post(t, http.DefaultClient, base+"sse?panic", callBody(3, "echo", `{}`), nil)
		if err == nil || len(b) > 20000 {
			t.Errorf("the client got %d bytes, %v: want the connection cut before 20,000", len(b), err)
		}
		_, _, b, err = post(t, http.DefaultClient, base+"sse", callBody(4, "echo", `{}`), nil)
		if err != nil || !bytes.Equal(b, crosstalkBody("/sse", 4)) {
			t.Errorf("the next exchange: %d bytes, %v", len(b), err)
		}
		waitRecords(t, sink, 2)
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p.Close(ctx)
		cancel()
		for _, r := range sink.exchanges(t) {
			if r.JSONRPC.ID.String() == "3" {
				views = append(views, fmt.Sprintf("outcome %s layer %s flags %v reason %q bytes %d", r.Outcome, r.Layer, r.Flags, r.Reason, r.ResponseBytes))
			}
		}
	}
	if len(views) != 2 || views[0] != views[1] {
		t.Errorf("the records differ:\n%q", views)
	}
	t.Log(views)
}
