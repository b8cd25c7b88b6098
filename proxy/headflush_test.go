package proxy_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// writeCounter is a listener whose connections count their Write calls.
type writeCounter struct {
	net.Listener
	mu     sync.Mutex
	writes int
}

func (l *writeCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c, l: l}, nil
}

func (l *writeCounter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

type countedConn struct {
	net.Conn
	l *writeCounter
}

func (c *countedConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes++
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

// TestJSONHeadAndBodyInOneWrite: the head and the body of a JSON response
// of known length that the upstream sent together reach the client in one
// write of the proxy's, as the upstream wrote them (and as the proxy's own
// forwarding flushes them). With ReverseProxy's head flush at once
// (FlushInterval -1) a goroutine started per exchange flushed the head
// alone whenever it ran before the body was forwarded, nearly always: 40
// exchanges took 80 writes. The head flush delay is an hour here, so that
// no descheduled handler sends a head alone.
func TestJSONHeadAndBodyInOneWrite(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 900) + `"}],"isError":false}}`
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = io.WriteString(w, answer)
	}))
	u, _ := url.Parse(up)
	sink := &memSink{}
	p, err := proxy.New(proxy.Options{Upstream: u, Records: sink, HeadFlushDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(p)
	ln := &writeCounter{Listener: ts.Listener}
	ts.Listener = ln
	ts.Start()
	defer ts.Close()
	c := ts.Client()
	const n = 40
	for i := range n {
		status, _, body, err := post(t, c, ts.URL+"/mcp", callBody(i+1, "echo", `{"text":"hi"}`), modernHeaders("echo"))
		if err != nil || status != 200 || string(body) != answer {
			t.Fatalf("exchange %d: status %d, err %v, body %q", i, status, err, body)
		}
	}
	if got := ln.count(); got != n {
		t.Errorf("%d writes to the client for %d responses, want one each (head and body together)", got, n)
	}
}

// TestLateBodyHeadFirst: a response of known length whose upstream flushed
// the head and holds the body still has its head reach the client before
// the body (after the head flush delay): the client's Do returns while
// the upstream waits for it to, and the body follows whole.
func TestLateBodyHeadFirst(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}`
	release := make(chan struct{})
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, answer)
	}))
	pu, _, sink, stop := startProxy(t, up, proxy.Options{})
	type result struct {
		resp *http.Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, pu, strings.NewReader(callBody(1, "echo", `{}`)))
		for k, v := range modernHeaders("echo") {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		got <- result{resp, err}
	}()
	var r result
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("the head did not reach the client while the upstream held the body")
	}
	close(release)
	if r.err != nil {
		t.Fatal(r.err)
	}
	body, err := io.ReadAll(r.resp.Body)
	r.resp.Body.Close()
	if err != nil || string(body) != answer || r.resp.StatusCode != 200 {
		t.Fatalf("status %d, body %q, err %v", r.resp.StatusCode, body, err)
	}
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 1 || recs[0].Status != 200 || recs[0].ResponseBytes != int64(len(answer)) || recs[0].JSONRPC.ID.String() != "1" {
		t.Fatalf("records %+v", recs)
	}
}
