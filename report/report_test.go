package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// mixedFile is one run of a client: retries, a tool error, an MRTR round, a
// network failure, a tools/list, a call killed before its call line, a
// server line and a dropped line.
func mixedFile(t testing.TB) (data []byte, ids map[string][]string) {
	f := newRecFile(t)
	ids = map[string][]string{}
	var id string
	id, ids["a.ex"] = f.call("tools/call", "search", false,
		ex{outcome: classify.HTTPError, ms: 2, status: 503},
		ex{outcome: classify.ToolSuccess, ms: 9, status: 200, origin: record.OriginPolicy})
	ids["a"] = []string{id}
	id, ids["b.ex"] = f.call("tools/call", "fail", false, ok(classify.ToolError, 4))
	ids["b"] = []string{id}
	id, ids["c.ex"] = f.call("tools/call", "book", false,
		ok(classify.InputRequired, 3),
		ex{outcome: classify.ToolSuccess, ms: 5, status: 200, origin: record.OriginMRTR})
	ids["c"] = []string{id}
	id, ids["d.ex"] = f.call("tools/call", "search", false, ex{outcome: classify.NetworkError, ms: 30})
	ids["d"] = []string{id}
	id, ids["e.ex"] = f.call("tools/list", "", false, ok(classify.ResultSuccess, 1))
	ids["e"] = []string{id}
	id, ids["f.ex"] = f.call("tools/call", "search", true, ok(classify.JSONRPCError, 7))
	ids["f"] = []string{id}
	f.write(&record.Record{Kind: record.KindServer, ID: "SRV1", Method: "tools/call", Tool: "search", PostCount: 1})
	f.write(&record.Record{Kind: record.KindDropped, ID: "DROP1", Dropped: 12})
	return f.bytes(), ids
}

