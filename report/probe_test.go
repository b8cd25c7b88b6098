package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestProbeRecordsAreNoFailures: testdata/probe-serve.jsonl is what
// `mcpdiag probe --record` wrote against a healthy `mcpdiag serve` (every
// probe rule passed): 22 probes, most of them deliberate bad calls answered
// with the errors they ask for, and the listing. The report counts the
// probes apart and none of them as a failure or an offender; an ordinary
// failed exchange in the same file still counts, and the rate is of the
// records that are not probes. Before, the report said "19 failed (82.6%)".
func TestProbeRecordsAreNoFailures(t *testing.T) {
	f, err := os.Open("testdata/probe-serve.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	acc := New(Options{})
	if _, err := ReadFile(f, "probe-serve.jsonl", func(b BadLine) { t.Errorf("bad line %s", b) }, acc); err != nil {
		t.Fatal(err)
	}
	s := acc.Summary()
	ex := s.Exchanges
	if ex.Probes != 22 || ex.Failures != 0 || len(ex.WorstOffenders) != 0 {
		t.Errorf("probe run: %d probes, %d failures, %d offenders; want 22, 0, 0", ex.Probes, ex.Failures, len(ex.WorstOffenders))
	}
	// The gates leave the probes out too: --fail-on TOOL_ERROR passes on
	// the probe run, and a baseline of it allows no rise.
	g := &Gates{FailOn: []classify.Outcome{classify.ToolError}, On: "exchange"}
	if rep, err := g.Check(s); err != nil || !rep.Passed {
		t.Errorf("--fail-on TOOL_ERROR on the probe run: %+v, %v; want a pass", rep, err)
	}
	base := s
	acc.Add(&record.Record{Kind: record.KindExchange, ID: "REAL1", Method: "tools/call", Tool: "echo", Outcome: classify.ToolError, Layer: classify.LayerApplication})
	s = acc.Summary()
	ex = s.Exchanges
	if ex.Failures != 1 || ex.FailureRate != 0.5 || len(ex.WorstOffenders) != 1 || ex.WorstOffenders[0].Examples[0] != "REAL1" {
		t.Errorf("with one failed call: %d failures, rate %v, offenders %+v; want 1, 0.5 (of the 2 records that are not probes), REAL1", ex.Failures, ex.FailureRate, ex.WorstOffenders)
	}
	if rep, err := g.Check(s); err != nil || rep.Passed || len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0].Message, "TOOL_ERROR in 1 of 2 (50.0%), e.g. REAL1") {
		t.Errorf("--fail-on TOOL_ERROR with one failed call: %+v, %v; want it to fail on REAL1, 1 of 2", rep, err)
	}
	if rep, err := (&Gates{Baseline: base, On: "exchange", MaxRateIncrease: 0.6}).Check(s); err != nil || !rep.Passed {
		t.Errorf("baseline of the probe run, rise allowed 60 points: %+v, %v; want a pass (50 points)", rep, err)
	}
	var out bytes.Buffer
	if err := NewTextReporter(s).Report(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "exchanges: 24, 1 failed (50.0%), 22 probes sent on purpose by mcpdiag probe") {
		t.Errorf("text:\n%s", out.String())
	}
}
