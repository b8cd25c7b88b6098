package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestReportRefusesWhatIsNoRecordFile is defect 12: an input with no record
// at all (/etc/passwd, an empty file, JSON that is not records) is refused
// with exit 2 and one line on stderr, stdout empty; and a malformed line of
// a real record file is reported once (stderr), not also in the text on
// stdout.
func TestReportRefusesWhatIsNoRecordFile(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "run.jsonl", writeRun(t, 3, 1, 10))
	passwd := writeFile(t, dir, "passwd", []byte("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nbin:x:2:2:bin:/bin:/usr/sbin/nologin\n"))
	empty := writeFile(t, dir, "empty.jsonl", nil)
	kindless := writeFile(t, dir, "package.json", []byte(`{"name":"x","version":"1.0.0"}`+"\n"))
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string // the one stderr line, prefix
	}{
		{"a text file", []string{passwd}, "", "mcpdiag: " + passwd + ": not a record file: none of its 3 lines is a record (line 1: not a JSON object)"},
		{"an empty file", []string{empty}, "", "mcpdiag: " + empty + ": no records (empty input)"},
		{"empty stdin", nil, "", "mcpdiag: stdin: no records (empty input)"},
		{"JSON that is not records", []string{kindless}, "", "mcpdiag: " + kindless + ": not a record file: none of its 1 line is a record (JSON objects without \"kind\")"},
		{"a good file then a text file", []string{good, passwd}, "", "mcpdiag: " + passwd + ": not a record file"},
		{"a text file on stdin", []string{"-"}, "hello\nworld\n", "mcpdiag: stdin: not a record file: none of its 2 lines is a record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"report", "--fail-on", "TOOL_ERROR"}, tt.args...), strings.NewReader(tt.stdin), &out, &errb)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out.Len() != 0 {
				t.Errorf("stdout should be empty:\n%s", out.String())
			}
			if lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], tt.want) {
				t.Errorf("stderr, want one line %q…:\n%s", tt.want, errb.String())
			}
		})
	}

	// A record file with two malformed lines: each is named once, on
	// stderr; stdout counts them and names none.
	data, _ := os.ReadFile(good)
	mixed := writeFile(t, dir, "mixed.jsonl", append(append([]byte("{oops\n"), data...), "[1]\n"...))
	var out, errb bytes.Buffer
	if code := run([]string{"report", mixed}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, line := range []string{":1: ", ":9: "} {
		if n := strings.Count(out.String()+errb.String(), mixed+line); n != 1 {
			t.Errorf("malformed line %s named %d times (stdout and stderr):\n%s\n%s", line, n, out.String(), errb.String())
		}
	}
	if !strings.Contains(out.String(), "2 malformed lines skipped") || strings.Count(errb.String(), "\n") != 2 {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}

// TestReportServeLogFaults is the rest of defect 12: the report of a serve
// log says which faults fired, by scenario, with the counts the log itself
// holds, not "0 failed". The client's three cut streams (sse.truncated,
// two retries) are three firings.
func TestReportServeLogFaults(t *testing.T) {
	main, _ := startServe(t, serveOptions{seed: 1})
	base := strings.TrimSuffix(main, "/mcp")
	var out, errb bytes.Buffer
	code := run([]string{"call", base + "/s/sse.truncated/mcp", "echo", "--args", `{"text":"hi"}`, "--protocol", "2026-07-28", "--timeout", "10s", "--json"}, strings.NewReader(""), &out, &errb)
	cut := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r struct{ Kind, Method, Outcome string }
		if json.Unmarshal([]byte(line), &r) == nil && r.Kind == "exchange" && r.Method == "tools/call" && r.Outcome == "STREAM_INCOMPLETE" {
			cut++
		}
	}
	if code != 4 || cut != 3 {
		t.Fatalf("call exit %d, %d cut tools/call streams, want 4 and 3:\n%s%s", code, cut, out.String(), errb.String())
	}
	resp, err := http.Get(base + "/admin/log")
	if err != nil {
		t.Fatal(err)
	}
	logData, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("admin/log: %d %v", resp.StatusCode, err)
	}
	// What the log says, read here independently of the report.
	lines, fired := 0, map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(logData))
	for sc.Scan() {
		var l struct {
			Kind  string
			Fault struct {
				Decisions []struct {
					Scenario string
					Fired    bool
				}
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Kind != "exchange" {
			t.Fatalf("log line %q: %v", sc.Bytes(), err)
		}
		lines++
		for _, f := range l.Fault.Decisions {
			if f.Fired {
				fired[f.Scenario]++
			}
		}
	}
	if fired["sse.truncated"] != cut {
		t.Fatalf("the log has %d firings of sse.truncated, the client saw %d cut streams", fired["sse.truncated"], cut)
	}
	file := writeFile(t, t.TempDir(), "serve.jsonl", logData)

	out.Reset()
	errb.Reset()
	if code := run([]string{"report", file}, nil, &out, &errb); code != 0 {
		t.Fatalf("report exit %d: %s", code, errb.String())
	}
	text := out.String()
	for _, want := range []string{"faults fired:", "sse.truncated", "a fault fired on 3 "} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "exchanges: "+itoa(lines)+", 0 failed") {
		t.Errorf("the report calls a log with cut streams \"0 failed\":\n%s", text)
	}

	out.Reset()
	if code := run([]string{"report", "--json", file}, nil, &out, &errb); code != 0 {
		t.Fatalf("report --json exit %d: %s", code, errb.String())
	}
	// Decoded here by name, as a consumer of the documented JSON would.
	var s struct {
		// The serve log's lines are classified exchange records.
		Exchanges struct {
			Total      int64
			Failures   int64
			FaultLines int64
			Faults     []struct {
				Scenario     string
				Lines, Fired int64
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Exchanges.Total != int64(lines) || s.Exchanges.Failures != int64(cut) {
		t.Errorf("exchange lines %d (%d failed), the log has %d (%d cut streams)", s.Exchanges.Total, s.Exchanges.Failures, lines, cut)
	}
	got := map[string]int{}
	for _, f := range s.Exchanges.Faults {
		got[f.Scenario] = int(f.Fired)
		if f.Lines < f.Fired {
			t.Errorf("%s fired on %d of %d lines", f.Scenario, f.Fired, f.Lines)
		}
	}
	for sc, n := range fired {
		if got[sc] != n {
			t.Errorf("report: %s fired %d times, the log says %d", sc, got[sc], n)
		}
	}
	if s.Exchanges.FaultLines != 3 {
		t.Errorf("report: a fault fired on %d lines, want 3", s.Exchanges.FaultLines)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
