package main

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// onlyRecords fails unless every line of out is a JSON object (a record):
// with --record - (or serve --log -), stdout is a record stream a reader
// such as mcpdiag report or jq takes whole.
func onlyRecords(t *testing.T, what, out string) {
	t.Helper()
	n := 0
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("%s: stdout line %d is not a record: %q", what, i+1, line)
			continue
		}
		n++
	}
	if n == 0 {
		t.Errorf("%s: no record on stdout", what)
	}
}

// Records on stdout are all stdout holds: call's report, matrix's table and
// serve's banner go to stderr when --record - / --log - takes stdout.
func TestRecordsOnStdoutAreRecordsOnly(t *testing.T) {
	t.Run("call", func(t *testing.T) {
		u, _ := startServe(t, serveOptions{seed: 1})
		var stdout, stderr bytes.Buffer
		code := run([]string{"call", u, "echo", "--args", `{"text":"hi"}`, "--record", "-"}, strings.NewReader(""), &stdout, &stderr)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		onlyRecords(t, "call --record -", stdout.String())
		if !regexp.MustCompile(`record: +call `).MatchString(stderr.String()) {
			t.Errorf("the report is not on stderr: %q", stderr.String())
		}
	})
	t.Run("matrix", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := run([]string{"matrix", "--scenarios", "baseline", "--protocol", "2025-11-25", "--record", "-"}, strings.NewReader(""), &stdout, &stderr)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		onlyRecords(t, "matrix --record -", stdout.String())
		if !strings.Contains(stderr.String(), "Finished in") {
			t.Errorf("the table is not on stderr: %q", stderr.String())
		}
	})
	t.Run("serve", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stdout, stderr := &syncBuffer{}, &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			done <- runServe(ctx, stdout, stderr, serveOptions{addr: "127.0.0.1:0", logLimit: 100, seed: 1, logFile: "-"}, true)
		}()
		var u string
		for i := 0; u == ""; i++ {
			for _, s := range []string{stdout.String(), stderr.String()} {
				if m := regexp.MustCompile(`mcpdiag serve: (http://\S+/mcp)`).FindStringSubmatch(s); m != nil {
					u = m[1]
				}
			}
			if i == 500 {
				t.Fatalf("no URL: %q %q", stdout.String(), stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		cancel()
		if err := testwait.Recv(t, done, "serve to end after its context was cancelled"); err != nil {
			t.Fatalf("serve: %v", err)
		}
		onlyRecords(t, "serve --log -", stdout.String())
		if !strings.Contains(stderr.String(), "mcpdiag serve: stopped") {
			t.Errorf("the banner is not on stderr: %q", stderr.String())
		}
	})
}
