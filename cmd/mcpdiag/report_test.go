package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// writeRun writes a record file the way mcpdiag call does (record.Call and
// the record writer): n calls of "search", each taking ms; the first errs
// of them end in TOOL_ERROR after a 503 that was retried. It returns the
// bytes.
func writeRun(t *testing.T, n, errs int, ms float64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := record.NewStreamWriter(&buf, record.Encoder{})
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	exchange := func(c *record.Call, o classify.Outcome, status int, d float64, origin record.RetryOrigin) {
		r := &record.Record{Kind: record.KindExchange, Time: now, Method: "tools/call", Tool: "search", HTTPMethod: http.MethodPost,
			URL: "http://127.0.0.1:8080/mcp", Status: status, Outcome: o, Layer: o.Layer(), RetryOrigin: origin,
			Timings: record.Timings{Total: record.Duration(d * float64(time.Millisecond))}}
		now = now.Add(time.Duration(d * float64(time.Millisecond)))
		c.Add(r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		c := record.NewCall(record.Record{ID: fmt.Sprintf("CALL%04d", i+1), Client: "test@1"})
		if i < errs {
			exchange(c, classify.HTTPError, 503, ms/2, record.OriginNone)
			exchange(c, classify.ToolError, 200, ms/2, record.OriginPolicy)
		} else {
			exchange(c, classify.ToolSuccess, 200, ms, record.OriginNone)
		}
		if err := w.Write(c.Summary()); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, 20, 1, 10)
	runFile := writeFile(t, dir, "run.jsonl", good)
	worse := writeFile(t, dir, "worse.jsonl", writeRun(t, 20, 4, 30))
	malformed := writeFile(t, dir, "bad.jsonl", append(append([]byte("{oops\n"), good...), "[1]\n"...))
	many := writeFile(t, dir, "many.jsonl", append(bytes.Repeat([]byte("x\n"), 25), good...))
	// The baseline is this command's own --json output.
	var base, errb bytes.Buffer
	if code := run([]string{"report", "--json", runFile}, nil, &base, &errb); code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, errb.String())
	}
	baseline := writeFile(t, dir, "baseline.json", base.Bytes())
	exchangesOnly := writeFile(t, dir, "ex.jsonl", []byte(`{"kind":"exchange","outcome":"TOOL_SUCCESS"}`+"\n"))
	var exBase bytes.Buffer
	run([]string{"report", "--json", exchangesOnly}, nil, &exBase, &errb)
	exBaseline := writeFile(t, dir, "exbase.json", exBase.Bytes())
	garbage := writeFile(t, dir, "garbage.json", []byte(`{"calls":1}`))
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(runFile, link); err != nil {
		t.Fatal(err)
	}
	copied := writeFile(t, dir, "copy.jsonl", good)
	// The same run again: other records (the writer gives each a new id).
	other := writeRun(t, 20, 1, 10)
	var firstOfGood struct{ ID string }
	if err := json.Unmarshal(good[:bytes.IndexByte(good, '\n')], &firstOfGood); err != nil || firstOfGood.ID == "" {
		t.Fatalf("the run's first record has no id: %v", err)
	}

	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		out    []string // in stdout
		errs   []string // each a line of stderr, in order (prefix match)
		noOut  bool
		hasErr bool // stderr may hold more lines than errs
	}{
		{name: "file", args: []string{runFile}, out: []string{"run.jsonl, 41 records", "calls: 20, 1 failed (5.0%)", "exchanges: 21, 2 failed", "TOOL_ERROR", "CALL0001"}},
		{name: "stdin without FILE", stdin: string(good), out: []string{"stdin, 41 records", "calls: 20"}},
		{name: "stdin as -", args: []string{"-"}, stdin: string(good), out: []string{"calls: 20"}},
		{name: "a file and stdin", args: []string{runFile, "-"}, stdin: string(other), out: []string{"2 files, 82 records", "calls: 40"}},
		{name: "empty stdin", stdin: "", code: 2, noOut: true, errs: []string{"mcpdiag: stdin: no records (empty input)"}},
		{name: "malformed lines are skipped", args: []string{malformed}, out: []string{"2 malformed lines skipped", "calls: 20"},
			errs: []string{"mcpdiag: " + malformed + ":1: skipped malformed line: ", "mcpdiag: " + malformed + ":43: skipped malformed line: "}},
		{name: "many malformed lines", args: []string{many}, out: []string{"25 malformed lines skipped", "calls: 20"}, errs: []string{"mcpdiag: " + many + ":1: "}, hasErr: true},
		{name: "fail-on absent", args: []string{runFile, "--fail-on", "JSONRPC_ERROR"}, out: []string{"gates (calls): passed"}},
		{name: "fail-on present", args: []string{runFile, "--fail-on", "jsonrpc_error,TOOL_ERROR"}, code: 1, out: []string{"gates (calls): FAILED"},
			errs: []string{"mcpdiag: gate failed: calls: TOOL_ERROR in 1 of 20 (5.0%), e.g. CALL0001"}},
		{name: "fail-on repeated flag", args: []string{runFile, "--fail-on", "JSONRPC_ERROR", "--fail-on", "TOOL_ERROR"}, code: 1, errs: []string{"mcpdiag: gate failed: calls: TOOL_ERROR"}},
		{name: "fail-on a retried-away outcome", args: []string{runFile, "--fail-on", "HTTP_ERROR"}},
		{name: "fail-on exchanges", args: []string{runFile, "--fail-on", "HTTP_ERROR", "--gate-on", "exchanges"}, code: 1, errs: []string{"mcpdiag: gate failed: exchanges: HTTP_ERROR in 1 of 21"}},
		{name: "baseline: same run", args: []string{runFile, "--baseline", baseline}, out: []string{"gates (calls): passed"}},
		{name: "baseline: worse run", args: []string{worse, "--baseline", baseline}, code: 1, errs: []string{
			"mcpdiag: gate failed: calls: failure rate 20.0% (4/20) vs baseline 5.0% (1/20): +15.0 points > allowed +5.0 points",
			"mcpdiag: gate failed: calls: TOOL_ERROR rate 20.0% (4/20) vs baseline 5.0% (1/20): +15.0 points > allowed +5.0 points",
			"mcpdiag: gate failed: calls: p95 30.0ms vs baseline 10.0ms: ×3.00 > allowed ×1.50"}},
		{name: "baseline: worse run within wide thresholds", args: []string{worse, "--baseline", baseline, "--max-rate-increase", "0.2", "--max-p95-ratio", "4"}},
		{name: "baseline and json", args: []string{worse, "--baseline", baseline, "--json"}, code: 1, out: []string{`"passed": false`, `"gate": "p95"`}, hasErr: true},
		{name: "unknown outcome", args: []string{runFile, "--fail-on", "TOOL_ERROR,NOPE"}, code: 2, noOut: true, errs: []string{`mcpdiag: --fail-on: unknown outcome "NOPE"`}},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.jsonl")}, code: 2, noOut: true, errs: []string{"mcpdiag: cannot open "}},
		{name: "directory", args: []string{dir}, code: 2, noOut: true, errs: []string{"mcpdiag: " + dir + " is a directory"}},
		{name: "missing baseline", args: []string{runFile, "--baseline", filepath.Join(dir, "nope.json")}, code: 2, noOut: true, errs: []string{"mcpdiag: --baseline: "}},
		{name: "baseline not a report", args: []string{runFile, "--baseline", garbage}, code: 2, noOut: true, errs: []string{"mcpdiag: --baseline " + garbage + ": not the --json output of mcpdiag report"}},
		{name: "baseline without calls", args: []string{runFile, "--baseline", exBaseline}, code: 2, noOut: true, errs: []string{"mcpdiag: --baseline " + exBaseline + ": baseline has no calls to compare with"}},
		{name: "baseline without calls, gated on exchanges", args: []string{runFile, "--baseline", exBaseline, "--gate-on", "exchange"}, code: 1, errs: []string{"mcpdiag: gate failed: exchanges: failure rate"}, hasErr: true},
		{name: "bad --max-rate-increase", args: []string{runFile, "--max-rate-increase", "2"}, code: 2, noOut: true, errs: []string{"mcpdiag: --max-rate-increase must be between 0 and 1"}},
		{name: "bad --max-p95-ratio", args: []string{runFile, "--max-p95-ratio", "0"}, code: 2, noOut: true, errs: []string{"mcpdiag: --max-p95-ratio must be positive"}},
		{name: "bad --top", args: []string{runFile, "--top", "0"}, code: 2, noOut: true, errs: []string{"mcpdiag: --top must be at least 1"}},
		{name: "bad --gate-on", args: []string{runFile, "--gate-on", "tools"}, code: 2, noOut: true, errs: []string{`mcpdiag: --gate-on "tools"`}},
		{name: "unknown flag", args: []string{runFile, "--nope"}, code: 2, noOut: true, errs: []string{"mcpdiag: unknown flag: --nope"}},
		{name: "har into a missing directory", args: []string{runFile, "--har", filepath.Join(dir, "no", "x.har")}, code: 2, noOut: true, errs: []string{"mcpdiag: --har: "}},
		{name: "har over an input", args: []string{runFile, "--har", runFile}, code: 2, noOut: true, errs: []string{"mcpdiag: --har " + runFile + " would overwrite an input"}},
		// One input given twice would have every count doubled, without a
		// word (before: "2 files, 82 records", "calls: 40", exit 0).
		{name: "a file twice", args: []string{runFile, worse, runFile}, code: 2, noOut: true,
			errs: []string{"mcpdiag: " + runFile + " and " + runFile + " are the same file: its records would be counted twice; name each input once"}},
		{name: "a file twice, spelled otherwise", args: []string{runFile, filepath.Join(dir, ".", "..", filepath.Base(dir), "run.jsonl")}, code: 2, noOut: true,
			errs: []string{"mcpdiag: " + runFile + " and " + filepath.Join(dir, ".", "..", filepath.Base(dir), "run.jsonl") + " are the same file"}},
		{name: "a file and a link to it", args: []string{link, runFile}, code: 2, noOut: true,
			errs: []string{"mcpdiag: " + link + " and " + runFile + " are the same file"}},
		{name: "stdin twice", args: []string{"-", runFile, "-"}, stdin: string(good), code: 2, noOut: true,
			errs: []string{"mcpdiag: stdin (-) is given twice: name each input once"}},
		// The same records by another route than the same file: cat f |
		// mcpdiag report f -, a copy (before: "2 files, 82 records",
		// "calls: 40", exit 0). Two inputs whose first records are the same
		// record (its id) are refused; other records of the same shape
		// are read.
		{name: "a file and its records on stdin", args: []string{runFile, "-"}, stdin: string(good), code: 2, noOut: true,
			errs: []string{"mcpdiag: stdin begins with record " + firstOfGood.ID + ", as " + runFile + " does: the same records given twice would be counted twice; name each input once"}},
		{name: "two files of the same bytes", args: []string{runFile, copied}, code: 2, noOut: true,
			errs: []string{"mcpdiag: " + copied + " begins with record " + firstOfGood.ID + ", as " + runFile + " does"}},
		{name: "two files of the same shape, other records", args: []string{runFile, writeFile(t, dir, "other.jsonl", other)}, out: []string{"2 files, 82 records", "calls: 40"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"report"}, tt.args...), strings.NewReader(tt.stdin), &out, &errb)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out.String(), errb.String())
			}
			for _, s := range tt.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			if tt.noOut && out.Len() > 0 {
				t.Errorf("stdout should be empty on a usage error:\n%s", out.String())
			}
			lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
			if errb.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.errs) && !tt.hasErr {
				t.Fatalf("stderr has %d lines, want %d:\n%s", len(lines), len(tt.errs), errb.String())
			}
			for i, want := range tt.errs {
				if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
					t.Errorf("stderr line %d is not %q…:\n%s", i+1, want, errb.String())
				}
			}
		})
	}
	// The input named by --har was left alone.
	if data, _ := os.ReadFile(runFile); !bytes.Equal(data, good) {
		t.Error("run.jsonl was modified")
	}
	// Stdin redirected from an input named as well is that input twice.
	same, err := os.Open(runFile)
	if err != nil {
		t.Fatal(err)
	}
	defer same.Close()
	var sameOut, sameErr bytes.Buffer
	if code := run([]string{"report", runFile, "-"}, same, &sameOut, &sameErr); code != 2 || sameOut.Len() > 0 ||
		sameErr.String() != "mcpdiag: "+runFile+" and stdin are the same file: its records would be counted twice; name each input once\n" {
		t.Errorf("report FILE - < FILE: exit %d, stdout %q, stderr %q; want 2, nothing, the refusal", code, sameOut.String(), sameErr.String())
	}
	// Past 20 malformed lines, one more line counts the rest.
	var out bytes.Buffer
	errb.Reset()
	run([]string{"report", many}, nil, &out, &errb)
	if lines := strings.Split(strings.TrimSpace(errb.String()), "\n"); len(lines) != 21 || lines[20] != "mcpdiag: 5 more malformed lines skipped (25 in all)" {
		t.Errorf("stderr for 25 malformed lines:\n%s", errb.String())
	}
}

