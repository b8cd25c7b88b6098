package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestGateRateCountsUnanswered: the per-outcome rate gate of --baseline
// gates the REQUEST_ACCEPTED records that are failures (2024-11-05 requests
// whose answer never came on the stream) as it gates a failure outcome.
// The run is the real legacy-sse.jsonl (1 unanswered); the baseline the
// same records with that answer seen. Before, Gates.compare skipped every
// outcome that is no failure, so only the overall failure rate said it.
// Metamorphic: run and baseline swapped, no rate gate fails.
func TestGateRateCountsUnanswered(t *testing.T) {
	run := summarise(recordtest.ReadFile(t, legacyFile))
	answered := recordtest.ReadFile(t, legacyFile)
	for _, r := range answered {
		if r.StreamAnswer != nil && !r.StreamAnswer.Seen && r.StreamAnswer.NotSeen == record.AnswerStreamEnded {
			r.StreamAnswer = &record.StreamAnswer{Seen: true}
		}
	}
	base := summarise(answered)
	if n := run.Exchanges.Outcome("REQUEST_ACCEPTED").Unanswered; n != 1 || base.Exchanges.Outcome("REQUEST_ACCEPTED").Unanswered != 0 {
		t.Fatalf("unanswered: run %d, baseline %d; want 1 and 0: not the records this test is about", n, base.Exchanges.Outcome("REQUEST_ACCEPTED").Unanswered)
	}
	g := Gates{Baseline: base, On: "exchange", MaxRateIncrease: 0.01}
	rep, err := g.Check(run)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rep.Failures, func(f GateFailure) bool { return f.Gate == GateRate && f.Outcome == "REQUEST_ACCEPTED" })
	if i < 0 || !strings.HasPrefix(rep.Failures[i].Message, "exchanges: REQUEST_ACCEPTED unanswered rate ") {
		t.Errorf("gate failures %+v; want the REQUEST_ACCEPTED unanswered rate among them", rep.Failures)
	}
	g.Baseline = run
	if rep, err := g.Check(base); err != nil || slices.ContainsFunc(rep.Failures, func(f GateFailure) bool { return f.Gate == GateRate }) {
		t.Errorf("swapped: %v %+v; want no rate gate failed", err, rep)
	}
}