func TestCounts(t *testing.T) {
	t.Parallel()
	data, ids := mixedFile(t)
	s, bad := summarize(t, data, Options{})
	if len(bad) != 0 {
		t.Fatalf("bad lines: %v", bad)
	}
	tool := func(sec *Section, method, name string) ToolStats {
		for _, ts := range sec.ByTool {
			if ts.Method == method && ts.Tool == name {
				return ts
			}
		}
		return ToolStats{}
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"records", s.Records, int64(15)},
		{"dropped", s.Dropped, int64(12)},
		{"calls", s.Calls.Total, int64(6)},
		{"orphan calls", s.Calls.Orphans, int64(1)},
		{"open calls after Close", s.Calls.Open, int64(0)},
		{"call failures", s.Calls.Failures, int64(3)},
		{"exchanges", s.Exchanges.Total, int64(8)},
		{"exchange failures (INPUT_REQUIRED is not one)", s.Exchanges.Failures, int64(4)},
		{"server lines", s.Server.Total, int64(1)},
		{"call layers", s.Calls.ByLayer, map[string]int64{"transport": 1, "protocol": 1, "application": 4}},
		{"exchange layers", s.Exchanges.ByLayer, map[string]int64{"transport": 2, "protocol": 1, "interaction": 1, "application": 4}},
		{"server layers", s.Server.ByLayer, map[string]int64{None: 1}},
		{"calls TOOL_SUCCESS", s.Calls.Outcome("TOOL_SUCCESS").Count, int64(2)},
		{"calls TOOL_SUCCESS examples", s.Calls.Outcome("TOOL_SUCCESS").Examples, []string{ids["a"][0], ids["c"][0]}},
		{"calls HTTP_ERROR (retried away)", s.Calls.Outcome("HTTP_ERROR").Count, int64(0)},
		{"calls JSONRPC_ERROR (the orphan)", s.Calls.Outcome("JSONRPC_ERROR").Examples, ids["f"]},
		{"exchanges HTTP_ERROR", s.Exchanges.Outcome("HTTP_ERROR").Count, int64(1)},
		{"exchanges HTTP_ERROR rate", s.Exchanges.Outcome("HTTP_ERROR").Rate, 1.0 / 8},
		{"exchanges INPUT_REQUIRED failure", s.Exchanges.Outcome("INPUT_REQUIRED").Failure, false},
		{"exchanges TOOL_SUCCESS", s.Exchanges.Outcome("TOOL_SUCCESS").Count, int64(2)},
		{"most frequent outcome first", s.Exchanges.ByOutcome[0].Outcome, "TOOL_SUCCESS"},
		{"calls by tool: search", tool(s.Calls, "tools/call", "search").Total, int64(3)},
		{"calls by tool: search failures", tool(s.Calls, "tools/call", "search").Failures, int64(2)},
		{"calls by tool: search outcomes", tool(s.Calls, "tools/call", "search").ByOutcome, map[string]int64{"TOOL_SUCCESS": 1, "NETWORK_ERROR": 1, "JSONRPC_ERROR": 1}},
		{"calls by tool: tools/list", tool(s.Calls, "tools/list", "").Total, int64(1)},
		{"exchanges by tool: search", tool(s.Exchanges, "tools/call", "search").Total, int64(4)},
		{"exchanges by tool: book", tool(s.Exchanges, "tools/call", "book").ByOutcome, map[string]int64{"INPUT_REQUIRED": 1, "TOOL_SUCCESS": 1}},
		{"biggest tool first", s.Exchanges.ByTool[0].Tool, "search"},
		{"exchange latency samples", s.Exchanges.Latency.Samples, int64(8)},
		{"exchange latency max", s.Exchanges.Latency.MaxMs, 30.0},
		{"exchange p50", s.Exchanges.Latency.P50Ms, 4.0},
		{"slowest exchange", s.Exchanges.Slowest[0].ID, ids["d.ex"][0]},
		{"slowest exchange carries its call", s.Exchanges.Slowest[0].CallID, ids["d"][0]},
		{"slowest exchanges in order", len(s.Exchanges.Slowest), 8},
		{"second slowest", s.Exchanges.Slowest[1].TotalMs, 9.0},
		{"offenders: one group each", len(s.Exchanges.WorstOffenders), 4},
		{"orphan call latency: its exchange", tool(s.Calls, "tools/call", "search").Latency.MaxMs, 30.0},
	}
	for _, tt := range tests {
		if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	// The first call took 2 ms, a 1 ms gap and 9 ms: the call line spans
	// them, retry wait included.
	if got := s.Calls.Slowest[len(s.Calls.Slowest)-1]; got.TotalMs != 1 || got.Tool != "" {
		t.Errorf("fastest call %+v, want the 1 ms tools/list", got)
	}
	if got := findSlow(s.Calls.Slowest, ids["a"][0]); got.TotalMs != 12 {
		t.Errorf("call a: %+v, want 12 ms", got)
	}
}

func findSlow(list []Slow, id string) Slow {
	for _, s := range list {
		if s.ID == id {
			return s
		}
	}
	return Slow{}
}

func TestWorstOffenders(t *testing.T) {
	t.Parallel()
	f := newRecFile(t)
	var searchIDs []string
	for i := range 5 {
		id, _ := f.call("tools/call", "search", false, ok(classify.ToolError, float64(i+1)))
		searchIDs = append(searchIDs, id)
	}
	for range 3 {
		f.call("tools/call", "fetch", false, ex{outcome: classify.HTTPError, ms: 1, status: 500})
	}
	f.call("tools/call", "fetch", false, ok(classify.ToolError, 1))
	for range 10 {
		f.call("tools/call", "fetch", false, ok(classify.ToolSuccess, 1))
	}
	s, _ := summarize(t, f.bytes(), Options{Top: 2, Examples: 2})
	w := s.Calls.WorstOffenders
	if len(w) != 2 {
		t.Fatalf("offenders %+v, want the top 2", w)
	}
	if w[0].Tool != "search" || w[0].Outcome != "TOOL_ERROR" || w[0].Count != 5 || !slices.Equal(w[0].Examples, searchIDs[:2]) {
		t.Errorf("worst %+v, want search TOOL_ERROR ×5 with examples %v", w[0], searchIDs[:2])
	}
	if w[1].Tool != "fetch" || w[1].Outcome != "HTTP_ERROR" || w[1].Count != 3 || w[1].Layer != "transport" {
		t.Errorf("second %+v, want fetch HTTP_ERROR ×3", w[1])
	}
	if len(s.Calls.Slowest) != 2 || s.Calls.Slowest[0].TotalMs != 5 || s.Calls.Slowest[0].ID != searchIDs[4] {
		t.Errorf("slowest %+v, want the 5 ms search first", s.Calls.Slowest)
	}
}

