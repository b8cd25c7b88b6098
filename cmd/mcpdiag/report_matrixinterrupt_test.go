package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestReportInterruptedMatrixGolden: `mcpdiag report` and `report --json`
// of the --record file of a real matrix interrupted with a run in flight
// (report/testdata/matrix-interrupted.jsonl, whose comment says how it was
// made) print what testdata/report/interrupted.txtar holds (-update
// rewrites it), and exit 3 with one line on stderr naming the warning.
// Before, report exited 0 and counted the cut run's NETWORK_ERROR call and
// exchanges as failures ("calls: 3, 2 failed (66.7%)"), and nothing said
// the run was interrupted.
func TestReportInterruptedMatrixGolden(t *testing.T) {
	const input = "../../report/testdata/matrix-interrupted.jsonl"
	got := map[string]string{}
	for _, mode := range []string{"text", "json"} {
		args := []string{"report", input}
		if mode == "json" {
			args = []string{"report", "--json", input}
		}
		var stdout, stderr bytes.Buffer
		code := run(args, strings.NewReader(""), &stdout, &stderr)
		got[mode+" exit"] = strconv.Itoa(code) + "\n"
		got[mode] = stdout.String()
		got[mode+" stderr"] = stderr.String()
	}
	order := []string{"text exit", "text stderr", "text", "json exit", "json stderr", "json"}
	file := filepath.Join("testdata", "report", "interrupted.txtar")
	if *updateProbe {
		var b strings.Builder
		b.WriteString("mcpdiag report and report --json of report/testdata/matrix-interrupted.jsonl, a real matrix's records interrupted with one run in flight (TestReportInterruptedMatrixGolden; go test -run TestReportInterruptedMatrixGolden ./cmd/mcpdiag -update rewrites it).\n")
		for _, name := range order {
			fmt.Fprintf(&b, "-- %s --\n%s", name, got[name])
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -run TestReportInterruptedMatrixGolden ./cmd/mcpdiag -update writes it)", err)
	}
	want := splitTxtar(string(data))
	for _, name := range order {
		if want[name] != got[name] {
			t.Errorf("%s: %s differs from the golden (-update rewrites it); got:\n%s", file, name, got[name])
		}
	}
	// The golden's own facts, so that an -update cannot bless a wrong
	// count: the exit status, the words, and the counts of the lines.
	for _, mode := range []string{"text", "json"} {
		if got[mode+" exit"] != "3\n" {
			t.Errorf("%s: exit %s, want 3 (the run was incomplete)", mode, got[mode+" exit"])
		}
		if want := "mcpdiag: 5 record(s) of runs an interrupt cut short (warning matrix-run-interrupted): the run was incomplete; they are counted apart, not as failures\n"; got[mode+" stderr"] != want {
			t.Errorf("%s: stderr %q, want %q", mode, got[mode+" stderr"], want)
		}
	}
	for _, line := range []string{
		"  incomplete: 5 records are of runs an interrupt cut short (warning matrix-run-interrupted): not judged, counted apart as interrupted, not as failures nor latency samples\n",
		"calls: 3, 1 failed (50.0%), 1 interrupted (",
		"exchanges: 12, 2 failed (25.0%), 4 interrupted (",
		"  by outcome:  NETWORK_ERROR 1 (1 interrupted), JSONRPC_ERROR 1, TOOL_SUCCESS 1\n",
	} {
		if !strings.Contains(got["text"], line) {
			t.Errorf("the text report lacks %q", line)
		}
	}
	checkAccounted(t, []byte(got["json"]), recordtest.ReadFile(t, input))
}

// checkAccounted holds a report --json against the records it read: every
// record counted once in its section, the ones that carry
// matrix-run-interrupted or call-interrupted as interrupted, the failures
// those of the others.
func checkAccounted(t *testing.T, js []byte, recs []*record.Record) {
	t.Helper()
	var s report.Summary
	if err := json.Unmarshal(js, &s); err != nil {
		t.Fatalf("report --json: %v\n%s", err, js)
	}
	total, cut, failed := map[record.Kind]int64{}, map[record.Kind]int64{}, map[record.Kind]int64{}
	var allCut int64
	for _, r := range recs {
		total[r.Kind]++
		switch {
		case r.Interrupted():
			cut[r.Kind]++
			allCut++
		case r.Probe == nil && report.Failure(r.Kind, r.Outcome):
			failed[r.Kind]++
		}
	}
	if s.Records != int64(len(recs)) || s.Interrupted != allCut {
		t.Errorf("report: %d records, %d interrupted; the file: %d, %d", s.Records, s.Interrupted, len(recs), allCut)
	}
	for _, sec := range []*report.Section{s.Calls, s.Exchanges, s.Server} {
		k := record.Kind(sec.Kind)
		if sec.Total != total[k] || sec.Interrupted != cut[k] || sec.Failures != failed[k] {
			t.Errorf("%s: report total %d, %d interrupted, %d failed; the records: %d, %d marked, %d failing unmarked",
				k, sec.Total, sec.Interrupted, sec.Failures, total[k], cut[k], failed[k])
		}
		var byOutcome, counted int64
		for _, c := range sec.ByOutcome {
			counted += c.Count
			byOutcome += c.Interrupted
		}
		if counted != sec.Total || byOutcome != sec.Interrupted {
			t.Errorf("%s: the outcomes count %d records, %d interrupted; the section %d, %d", k, counted, byOutcome, sec.Total, sec.Interrupted)
		}
	}
}

