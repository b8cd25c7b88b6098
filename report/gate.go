package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
)

// Defaults of the baseline gates.
const (
	// DefaultMaxRateIncrease is how far (absolute: 0.05 is 5 percentage
	// points) a failure rate may rise above the baseline's.
	DefaultMaxRateIncrease = 0.05
	// DefaultMaxP95Ratio is how many times the baseline's p95 the p95 may
	// reach.
	DefaultMaxP95Ratio = 1.5
)

// The names of the gates, as GateFailure.Gate.
const (
	GateFailOn    = "fail-on"
	GateRate      = "rate"
	GateFailures  = "failure-rate"
	GateP95       = "p95"
	GateNoRecords = "no-records"
)

// ErrBaseline reports a baseline that cannot serve for the comparison.
var ErrBaseline = errors.New("baseline")

// Gates are the checks a CI run applies to a summary. A gate that fails
// says why in one line; see Check.
type Gates struct {
	// FailOn lists outcomes that fail the run when any record of the gated
	// section has one.
	FailOn []classify.Outcome
	// Baseline is an earlier summary (the --json output of a report) to
	// compare with; nil for none.
	Baseline *Summary
	// MaxRateIncrease is the absolute increase allowed, against the
	// baseline, of the rate of each failure outcome and of all failures
	// together (DefaultMaxRateIncrease when 0; negative means 0).
	MaxRateIncrease float64
	// MaxP95Ratio is how many times the baseline's p95 latency the p95 may
	// reach (DefaultMaxP95Ratio when 0).
	MaxP95Ratio float64
	// On names the section the gates look at: "call", "exchange" or
	// "server"; "" picks Summary.Primary (calls when there are any).
	On string
}

// Enabled reports whether any gate is set.
func (g *Gates) Enabled() bool { return len(g.FailOn) > 0 || g.Baseline != nil }

// GateReport is the verdict of the gates.
type GateReport struct {
	// On is the kind of the section that was checked.
	On string `json:"on"`
	// Passed reports that no gate failed.
	Passed bool `json:"passed"`
	// Failures says, one line each, which gates failed and why.
	Failures []GateFailure `json:"failures"`
}

// GateFailure is one failed gate.
type GateFailure struct {
	// Gate is GateFailOn, GateRate, GateFailures, GateP95 or
	// GateNoRecords.
	Gate string `json:"gate"`
	// Outcome is the outcome concerned, if any.
	Outcome string `json:"outcome,omitempty"`
	// Message explains the failure in one line.
	Message string `json:"message"`
}

// Check applies the gates to s. It returns an error (wrapping ErrBaseline)
// only when the baseline has no records of the gated kind to compare with;
// a run without records fails the baseline gate instead.
func (g *Gates) Check(s *Summary) (*GateReport, error) {
	sec := s.Primary()
	if g.On != "" {
		if sec = s.Section(g.On); sec == nil {
			return nil, fmt.Errorf("unknown section %q (want call, exchange or server)", g.On)
		}
	}
	rep := &GateReport{On: sec.Kind, Failures: []GateFailure{}}
	fail := func(gate, outcome, format string, args ...any) {
		rep.Failures = append(rep.Failures, GateFailure{Gate: gate, Outcome: outcome, Message: sec.plural() + ": " + fmt.Sprintf(format, args...)})
	}
	for _, o := range g.FailOn {
		// A probe's answer is what the probe asked for (Section.Probes):
		// the gates count the other records only.
		c := sec.Outcome(string(o))
		n, total := c.judged(), sec.judged()
		if n <= 0 {
			continue
		}
		eg := ""
		if len(c.Examples) > 0 {
			eg = ", e.g. " + strings.Join(c.Examples, ", ")
		}
		fail(GateFailOn, string(o), "%s in %d of %d (%s)%s", o, n, total, pct(rate(n, total)), eg)
	}
	if b := g.Baseline; b != nil {
		base := b.Section(sec.Kind)
		if base == nil || base.Total == 0 {
			return nil, fmt.Errorf("%w has no %s to compare with", ErrBaseline, sec.plural())
		}
		if sec.Total == 0 {
			fail(GateNoRecords, "", "none in this run, %d in the baseline", base.Total)
		} else {
			g.compare(sec, base, fail)
		}
	}
	rep.Passed = len(rep.Failures) == 0
	return rep, nil
}

func (g *Gates) compare(sec, base *Section, fail func(gate, outcome, format string, args ...any)) {
	tol := g.MaxRateIncrease
	switch {
	case tol == 0:
		tol = DefaultMaxRateIncrease
	case tol < 0:
		tol = 0
	}
	ratio := g.MaxP95Ratio
	if ratio <= 0 {
		ratio = DefaultMaxP95Ratio
	}
	// A small epsilon keeps a rise of exactly the tolerance a pass.
	const eps = 1e-9
	total, baseTotal := sec.judged(), base.judged()
	if d := sec.FailureRate - base.FailureRate; d > tol+eps {
		fail(GateFailures, "", "failure rate %s (%d/%d) vs baseline %s (%d/%d): +%s > allowed +%s",
			pct(sec.FailureRate), sec.Failures, total, pct(base.FailureRate), base.Failures, baseTotal, points(d), points(tol))
	}
	for _, c := range sec.ByOutcome {
		// An outcome that is no failure can hold failures: the
		// 2024-11-05 requests accepted 202 whose answer never came on the
		// stream (REQUEST_ACCEPTED, OutcomeCount.Unanswered). Their rate
		// is gated as a failure outcome's is.
		bc := base.Outcome(c.Outcome)
		n, bn := c.failures(), bc.failures()
		if n == 0 {
			continue
		}
		what := c.Outcome
		if !c.Failure {
			what += " unanswered"
		}
		r, br := rate(n, total), rate(bn, baseTotal)
		if d := r - br; d > tol+eps {
			fail(GateRate, c.Outcome, "%s rate %s (%d/%d) vs baseline %s (%d/%d): +%s > allowed +%s",
				what, pct(r), n, total, pct(br), bn, baseTotal, points(d), points(tol))
		}
	}
	now, was := sec.Latency.P95Ms, base.Latency.P95Ms
	if sec.Latency.Samples > 0 && base.Latency.Samples > 0 && was > 0 && now > ratio*was*(1+eps) {
		fail(GateP95, "", "p95 %s vs baseline %s: ×%.2f > allowed ×%.2f", FormatMs(now), FormatMs(was), now/was, ratio)
	}
}

// pct formats a rate as a percentage.
func pct(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }

// points formats a rate difference in percentage points.
func points(d float64) string { return fmt.Sprintf("%.1f points", 100*d) }

// ParseOutcomes reads a comma-separated list of outcome names, as
// --fail-on takes it. Names are matched ignoring case; an unknown name is
// an error.
func ParseOutcomes(list string) ([]classify.Outcome, error) {
	var out []classify.Outcome
	for name := range strings.SplitSeq(list, ",") {
		name = strings.ToUpper(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		o := classify.Outcome(name)
		if o.Layer() == "" {
			return nil, fmt.Errorf("unknown outcome %q (see docs/outcomes.md)", name)
		}
		out = append(out, o)
	}
	return out, nil
}
