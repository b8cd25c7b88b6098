package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/record"
)

func TestMatrixCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junit, recs := filepath.Join(dir, "m.xml"), filepath.Join(dir, "m.jsonl")
	var out, errb bytes.Buffer
	code := run([]string{"matrix", "--scenarios", "baseline,errors.rate_limited", "--protocol", "2026-07-28", "--junit", junit, "--record", recs}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"SCENARIO", "baseline", "errors.rate_limited", "  └ delete_item", "TOOL_SUCCESS", "1 429", "pass", "3 runs: 3 passed, 0 not tested, 0 failed", "Finished in",
		fmt.Sprintf(", 3 runs, %d at a time, seed 1\n", matrix.DefaultParallel(false))} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(x, &suites); err != nil || len(suites.Suites) != 3 || suites.Tests == 0 {
		t.Errorf("junit: %v %+v", err, suites)
	}
	if want := fmt.Sprintf(`<property name="parallel" value="%d"></property>`, matrix.DefaultParallel(false)); !bytes.Contains(x, []byte(want)) {
		t.Errorf("junit lacks %s", want)
	}
	kinds := map[string]int{}
	for _, rec := range recordtest.ReadFile(t, recs) {
		k := string(rec.Kind)
		if rec.Kind == record.KindExchange && rec.Fault != nil && rec.Fault.Count != nil {
			k = "exchange at the server" // mcpdiag serve's log line
		}
		kinds[k]++
	}
	if kinds["exchange at the server"] == 0 || kinds["exchange"] == 0 || kinds["call"] != 3 || kinds["server"] != 0 {
		t.Errorf("record kinds %v", kinds)
	}
}

func TestMatrixCommandJSON(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run([]string{"matrix", "--json", "--parallel", "3", "--scenarios", "mrtr.load_shedding"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d JSON lines, want 1:\n%s", len(lines), out.String())
	}
	var v struct {
		Case     string `json:"case"`
		Verdict  string `json:"verdict"`
		Rounds   int    `json:"rounds"`
		Parallel int    `json:"parallel"`
		Checks   []struct {
			Rule, Verdict, Evidence, Cite string
		} `json:"checks"`
		Runs []struct {
			Posts []json.RawMessage `json:"posts"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &v); err != nil {
		t.Fatal(err)
	}
	if v.Case != "mrtr.load_shedding" || v.Verdict != "pass" || v.Rounds != 1 || v.Parallel != 3 || len(v.Checks) == 0 || v.Checks[0].Cite == "" || len(v.Runs) != 1 || len(v.Runs[0].Posts) != 3 {
		t.Errorf("JSON: %+v", v)
	}
}

// TestMatrixCommandExitCodes: 1 when a verdict fails (a client that
// prints the wrong classification, and sends nothing), 2 for usage.
func TestMatrixCommandExitCodes(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	var out, errb bytes.Buffer
	code := run([]string{"matrix", "--scenarios", "baseline", "--protocol", "2026-07-28", "--", "sh", "-c", `test -n "$MCP_URL" && test "$MCP_TOOL" = echo && echo "outcome: TOOL_ERROR"`, "sh"}, nil, &out, &errb)
	if code != 1 {
		t.Errorf("a failing verdict: exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"FAIL client.classification in 1 run: baseline (2026-07-28)", "printed TOOL_ERROR, but no tools/call reached the server", "cites:",
		"FAIL client.ran in 1 run: baseline (2026-07-28)", "the client sent no request"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	usage := [][]string{
		{"matrix", "--bogus"},
		{"matrix", "node"},
		{"matrix", "--scenarios", "no.such.scenario"},
		{"matrix", "--protocol", "2024-11-05"},
		{"matrix", "--repeat", "0"},
		{"matrix", "--wide", "--json"},
		{"matrix", "--", "/no/such/client"},
		{"matrix", "--from-records", "/no/such/file"},
		{"matrix", "--from-records", "-", "--scenarios", "x"},
	}
	for _, args := range usage {
		out.Reset()
		errb.Reset()
		if code := run(args, strings.NewReader(""), &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}

func TestMatrixFromRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, recs ...*record.Record) string {
		var b bytes.Buffer
		for _, r := range recs {
			line, err := record.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ex := func(id int, hdr map[string]string) *record.Record {
		h := map[string][]string{"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}
		for k, v := range hdr {
			h[k] = []string{v}
		}
		r := &record.Record{Kind: record.KindExchange, Time: time.Date(2026, 8, 1, 12, 0, id, 0, time.UTC), Client: "agent@1", HTTPMethod: "POST",
			Status: 200, Outcome: classify.ToolSuccess, RequestHeaders: h}
		r.SetRequest([]byte(`{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"echo","arguments":{"n":` + string(rune('0'+id)) + `}}}`))
		return r
	}
	good := write("good.jsonl", ex(1, nil), ex(2, nil))
	bad := write("bad.jsonl", ex(1, nil), ex(2, map[string]string{"Mcp-Name": "other"}))
	var out, errb bytes.Buffer
	if code := run([]string{"matrix", "--from-records", good}, nil, &out, &errb); code != 0 {
		t.Errorf("good records: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "agent@1 (no session)") || !strings.Contains(out.String(), "note: no request bodies") {
		t.Errorf("good records:\n%s", out.String())
	}
	out.Reset()
	junit := filepath.Join(dir, "p.xml")
	if code := run([]string{"matrix", "--from-records", bad, "--junit", junit}, nil, &out, &errb); code != 1 {
		t.Errorf("bad records: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), `FAIL agent@1 (no session): spec.method-headers`) || !strings.Contains(out.String(), `Mcp-Name "other"`) {
		t.Errorf("bad records:\n%s", out.String())
	}
	if b, err := os.ReadFile(junit); err != nil || !bytes.Contains(b, []byte("<failure")) {
		t.Errorf("junit: %v\n%s", err, b)
	}
	out.Reset()
	b, _ := os.ReadFile(bad)
	if code := run([]string{"matrix", "--from-records", "-", "--json"}, bytes.NewReader(b), &out, &errb); code != 1 || !strings.Contains(out.String(), `"verdict":"fail"`) {
		t.Errorf("stdin, --json: exit %d\n%s", code, out.String())
	}
	empty := write("empty.jsonl")
	if code := run([]string{"matrix", "--from-records", empty}, nil, &out, &errb); code != 2 {
		t.Errorf("no records: exit %d, want 2", code)
	}
}
