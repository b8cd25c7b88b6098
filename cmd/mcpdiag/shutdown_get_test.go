package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// openGETStream opens a standalone GET event stream to u (a notification
// stream: no request awaits an answer on it) and returns once its first
// event came through the proxy.
func openGETStream(t *testing.T, u string) {
	t.Helper()
	first := make(chan struct{})
	go func() {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Accept", "text/event-stream")
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
	testwait.Recv(t, first, "the GET stream's first event through the proxy")
}

var (
	summaryLine = regexp.MustCompile(`(?m)^mcpdiag proxy: \d+ exchanges.*$`)
	cutCount    = regexp.MustCompile(`, (\d+) cut by the shutdown\)`)
	closedCount = regexp.MustCompile(`; (\d+) closed by the shutdown after their answer began`)
)

// count is the number re finds in line, 0 when it is not there.
func count(re *regexp.Regexp, line string) int {
	m := re.FindStringSubmatch(line)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestProxyAndReportAgreeOnShutdownCuts: the real proxy stopped (SIGINT,
// --shutdown-timeout) with a standalone GET event stream open, and with one
// besides a POST still waiting for its answer. The proxy's "N cut by the
// shutdown" and report's count of records cut by shutdown are the same
// number (and report exits 3 exactly when it is not 0): a GET stream the
// shutdown closed is HTTP_SUCCESS with SD, whose record holds its verdict
// (no answer was awaited on it), and both say so; the cut POST is cut in
// both. Before, the proxy said "1 cut by the shutdown" of the GET alone
// while report counted none and exited 0 (outsider21).
func TestProxyAndReportAgreeOnShutdownCuts(t *testing.T) {
	bin := testBinary(t)
	up := endlessUpstream(t)
	for _, tc := range []struct {
		name        string
		hang        bool
		cut, closed int
	}{
		{"a GET stream alone", false, 0, 1},
		{"a GET stream and a POST waiting", true, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.jsonl")
			p := startProcess(t, nil, bin, "proxy", "--upstream", up.URL+"/mcp", "--listen", "127.0.0.1:0", "--record", path, "--shutdown-timeout", "300ms")
			u := p.waitLine(t, proxyURLLine)[1]
			openGETStream(t, u)
			open := 1
			if tc.hang {
				hangOnly(t, up, u)
				open++
			}
			_ = p.cmd.Process.Signal(syscall.SIGINT)
			if m := p.waitLine(t, shuttingDown); m[1] != strconv.Itoa(open) {
				t.Errorf("the shutdown line counts %s open exchanges, want %d", m[1], open)
			}
			if code := p.stop(t, nil); code != 0 {
				t.Errorf("proxy exit %d, want 0; stderr:\n%s", code, p.stderr.String())
			}
			line := summaryLine.FindString(p.stderr.String())
			if line == "" {
				t.Fatalf("no summary line; stderr:\n%s", p.stderr.String())
			}
			proxyCut, proxyClosed := count(cutCount, line), count(closedCount, line)

			recs := recordtest.ReadFile(t, path)
			var get *record.Record
			for _, r := range recs {
				if r.HTTPMethod == http.MethodGet {
					get = r
				}
			}
			if len(recs) != open || get == nil || !get.Flags.Has(record.FlagSD) || get.Outcome != classify.HTTPSuccess || get.CutByShutdown() {
				t.Fatalf("%d records (want %d); the GET's: %+v; want HTTP_SUCCESS flagged SD, not counted cut", len(recs), open, get)
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"report", "--json", path}, strings.NewReader(""), &stdout, &stderr)
			var s report.Summary
			if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
				t.Fatalf("report --json: %v\n%s", err, stdout.String())
			}
			wantCode := 0
			if tc.cut > 0 {
				wantCode = ExitReportIncomplete
			}
			if proxyCut != tc.cut || proxyClosed != tc.closed || s.CutByShutdown != int64(proxyCut) || code != wantCode || s.Exchanges.Failures != 0 {
				t.Errorf("proxy: %d cut, %d closed by the shutdown; report: %d cut by shutdown, %d failures, exit %d (stderr %q); want %d cut and %d closed in the proxy, the same cut in report, no failure, exit %d\nproxy stderr:\n%s",
					proxyCut, proxyClosed, s.CutByShutdown, s.Exchanges.Failures, code, stderr.String(), tc.cut, tc.closed, wantCode, p.stderr.String())
			}
		})
	}
}

// hangOnly starts one POST to u's /hang and returns once the upstream has
// it (an open exchange of the proxy waiting for its answer).
func hangOnly(t *testing.T, up *endless, u string) {
	t.Helper()
	go func() {
		req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(u, "/mcp")+"/hang", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}()
	testwait.Recv(t, up.hung, "the /hang request to reach the upstream through the proxy")
}
