package probe_test

import (
	"reflect"
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
)

// TestGrades: a family fails when one of its rules failed, with those
// rules and the heaviest severity among them; passes when one passed and
// none failed; is n/a otherwise; a rule with no check counts as n/a.
func TestGrades(t *testing.T) {
	c := func(rule string, v judge.Verdict, s judge.Severity) judge.Check {
		return judge.Check{Rule: rule, Verdict: v, Severity: s}
	}
	tests := []struct {
		name   string
		checks []judge.Check
		want   map[string]probe.Grade
	}{
		{"all pass", []judge.Check{
			c("probe.origin", judge.Pass, judge.SeverityMust), c("probe.protocol-version", judge.Pass, judge.SeverityMust),
			c("probe.notification-202", judge.Pass, judge.SeverityMust), c("probe.protocol-version-missing", judge.Pass, judge.SeverityShould),
			c("probe.accept", judge.Pass, judge.SeverityShould),
		}, map[string]probe.Grade{
			"transport":   {Family: "transport", Verdict: judge.Pass, Pass: 5},
			"application": {Family: "application", Verdict: judge.NotApplicable, NotApplicable: 2},
		}},
		{"a should and a must fail", []judge.Check{
			c("probe.invalid-arguments", judge.Fail, judge.SeverityMust), c("probe.is-error-missing", judge.Fail, judge.SeverityShould),
			c("probe.unknown-tool", judge.Fail, judge.SeverityShould), c("probe.id-type", judge.Pass, judge.SeverityMust),
			c("probe.answer-shape", judge.NotApplicable, judge.SeverityMust),
		}, map[string]probe.Grade{
			"application": {Family: "application", Verdict: judge.Fail, Fail: 2, Failed: []string{"probe.invalid-arguments", "probe.is-error-missing"}, Severity: judge.SeverityMust},
			"protocol": {Family: "protocol", Verdict: judge.Fail, Pass: 1, Fail: 1, NotApplicable: 3, Failed: []string{"probe.unknown-tool"},
				Severity: judge.SeverityShould},
		}},
		{"should then must", []judge.Check{
			c("probe.is-error-missing", judge.Fail, judge.SeverityShould), c("probe.invalid-arguments", judge.Fail, judge.SeverityMust),
		}, map[string]probe.Grade{
			"application": {Family: "application", Verdict: judge.Fail, Fail: 2, Failed: []string{"probe.invalid-arguments", "probe.is-error-missing"}, Severity: judge.SeverityMust},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]probe.Grade{}
			for _, g := range probe.Grades(tc.checks) {
				got[g.Family] = g
			}
			if len(got) != len(probe.Families) {
				t.Errorf("%d grades, want one per family (%d)", len(got), len(probe.Families))
			}
			for fam, want := range tc.want {
				if !reflect.DeepEqual(got[fam], want) {
					t.Errorf("%s: %+v, want %+v", fam, got[fam], want)
				}
			}
		})
	}
}

// TestToolRulesAreProbeRules: the per-tool table's rules are probe rules,
// each once.
func TestToolRulesAreProbeRules(t *testing.T) {
	seen := map[string]bool{}
	for _, tr := range probe.ToolRules {
		r, ok := judge.RuleByID(tr.Rule)
		if !ok || !r.Probe || seen[tr.Rule] || tr.Label == "" {
			t.Errorf("%+v: not a probe rule, twice, or no label", tr)
		}
		seen[tr.Rule] = true
	}
}
