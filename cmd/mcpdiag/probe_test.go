package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testbin"
)

// TestProbeCommandHealthy: mcpdiag probe against mcpdiag serve passes every
// rule (exit 0), writes one record per exchange with the probe's facts, and
// never calls a tool that is not read-only: the server's own log says so.
func TestProbeCommandHealthy(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "server.jsonl")
	u, _ := startServe(t, serveOptions{logFile: logFile})
	recFile := filepath.Join(t.TempDir(), "probe.jsonl")
	var stdout, stderr bytes.Buffer
	code := run([]string{"probe", u, "--protocol", "2026-07-28", "--max-probes", "2", "--interval", "0", "--record", recFile}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), " pass, 0 fail, 0 n/a; --fail-on should: no failure at or above it.") || strings.Contains(stdout.String(), "FAIL") {
		t.Errorf("report:\n%s", stdout.String())
	}
	probes := 0
	for _, r := range recordtest.ReadFile(t, recFile) {
		if r.Probe != nil {
			probes++
			if r.Probe.Seed != "1" || r.Probe.Kind == "" {
				t.Errorf("probe member %+v", r.Probe)
			}
		}
	}
	if probes == 0 {
		t.Errorf("no probe record in %s", recFile)
	}
	// serve writes its log line before it answers: every request is in it.
	b, _ := os.ReadFile(logFile)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v struct {
			Method string `json:"method"`
			Tool   string `json:"tool"`
		}
		if json.Unmarshal([]byte(l), &v) != nil || v.Method != "tools/call" {
			continue
		}
		switch v.Tool {
		case "delete_item", "counter_set", "approve":
			t.Errorf("the probe called %s, which is not read-only: %s", v.Tool, l)
		}
	}
}

