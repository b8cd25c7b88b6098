package probe_test

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/syncbuf"
	"github.com/mcpdiag/mcpdiag/internal/testbin"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/mcpdiag/mcpdiag/record"
)

// badServer builds probe/testdata/badserver once and starts it in mode on
// 127.0.0.1; it returns its MCP URL and its stderr (where it says when its
// destructive tool ran).
func badServer(t *testing.T, mode string) (string, *syncbuf.Buffer) {
	t.Helper()
	badBin := testbin.Build(t, "./testdata/badserver")
	cmd := exec.Command(badBin, "-listen", "127.0.0.1:0", "-mode", mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("badserver said %q (%v)", line, err)
	}
	return url, stderr
}

// TestProbeBadServer: each mode of the bad server makes one mistake, and
// exactly the rules about that mistake fail, with evidence that names it;
// the healthy mode fails none. The destructive tool never runs.
func TestProbeBadServer(t *testing.T) {
	tests := []struct {
		mode string
		// fail maps each rule that must fail to what its evidence says.
		fail map[string]string
	}{
		{"healthy", nil},
		{"dressed", map[string]string{"probe.invalid-arguments": "an error dressed as success",
			"probe.is-error-missing": "TOOL_SUCCESS, isError missing, yet the text holds a Python traceback"}},
		{"accepts", map[string]string{"probe.invalid-arguments": "accepted as a success"}},
		{"unknown-as-tool", map[string]string{"probe.unknown-tool": "TOOL_ERROR, not a JSON-RPC error"}},
		{"malformed-ok", map[string]string{"probe.malformed-call": "TOOL_SUCCESS, not a JSON-RPC error"}},
		{"id-type", map[string]string{"probe.id-type": "(number), the answer's id is \""}},
		// The same on an event stream: the classifier names the other id
		// (responseId), so it is id-type's finding, not answer-shape's.
		{"sse-id-type", map[string]string{"probe.id-type": "(number), the answer's id is \""}},
		// An error answer in a 4xx carries an id too: it is judged.
		{"error-id-type", map[string]string{"probe.id-type": "unknown-tool mcpdiag_no_such_tool"}},
		{"notification-200", map[string]string{"probe.notification-202": "HTTP 200 with"}},
		{"bad-shape", map[string]string{"probe.answer-shape": "INVALID_TOOL_RESULT"}},
		{"hang", map[string]string{"probe.answered": "no answer"}},
		// The first bad argument kills it: that probe is the first without
		// an answer, and the run goes on to the end.
		{"crash", map[string]string{"probe.answered": "probe 0 "}},
		{"no-result-type", map[string]string{"probe.result-type": "TOOL_ERROR without resultType"}},
		{"any-origin", map[string]string{"probe.origin": "HTTP 200 (RESULT_SUCCESS), not 403"}},
		{"any-version", map[string]string{"probe.protocol-version": "HTTP 200 (RESULT_SUCCESS), not 400"}},
		{"no-version-ok", map[string]string{"probe.protocol-version-missing": "served as a 2026-07-28 request (its result has resultType) although the header is missing"}},
		{"accept-500", map[string]string{"probe.accept": "HTTP 500 (HTTP_ERROR), not 406 Not Acceptable, 400 or an answer: a server error"}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			url, stderr := badServer(t, tc.mode)
			opts := probe.Options{Timeout: 2 * time.Second}
			if tc.mode == "hang" {
				// Every argument probe waits for the timeout: keep one.
				opts.MaxPerTool, opts.Timeout = 1, 300*time.Millisecond
			}
			rep := run(t, url, "2026-07-28", opts)
			failed := map[string]bool{}
			for _, c := range rep.Checks {
				if c.Verdict != judge.Fail {
					continue
				}
				failed[c.Rule] = true
				want, ok := tc.fail[c.Rule]
				switch {
				case !ok:
					t.Errorf("%s failed: %s", c.Rule, c.Evidence)
				case !strings.Contains(c.Evidence, want):
					t.Errorf("%s evidence %q does not say %q", c.Rule, c.Evidence, want)
				}
			}
			for rule := range tc.fail {
				if !failed[rule] {
					t.Errorf("%s did not fail\n%s", rule, checks(rep.Checks))
				}
			}
			if tc.mode == "hang" {
				// The hung probe says so by its own fact, not by a status.
				for _, r := range rep.Records {
					if p := r.Probe; p != nil && p.Index == 0 && p.Answer != record.ProbeAnswerNone {
						t.Errorf("hung probe 0 %s: answer %q, want %q", p.Kind, p.Answer, record.ProbeAnswerNone)
					}
				}
			}
			if n := len(rep.Probes); n == 0 || rep.Records[len(rep.Records)-1].Probe == nil || rep.Records[len(rep.Records)-1].Probe.Index != n-1 {
				t.Errorf("the run did not send its %d probes to the end", n)
			}
			if strings.Contains(stderr.String(), "drop_table RAN") {
				t.Errorf("the destructive tool ran")
			}
		})
	}
}