func TestPercentiles(t *testing.T) {
	t.Parallel()
	perm := func(n int, seed uint64) []int { return rand.New(rand.NewPCG(seed, 1)).Perm(n) }
	tests := []struct {
		name          string
		values        []float64
		exact         int
		method        string
		p50, p95, p99 float64
		min, max      float64
	}{
		{"1..1000 ms, exact", scale(perm(1000, 1), 1, 1), 0, MethodExact, 500, 950, 990, 1, 1000},
		{"one sample", []float64{42.5}, 0, MethodExact, 42.5, 42.5, 42.5, 42.5, 42.5},
		{"1..100 ms", scale(perm(100, 2), 1, 1), 0, MethodExact, 50, 95, 99, 1, 100},
		{"0.1..10000 ms by 0.1, sketch", scale(perm(100_000, 3), 0.1, 0.1), 0, MethodSketch, 5000, 9500, 9900, 0.1, 10000},
		{"1..1000 ms, sketch past 10 samples", scale(perm(1000, 4), 1, 1), 10, MethodSketch, 500, 950, 990, 1, 1000},
		{"bimodal 90% fast, 10% slow, sketch", bimodal(), 100, MethodSketch, 10, 2000, 2000, 10, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := latency{limit: cmpOr(tt.exact, DefaultExactSamples)}
			for _, v := range tt.values {
				l.add(v)
			}
			l.add(0)          // not measured: ignored
			l.add(math.NaN()) // ignored
			got := l.summary()
			if got.Method != tt.method || got.Samples != int64(len(tt.values)) {
				t.Fatalf("method %q with %d samples, want %q with %d", got.Method, got.Samples, tt.method, len(tt.values))
			}
			tol := 0.0005 // rounding to the microsecond
			if tt.method == MethodSketch {
				tol = SketchRelativeError
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"p50", got.P50Ms, tt.p50}, {"p95", got.P95Ms, tt.p95}, {"p99", got.P99Ms, tt.p99}} {
				if math.Abs(c.got-c.want) > tol*c.want+0.0005 {
					t.Errorf("%s = %v, want %v ± %.1f%%", c.name, c.got, c.want, 100*tol)
				}
			}
			if got.MinMs != tt.min || got.MaxMs != tt.max {
				t.Errorf("min/max %v/%v, want %v/%v", got.MinMs, got.MaxMs, tt.min, tt.max)
			}
		})
	}
}

// TestSketchAccuracy checks the sketch against exact nearest-rank values on
// a skewed distribution spanning six decades.
func TestSketchAccuracy(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	var vals []float64
	l := latency{limit: 1}
	for range 50_000 {
		v := math.Exp(rng.NormFloat64()*2.5) * 5 // lognormal, median 5 ms
		vals = append(vals, v)
		l.add(v)
	}
	slices.Sort(vals)
	for _, p := range []float64{0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999} {
		exact := vals[nearestRank(p, int64(len(vals)))-1]
		got, _ := l.sk.rank(uint64(nearestRank(p, int64(len(vals)))))
		if math.Abs(got-exact) > SketchRelativeError*exact {
			t.Errorf("p%g: sketch %v, exact %v: off by %.3f%%", 100*p, got, exact, 100*math.Abs(got-exact)/exact)
		}
	}
	if len(l.sk.counts) > 2000 {
		t.Errorf("sketch holds %d buckets", len(l.sk.counts))
	}
}

func scale(perm []int, step, start float64) []float64 {
	out := make([]float64, len(perm))
	for i, v := range perm {
		out[i] = start + float64(v)*step
	}
	return out
}

