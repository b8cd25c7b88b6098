package main

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	"github.com/mcpdiag/mcpdiag/report"
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
			reportCutByShutdown(t, path, 2)
		})
	}
}

// reportCutByShutdown holds `mcpdiag report` and `report --json` of a
// record file whose exchanges the recording proxy's or server's own
// shutdown cut (n of them, flagged SD, nothing else failed): they are
// counted apart as cut by shutdown, not as failures, the text says so on
// the header and the section's line, and report exits 3 (the capture was
// incomplete, as for an interrupted run) with one line on stderr saying
// why. Before, report counted them failures ("2 failed (100.0%)") and
// exited 0.
func reportCutByShutdown(t *testing.T, path string, n int64) {
	t.Helper()
	recs := recordtest.ReadFile(t, path)
	var sd int64
	for _, r := range recs {
		if r.Kind == record.KindExchange && r.Flags.Has(record.FlagSD) {
			sd++
		}
	}
	if sd != n {
		t.Fatalf("%d exchanges flagged SD in %s, want %d: not the file this check is about", sd, path, n)
	}
	wantErr := fmt.Sprintf("mcpdiag: %d record(s) of exchanges the recording proxy's or server's own shutdown cut (flag SD): the capture was incomplete; they are counted apart, not as failures\n", n)
	for _, mode := range []string{"text", "json"} {
		args := []string{"report", path}
		if mode == "json" {
			args = []string{"report", "--json", path}
		}
		var stdout, stderr bytes.Buffer
		if code := run(args, strings.NewReader(""), &stdout, &stderr); code != ExitReportIncomplete {
			t.Errorf("report %s: exit %d, want %d; stderr:\n%s", mode, code, ExitReportIncomplete, stderr.String())
		}
		if stderr.String() != wantErr {
			t.Errorf("report %s: stderr %q, want %q", mode, stderr.String(), wantErr)
		}
		if mode == "text" {
			for _, line := range []string{
				fmt.Sprintf("  incomplete: %d %s of exchanges the recording proxy's or server's own shutdown cut (flag SD): not judged", n, map[bool]string{true: "record is", false: "records are"}[n == 1]),
				fmt.Sprintf(", 0 failed (0.0%%), %d cut by shutdown (", n),
			} {
				if !strings.Contains(stdout.String(), line) {
					t.Errorf("the text report lacks %q:\n%s", line, stdout.String())
				}
			}
			continue
		}
		var s report.Summary
		if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
			t.Fatalf("report --json: %v\n%s", err, stdout.String())
		}
		if s.CutByShutdown != n || s.Exchanges.CutByShutdown != n || s.Exchanges.Failures != 0 || s.Exchanges.Latency.Samples != s.Exchanges.Total-n {
			t.Errorf("report --json: cutByShutdown %d, exchanges: cutByShutdown %d, failures %d, latency samples %d of %d; want %d cut, 0 failures, the cut ones no samples\n%s",
				s.CutByShutdown, s.Exchanges.CutByShutdown, s.Exchanges.Failures, s.Exchanges.Latency.Samples, s.Exchanges.Total, n, stdout.String())
		}
		var cut int64
		for _, c := range s.Exchanges.ByOutcome {
			cut += c.CutByShutdown
		}
		if cut != n {
			t.Errorf("report --json: the outcomes count %d cut by shutdown, want %d", cut, n)
		}
	}
}
