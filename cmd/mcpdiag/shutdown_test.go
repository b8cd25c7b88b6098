package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// endless is an upstream that never finishes an answer; hung receives once
// for each POST to /hang the upstream has (its body read).
type endless struct {
	*httptest.Server
	hung chan struct{}
}

// endlessUpstream answers a POST with an SSE stream that sends a progress
// notification every 20 ms until the request ends, and a POST to /hang
// with nothing at all.
func endlessUpstream(t *testing.T) *endless {
	hung := make(chan struct{}, 64)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body: net/http notices a closed connection (and ends
		// the request's context) only once the body was read.
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/hang" {
			hung <- struct{}{}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; ; i++ {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":%d}}\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(up.Close)
	return &endless{Server: up, hung: hung}
}

// openStreams starts one streaming POST to u and one to u's /hang, and
// returns once the stream has delivered its first event and the upstream
// has the /hang request (so both are open exchanges of the proxy).
func openStreams(t *testing.T, up *endless, u string) {
	t.Helper()
	first := make(chan struct{})
	for _, target := range []string{u, strings.TrimSuffix(u, "/mcp") + "/hang"} {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			if _, err := br.ReadString('\n'); err == nil {
				close(first)
			}
			for {
				if _, err := br.ReadString('\n'); err != nil {
					return
				}
			}
		}()
	}
	testwait.Recv(t, first, "the stream's first event through the proxy")
	testwait.Recv(t, up.hung, "the /hang request to reach the upstream through the proxy")
}

// shutdownRecords reads the record file: the two exchanges, each of which
// must say that the proxy's shutdown cut it, not that its client left.
func shutdownRecords(t *testing.T, path string) {
	t.Helper()
	recs := recordtest.ReadFile(t, path)
	for _, r := range recs {
		if !strings.Contains(r.Note, "the proxy shut down") || strings.Contains(r.Note, "(DC)") || !r.Flags.Has(record.FlagSD) || r.Flags.Has(record.FlagDC) || !r.Flags.Pending() {
			t.Errorf("%s %s: note %q, reason %q, flags %v: want the shutdown named as the cut", r.URL, r.Outcome, r.Note, r.Reason, r.Flags)
		}
	}
	if len(recs) != 2 {
		t.Errorf("%d records, want 2", len(recs))
	}
}

var shuttingDown = regexp.MustCompile(`^mcpdiag proxy: interrupt: shutting down; no new connections, (\d+) open exchanges get up to`)

// TestProxyShutdownBinary: SIGINT makes the proxy say it is shutting down;
// open exchanges get --shutdown-timeout, then are cut, and their records say
// the shutdown cut them (exit 0). A second SIGINT stops it at once (exit
// 130), with the same records. Which of the two cut them is what the proxy
// says (the timeout's line or the second signal's), not how long it took.
func TestProxyShutdownBinary(t *testing.T) {
	bin := testBinary(t)
	up := endlessUpstream(t)
	for _, tc := range []struct {
		name    string
		timeout string
		second  bool
		code    int
		cut     *regexp.Regexp // the line that says what cut them
	}{
		{"timeout cuts the open exchanges", "300ms", false, 0, regexp.MustCompile(`(?m)^mcpdiag proxy: 300ms passed; cutting (\d+) open exchanges$`)},
		{"a second SIGINT stops at once", "60s", true, 130, regexp.MustCompile(`(?m)^mcpdiag proxy: interrupt again: stopping now; cutting (\d+) open exchanges$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.jsonl")
			p := startProcess(t, nil, bin, "proxy", "--upstream", up.URL+"/mcp", "--listen", "127.0.0.1:0", "--record", path, "--shutdown-timeout", tc.timeout)
			u := p.waitLine(t, proxyURLLine)[1]
			openStreams(t, up, u)
			_ = p.cmd.Process.Signal(syscall.SIGINT)
			if m := p.waitLine(t, shuttingDown); m[1] != "2" {
				t.Errorf("the shutdown line counts %s open exchanges, want 2", m[1])
			}
			if tc.second {
				_ = p.cmd.Process.Signal(syscall.SIGINT)
			}
			if code := p.stop(t, nil); code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, p.stderr.String())
			}
			if m := tc.cut.FindStringSubmatch(p.stderr.String()); m == nil || m[1] != "2" {
				t.Errorf("no line %s counting 2 open exchanges; stderr:\n%s", tc.cut, p.stderr.String())
			}
			if other := regexp.MustCompile(`(?m)^mcpdiag proxy: (\S+ passed|\S+ again: stopping now); cutting `).FindAllString(p.stderr.String(), -1); len(other) != 1 {
				t.Errorf("want one line saying what cut the open exchanges, got %q; stderr:\n%s", other, p.stderr.String())
			}
			shutdownRecords(t, path)
		})
	}
}
