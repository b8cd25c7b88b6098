package matrix_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testbin"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// run runs the matrix and fails the test if it could not run.
func run(t *testing.T, opts matrix.Options) *matrix.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := matrix.Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkOf returns the (aggregated) check of rule in the case named name.
func checkOf(t *testing.T, rep *matrix.Report, name, rule string) judge.Check {
	t.Helper()
	for _, c := range rep.Cases {
		if c.Case.Name != name {
			continue
		}
		for _, ch := range c.Checks() {
			if ch.Rule == rule {
				return ch
			}
		}
	}
	t.Fatalf("no check %s in case %s", rule, name)
	return judge.Check{}
}

// failedRules returns every rule that failed somewhere, with the cases.
// checkOnlyRuleFails checks that rule is the only one that failed in rep,
// and that it failed in each of cases with evidence naming every one of
// words; it returns the failed rules.
func checkOnlyRuleFails(t *testing.T, rep *matrix.Report, rule string, cases, words []string) map[string][]string {
	t.Helper()
	failed := failedRules(rep)
	if len(failed) != 1 || failed[rule] == nil {
		t.Errorf("failed rules %v, want only %s", failed, rule)
	}
	for _, name := range cases {
		ch := checkOf(t, rep, name, rule)
		if ch.Verdict != judge.Fail {
			t.Errorf("%s: %s is %s (%s), want fail", name, rule, ch.Verdict, ch.Evidence)
			continue
		}
		for _, w := range words {
			if !strings.Contains(ch.Evidence, w) {
				t.Errorf("%s: evidence %q does not mention %q", name, ch.Evidence, w)
			}
		}
	}
	return failed
}

func failedRules(rep *matrix.Report) map[string][]string {
	out := map[string][]string{}
	for _, c := range rep.Cases {
		for _, ch := range c.Checks() {
			if ch.Verdict == judge.Fail {
				out[ch.Rule] = append(out[ch.Rule], c.Case.Name)
			}
		}
	}
	return out
}

// TestBuiltinClientPassesEveryRule is the product's own proof: the built-in
// client, with its default retry policy, passes every rule on every case,
// and the rules that matter were really exercised (not all n/a).
func TestBuiltinClientPassesEveryRule(t *testing.T) {
	t.Parallel()
	rep := run(t, matrix.Options{})
	if len(rep.Cases) != len(matrix.Cases()) {
		t.Fatalf("%d cases, want %d", len(rep.Cases), len(matrix.Cases()))
	}
	for _, c := range rep.Cases {
		for _, ch := range c.Checks() {
			if ch.Verdict == judge.Fail {
				t.Errorf("%s: %s failed: %s", c.Case.Name, ch.Rule, ch.Evidence)
			}
		}
		if run := c.Runs[0]; run.Client.Outcome == "" || run.Trace.Posts() == 0 {
			t.Errorf("%s: no outcome or no POST seen (%+v)", c.Case.Name, run.Client)
		}
	}
	exercised := []struct{ name, rule string }{
		{"sse.truncated/delete_item", "safety.unsafe-repeat"},
		{"errors.connection_close/delete_item", "safety.unsafe-repeat"},
		{"errors.http_status_sequence/delete_item", "safety.unsafe-repeat"},
		{"errors.rate_limited", "safety.retry-after"},
		{"errors.rate_limited/delete_item", "safety.retry-after"},
		{"sse.truncated", "safety.backoff"},
		{"sse.truncated", "safety.retry-bound"},
		{"sse.truncated", "spec.reissue-new-id"},
		{"session.expired", "safety.4xx-unchanged"},
		{"errors.unsupported_version", "safety.4xx-unchanged"},
		{"mrtr.load_shedding", "spec.mrtr-new-id"},
		{"mrtr.load_shedding", "spec.mrtr-echo-state"},
		{"elicitation.approval", "spec.mrtr-same-call"},
		{"elicitation.approval", "spec.mrtr-no-invented-state"},
		{"baseline", "spec.accept"},
		{"baseline", "spec.protocol-header"},
		{"baseline@2025-11-25", "spec.protocol-header"},
		{"baseline", "spec.method-headers"},
		{"timeout.uncooperative_hang", "live.finish"},
		{"sse.keepalive_then_hang", "live.finish"},
		{"errors.rate_limited", "client.classification"},
		{"errors.http_status_sequence", "client.classification"},
		{"errors.unsupported_version", "spec.era-fallback"},
		{"baseline", "client.ran"},
		{"auth.token_lifecycle", "client.ran"},
		{"baseline", "loop.identical-calls"},
	}
	for _, e := range exercised {
		if ch := checkOf(t, rep, e.name, e.rule); ch.Verdict != judge.Pass {
			t.Errorf("%s: %s is %s (%s), want pass", e.name, e.rule, ch.Verdict, ch.Evidence)
		}
	}
	// A recovery shows: expected HTTP_ERROR, the client retried after
	// Retry-After and printed TOOL_SUCCESS.
	for _, c := range rep.Cases {
		if c.Case.Name == "errors.rate_limited" {
			row := c.Row()
			if row.Want != classify.ToolSuccess || row.Retries != 1 || row.RetryTag != "429" {
				t.Errorf("rate_limited row: %+v", row)
			}
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(table.String(), "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("table line of %d columns: %q", n, line)
		}
	}
}

// badClient builds matrix/testdata/badclient once per test binary.
func badClient(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, "./testdata/badclient")
}

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Clean()
	os.Exit(code)
}

