package main

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestMatrixInterruptBinary (issue 10 defect 10): SIGINT to a real
// `mcpdiag matrix` in the middle of its runs (one finished, the others
// still in flight) prints what it has, marked incomplete, writes --junit
// whole (the old file until then, never a truncated one), and exits 130.
func TestMatrixInterruptBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh and SIGINT")
	}
	bin := testBinary(t)
	// baseline is answered by mcpdiag call; every other case's client
	// sends nothing and waits, so the matrix is still running when the
	// signal comes.
	client := []string{"--", "sh", "-c", `if [ "$MCP_CASE" = baseline ]; then exec "$0" call "$1" "$MCP_TOOL" --args "$MCP_ARGS"; fi; exec sleep 60`, bin}
	for _, mode := range []string{"table", "json"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			junit, recs := filepath.Join(dir, "m.xml"), filepath.Join(dir, "m.jsonl")
			const old = "<old junit/>\n"
			if err := os.WriteFile(junit, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{bin, "matrix", "--scenarios", "baseline,errors.tool_error,sse.truncated", "--protocol", "2026-07-28", "--parallel", "4",
				"--start-timeout", "60s", "--junit", junit, "--record", recs}
			if mode == "json" {
				args = append(args, "--json")
			}
			p := startProcess(t, nil, append(args, client...)...)
			// A run's records are written once it is judged: then baseline
			// has finished and the three others are in flight.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if st, err := os.Stat(recs); err == nil && st.Size() > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("baseline did not finish in 30s; stderr:\n%s", p.stderr.String())
				}
			}
			if b, _ := os.ReadFile(junit); string(b) != old {
				t.Errorf("the --junit file changed before the end: %q", b)
			}
			code := p.stop(t, syscall.SIGINT)
			out := p.stdout.String()
			if code != 130 {
				t.Errorf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out, p.stderr.String())
			}
			if !strings.Contains(p.stderr.String(), "matrix stopped (interrupt after 1 of 4 runs, 3 interrupted)") {
				t.Errorf("stderr does not say it stopped:\n%s", p.stderr.String())
			}
			switch mode {
			case "table":
				for _, want := range []string{"INCOMPLETE: stopped (interrupt after 1 of 4 runs, 3 interrupted)", "4 runs planned: 1 done, 3 interrupted, 0 not started;", "baseline ", "1 runs: 1 passed, 0 not tested, 0 failed",
					"3 not judged: errors.tool_error, sse.truncated, sse.truncated/delete_item.", "Stopped after"} {
					if !strings.Contains(out, want) {
						t.Errorf("stdout lacks %q:\n%s", want, out)
					}
				}
			case "json":
				var v struct {
					Case, Verdict, Incomplete string
				}
				if err := json.Unmarshal([]byte(out), &v); err != nil || v.Case != "baseline" || v.Verdict != "pass" || v.Incomplete != "interrupt after 1 of 4 runs, 3 interrupted" {
					t.Errorf("JSON %+v (%v):\n%s", v, err, out)
				}
			}
			b, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != old {
				var d struct {
					Name   string `xml:"name,attr"`
					Errors int    `xml:"errors,attr"`
					Suites []struct {
						Name  string `xml:"name,attr"`
						Cases []struct {
							Name  string `xml:"name,attr"`
							Error *struct {
								Message string `xml:"message,attr"`
							} `xml:"error"`
						} `xml:"testcase"`
					} `xml:"testsuite"`
				}
				if err := xml.Unmarshal(b, &d); err != nil {
					t.Fatalf("--junit is neither the old file nor complete XML (%v):\n%s", err, b)
				}
				last := d.Suites[len(d.Suites)-1]
				if d.Name != "mcpdiag matrix (incomplete)" || d.Errors != 1 || len(d.Suites) != 2 || d.Suites[0].Name != "baseline" ||
					last.Name != "mcpdiag.matrix.incomplete" || last.Cases[0].Error == nil || !strings.Contains(last.Cases[0].Error.Message, "interrupt after 1 of 4 runs") {
					t.Errorf("--junit is not marked incomplete:\n%s", b)
				}
			}
			es, _ := os.ReadDir(dir)
			for _, e := range es {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}
		})
	}
}

