package classify_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
)

// TestNetCauseOf: errors as net/http returns them (a *url.Error around a
// *net.OpError around the system's error) get one cause per event, and a
// real refused dial and a real read deadline get theirs.
func TestNetCauseOf(t *testing.T) {
	op := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/mcp", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, refused := net.Dial("tcp", addr)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	_ = a.SetReadDeadline(time.Now())
	_, deadline := a.Read(make([]byte, 1))
	for _, c := range []struct {
		err  error
		want classify.NetCause
	}{
		{nil, ""},
		{&url.Error{Op: "Post", URL: "http://127.0.0.1:40355/mcp", Err: io.EOF}, classify.NetClosed},
		{fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), classify.NetClosed},
		{op(syscall.ECONNRESET), classify.NetClosed},
		{op(syscall.EPIPE), classify.NetClosed},
		{refused, classify.NetRefused},
		{deadline, classify.NetTimeout},
		{&url.Error{Op: "Post", URL: "http://x/", Err: context.DeadlineExceeded}, classify.NetTimeout},
		{&url.Error{Op: "Post", URL: "http://x/", Err: context.Canceled}, classify.NetCancelled},
		{&url.Error{Op: "Post", URL: "http://x.invalid/", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}, classify.NetUnreachable},
		{fmt.Errorf("tls: handshake failure"), classify.NetOther},
	} {
		if got := classify.NetCauseOf(c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}