func selectCases(t *testing.T, protocol string, globs ...string) []matrix.Case {
	t.Helper()
	cs, err := matrix.Select(matrix.Cases(), globs, protocol)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestExternalClientPasses runs the well-behaved mode of the test client
// (a small 2026-07-28 client) through the command path on every 2026-07-28
// case it can handle: every rule passes.
func TestExternalClientPasses(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	var cases []matrix.Case
	for _, c := range selectCases(t, matrix.Era2026) {
		// It speaks 2026-07-28 only: it cannot fall back to 2025-11-25.
		if c.Scenario() != "errors.unsupported_version" {
			cases = append(cases, c)
		}
	}
	rep := run(t, matrix.Options{Cases: cases, Command: []string{bin}})
	for rule, where := range failedRules(rep) {
		t.Errorf("%s failed in %v", rule, where)
	}
	for _, c := range rep.Cases {
		r := c.Runs[0]
		if r.Client.Builtin || r.Client.ExitCode != 0 || r.Client.Outcome == "" || !strings.Contains(r.Client.Stdout, "outcome: ") {
			t.Errorf("%s: client run %+v", c.Case.Name, r.Client)
		}
	}
}

// TestBadClients: each deliberately bad client fails exactly the rule it
// breaks, with evidence, and passes the others.
func TestBadClients(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	tests := []struct {
		mode  string
		rule  string
		cases []string // where it must fail
		globs []string // what runs
		words []string // the evidence names them
	}{
		{"retry-destructive", "safety.unsafe-repeat", []string{"sse.truncated/delete_item"},
			[]string{"sse.truncated", "baseline", "errors.rate_limited", "errors.tool_error"},
			[]string{"delete_item", "POST 2", "id 2", "POST 1", "STREAM_INCOMPLETE", "no Idempotency-Key"}},
		{"reuse-id", "spec.mrtr-new-id", []string{"mrtr.load_shedding", "elicitation.approval"},
			[]string{"mrtr.load_shedding", "elicitation.approval", "baseline", "sse.truncated"},
			[]string{"POST 2", "id 1", "reuses the id of POST 1"}},
		{"ignore-retry-after", "safety.retry-after", []string{"errors.rate_limited"},
			[]string{"errors.rate_limited", "baseline", "errors.connection_close"},
			[]string{"POST 2", "POST 1", "429", "Retry-After: 2"}},
		{"hang", "live.finish", []string{"timeout.uncooperative_hang", "sse.keepalive_then_hang"},
			[]string{"timeout.uncooperative_hang", "sse.keepalive_then_hang", "baseline", "errors.tool_error"},
			[]string{"holds the response", "must give up within 8s"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			cases := selectCases(t, matrix.Era2026, tt.globs...)
			rep := run(t, matrix.Options{Cases: cases, Command: []string{bin, "-bad=" + tt.mode}, Limits: matrix.Limits{RunTimeout: 10 * time.Second}})
			checkOnlyRuleFails(t, rep, tt.rule, tt.cases, tt.words)
			// Everywhere else every rule passes or does not apply.
			var table bytes.Buffer
			if err := rep.WriteTable(&table, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(table.String(), "FAIL "+tt.cases[0]) || !strings.Contains(table.String(), "cites:") {
				t.Errorf("the table does not explain the failure:\n%s", table.String())
			}
		})
	}
}

// TestJUnitShape checks the JUnit XML against the common shape:
// testsuites > testsuite > testcase, with failure and skipped children and
// consistent counts.
func TestJUnitShape(t *testing.T) {
	t.Parallel()
	bin := badClient(t)
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "errors.rate_limited", "baseline"), Command: []string{bin, "-bad=ignore-retry-after"}})
	var buf bytes.Buffer
	if err := rep.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	active := 0 // a matrix run reports the client rules that judge runs (not live.pending, not the probe's)
	for _, r := range judge.Rules() {
		if r.Active && !r.Probe {
			active++
		}
	}
	checkJUnit(t, buf.Bytes(), len(rep.Cases), active)
	if !bytes.Contains(buf.Bytes(), []byte(`<failure message="POST 2 (tools/call echo, id 2) came`)) {
		t.Errorf("no failure with the evidence:\n%s", buf.String())
	}
}

