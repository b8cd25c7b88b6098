package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestReportDesignedAnswersThroughProxy: a real mcpdiag proxy in front of
// a real mcpdiag serve, which answers a GET of /mcp 405 (it offers no SSE
// stream) and a DELETE 405 (the client may not end a session), as the
// TypeScript SDK's simpleStatelessStreamableHttp example does, and a call
// through it. report counts the two 405s apart as designed answers, no
// failure, and --fail-on HTTP_ERROR exits 0. Before (outsider19): "2
// failed", worst offender "[no JSON-RPC method] HTTP_ERROR", exit 1.
func TestReportDesignedAnswersThroughProxy(t *testing.T) {
	su, _ := startServe(t, serveOptions{})
	file := filepath.Join(t.TempDir(), "designed.jsonl")
	p := runHTTPProxyForTest(t, proxyOptions{upstream: su, recordFile: file})
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequest(m, p.base+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("%s /mcp: %d; this test is about a server that answers 405", m, resp.StatusCode)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"call", p.base + "/mcp", "echo", "--args", `{"text":"hi"}`}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("call: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	p.stop()

	recs := recordtest.ReadFile(t, file)
	reasons := map[record.Designed]int64{}
	for _, r := range recs {
		if d := r.DesignedAnswer(); d != "" {
			reasons[d]++
		}
	}
	if reasons[record.DesignedNoStream] != 1 || reasons[record.DesignedNoSessionEnd] != 1 || len(reasons) != 2 {
		t.Fatalf("designed answers %v in %d records; want one GET and one DELETE answered 405", reasons, len(recs))
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"report", "--fail-on", "HTTP_ERROR", file}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Errorf("report --fail-on HTTP_ERROR: exit %d, want 0 (the 405s are designed answers)\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{", 0 failed (0.0%), 2 designed answers (", "HTTP_ERROR 2 (2 designed answers)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "worst offenders") {
		t.Errorf("the text report names a worst offender:\n%s", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"report", "--json", file}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("report --json: exit %d: %s", code, stderr.String())
	}
	var s report.Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("report --json: %v\n%s", err, stdout.String())
	}
	if ex := s.Exchanges; ex.Total != int64(len(recs)) || ex.DesignedAnswers != 2 || ex.Failures != 0 || len(ex.WorstOffenders) != 0 {
		t.Errorf("--json: %d exchanges, %d designed answers, %d failures, offenders %+v; want %d, 2, 0, none", ex.Total, ex.DesignedAnswers, ex.Failures, ex.WorstOffenders, len(recs))
	}
	if !bytes.Contains(stdout.Bytes(), []byte(`"designedAnswers": 2`)) && !bytes.Contains(stdout.Bytes(), []byte(`"designedAnswers":2`)) {
		t.Errorf("--json has no designedAnswers member:\n%s", stdout.String())
	}
}
