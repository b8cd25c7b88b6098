package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestReportProxyChallengeAnswered: a real mcpdiag proxy (--preserve-host)
// in front of a real mcpdiag serve --auth, and the built-in client's call
// through it: the server answers the first tools/list 401 with a Bearer
// challenge, the client runs the OAuth flow and sends tools/list again,
// with a new id and its token. report counts the 401 as an answered
// challenge that names its answer, 0 failed; --fail-on HTTP_ERROR exits
// 0; the --html page (in Chromium) marks no row failed and says so on its
// count line. Before (outsider19): "1 failed", worst offender
// [tools/list] HTTP_ERROR, --fail-on HTTP_ERROR exit 1, a red row.
func TestReportProxyChallengeAnswered(t *testing.T) {
	su, _ := startServe(t, serveOptions{auth: true, seed: 1})
	file := filepath.Join(t.TempDir(), "oauth.jsonl")
	p := runHTTPProxyForTest(t, proxyOptions{upstream: su, recordFile: file, preserveHost: true})
	var stdout, stderr bytes.Buffer
	if code := run([]string{"call", p.base + "/mcp", "echo", "--args", `{"text":"hi"}`}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("call: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	p.stop()

	recs := recordtest.ReadFile(t, file)
	var challenge, answer string
	for _, r := range recs {
		switch {
		case r.BearerChallenge():
			if challenge != "" {
				t.Fatalf("two challenges in the records: not the run this test is about")
			}
			challenge = r.ID
		case r.Method == "tools/list" && r.Status == 200 && r.BearerSent() != "":
			answer = r.ID
		}
	}
	if challenge == "" || answer == "" {
		t.Fatalf("no 401 with a Bearer challenge and tools/list with a token among %d records: not the run this test is about", len(recs))
	}

	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"report", "--fail-on", "HTTP_ERROR", file}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Errorf("report --fail-on HTTP_ERROR: exit %d, want 0 (the 401 is an answered challenge)\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{", 0 failed (0.0%), 1 auth challenge answered (", "[tools/list] 401 " + challenge + " answered by " + answer} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "worst offenders") {
		t.Errorf("the text report names a worst offender:\n%s", stdout.String())
	}

	stdout.Reset()
	page := filepath.Join(t.TempDir(), "oauth.html")
	if code := run([]string{"report", "--json", "--html", page, file}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("report --json --html: exit %d: %s", code, stderr.String())
	}
	var s report.Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("report --json: %v\n%s", err, stdout.String())
	}
	ex := s.Exchanges
	want := report.ChallengeLink{ID: challenge, AnsweredBy: answer, Method: "tools/list", Status: 401}
	if ex.Total != int64(len(recs)) || ex.Failures != 0 || ex.AuthChallenges != 1 || ex.ChallengesLinked != 1 ||
		len(ex.ChallengeLinks) != 1 || ex.ChallengeLinks[0] != want || len(ex.WorstOffenders) != 0 {
		t.Errorf("--json: %d exchanges, %d failures, %d auth challenges (%d linked: %+v), offenders %+v; want %d, 0, 1 (1: %+v), none",
			ex.Total, ex.Failures, ex.AuthChallenges, ex.ChallengesLinked, ex.ChallengeLinks, ex.WorstOffenders, len(recs), want)
	}

	b := browser.Open(t, (&url.URL{Scheme: "file", Path: page}).String())
	browser.WaitFor(t, b, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(recs)))
	failed := browser.Eval[[]string](t, b, `[...document.querySelectorAll('#rows tr.row.fail[data-id]')].map((tr) => tr.dataset.id)`)
	if int64(len(failed)) != ex.Failures {
		t.Errorf("the page's failed rows %v, report %d failures", failed, ex.Failures)
	}
	if count := browser.Eval[string](t, b, `document.getElementById('count').textContent`); !strings.Contains(count, " · 1 auth challenge answered (401/403 the client answered with a new token; not failures)") {
		t.Errorf("the page's count line %q does not count the answered challenge", count)
	}
}