type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    *int     `xml:"tests,attr"`
	Failures *int     `xml:"failures,attr"`
	Skipped  *int     `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    *int   `xml:"tests,attr"`
		Failures *int   `xml:"failures,attr"`
		Errors   *int   `xml:"errors,attr"`
		Skipped  *int   `xml:"skipped,attr"`
		Time     string `xml:"time,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// checkJUnit validates doc: root testsuites, suites with name/tests/
// failures/errors/skipped/time, test cases with name/classname/time, at
// most one of failure and skipped, and totals that add up.
func checkJUnit(t *testing.T, doc []byte, suites, casesPerSuite int) {
	t.Helper()
	if !bytes.HasPrefix(doc, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Errorf("no XML declaration")
	}
	var d junitDoc
	if err := xml.Unmarshal(doc, &d); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if d.Tests == nil || d.Failures == nil || d.Skipped == nil {
		t.Fatalf("testsuites lacks tests/failures/skipped")
	}
	if len(d.Suites) != suites {
		t.Fatalf("%d testsuites, want %d", len(d.Suites), suites)
	}
	tests, failures, skipped := 0, 0, 0
	for _, s := range d.Suites {
		if s.Name == "" || s.Tests == nil || s.Failures == nil || s.Errors == nil || s.Skipped == nil || s.Time == "" {
			t.Errorf("suite %q lacks an attribute", s.Name)
			continue
		}
		if casesPerSuite > 0 && len(s.Cases) != casesPerSuite {
			t.Errorf("suite %s: %d test cases, want %d", s.Name, len(s.Cases), casesPerSuite)
		}
		f, sk := 0, 0
		for _, c := range s.Cases {
			if c.Name == "" || c.Classname == "" || c.Time == "" {
				t.Errorf("suite %s: a test case lacks name, classname or time", s.Name)
			}
			if c.Failure != nil && c.Skipped != nil {
				t.Errorf("%s/%s: both failure and skipped", s.Name, c.Name)
			}
			if c.Failure != nil {
				f++
				if c.Failure.Message == "" || c.Failure.Type != c.Name || !strings.Contains(c.Failure.Text, "cites:") {
					t.Errorf("%s/%s: failure %+v", s.Name, c.Name, c.Failure)
				}
			}
			if c.Skipped != nil {
				sk++
			}
		}
		if f != *s.Failures || sk != *s.Skipped || len(s.Cases) != *s.Tests {
			t.Errorf("suite %s: counts %d/%d/%d, attributes %d/%d/%d", s.Name, len(s.Cases), f, sk, *s.Tests, *s.Failures, *s.Skipped)
		}
		tests, failures, skipped = tests+*s.Tests, failures+*s.Failures, skipped+*s.Skipped
	}
	if tests != *d.Tests || failures != *d.Failures || skipped != *d.Skipped {
		t.Errorf("totals %d/%d/%d, attributes %d/%d/%d", tests, failures, skipped, *d.Tests, *d.Failures, *d.Skipped)
	}
}