func bimodal() []float64 {
	var out []float64
	for i := range 1000 {
		if i%10 == 3 {
			out = append(out, 2000)
		} else {
			out = append(out, 10)
		}
	}
	return out
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func TestMalformedLines(t *testing.T) {
	t.Parallel()
	f := newRecFile(t)
	f.call("tools/call", "echo", false, ok(classify.ToolSuccess, 1))                    // lines 1-2
	f.raw(`{"v":1,"kind":"exchange","id":"CUT`)                                         // 3: cut by a crash
	f.raw(`not json at all`)                                                            // 4
	f.raw(``)                                                                           // 5: blank, skipped silently
	f.raw(`{"kind":"exchange","postCount":"two"}`)                                      // 6: wrong type
	f.call("tools/call", "echo", false, ok(classify.ToolError, 2))                      // 7-8
	f.raw(`[1,2,3]`)                                                                    // 9
	data := append(f.bytes(), `{"kind":"call","id":"LAST","outcome":"TOOL_SUCCESS"`...) // 10: cut, no "\n"
	acc := New(Options{})
	var lines []int64
	n, err := Read(bytes.NewReader(data), "crash.jsonl", func(b BadLine) {
		lines = append(lines, b.Line)
		if b.File != "crash.jsonl" || b.Error == "" || !strings.HasPrefix(b.String(), fmt.Sprintf("crash.jsonl:%d: ", b.Line)) {
			t.Errorf("bad line %+v: %q", b, b)
		}
	}, acc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lines, []int64{3, 4, 6, 9, 10}) {
		t.Errorf("bad lines %v, want [3 4 6 9 10]", lines)
	}
	acc.Close()
	s := acc.Summary()
	if n != 4 || s.Records != 4 || s.Calls.Total != 2 || s.Exchanges.Total != 2 {
		t.Errorf("read %d records: %d calls, %d exchanges; want 4, 2, 2", n, s.Calls.Total, s.Exchanges.Total)
	}
	if s.Malformed.Lines != 5 || len(s.Malformed.Examples) != 5 || s.Malformed.Examples[2].Line != 6 {
		t.Errorf("malformed %+v", s.Malformed)
	}
	// The count keeps going past the examples kept.
	acc = New(Options{Examples: 1})
	Read(strings.NewReader(strings.Repeat("x\n", 100)), "x", nil, acc)
	if s := acc.Summary(); s.Malformed.Lines != 100 || len(s.Malformed.Examples) != 4 {
		t.Errorf("100 bad lines: %d counted, %d kept", s.Malformed.Lines, len(s.Malformed.Examples))
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		return 0, fmt.Errorf("disk on fire")
	}
	r.n++
	return copy(p, "{\"kind\":\"call\",\"outcome\":\"TOOL_SUCCESS\"}\n{\"kind\":\"ca"), nil
}

func TestReadError(t *testing.T) {
	t.Parallel()
	acc := New(Options{})
	n, err := Read(&failingReader{}, "x", nil, acc)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || n != 1 {
		t.Errorf("Read = %d, %v; want 1 record and the reader's error", n, err)
	}
}

func TestOrphanCalls(t *testing.T) {
	t.Parallel()
	f := newRecFile(t)
	f.call("tools/call", "a", true, ex{outcome: classify.HTTPError, ms: 5, status: 503}, ok(classify.ToolSuccess, 10))
	f.call("tools/call", "b", true, ok(classify.ToolError, 1))
	f.call("tools/call", "c", false, ok(classify.ToolSuccess, 1))
	f.call("tools/call", "d", true, ok(classify.ToolError, 1))

	acc := New(Options{MaxOpenCalls: 2})
	Read(bytes.NewReader(f.bytes()), "x", nil, acc)
	before := acc.Summary()
	// "a" was pushed out when "d" opened; "b" and "d" are still open.
	if before.Calls.Total != 2 || before.Calls.Orphans != 1 || before.Calls.Open != 2 {
		t.Errorf("before Close: %d calls, %d orphans, %d open; want 2, 1, 2", before.Calls.Total, before.Calls.Orphans, before.Calls.Open)
	}
	acc.Close()
	s := acc.Summary()
	if s.Calls.Total != 4 || s.Calls.Orphans != 3 || s.Calls.Open != 0 || s.Exchanges.Total != 5 {
		t.Errorf("after Close: %d calls (%d orphans, %d open), %d exchanges; want 4 (3, 0), 5", s.Calls.Total, s.Calls.Orphans, s.Calls.Open, s.Exchanges.Total)
	}
	// The orphan's verdict is its last exchange's; its time spans both.
	if c := s.Calls.Outcome("TOOL_SUCCESS"); c.Count != 2 || c.Examples[0] != "CALL0001" {
		t.Errorf("TOOL_SUCCESS %+v, want CALL0001 (the orphan) and CALL0003", c)
	}
	if got := findSlow(s.Calls.Slowest, "CALL0001"); got.TotalMs != 16 {
		t.Errorf("orphan call a: %+v, want 5 + 1 + 10 ms", got)
	}
}

func TestUnknownKindsAndBounds(t *testing.T) {
	t.Parallel()
	f := newRecFile(t)
	f.raw(`{"kind":"telemetry","id":"T1"}`)
	f.raw(`{"id":"NOKIND"}`)
	for i := range 20 {
		f.raw(fmt.Sprintf(`{"kind":"exchange","id":"E%d","method":"tools/call","tool":"t%d","outcome":"FUTURE_%d","timings":{"totalMs":%d}}`, i, i, i, i+1))
	}
	s, _ := summarize(t, f.bytes(), Options{MaxTools: 5, MaxOutcomes: 4})
	if s.OtherKinds != 2 || s.Exchanges.Total != 20 {
		t.Fatalf("other kinds %d, exchanges %d", s.OtherKinds, s.Exchanges.Total)
	}
	if len(s.Exchanges.ByTool) != 6 || s.Exchanges.Outcome(Other).Count != 16 || len(s.Exchanges.ByOutcome) != 5 {
		t.Errorf("bounds not applied: %d tools, outcomes %+v", len(s.Exchanges.ByTool), s.Exchanges.ByOutcome)
	}
	var other ToolStats
	for _, ts := range s.Exchanges.ByTool {
		if ts.Tool == Other {
			other = ts
		}
	}
	if other.Total != 15 || other.Failures != 15 || other.Latency.Samples != 15 {
		t.Errorf("(other) tool %+v", other)
	}
	// Unknown outcomes are failures (conservative for CI).
	if s.Exchanges.Failures != 20 {
		t.Errorf("%d failures, want 20", s.Exchanges.Failures)
	}
}

func TestFailure(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind record.Kind
		o    classify.Outcome
		want bool
	}{
		{record.KindCall, classify.ToolSuccess, false},
		{record.KindCall, classify.ResultSuccess, false},
		{record.KindExchange, classify.NotificationAccepted, false},
		{record.KindCall, classify.TaskCreated, false},
		{record.KindExchange, classify.InputRequired, false},
		{record.KindCall, classify.InputRequired, true},
		{record.KindCall, classify.ToolError, true},
		{record.KindExchange, classify.HTTPError, true},
		{record.KindServer, "", false},
		{record.KindCall, "SOMETHING_NEW", true},
	} {
		if got := Failure(tt.kind, tt.o); got != tt.want {
			t.Errorf("Failure(%s, %s) = %v", tt.kind, tt.o, got)
		}
	}
}