// TestProbeCommandFinding: against a server that answers tools/call under
// another id on its event stream (serve --scenario sse.wrong_id), the probe
// says FAIL probe.id-type with the probes and both ids as evidence, and
// exits 1 (the stream's other id is the record's responseId, as for a JSON
// body). The rules about what the answer must be do not judge an answer to
// another request.
func TestProbeCommandFinding(t *testing.T) {
	u, _ := startServe(t, serveOptions{scenario: "sse.wrong_id"})
	var stdout, stderr bytes.Buffer
	code := run([]string{"probe", u, "--protocol", "2026-07-28", "--max-probes", "1", "--interval", "0"}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "\nFAIL probe.id-type (must): probe 0 ") || !strings.Contains(stdout.String(), "(id 2): sent id 2 (number), the answer's id is 1002 (number)") ||
		strings.Count(stdout.String(), "\nFAIL ") != 1 {
		t.Errorf("report:\n%s", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"probe", u, "--protocol", "2026-07-28", "--max-probes", "1", "--interval", "0", "--json"}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Fatalf("--json exit %d", code)
	}
	var rep struct {
		Checks []struct{ Rule, Verdict, Evidence string } `json:"checks"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Checks) == 0 {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	junit := filepath.Join(t.TempDir(), "probe.xml")
	if code := run([]string{"probe", u, "--protocol", "2026-07-28", "--max-probes", "1", "--interval", "0", "--junit", junit}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Fatalf("--junit exit %d", code)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("--junit: %v\n%s", err, b)
	}
	var failed []string
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failed = append(failed, c.Name+": "+c.Failure.Message)
			}
		}
	}
	// A suite per family (a case per rule), then one per probed tool (a
	// case per rule about its probes): the tool's answer was broken too.
	var ruleFailed []string
	for _, f := range failed {
		if strings.HasPrefix(f, "probe.") {
			ruleFailed = append(ruleFailed, f)
		}
	}
	if suites.Tests <= len(rep.Checks) || len(ruleFailed) != 1 || !strings.HasPrefix(ruleFailed[0], "probe.id-type: probe 0 ") ||
		suites.Failures != len(failed) || !slices.ContainsFunc(failed, func(f string) bool { return strings.HasPrefix(f, "echo probe.id-type: probe 0 ") }) {
		t.Errorf("--junit: %d tests, %d failures %q, want more than %d tests, probe.id-type failed, and for tool echo", suites.Tests, suites.Failures, failed, len(rep.Checks))
	}
}

// TestProbeCommandUsage: bad input is one clear line and exit 2 (no
// argument, or -- with no command after it, says what to give, not cobra's
// "accepts 1 arg(s), received 0"); a server that cannot be listed is exit
// 3.
func TestProbeCommandUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"probe", "ftp://x"}, 2, "must start with http://"},
		{[]string{"probe", "http://127.0.0.1:1/mcp", "--protocol", "2024"}, 2, "--protocol"},
		{[]string{"probe", "http://127.0.0.1:1/mcp", "--max-probes", "0"}, 2, "--max-probes"},
		{[]string{"probe", "http://127.0.0.1:1/mcp", "--fail-on", "warning"}, 2, `--fail-on: severity "warning": must be must, should, advice or none`},
		{[]string{"probe", "http://127.0.0.1:1/mcp", "--fail-on", ""}, 2, "--fail-on"},
		{[]string{"probe"}, 2, "give the server's URL (mcpdiag probe URL), or -- and the command"},
		{[]string{"probe", "--"}, 2, "no command after --: give the command that starts the stdio server"},
		{[]string{"probe", "http://127.0.0.1:1/mcp", "extra"}, 2, "one URL, or -- and a command, not both: 2 arguments"},
		{[]string{"probe", "http://127.0.0.1:1/mcp", "--timeout", "2s"}, 3, "listing the tools of http://127.0.0.1:1/mcp: NETWORK_ERROR"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != tc.code || len(lines) != 1 || !strings.Contains(lines[0], tc.want) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d and one line with %q", tc.args, code, stderr.String(), stdout.String(), tc.code, tc.want)
		}
	}
	_ = time.Second
}

// TestProbeCommandStdio: mcpdiag probe -- COMMAND probes a stdio server
// (go-sdk v1.8.0, probe/testdata/stdioserver) on the era it offers: the rules that apply pass,
// the HTTP-only ones are n/a, the records have the probe member, and the
// server is stopped; a URL with more arguments, or --header on stdio, is a
// usage error.
func TestProbeCommandStdio(t *testing.T) {
	bin := testbin.Build(t, "../../probe/testdata/stdioserver")
	recFile := filepath.Join(t.TempDir(), "probe.jsonl")
	var stdout, stderr bytes.Buffer
	code := run([]string{"probe", "--interval", "0", "--record", recFile, "--", bin}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	// go-sdk v1.8.0 lists 2026-07-28 in server/discover: auto speaks it
	// (result-type applies there).
	for _, want := range []string{"probe stdio:stdioserver: era 2026-07-28 (stdio: server/discover lists 2026-07-28", "9 pass, 0 fail, 4 n/a;", "N/A  probe.origin: not applicable on stdio", "exited after stdin closed"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(recFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"probe":{`) {
		t.Errorf("no probe record in %s", recFile)
	}
	for _, args := range [][]string{
		{"probe", "http://127.0.0.1:1/mcp", "extra"},
		{"probe", "--header", "X-A: b", "--", bin},
	} {
		var o, e bytes.Buffer
		if code := run(args, strings.NewReader(""), &o, &e); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, e.String())
		}
	}
}

