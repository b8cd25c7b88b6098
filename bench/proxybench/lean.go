package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// leanTransport is a prototype http.RoundTripper for measuring what an idle
// stream costs with the smallest upstream leg net/http's parts allow, NOT
// a transport to ship: it writes the request (req.Write) and reads the
// response (http.ReadResponse) on the caller's goroutine, over a pooled
// connection to one host, so that a response being read holds no readLoop
// or writeLoop goroutine, no bufio.Writer and no persistConn. It does
// plain HTTP/1.1 only: no TLS, no proxy, no 1xx responses (a 100 Continue
// would be taken for the response), no Expect, no request retries, no
// HTTP/2, no response-header timeout; a request cancelled by its context
// closes the connection (context.AfterFunc: no goroutine while it waits).
type leanTransport struct {
	addr   string // host:port of the upstream
	rbuf   int    // the size of each connection's read buffer
	mu     sync.Mutex
	idle   []*leanConn
	max    int
	dialer net.Dialer
}

// leanConn is one upstream connection and its read buffer.
type leanConn struct {
	c  net.Conn
	br *bufio.Reader
}

// leanWriters are the request writers: a request is written and flushed
// at once, so the writer goes back to the pool before the response.
var leanWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}

func (t *leanTransport) get(ctx context.Context) (*leanConn, error) {
	t.mu.Lock()
	if n := len(t.idle); n > 0 {
		lc := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		return lc, nil
	}
	t.mu.Unlock()
	c, err := t.dialer.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	return &leanConn{c: c, br: bufio.NewReaderSize(c, t.rbuf)}, nil
}

func (t *leanTransport) put(lc *leanConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle) >= t.max {
		lc.c.Close()
		return
	}
	t.idle = append(t.idle, lc)
}

// CloseIdleConnections closes the pooled connections.
func (t *leanTransport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, lc := range t.idle {
		lc.c.Close()
	}
	t.idle = nil
}

// RoundTrip sends req on a pooled connection and reads the response head;
// the body is read from the connection by whoever reads resp.Body.
func (t *leanTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" || req.URL.Host != t.addr {
		return nil, fmt.Errorf("leanTransport: only http://%s, not %s", t.addr, req.URL.Redacted())
	}
	ctx := req.Context()
	lc, err := t.get(ctx)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	closeConn := func() { once.Do(func() { lc.c.Close() }) }
	stop := context.AfterFunc(ctx, closeConn)
	fail := func(err error) (*http.Response, error) {
		stop()
		closeConn()
		if req.Body != nil {
			req.Body.Close()
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	bw := leanWriters.Get().(*bufio.Writer)
	bw.Reset(lc.c)
	// req.Write writes the origin form, Host from req.Host or the URL; it
	// closes req.Body.
	err = req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	leanWriters.Put(bw)
	if err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(lc.br, req)
	if err != nil {
		return fail(err)
	}
	reuse := !resp.Close && !req.Close
	resp.Body = &leanBody{rc: resp.Body, done: func(clean bool) {
		if stop() && clean && reuse {
			t.put(lc)
			return
		}
		closeConn()
	}}
	return resp, nil
}

// leanBody gives the connection back when the body was read to its end,
// and closes it when the body is closed before that.
type leanBody struct {
	rc   io.ReadCloser
	done func(clean bool)
	once sync.Once
}

func (b *leanBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.once.Do(func() { b.done(errors.Is(err, io.EOF)) })
	}
	return n, err
}

func (b *leanBody) Close() error {
	err := b.rc.Close()
	b.once.Do(func() { b.done(false) })
	return err
}

// newLeanTransport is a leanTransport to the host of upstream (http only),
// with an idle pool as large as mcpdiag's (MaxIdleConnsPerHost 256).
func newLeanTransport(host string, readBuffer int) *leanTransport {
	return &leanTransport{addr: host, rbuf: readBuffer, max: 256, dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
}
