package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
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
	if !strings.Contains(stdout.String(), " pass, 0 fail, 0 n/a.") || strings.Contains(stdout.String(), "FAIL") {
		t.Errorf("report:\n%s", stdout.String())
	}
	data, err := os.ReadFile(recFile)
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r, err := record.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("record: %v", err)
		}
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
// another id (serve --scenario sse.wrong_id), the probe says FAIL
// probe.answer-shape with the probes as evidence, and exits 1. The rules
// about what the answer must be do not judge a broken answer.
func TestProbeCommandFinding(t *testing.T) {
	u, _ := startServe(t, serveOptions{scenario: "sse.wrong_id"})
	var stdout, stderr bytes.Buffer
	code := run([]string{"probe", u, "--protocol", "2026-07-28", "--max-probes", "1", "--interval", "0"}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "FAIL probe.answer-shape: probe 0 ") || !strings.Contains(stdout.String(), "INVALID_ENVELOPE") ||
		strings.Count(stdout.String(), "FAIL") != 1 {
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
	if suites.Tests != len(rep.Checks) || suites.Failures != 1 || len(failed) != 1 || !strings.HasPrefix(failed[0], "probe.answer-shape: probe 0 ") {
		t.Errorf("--junit: %d tests, %d failures %q, want %d tests and probe.answer-shape failed", suites.Tests, suites.Failures, failed, len(rep.Checks))
	}
}

// TestProbeCommandUsage: bad input is one clear line and exit 2; a server
// that cannot be listed is exit 3.
func TestProbeCommandUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"probe", "ftp://x"}, 2, "must start with http://"},
		{[]string{"probe", "http://127.0.0.1:1/mcp", "--protocol", "2024"}, 2, "--protocol"},
		{[]string{"probe", "http://127.0.0.1:1/mcp", "--max-probes", "0"}, 2, "--max-probes"},
		{[]string{"probe"}, 2, "accepts 1 arg"},
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
// (go-sdk v1.8.0, probe/testdata/stdioserver): the rules that apply pass,
// the HTTP-only ones are n/a, the records have the probe member, and the
// server is stopped; a URL with more arguments, or --header on stdio, is a
// usage error.
func TestProbeCommandStdio(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stdioserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../probe/testdata/stdioserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	recFile := filepath.Join(t.TempDir(), "probe.jsonl")
	var stdout, stderr bytes.Buffer
	code := run([]string{"probe", "--interval", "0", "--record", recFile, "--", bin}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"probe stdio:stdioserver: era 2025-11-25", "8 pass, 0 fail, 3 n/a.", "N/A  probe.origin: not applicable on stdio", "exited after stdin closed"} {
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
