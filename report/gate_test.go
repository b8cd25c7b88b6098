package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
)

// run builds a summary of n calls of "search": errs of them fail with
// outcome o (after a 503 that was retried, so the exchanges differ), the
// others succeed; every call takes ms.
func run(t *testing.T, n, errs int, o classify.Outcome, ms float64) *Summary {
	t.Helper()
	f := newRecFile(t)
	for i := range n {
		if i < errs {
			f.call("tools/call", "search", false, ex{outcome: classify.HTTPError, ms: ms / 2, status: 503}, ok(o, ms/2-1))
		} else {
			f.call("tools/call", "search", false, ok(classify.ToolSuccess, ms))
		}
	}
	s, _ := summarize(t, f.bytes(), Options{})
	return s
}

func TestGates(t *testing.T) {
	t.Parallel()
	base := run(t, 100, 3, classify.ToolError, 10)
	tests := []struct {
		name  string
		now   *Summary
		gates Gates
		fails []string // the gates that fail, in order
		msg   string   // in the first failure's message
	}{
		{"no gates", run(t, 10, 5, classify.ToolError, 10), Gates{}, nil, ""},
		{"fail-on absent outcome", run(t, 10, 0, classify.ToolError, 10), Gates{FailOn: []classify.Outcome{classify.ToolError}}, nil, ""},
		{"fail-on present outcome", run(t, 10, 2, classify.ToolError, 10), Gates{FailOn: []classify.Outcome{classify.JSONRPCError, classify.ToolError}}, []string{GateFailOn},
			"calls: TOOL_ERROR in 2 of 10 (20.0%), e.g. CALL0001, CALL0002"},
		{"fail-on looks at calls, where the 503 was retried away", run(t, 10, 2, classify.ToolError, 10), Gates{FailOn: []classify.Outcome{classify.HTTPError}}, nil, ""},
		{"fail-on on exchanges", run(t, 10, 2, classify.ToolError, 10), Gates{FailOn: []classify.Outcome{classify.HTTPError}, On: "exchange"}, []string{GateFailOn},
			"exchanges: HTTP_ERROR in 2 of 12 (16.7%), e.g. EX0001-1, EX0002-1"},
		{"baseline: same run", run(t, 100, 3, classify.ToolError, 10), Gates{Baseline: base}, nil, ""},
		{"baseline: fewer failures", run(t, 100, 0, classify.ToolError, 10), Gates{Baseline: base}, nil, ""},
		{"baseline: +4 points is within 5", run(t, 100, 7, classify.ToolError, 10), Gates{Baseline: base}, nil, ""},
		{"baseline: +5 points exactly is within 5", run(t, 100, 8, classify.ToolError, 10), Gates{Baseline: base}, nil, ""},
		{"baseline: +6 points", run(t, 100, 9, classify.ToolError, 10), Gates{Baseline: base}, []string{GateFailures, GateRate},
			"calls: failure rate 9.0% (9/100) vs baseline 3.0% (3/100): +6.0 points > allowed +5.0 points"},
		{"baseline: a new outcome", run(t, 100, 6, classify.JSONRPCError, 10), Gates{Baseline: base}, []string{GateRate},
			"calls: JSONRPC_ERROR rate 6.0% (6/100) vs baseline 0.0% (0/100): +6.0 points > allowed +5.0 points"},
		{"baseline: tolerance 0", run(t, 100, 4, classify.ToolError, 10), Gates{Baseline: base, MaxRateIncrease: -1}, []string{GateFailures, GateRate}, "+1.0 points > allowed +0.0 points"},
		{"baseline: larger tolerance", run(t, 100, 12, classify.ToolError, 10), Gates{Baseline: base, MaxRateIncrease: 0.1}, nil, ""},
		{"baseline: p95 ×1.5 exactly", run(t, 100, 3, classify.ToolError, 15), Gates{Baseline: base}, nil, ""},
		{"baseline: p95 ×1.6", run(t, 100, 3, classify.ToolError, 16), Gates{Baseline: base}, []string{GateP95},
			"calls: p95 16.0ms vs baseline 10.0ms: ×1.60 > allowed ×1.50"},
		{"baseline: p95 ×1.6 within ×2", run(t, 100, 3, classify.ToolError, 16), Gates{Baseline: base, MaxP95Ratio: 2}, nil, ""},
		{"baseline: faster", run(t, 100, 3, classify.ToolError, 1), Gates{Baseline: base}, nil, ""},
		{"baseline: no records in this run", &Summary{Calls: &Section{Kind: "call"}, Exchanges: &Section{Kind: "exchange"}, Server: &Section{Kind: "server"}}, Gates{Baseline: base}, []string{GateNoRecords},
			"calls: none in this run, 100 in the baseline"},
		{"baseline and fail-on together", run(t, 100, 9, classify.ToolError, 16), Gates{Baseline: base, FailOn: []classify.Outcome{classify.ToolError}}, []string{GateFailOn, GateFailures, GateRate, GateP95}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := tt.gates.Check(tt.now)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Failures {
				got = append(got, f.Gate)
				if strings.Contains(f.Message, "\n") || f.Message == "" {
					t.Errorf("message %q is not one line", f.Message)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.fails, ",") || rep.Passed != (len(tt.fails) == 0) {
				t.Fatalf("failed gates %v (passed %v), want %v: %+v", got, rep.Passed, tt.fails, rep.Failures)
			}
			if tt.msg != "" && !strings.Contains(rep.Failures[0].Message, tt.msg) {
				t.Errorf("message %q lacks %q", rep.Failures[0].Message, tt.msg)
			}
		})
	}
}

func TestGatesBaselineUnusable(t *testing.T) {
	t.Parallel()
	now := run(t, 10, 0, classify.ToolError, 10)
	empty := &Summary{Calls: &Section{}, Exchanges: &Section{}, Server: &Section{}}
	if _, err := (&Gates{Baseline: empty}).Check(now); !errors.Is(err, ErrBaseline) {
		t.Errorf("baseline without calls: %v, want ErrBaseline", err)
	}
	if _, err := (&Gates{Baseline: now, On: "bogus"}).Check(now); err == nil {
		t.Error("unknown section accepted")
	}
}

func TestParseOutcomes(t *testing.T) {
	t.Parallel()
	got, err := ParseOutcomes(" tool_error, HTTP_ERROR,,")
	if err != nil || len(got) != 2 || got[0] != classify.ToolError || got[1] != classify.HTTPError {
		t.Errorf("ParseOutcomes = %v, %v", got, err)
	}
	if _, err := ParseOutcomes("TOOL_ERROR,NOPE"); err == nil || !strings.Contains(err.Error(), `"NOPE"`) {
		t.Errorf("unknown outcome: %v", err)
	}
}
