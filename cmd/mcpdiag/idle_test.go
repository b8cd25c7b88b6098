package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// closedAfter waits on an open connection until the server closes it and
// returns how long that took; a connection still open at testwait.Bound
// fails (a bound against a hang: a timeout that never fires).
func closedAfter(t *testing.T, conn net.Conn, br *bufio.Reader) time.Duration {
	t.Helper()
	start := time.Now()
	limit := testwait.Bound
	_ = conn.SetReadDeadline(start.Add(limit))
	_, err := br.ReadByte()
	d := time.Since(start)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		t.Errorf("the connection was still open after %s", limit)
	case err == nil:
		t.Errorf("the server sent unexpected bytes")
	}
	return d
}

// checkTimeouts: with --idle-timeout and --read-header-timeout set to
// idle, keep-alive connections left idle after a response and connections
// that never send a request are closed after about that time; a slow SSE
// stream that keeps sending, for several times that long, is not cut.
func checkTimeouts(t *testing.T, base string, idle time.Duration) {
	t.Helper()
	u, _ := url.Parse(base)
	const conns = 20
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			if i%2 == 0 {
				// A keep-alive connection that had one exchange.
				if _, err := io.WriteString(conn, "GET "+u.Path+" HTTP/1.1\r\nHost: "+u.Host+"\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
					t.Error(err)
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.Close {
					t.Errorf("the response closed the connection itself (status %d); nothing left to time out", resp.StatusCode)
					return
				}
			}
			// Odd ones never send a byte: the header timeout closes them.
			if d := closedAfter(t, conn, br); d < idle/2 {
				t.Errorf("closed after %s, before the %s timeout", d, idle)
			}
		})
	}
	// A slow stream: 8 progress events 150 ms apart, 1.2 s in all.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"steps":8,"intervalMs":150},"_meta":{"progressToken":1,` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`
	req, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "slow")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Count(string(got), "notifications/progress") != 8 || !strings.Contains(string(got), `"result"`) {
		t.Errorf("the slow stream was cut after %s (%v): %d progress events, result %v", time.Since(start), err,
			strings.Count(string(got), "notifications/progress"), strings.Contains(string(got), `"result"`))
	}
	if d := time.Since(start); d < 2*idle {
		t.Errorf("the stream took %s; it must outlast the idle timeout several times for the test to mean anything", d)
	}
	testwait.Wait(t, &wg, "the 20 connections to be closed by the idle and header timeouts")
}

func TestIdleConnectionsClosedServeBinary(t *testing.T) {
	bin := testBinary(t)
	const idle = 400 * time.Millisecond
	var stdout syncBuffer
	p := startProcess(t, &stdout, bin, "serve", "--addr", "127.0.0.1:0", "--idle-timeout", idle.String(), "--read-header-timeout", idle.String())
	deadline := time.Now().Add(testwait.Bound)
	var u string
	for u == "" && time.Now().Before(deadline) {
		if first, _, ok := strings.Cut(stdout.String(), "\n"); ok {
			u = strings.TrimPrefix(first, "mcpdiag serve: ")
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	checkTimeouts(t, u, idle)
	if code := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

func TestIdleConnectionsClosedProxyBinary(t *testing.T) {
	bin := testBinary(t)
	const idle = 400 * time.Millisecond
	up := httptest.NewServer(fixture.New(fixture.Options{}))
	defer up.Close()
	p := startProcess(t, nil, bin, "proxy", "--upstream", up.URL+"/mcp", "--listen", "127.0.0.1:0",
		"--idle-timeout", idle.String(), "--read-header-timeout", idle.String())
	u := p.waitLine(t, proxyURLLine)[1]
	checkTimeouts(t, u, idle)
	if code := p.stop(t, os.Interrupt); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}