// TestRepeatAndRecords runs a case three times with --record: the
// verdicts aggregate, every run has its own endpoint, and the record file
// holds the server's lines and the client's records.
func TestRepeatAndRecords(t *testing.T) {
	t.Parallel()
	var rec lines
	rep := run(t, matrix.Options{Cases: selectCases(t, "", "mrtr.load_shedding"), Repeat: 3, Records: &rec})
	c := rep.Cases[0]
	if len(c.Runs) != 3 || c.Verdict() != judge.Pass {
		t.Fatalf("%d runs, verdict %s", len(c.Runs), c.Verdict())
	}
	seen := map[string]bool{}
	for _, r := range c.Runs {
		if seen[r.Endpoint] {
			t.Errorf("endpoint %s reused", r.Endpoint)
		}
		seen[r.Endpoint] = true
	}
	kinds := map[string]int{}
	for _, l := range rec.all() {
		var v struct {
			Kind  string `json:"kind"`
			Fault *struct {
				Count *struct{} `json:"count"`
			} `json:"fault"`
		}
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("record line %s: %v", l, err)
		}
		if v.Kind == "exchange" && v.Fault != nil && v.Fault.Count != nil {
			v.Kind = "exchange at the server"
		}
		kinds[v.Kind]++
	}
	// Each run: 3 POSTs in the server's log (exchange records with the
	// server's count); 3 exchanges and a call of the client.
	if kinds["exchange at the server"] != 9 || kinds["exchange"] != 9 || kinds["call"] != 3 || kinds["server"] != 0 {
		t.Errorf("record kinds %v", kinds)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var obj matrix.CaseJSON
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if len(obj.Runs) != 3 || obj.Runs[0].Posts[1].Issued == "" || obj.Runs[0].Posts[2].State != obj.Runs[0].Posts[1].Issued {
		t.Errorf("JSON runs: %+v", obj.Runs)
	}
}

// lines is a record.LineWriter that keeps the lines.
type lines struct {
	mu sync.Mutex
	l  [][]byte
}

func (w *lines) WriteLine(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.l = append(w.l, bytes.Clone(b))
	return nil
}
func (w *lines) Close() error { return nil }
func (w *lines) all() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.l
}

// failing is a record.LineWriter whose every write fails; it counts them.
type failing struct {
	mu sync.Mutex
	n  int
}

func (w *failing) WriteLine([]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	return errors.New("no space left on device")
}
func (w *failing) Close() error { return nil }