func TestReportCommandJSONAndHAR(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "run.jsonl", writeRun(t, 5, 2, 8))
	har := filepath.Join(dir, "out.har")
	var out, errb bytes.Buffer
	if code := run([]string{"report", "--json", "--har", har, "--fail-on", "TOOL_ERROR", in}, nil, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errb.String())
	}
	s, err := report.ReadSummary(&out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls.Total != 5 || s.Exchanges.Total != 7 || s.Gates == nil || s.Gates.Passed || len(s.Gates.Failures) != 1 || s.Files[0] != in {
		t.Errorf("summary %+v, gates %+v", s, s.Gates)
	}
	if got := s.Calls.Outcome("TOOL_ERROR"); got.Count != 2 || got.Rate != 0.4 || len(got.Examples) != 2 {
		t.Errorf("TOOL_ERROR %+v", got)
	}
	data, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	var doc report.HAR
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("HAR: %v", err)
	}
	if doc.Log.Version != "1.2" || doc.Log.Creator.Name != "mcpdiag" || doc.Log.Creator.Version == "" || len(doc.Log.Entries) != 7 {
		t.Errorf("HAR log: version %q, creator %+v, %d entries", doc.Log.Version, doc.Log.Creator, len(doc.Log.Entries))
	}
	if e := doc.Log.Entries[0]; e.Response.Status != 503 || e.MCP.Outcome != "HTTP_ERROR" || e.Request.URL != "http://127.0.0.1:8080/mcp" {
		t.Errorf("first entry %+v", e)
	}
	if st, err := os.Stat(har); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("HAR file mode: %v %v", st.Mode(), err)
	}
}

// TestReportHARWholeOrNothing (issue 10 defect 10): a report that fails
// after --har was opened (here: an input that holds no record) leaves the
// existing archive as it was, not truncated, and no temporary file.
func TestReportHARWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	har, bad := filepath.Join(dir, "old.har"), filepath.Join(dir, "bad.jsonl")
	const old = `{"log":{"version":"1.2","entries":[]}}`
	if err := os.WriteFile(har, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not a record\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"report", "--har", har, bad}, nil, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, errb.String())
	}
	if b, _ := os.ReadFile(har); string(b) != old {
		t.Errorf("the old HAR was changed to %q", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Errorf("files left: %v", es)
	}
}