// TestProbeFailOn: --fail-on picks the failures that exit 1, against serve
// variants with a finding of known severity: server.unknown_tool_as_tool_error
// fails probe.unknown-tool (should) only, server.no_origin_check probe.origin
// (must) only. The summary line and --json's findings say the same.
func TestProbeFailOn(t *testing.T) {
	tests := []struct {
		scenario string
		failOn   string // "" is the default (should)
		code     int
		summary  string
	}{
		{"server.unknown_tool_as_tool_error", "must", 0, "--fail-on must: no failure at or above it, 1 below it."},
		{"server.unknown_tool_as_tool_error", "should", 1, "--fail-on should: 1 failure at or above it (probe.unknown-tool)."},
		{"server.unknown_tool_as_tool_error", "", 1, "--fail-on should: 1 failure at or above it (probe.unknown-tool)."},
		{"server.unknown_tool_as_tool_error", "advice", 1, "--fail-on advice: 1 failure at or above it (probe.unknown-tool)."},
		{"server.unknown_tool_as_tool_error", "none", 0, "--fail-on none: no failure at or above it, 1 below it."},
		{"server.no_origin_check", "must", 1, "--fail-on must: 1 failure at or above it (probe.origin)."},
		{"server.no_origin_check", "should", 1, "--fail-on should: 1 failure at or above it (probe.origin)."},
		{"server.no_origin_check", "advice", 1, "--fail-on advice: 1 failure at or above it (probe.origin)."},
		{"server.no_origin_check", "none", 0, "--fail-on none: no failure at or above it, 1 below it."},
		{"", "advice", 0, "--fail-on advice: no failure at or above it."},
	}
	u, _ := startServe(t, serveOptions{})
	base := strings.TrimSuffix(u, "/mcp")
	for _, tc := range tests {
		t.Run(tc.scenario+"/"+tc.failOn, func(t *testing.T) {
			url := u
			if tc.scenario != "" {
				url = base + "/s/" + tc.scenario + "/mcp"
			}
			args := []string{"probe", url, "--protocol", "2026-07-28", "--max-probes", "1", "--interval", "0", "--timeout", "5s"}
			if tc.failOn != "" {
				args = append(args, "--fail-on", tc.failOn)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			if code != tc.code || !strings.HasSuffix(stdout.String(), tc.summary+"\n") {
				t.Errorf("exit %d, want %d; want the summary %q:\n%s%s", code, tc.code, tc.summary, stdout.String(), stderr.String())
			}
			stdout.Reset()
			if c := run(append(args, "--json"), strings.NewReader(""), &stdout, &stderr); c != tc.code {
				t.Errorf("--json: exit %d, want %d", c, tc.code)
			}
			var rep struct {
				FailOn   string   `json:"failOn"`
				Findings []string `json:"findings"`
				Checks   []struct{ Rule, Verdict, Severity string }
			}
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("--json: %v", err)
			}
			want := map[bool]string{true: "should", false: tc.failOn}[tc.failOn == ""]
			if rep.FailOn != want || (len(rep.Findings) > 0) != (tc.code == 1) {
				t.Errorf("--json: failOn %q findings %q, want %q and findings iff exit 1", rep.FailOn, rep.Findings, want)
			}
			for _, c := range rep.Checks {
				if c.Severity == "" {
					t.Errorf("--json: %s has no severity", c.Rule)
				}
			}
		})
	}
}

// TestProbeRecordStdout: with --record -, stdout holds only the records
// (as call, matrix and serve do) and the report goes to stderr.
func TestProbeRecordStdout(t *testing.T) {
	u, _ := startServe(t, serveOptions{})
	for _, extra := range [][]string{nil, {"--json"}} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"probe", u, "--protocol", "2026-07-28", "--max-probes", "1", "--interval", "0", "--record", "-"}, extra...)
		if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d\n%s", extra, code, stderr.String())
		}
		onlyRecords(t, "probe --record - "+strings.Join(extra, " "), stdout.String())
		recs := decodeRecords(t, stdout.Bytes())
		probes := 0
		for _, r := range recs {
			if r.Probe != nil {
				probes++
			}
		}
		if probes == 0 {
			t.Errorf("%q: no probe record on stdout", extra)
		}
		want := "rules: "
		if extra != nil {
			want = `"checks": [`
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("%q: the report is not on stderr: %q", extra, stderr.String())
		}
	}
}

// TestProbeJUnitNotWritten: a --junit file that cannot be written is exit 6
// with one line that says so, whatever the verdicts; the report is printed.
func TestProbeJUnitNotWritten(t *testing.T) {
	u, _ := startServe(t, serveOptions{})
	junit := filepath.Join(t.TempDir(), "no-such-dir", "probe.xml")
	var stdout, stderr bytes.Buffer
	code := run([]string{"probe", u, "--protocol", "2026-07-28", "--max-probes", "1", "--interval", "0", "--junit", junit}, strings.NewReader(""), &stdout, &stderr)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if code != 6 || len(lines) != 1 || !strings.Contains(lines[0], "not written: --junit: ") || !strings.Contains(stdout.String(), " rules: ") {
		t.Errorf("exit %d, stderr %q, want exit 6 and one line about --junit; stdout:\n%s", code, stderr.String(), stdout.String())
	}
}

// TestProbeBadURL: a URL that cannot be parsed or names no host is a usage
// error (exit 2, one line on stderr, nothing on stdout), not a listing that
// failed with NETWORK_ERROR (exit 3).
func TestProbeBadURL(t *testing.T) {
	for _, url := range []string{"http://[::1", "http://", "https:///mcp", "http://127.0.0.1:port/mcp"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"probe", url}, strings.NewReader(""), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != 2 || stdout.Len() != 0 || len(lines) != 1 || !strings.Contains(lines[0], "URL") {
			t.Errorf("probe %q: exit %d, stdout %q, stderr %q; want exit 2 and one line about the URL", url, code, stdout.String(), stderr.String())
		}
	}
}