func TestTextReport(t *testing.T) {
	t.Parallel()
	data, ids := mixedFile(t)
	s, _ := summarize(t, append(data, "garbage\n"...), Options{})
	s.Files = []string{"calls.jsonl"}
	g := Gates{FailOn: []classify.Outcome{classify.ToolError}}
	s.Gates, _ = g.Check(s)
	var out bytes.Buffer
	if err := NewTextReporter(s).Report(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"mcpdiag report: calls.jsonl, 15 records, 1 malformed line skipped",
		"the producer dropped 12 records",
		"calls: 6, 3 failed (50.0%), 1 rebuilt from exchanges without a call line",
		"exchanges: 8, 4 failed (50.0%)",
		"server lines: 1, a fault fired on 0 (0.0%)",
		"by layer:    transport 2, protocol 1, interaction 1, application 4",
		"TOOL_SUCCESS 2",
		"p50 4.00ms",
		"[tools/list]",
		"worst offenders:",
		"e.g. " + ids["b.ex"][0],
		"slowest:",
		"30.0ms  search        NETWORK_ERROR   " + ids["d.ex"][0] + " (call " + ids["d"][0] + ")",
		"gates (calls): FAILED",
		"fail-on: calls: TOOL_ERROR in 1 of 6 (16.7%), e.g. " + ids["b"][0],
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	// A malformed line is named on stderr by the command, not in the text.
	if strings.Contains(text, "test.jsonl:16") {
		t.Errorf("the text report names a malformed line the command already named:\n%s", text)
	}
	// Empty input.
	out.Reset()
	NewTextReporter(New(Options{}).Summary()).Report(&out)
	if !strings.Contains(out.String(), "0 records") || !strings.Contains(out.String(), "no calls, exchanges or server lines") {
		t.Errorf("empty report:\n%s", out.String())
	}
}

func TestJSONReportRoundTrip(t *testing.T) {
	t.Parallel()
	data, _ := mixedFile(t)
	s, _ := summarize(t, data, Options{})
	var out bytes.Buffer
	if err := NewJSONReporter(s).Report(&out); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummary(&out)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(s)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Errorf("round trip changed the summary:\n%s\n%s", a, b)
	}
	for _, bad := range []string{``, `[]`, `{"calls":{}}`, `{"format":"mcpdiag-report/9"}`, `{"format":"other"}`} {
		if _, err := ReadSummary(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadSummary(%q) accepted it", bad)
		}
	}
}