// TestProbeRecordsJudgeTheSame: the records of a run, encoded as --record
// writes them (redacted, bodies capped) and decoded again, are judged as
// the run judged them: a probe file says by itself what each answer had to
// be.
func TestProbeRecordsJudgeTheSame(t *testing.T) {
	for _, mode := range []string{"healthy", "dressed", "id-type", "notification-200"} {
		t.Run(mode, func(t *testing.T) {
			url, _ := badServer(t, mode)
			var lines [][]byte
			enc := record.Encoder{Redactor: record.NewRedactor(), BodyLimit: 16 << 10}
			rep := run(t, url, "2026-07-28", probe.Options{MaxPerTool: 2, OnRecord: func(r *record.Record) {
				b, err := enc.Encode(r)
				if err != nil {
					t.Errorf("encode: %v", err)
				}
				lines = append(lines, b)
			}})
			if len(lines) != len(rep.Records) {
				t.Fatalf("%d lines for %d records", len(lines), len(rep.Records))
			}
			if got, want := checks(judgeLines(t, lines)), checks(rep.Checks); got != want {
				t.Errorf("judged from the file:\n%s\njudged in the run:\n%s", got, want)
			}
		})
	}
}

// TestProbeHeaderProbesSendWhatTheySay: the records of the header probes
// show the request the rule judges: no MCP-Protocol-Version at all (the
// era's other headers kept), and an Accept with application/json alone.
// The bad server's healthy mode answers a request without the header 400
// -32020 and serves any Accept, so both rules pass there.
func TestProbeHeaderProbesSendWhatTheySay(t *testing.T) {
	url, _ := badServer(t, "healthy")
	rep := run(t, url, "2026-07-28", probe.Options{MaxPerTool: 1})
	seen := map[string]bool{}
	for _, r := range rep.Records {
		if r.Probe == nil {
			continue
		}
		h := r.RequestHeaders
		switch r.Probe.Kind {
		case string(probe.NoProtocolVersion):
			seen[r.Probe.Kind] = true
			if v, ok := h["Mcp-Protocol-Version"]; ok {
				t.Errorf("%s sent MCP-Protocol-Version %q", r.Probe.Kind, v)
			}
			if h.Get("Mcp-Method") != "tools/list" {
				t.Errorf("%s lost the era's Mcp-Method header: %v", r.Probe.Kind, h)
			}
		case string(probe.AcceptJSONOnly):
			seen[r.Probe.Kind] = true
			if got := h.Values("Accept"); len(got) != 1 || got[0] != probe.AcceptJSONOnlyValue {
				t.Errorf("%s sent Accept %q", r.Probe.Kind, got)
			}
			if h.Get("Mcp-Protocol-Version") != "2026-07-28" {
				t.Errorf("%s lost MCP-Protocol-Version: %v", r.Probe.Kind, h)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("header probes sent: %v, want both", seen)
	}
	for _, c := range rep.Checks {
		if (c.Rule == "probe.protocol-version-missing" || c.Rule == "probe.accept") && c.Verdict != judge.Pass {
			t.Errorf("%s %s: %s", c.Rule, c.Verdict, c.Evidence)
		}
	}
}

// TestProbeTimeoutEvidence: a probe that gets no answer says so the same way
// on every run, naming the time limit. The client's first-byte timer and the
// call's own deadline (both --timeout) raced: a run said "no response headers
// within the first-byte timeout (…)", another only "context deadline
// exceeded", so two identical runs gave two --json outputs.
//
// The limit is 1s, the eight runs concurrent: with 200ms, at load ~30 one
// run's notification probe (which the server answers) once timed out too
// (outsider20), a different evidence for the machine's reason.
func TestProbeTimeoutEvidence(t *testing.T) {
	url, _ := badServer(t, "hang")
	var mu sync.Mutex
	seen := map[string]bool{}
	t.Run("runs", func(t *testing.T) {
		for i := range 8 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				rep := run(t, url, "2026-07-28", probe.Options{MaxPerTool: 1, Timeout: time.Second})
				for _, c := range rep.Checks {
					if c.Rule == "probe.answered" {
						if c.Verdict != judge.Fail || !strings.Contains(c.Evidence, "(1s)") {
							t.Errorf("probe.answered %s %q, want a failure naming the 1s limit", c.Verdict, c.Evidence)
						}
						mu.Lock()
						seen[c.Evidence] = true
						mu.Unlock()
					}
				}
			})
		}
	})
	if len(seen) != 1 {
		t.Errorf("%d different evidences over identical runs: %v", len(seen), seen)
	}
}

// TestProbeCursorLoop: a server whose tools/list never ends (the same
// nextCursor on every page) is listed once round, probed, and the report
// says the listing stopped at the loop (it said nothing).
func TestProbeCursorLoop(t *testing.T) {
	url, _ := badServer(t, "cursor-loop")
	rep := run(t, url, "2026-07-28", probe.Options{MaxPerTool: 1})
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "warning: tools/list: cursor-loop: "; !strings.Contains(text.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, text.String())
	}
}