// TestRecordsLostAreAllTried: when the --record sink fails, every line of
// every run is still handed to it, so that its count of losses is the
// number of records lost. Before, the matrix stopped at the first failed
// line, and the sink said "1 of 1 records lost" for a run of 10 lines
// (found by newuser8 with --record /dev/full on two cases).
func TestRecordsLostAreAllTried(t *testing.T) {
	t.Parallel()
	var w failing
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := matrix.Run(ctx, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline", "errors.tool_error"), Records: &w})
	if err == nil || !strings.Contains(err.Error(), "matrix: writing records: no space left on device") {
		t.Errorf("error %v, want the records' first failure", err)
	}
	want := 0
	for _, c := range rep.Cases {
		for _, r := range c.Runs {
			want += len(r.Lines)
		}
	}
	if want < 8 || w.n != want {
		t.Errorf("%d lines tried, want every line of the runs: %d", w.n, want)
	}
}

func TestCasesAndSelect(t *testing.T) {
	cases := matrix.Cases()
	names := map[string]matrix.Case{}
	for _, c := range cases {
		if _, dup := names[c.Name]; dup {
			t.Errorf("duplicate case %s", c.Name)
		}
		names[c.Name] = c
	}
	for _, want := range []string{"baseline", "baseline@2025-11-25", "session.expired", "sse.truncated/delete_item", "sse.truncated/delete_item@2025-11-25", "mrtr.load_shedding"} {
		if _, ok := names[want]; !ok {
			t.Errorf("no case %s", want)
		}
	}
	for _, absent := range []string{"session.expired@2025-11-25", "mrtr.load_shedding@2025-11-25", "elicitation.approval@2025-11-25", "errors.unsupported_version@2025-11-25", "sse.server_request@2025-11-25"} {
		if _, ok := names[absent]; ok {
			t.Errorf("case %s: the scenario does not apply to that era", absent)
		}
	}
	if c := names["timeout.uncooperative_hang"]; !c.Holds || c.Timeout != 5*time.Second || len(c.Params) == 0 {
		t.Errorf("hang case %+v: want the quick params and timeout", c)
	}
	got, err := matrix.Select(cases, []string{"sse.trunc*"}, matrix.Era2025)
	if err != nil {
		t.Fatal(err)
	}
	var gotNames []string
	for _, c := range got {
		gotNames = append(gotNames, c.Name)
	}
	sort.Strings(gotNames)
	if strings.Join(gotNames, " ") != "sse.truncated/delete_item@2025-11-25 sse.truncated@2025-11-25" {
		t.Errorf("select: %v", gotNames)
	}
	if _, err := matrix.Select(cases, []string{"no.such"}, ""); err == nil {
		t.Error("an empty selection is not an error")
	}
	if _, err := matrix.Select(cases, []string{"["}, ""); err == nil {
		t.Error("a bad glob is not an error")
	}
	if _, err := matrix.Select(cases, nil, "2024-11-05"); err == nil {
		t.Error("a bad protocol is not an error")
	}
}

func TestPrintedOutcome(t *testing.T) {
	tests := []struct {
		out  string
		want classify.Outcome
	}{
		{"", ""},
		{"hello\noutcome: TOOL_SUCCESS\n", classify.ToolSuccess},
		{"outcome: HTTP_ERROR\nretrying\nOutcome = \"TOOL_SUCCESS\"\n", classify.ToolSuccess},
		{"MCP_OUTCOME=STREAM_INCOMPLETE", classify.StreamIncomplete},
		{"outcome: NOT_AN_OUTCOME", ""},
		{"HTTP_ERROR (transport layer) — tool \"echo\" on 2026-07-28\n  what: …", classify.HTTPError},
		{`{"v":1,"kind":"exchange","outcome":"HTTP_ERROR"}` + "\n" + `{"v":1,"kind":"call","outcome":"TOOL_ERROR"}`, classify.ToolError},
		{"the outcome: TOOL_SUCCESS was good", ""},
	}
	for _, tt := range tests {
		if got := matrix.PrintedOutcome(tt.out); got != tt.want {
			t.Errorf("PrintedOutcome(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

func TestEnvironment(t *testing.T) {
	c := selectCases(t, "", "elicitation.approval")[0]
	env := strings.Join(matrix.Environment(&c, "http://127.0.0.1:1/s/x/mcp"), "\n")
	for _, want := range []string{"MCP_URL=http://127.0.0.1:1/s/x/mcp", "MCP_SCENARIO=elicitation.approval", "MCP_CASE=elicitation.approval",
		"MCP_TOOL=approve", `MCP_ARGS={"change":"rename the report"}`, "MCP_TIMEOUT_MS=10000", `MCP_INPUT={"approval"`} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "MCP_PROTOCOL") {
		t.Errorf("MCP_PROTOCOL set for a case that pins none")
	}
	c = selectCases(t, "", "session.expired")[0]
	if env := strings.Join(matrix.Environment(&c, "u"), "\n"); !strings.Contains(env, "MCP_PROTOCOL=2025-11-25") {
		t.Errorf("no MCP_PROTOCOL for a pinned case:\n%s", env)
	}
}

func TestRulesCite(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range judge.Rules() {
		if r.ID == "" || r.Title == "" || r.Cite == "" || r.Applies == nil || r.Check == nil || !(r.Active || r.Passive || r.Probe) {
			t.Errorf("rule %+v is incomplete", r.ID)
		}
		if seen[r.ID] {
			t.Errorf("duplicate rule %s", r.ID)
		}
		seen[r.ID] = true
	}
}

// TestCommandThatCannotRun: a client that does not start fails live.finish
// (the matrix never passes a client it could not run), and a stale MCP_
// variable of the matrix's own environment does not reach the client.
func TestCommandThatCannotRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "client")
	if err := os.WriteFile(notExec, []byte("not a program"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline"), Command: []string{notExec}})
	if ch := checkOf(t, rep, "baseline", "live.finish"); ch.Verdict != judge.Fail || !strings.Contains(ch.Evidence, "did not run") {
		t.Errorf("live.finish: %+v", ch)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	rep = run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline"), Env: []string{"MCP_PROTOCOL=stale", "PATH=" + os.Getenv("PATH")},
		Command: []string{"sh", "-c", `test -z "$MCP_PROTOCOL" && test "$MCP_URL" = "$1" && echo outcome: TOOL_SUCCESS`, "sh"}})
	if r := rep.Cases[0].Runs[0]; r.Client.Outcome != classify.ToolSuccess || r.Client.ExitCode != 0 {
		t.Errorf("environment: %+v", r.Client)
	}
}

// verdicts maps case → rule → verdict.
func verdicts(rep *matrix.Report) map[string]map[string]judge.Verdict {
	out := map[string]map[string]judge.Verdict{}
	for _, c := range rep.Cases {
		m := map[string]judge.Verdict{}
		for _, ch := range c.Checks() {
			m[ch.Rule] = ch.Verdict
		}
		out[c.Case.Name] = m
	}
	return out
}

// TestSlowStartingClientSameVerdicts (issue 10 defect 7): a client that
// takes 2 s to start (an interpreter under load) before its first request
// gets the same verdicts in two identical runs, all passing: the time
// bounds count from its first request, not from its process start. The
// grace is 2 s so that, counted from the process start, the hang cases'
// bound (2 s timeout + 2 s) is always exceeded (2 s start-up + 2 s timeout
// + the exit), whatever the machine's load.
func TestSlowStartingClientSameVerdicts(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := badClient(t)
	cases := selectCases(t, matrix.Era2026, "timeout.uncooperative_hang", "sse.keepalive_then_hang", "baseline", "errors.rate_limited")
	opts := matrix.Options{Cases: cases, Command: []string{"sh", "-c", `sleep 2; exec "$0" "$@"`, bin}, Parallel: len(cases), Limits: matrix.Limits{LivenessGrace: 2 * time.Second}}
	var got []map[string]map[string]judge.Verdict
	for range 2 {
		rep := run(t, opts)
		for rule, where := range failedRules(rep) {
			t.Errorf("%s failed in %v", rule, where)
		}
		for _, c := range rep.Cases {
			r := c.Runs[0]
			if r.Client.NoRequest || r.Client.Startup < 2*time.Second || r.Client.Outcome == "" {
				t.Errorf("%s: the client did not start late and call: %+v", c.Case.Name, r.Client)
			}
			if ch := checkOf(t, rep, c.Case.Name, "live.finish"); !strings.Contains(ch.Evidence, "after its first request") {
				t.Errorf("%s: live.finish evidence %q does not say what it counts from", c.Case.Name, ch.Evidence)
			}
		}
		got = append(got, verdicts(rep))
	}
	a, _ := json.Marshal(got[0])
	b, _ := json.Marshal(got[1])
	if !bytes.Equal(a, b) {
		t.Errorf("two identical runs differ:\n%s\n%s", a, b)
	}
}

// TestClientThatSendsNothingIsStopped: a client that never sends a request
// is killed at the start-up limit and reported as not started: client.ran
// fails "did not start within 1s", every other rule is n/a (before, it
// failed live.finish, a verdict on its liveness it never showed).
func TestClientThatSendsNothingIsStopped(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	rep := run(t, matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline"), Command: []string{"sh", "-c", "sleep 30"},
		Limits: matrix.Limits{StartTimeout: time.Second}})
	r := rep.Cases[0].Runs[0]
	if !r.Client.NoRequest || !r.Client.Killed || !r.Client.NotStarted {
		t.Errorf("client run %+v: want no request, killed, not started", r.Client)
	}
	checkNotStarted(t, rep, "baseline", "1s")
}

// checkNotStarted asserts the verdicts of a run whose client did not start
// within limit: client.ran fails saying so, every other rule is n/a.
func checkNotStarted(t *testing.T, rep *matrix.Report, name, limit string) {
	t.Helper()
	want := "the client did not start within " + limit + " (the start-up limit, from its start to its first request): it sent no request, so nothing of the case was tested"
	for _, c := range rep.Cases {
		if c.Case.Name != name {
			continue
		}
		for _, r := range c.Runs {
			for _, ch := range r.Checks {
				wantV := judge.NotApplicable
				if ch.Rule == "client.ran" {
					wantV = judge.Fail
				}
				if ch.Verdict != wantV || ch.Evidence != want {
					t.Errorf("%s run %d: %s %s: %s\nwant %s: %s", name, r.Repeat, ch.Rule, ch.Verdict, ch.Evidence, wantV, want)
				}
			}
			if r.Verdict() != judge.Fail {
				t.Errorf("%s run %d: verdict %s, want fail", name, r.Repeat, r.Verdict())
			}
		}
	}
}

// TestSlowStartOnBothSidesOfTheLimit: a real client that sleeps before it
// starts (as Node took 8-10 s under load, at the old 10 s limit). Past the
// start-up limit, every run of every case is "did not start within 1s":
// client.ran fails, no other rule judges it, the same in two identical
// runs; a slow start can pass nothing the client did not do. Within the
// limit (a 1 s sleep under a 20 s limit) every rule it meets passes.
// Before, live.finish and client.ran failed with other evidence, and a
// client killed at the limit was judged as if it had run.
func TestSlowStartOnBothSidesOfTheLimit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := badClient(t)
	cases := selectCases(t, matrix.Era2026, "baseline", "timeout.uncooperative_hang", "errors.rate_limited")
	late := matrix.Options{Cases: cases, Command: []string{"sh", "-c", `sleep 4; exec "$0" "$@"`, bin}, Parallel: len(cases), Repeat: 2,
		Limits: matrix.Limits{StartTimeout: time.Second}}
	for range 2 {
		rep := run(t, late)
		for _, c := range rep.Cases {
			checkNotStarted(t, rep, c.Case.Name, "1s")
			for _, r := range c.Runs {
				if !r.Client.NotStarted || !r.Client.NoRequest || !r.Client.Killed || len(r.Lines) != 0 {
					t.Errorf("%s run %d: client %+v, %d lines: want not started, killed, no request, no lines", c.Case.Name, r.Repeat, r.Client, len(r.Lines))
				}
			}
		}
	}
	inTime := matrix.Options{Cases: cases, Command: []string{"sh", "-c", `sleep 1; exec "$0" "$@"`, bin}, Parallel: len(cases),
		Limits: matrix.Limits{StartTimeout: 20 * time.Second}}
	rep := run(t, inTime)
	for rule, where := range failedRules(rep) {
		t.Errorf("%s failed in %v", rule, where)
	}
	for _, c := range rep.Cases {
		r := c.Runs[0]
		if r.Client.NotStarted || r.Client.NoRequest || r.Client.Startup < time.Second {
			t.Errorf("%s: client %+v: want started late, with a request", c.Case.Name, r.Client)
		}
		if ch := checkOf(t, rep, c.Case.Name, "client.ran"); ch.Verdict != judge.Pass {
			t.Errorf("%s: client.ran %s: %s", c.Case.Name, ch.Verdict, ch.Evidence)
		}
	}
}

// TestRunStoppedKeepsWhatFinished: from Go, a context that ends mid-run
// (here after the first run finished, a hang still in flight) gives the
// report of the finished runs, marked Incomplete, and an error wrapping
// the context's cause.
func TestRunStoppedKeepsWhatFinished(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stopped by the test")
	opts := matrix.Options{Cases: selectCases(t, matrix.Era2026, "baseline", "timeout.uncooperative_hang"), Parallel: 2,
		Progress: func(c *matrix.CaseResult, _ *matrix.RunResult) { cancel(stop) }}
	rep, err := matrix.Run(ctx, opts)
	if !errors.Is(err, stop) || rep == nil || rep.Incomplete == nil {
		t.Fatalf("Run: %v, report %+v", err, rep)
	}
	in := rep.Incomplete
	if in.Finished != 1 || in.Planned != 2 || in.Interrupted != 1 || in.Reason != stop.Error() || len(in.NotRun) != 1 || in.NotRun[0] != "timeout.uncooperative_hang" {
		t.Errorf("incomplete %+v", in)
	}
	if len(rep.Cases) != 1 || rep.Cases[0].Case.Name != "baseline" || len(rep.Cases[0].Runs) != 1 || rep.Cases[0].Verdict() != judge.Pass {
		t.Errorf("cases %+v", rep.Cases)
	}
}
