package judge

import (
	"slices"
	"testing"
)

// TestProbeRulesHaveSeverity: every probe rule weighs its failure (one of
// Severities, which mcpdiag probe --fail-on compares), and no other rule
// has one; a check carries its rule's severity.
func TestProbeRulesHaveSeverity(t *testing.T) {
	n := 0
	for _, r := range Rules() {
		switch {
		case r.Probe && !slices.Contains(Severities, r.Severity):
			t.Errorf("%s: severity %q, want one of %v", r.ID, r.Severity, Severities)
		case !r.Probe && r.Severity != "":
			t.Errorf("%s is not a probe rule but has severity %q", r.ID, r.Severity)
		}
		if r.Probe {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no probe rule")
	}
	tr := &Trace{Probe: true}
	for _, c := range Judge(tr) {
		r, _ := RuleByID(c.Rule)
		if c.Severity != r.Severity || c.Severity == "" {
			t.Errorf("check %s: severity %q, rule's %q", c.Rule, c.Severity, r.Severity)
		}
	}
}

func TestSeverityAtLeast(t *testing.T) {
	tests := []struct {
		s, threshold Severity
		want         bool
	}{
		{SeverityMust, SeverityMust, true},
		{SeverityMust, SeverityShould, true},
		{SeverityMust, SeverityAdvice, true},
		{SeverityShould, SeverityMust, false},
		{SeverityShould, SeverityShould, true},
		{SeverityShould, SeverityAdvice, true},
		{SeverityAdvice, SeverityMust, false},
		{SeverityAdvice, SeverityShould, false},
		{SeverityAdvice, SeverityAdvice, true},
		{SeverityMust, SeverityNone, false},
		{SeverityAdvice, SeverityNone, false},
		{"", SeverityAdvice, false},
		{"fatal", SeverityAdvice, false},
		{SeverityNone, SeverityNone, false},
	}
	for _, tc := range tests {
		if got := tc.s.AtLeast(tc.threshold); got != tc.want {
			t.Errorf("%q.AtLeast(%q) = %v, want %v", tc.s, tc.threshold, got, tc.want)
		}
	}
}

func TestParseSeverity(t *testing.T) {
	for _, s := range []string{"must", "should", "advice", "none"} {
		if v, err := ParseSeverity(s); err != nil || string(v) != s {
			t.Errorf("ParseSeverity(%q) = %q, %v", s, v, err)
		}
	}
	for _, s := range []string{"", "MUST", "error", "warning", " must"} {
		if v, err := ParseSeverity(s); err == nil {
			t.Errorf("ParseSeverity(%q) = %q, want an error", s, v)
		}
	}
}