func TestFormatMs(t *testing.T) {
	t.Parallel()
	for ms, want := range map[float64]string{0.412: "0.41ms", 4: "4.00ms", 12.34: "12.3ms", 812.4: "812ms", 1240: "1.24s"} {
		if got := FormatMs(ms); got != want {
			t.Errorf("FormatMs(%v) = %q, want %q", ms, got, want)
		}
	}
}

// TestServeFaults: the faults of server lines (their "serve" member) are
// counted by scenario, each line once per scenario, with what the lines
// say and nothing else: a nested scenario listed twice counts once, a line
// without a serve member or with a malformed one counts no fault.
func TestServeFaults(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"v":1,"kind":"server","id":"S1","method":"tools/call","serve":{"fired":"sse.truncated","faults":[{"scenario":"sse.truncated","fired":true}]}}`,
		`{"v":1,"kind":"server","id":"S2","method":"tools/list","serve":{"fired":"","faults":[{"scenario":"sse.truncated","fired":false}]}}`,
		`{"v":1,"kind":"server","id":"S3","method":"tools/call","serve":{"faults":[{"scenario":"a","fired":true},{"scenario":"a","fired":true},{"scenario":"b","fired":false}]}}`,
		`{"v":1,"kind":"server","id":"S4","method":"tools/call"}`,
		`{"v":1,"kind":"server","id":"S5","method":"tools/call","serve":{"faults":"nope"}}`,
		`{"v":1,"kind":"exchange","id":"E1","method":"tools/call","outcome":"TOOL_SUCCESS","serve":{"faults":[{"scenario":"x","fired":true}]}}`,
	}
	acc := New(Options{})
	if _, err := Read(strings.NewReader(strings.Join(lines, "\n")), "t", nil, acc); err != nil {
		t.Fatal(err)
	}
	s := acc.Summary()
	got := fmt.Sprint(s.Server.Faults)
	want := fmt.Sprint([]FaultCount{{Scenario: "sse.truncated", Lines: 2, Fired: 1, Examples: []string{"S1"}}, {Scenario: "a", Lines: 1, Fired: 1, Examples: []string{"S3"}}, {Scenario: "b", Lines: 1}})
	if got != want || s.Server.FaultLines != 2 || s.Server.Total != 5 || s.Exchanges.Faults != nil {
		t.Errorf("faults %s (on %d of %d lines), want %s on 2 of 5; exchanges %v", got, s.Server.FaultLines, s.Server.Total, want, s.Exchanges.Faults)
	}
}