// TestMatrixInterruptWritesRunsInFlight: SIGINT to a real mcpdiag matrix
// whose clients' calls the server holds (timeout.uncooperative_hang, twice)
// writes the records of the runs in flight, each marked with the warning
// matrix-run-interrupted, and the first line and the summary say how many
// runs were planned, done and interrupted; exit 130. Before, the --record
// file was empty though the server saw the calls, and the first line said
// "0 runs" (newuser8).
func TestMatrixInterruptWritesRunsInFlight(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh and SIGINT")
	}
	bin := testBinary(t)
	dir := t.TempDir()
	recs := filepath.Join(dir, "m.jsonl")
	// Each client notes the URL it calls, then the test waits until the
	// server has both calls (its /admin/counters), which it holds for 15 s.
	mark := filepath.Join(dir, "started")
	client := []string{"--", "sh", "-c", `"$0" call "$1" "$MCP_TOOL" --args "$MCP_ARGS" & printf %s "$1" >"` + mark + `.$$"; wait`, bin}
	args := []string{bin, "matrix", "--scenarios", "timeout.uncooperative_hang", "--protocol", "2026-07-28", "--repeat", "2", "--parallel", "4", "--record", recs}
	p := startProcess(t, nil, append(args, client...)...)
	var counters string
	testwait.Until(t, "the clients to start (their marker files)", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "started.*"))
		if len(m) != 2 {
			return false
		}
		b, _ := os.ReadFile(m[0])
		u, err := url.Parse(string(b))
		if err != nil || u.Host == "" {
			return false // written but not yet flushed
		}
		counters = "http://" + u.Host + "/admin/counters"
		return true
	})
	testwait.Until(t, "the server to hold both tools/call requests (/admin/counters)", func() bool {
		return heldCalls(t, counters) == 2
	})
	code := p.stop(t, syscall.SIGINT)
	out := p.stdout.String()
	if code != 130 {
		t.Errorf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out, p.stderr.String())
	}
	for _, want := range []string{"2 runs planned: 0 done, 2 interrupted, 0 not started;", "INCOMPLETE: stopped (interrupt after 0 of 2 runs, 2 interrupted)"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Method, Scenario, URL string
			Warnings              []struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		if len(r.Warnings) == 0 || r.Warnings[len(r.Warnings)-1].Code != "matrix-run-interrupted" ||
			r.Warnings[len(r.Warnings)-1].Message != "the matrix was stopped (interrupt) while this run was in flight: the run was not judged" {
			t.Errorf("record not marked interrupted: %s", line)
		}
		if r.Method == "tools/call" {
			calls[r.Scenario]++
		}
	}
	if calls["timeout.uncooperative_hang"] != 2 {
		t.Errorf("tools/call records by scenario %v, want 2 of timeout.uncooperative_hang; records:\n%s", calls, b)
	}
}

// heldCalls returns the tools/call requests the server at counters (its
// /admin/counters) has received, summed over its endpoints.
func heldCalls(t *testing.T, counters string) int {
	t.Helper()
	resp, err := http.Get(counters)
	if err != nil {
		t.Fatalf("GET %s: %v", counters, err)
	}
	defer resp.Body.Close()
	var got map[string]struct {
		Counters struct {
			Methods map[string]int `json:"methods"`
		} `json:"counters"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", counters, resp.StatusCode, err)
	}
	n := 0
	for _, ep := range got {
		n += ep.Counters.Methods["tools/call"]
	}
	return n
}

// TestMatrixJSONInterruptedBeforeAnyRunFinished (outsider22 D6): SIGINT to
// a real `mcpdiag matrix --json` while every run is in flight (its clients
// started and send nothing) printed nothing on stdout (exit 130): a JSON
// consumer got no document and no incomplete state. It must print one
// object, with no case, saying how much ran: the incomplete line every case
// object carries when a later interrupt leaves some, and its fields.
func TestMatrixJSONInterruptedBeforeAnyRunFinished(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh and SIGINT")
	}
	bin := testBinary(t)
	dir := t.TempDir()
	mark := filepath.Join(dir, "started")
	client := []string{"--", "sh", "-c", `: >"` + mark + `.$$"; exec sleep 60`}
	args := []string{bin, "matrix", "--json", "--scenarios", "baseline,errors.tool_error", "--protocol", "2026-07-28", "--parallel", "2", "--start-timeout", "60s"}
	p := startProcess(t, nil, append(args, client...)...)
	testwait.Until(t, "both clients to start (their marker files)", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "started.*"))
		return len(m) == 2
	})
	code := p.stop(t, syscall.SIGINT)
	out := p.stdout.String()
	if code != 130 {
		t.Errorf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out, p.stderr.String())
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var v struct {
		Case        *string
		Incomplete  string
		Reason      string
		Finished    *int `json:"finishedRuns"`
		Planned     int  `json:"plannedRuns"`
		Interrupted int  `json:"interruptedRuns"`
		NotRun      []string
		Parallel    int
	}
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &v) != nil {
		t.Fatalf("stdout is not one JSON object:\n%s\nstderr:\n%s", out, p.stderr.String())
	}
	if v.Case != nil || v.Incomplete != "interrupt after 0 of 2 runs, 2 interrupted" || v.Reason != "interrupt" || v.Finished == nil || *v.Finished != 0 ||
		v.Planned != 2 || v.Interrupted != 2 || strings.Join(v.NotRun, ",") != "baseline,errors.tool_error" || v.Parallel != 2 {
		t.Errorf("JSON %+v, want no case, interrupt after 0 of 2 runs, 2 interrupted, both cases not run, parallel 2:\n%s", v, out)
	}
}
