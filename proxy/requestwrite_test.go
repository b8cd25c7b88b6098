package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// countingConn counts the writes the transport makes on one upstream
// connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestCompleteRequestOneWrite: a request body the proxy has read whole
// before forwarding goes upstream with its headers in one write(2), as the
// client sent it, not headers and body apart (net/http flushes the headers
// first for a body it cannot tell is in memory, golang/go#22088): one
// syscall less on each side per exchange. The upstream gets the same bytes
// either way.
func TestCompleteRequestOneWrite(t *testing.T) {
	var mu sync.Mutex
	var got [][]byte
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("upstream: reading the body: %v", err)
		}
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	}))
	var writes atomic.Int64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	}
	u, _, _, _ := startProxy(t, upstream, proxy.Options{Transport: tr})
	body := callBody(1, "search", `{"q":"`+strings.Repeat("x", 1000)+`"}`)
	for _, tc := range []struct {
		name   string
		body   io.Reader // a strings.Reader: Content-Length; a plain io.Reader: chunked
		writes int64
	}{
		{"content-length", strings.NewReader(body), 1},
		// A chunked body: net/http flushes after each chunk, then the
		// last chunk; the first write carries the headers.
		{"chunked", struct{ io.Reader }{strings.NewReader(body)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, u, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			before := writes.Load()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n := writes.Load() - before; n != tc.writes {
				t.Errorf("the request went upstream in %d writes, want %d (the headers with the body)", n, tc.writes)
			}
			mu.Lock()
			last := got[len(got)-1]
			mu.Unlock()
			if !bytes.Equal(last, []byte(body)) {
				t.Errorf("upstream got a body of %d bytes, want the client's %d", len(last), len(body))
			}
		})
	}
}
