package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// TestLossReportShowsPeerTextEscaped (review15): serve --log names each
// lost log line by the method and tool the client sent, and printed them
// raw: a client's method or tool name with an OSC 52 clipboard write, a
// screen clear, a carriage return and a bidi override reached serve's
// terminal as they were (serve --log /dev/full, the real binary). Every
// line of its stderr holds no raw control, bidi or invalid byte, and the
// loss still names what was sent, escaped.
func TestLossReportShowsPeerTextEscaped(t *testing.T) {
	p, u := startServeLoggingToFull(t, "--listen")
	method, tool := "tools/call"+hostile("method"), hostile("tool")
	for i, body := range []map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": method, "params": map[string]any{}},
		{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": map[string]any{}}},
	} {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp.Body.Close()
	}
	if code := p.stop(t, syscall.SIGTERM); code != 1 {
		t.Errorf("exit %d, want 1 (log lines lost)", code)
	}
	stderr := p.stderr.String()
	if got := strings.Count(stderr, "mcpdiag serve: --log: record lost: exchange "); got != 2 {
		t.Errorf("%d lost log lines named, want 2; stderr:\n%q", got, stderr)
	}
	checkVisibleOutput(t, "serve --log stderr", []byte(stderr))
	wantShown(t, "serve --log stderr", stderr, method)
	wantShown(t, "serve --log stderr", stderr, tool)
}