// TestReportOfInterruptedMatrixBinary: SIGINT to a real `mcpdiag matrix
// --record` in the middle of its runs, then `mcpdiag report` of the file:
// the matrix exits 130 as before; the report counts every record once, the
// interrupted run's apart (its server lines hold a JSONRPC_ERROR, a failure
// outcome, that no verdict judged), and exits 3. The client command answers
// baseline with mcpdiag call and ends (that run is judged); on
// errors.jsonrpc_error it makes its call, which the server logs before it
// answers, notes that it did, and then waits, so the run is in flight
// until the signal, whatever the machine's load. No time is waited on:
// the test waits for the baseline run's lines and the mark.
func TestReportOfInterruptedMatrixBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh and SIGINT")
	}
	bin := testBinary(t)
	dir := t.TempDir()
	recs, mark := filepath.Join(dir, "m.jsonl"), filepath.Join(dir, "called")
	client := []string{"--", "sh", "-c", `"$0" call "$1" "$MCP_TOOL" --args "$MCP_ARGS" >/dev/null 2>&1; [ "$MCP_CASE" = baseline ] && exit 0; touch "` + mark + `"; exec sleep 3600`, bin}
	args := []string{bin, "matrix", "--scenarios", "baseline,errors.jsonrpc_error", "--protocol", "2026-07-28", "--parallel", "2",
		"--start-timeout", "1h", "--timeout", "1h", "--record", recs}
	p := startProcess(t, nil, append(args, client...)...)
	testwait.Until(t, "the baseline run's lines and the jsonrpc_error client's call", func() bool {
		st, err := os.Stat(recs)
		_, errMark := os.Stat(mark)
		return err == nil && st.Size() > 0 && errMark == nil
	})
	if code := p.stop(t, syscall.SIGINT); code != 130 {
		t.Errorf("matrix: exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, p.stdout.String(), p.stderr.String())
	}
	if want := "matrix stopped (interrupt after 1 of 2 runs, 1 interrupted)"; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("matrix's stderr lacks %q:\n%s", want, p.stderr.String())
	}
	all := recordtest.ReadFile(t, recs)
	var failingCut int
	for _, r := range all {
		if r.RunInterrupted() && report.Failure(r.Kind, r.Outcome) {
			failingCut++
		}
	}
	if failingCut == 0 {
		t.Fatalf("no record of the interrupted run has a failure outcome: the test shows nothing; records:\n%v", all)
	}
	r := startProcess(t, nil, bin, "report", "--json", recs)
	if code := r.stop(t, nil); code != ExitReportIncomplete {
		t.Errorf("report: exit %d, want %d\nstderr:\n%s", code, ExitReportIncomplete, r.stderr.String())
	}
	if want := "matrix-run-interrupted"; !strings.Contains(r.stderr.String(), want) {
		t.Errorf("report's stderr does not name %s:\n%s", want, r.stderr.String())
	}
	checkAccounted(t, []byte(r.stdout.String()), all)
	text := startProcess(t, nil, bin, "report", recs)
	if code := text.stop(t, nil); code != ExitReportIncomplete {
		t.Errorf("report: exit %d, want %d", code, ExitReportIncomplete)
	}
	if !strings.Contains(text.stdout.String(), "interrupted (cut short by an interrupt: not failures") {
		t.Errorf("the text report does not count the interrupted records:\n%s", text.stdout.String())
	}
}

// TestReportOfInterruptedCallBinary: SIGINT to a real `mcpdiag call
// --record` whose tools/call the server holds: call exits 130 as before,
// and each of its records carries the warning call-interrupted, so that
// `mcpdiag report` counts the call and its cut exchange as interrupted, not
// as failures, and exits 3. Before, report said "calls: 1, 1 failed
// (100.0%)" of a call nobody but the user ended, and exited 0.
func TestReportOfInterruptedCallBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses SIGINT")
	}
	bin := testBinary(t)
	url, hung := hangingServer(t, `[{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]`,
		func(method string) bool { return method == "tools/call" })
	recs := filepath.Join(t.TempDir(), "call.jsonl")
	p := startProcess(t, nil, bin, "call", url+"/mcp", "t", "--protocol", "2026-07-28", "--record", recs)
	if code := interruptWhenHung(t, p, hung, "tools/call"); code != 130 {
		t.Errorf("call: exit %d, want 130\nstderr:\n%s", code, p.stderr.String())
	}
	all := recordtest.ReadFile(t, recs)
	for _, r := range all {
		if !r.HasWarning(record.WarnCallInterrupted) {
			t.Errorf("%s %s (%s) lacks the warning %s: %v", r.Kind, r.Method, r.Outcome, record.WarnCallInterrupted, r.Warnings)
		}
	}
	r := startProcess(t, nil, bin, "report", "--json", recs)
	if code := r.stop(t, nil); code != ExitReportIncomplete {
		t.Errorf("report: exit %d, want %d\nstderr:\n%s", code, ExitReportIncomplete, r.stderr.String())
	}
	if want := "mcpdiag: 3 record(s) of runs an interrupt cut short (warning call-interrupted): the run was incomplete; they are counted apart, not as failures\n"; r.stderr.String() != want {
		t.Errorf("report's stderr %q, want %q", r.stderr.String(), want)
	}
	checkAccounted(t, []byte(r.stdout.String()), all)
	var s report.Summary
	if err := json.Unmarshal([]byte(r.stdout.String()), &s); err != nil {
		t.Fatal(err)
	}
	if s.Calls.Total != 1 || s.Calls.Interrupted != 1 || s.Calls.Failures != 0 || len(all) != 3 {
		t.Errorf("calls: %d, %d interrupted, %d failed (of %d records); want 1, 1, 0 (of 3)", s.Calls.Total, s.Calls.Interrupted, s.Calls.Failures, len(all))
	}
}
