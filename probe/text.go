package probe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/judge"
)

// WriteText writes the report for people: the era, what was done with
// each tool, the per-tool table (each probed tool × ToolRules: pass, FAIL,
// n/a) with the evidence of each FAIL, one line per rule (a FAIL with its
// severity and evidence, which names the probes by index: the seed is on
// the first line), one grade line per rule family, and a summary that says
// what --fail-on made of the failures. The text quotes the server: pass it
// through the records' redactor. What the server sent (tool names, the
// evidence quoting it) is rendered with visible.String.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "probe %s: era %s (%s), seed %d, %d probes\n", r.URL, r.Protocol, visible.String(r.EraReason), r.Seed, len(r.Probes))
	if r.Interrupted != "" {
		fmt.Fprintf(&b, "  interrupted: %s; the verdicts judge only the %d %s answered before, and a rule whose probes were not is n/a\n",
			visible.String(r.Interrupted), len(r.Probes), plural(len(r.Probes), "probe", "probes"))
	}
	var skipped, unread []string
	var probed []*ToolPlan
	for i := range r.Tools {
		t := &r.Tools[i]
		switch {
		case !t.Allowed:
			skipped = append(skipped, t.Name)
		case t.Probes == 0:
			unread = append(unread, t.Name)
		default:
			probed = append(probed, t)
			// The counts are of the argument probes alone, as
			// probe.invalid-arguments counts them; arguments-not-object
			// is probe.malformed-call's.
			line := fmt.Sprintf("  tool %s: ", visible.String(t.Name))
			if sent := t.Arguments + t.NotObject; sent < t.Probes {
				// The run was interrupted first: a planned probe that was
				// not sent (or not judged) is not "no argument probe".
				n := fmt.Sprint(sent)
				if sent == 0 {
					n = "none"
				}
				line += fmt.Sprintf("%s of its %d %s judged (the run was interrupted first)", n, t.Probes, plural(t.Probes, "probe", "probes"))
				if sent > 0 {
					line += "; "
				}
			} else if t.Arguments == 0 {
				line += "no argument probe"
			}
			if t.Arguments > 0 {
				line += fmt.Sprintf("%d argument %s: %d isError, %d JSON-RPC error, %d success, %d other", t.Arguments,
					plural(t.Arguments, "probe", "probes"), t.ToolErrors, t.RPCErrors, t.Successes, t.Other)
			} else if t.NotObject > 0 && t.Arguments+t.NotObject < t.Probes {
				line += "no argument probe judged"
			}
			if t.NotObject > 0 {
				line += fmt.Sprintf("; %d arguments-not-object %s (probe.malformed-call)", t.NotObject, plural(t.NotObject, "probe", "probes"))
			}
			if t.Why != "" {
				line += "; " + visible.String(t.Why)
			}
			fmt.Fprintln(&b, line)
		}
	}
	if len(unread) > 0 {
		fmt.Fprintf(&b, "  no argument probe (inputSchema unreadable, or anyOf/oneOf/allOf/$ref): %s\n", visible.String(strings.Join(unread, ", ")))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "  not probed, not annotated readOnlyHint true (--allow TOOL to probe one): %s\n", visible.String(strings.Join(skipped, ", ")))
	}
	for _, w := range r.ListingWarnings {
		fmt.Fprintf(&b, "  warning: tools/list: %s\n", visible.String(w))
	}
	for _, a := range r.UnknownAllow {
		fmt.Fprintf(&b, "  warning: --allow %s: no listed tool has that name, nothing was probed for it\n", a)
	}
	if len(probed) > 0 {
		writeToolTable(&b, probed)
	}
	n := map[judge.Verdict]int{}
	for _, c := range r.Checks {
		n[c.Verdict]++
		fmt.Fprintf(&b, "%-4s %s: %s\n", strings.ToUpper(string(c.Verdict)), ruleAndSeverity(c), visible.String(c.Evidence))
	}
	width := 0
	for _, g := range r.Grades {
		width = max(width, len(g.Family))
	}
	for _, g := range r.Grades {
		fmt.Fprintf(&b, "grade %-*s  %-4s  %s\n", width, g.Family, g.Verdict, r.gradeDetail(g))
	}
	if r.Stopped != "" {
		fmt.Fprintf(&b, "stdio server %s: %s\n", visible.String(strings.Join(r.Command, " ")), visible.String(r.Stopped))
	}
	summary := r.failOnSummary()
	if r.Interrupted != "" {
		summary += " Interrupted (" + r.Interrupted + "): not a complete probe."
	}
	fmt.Fprintf(&b, "%d rules: %d pass, %d fail, %d n/a; %s\n", len(r.Checks), n[judge.Pass], n[judge.Fail], n[judge.NotApplicable], summary)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeToolTable writes the per-tool table: a row per probed tool, a
// column per ToolRules, then the evidence of each FAIL cell.
func writeToolTable(b *strings.Builder, tools []*ToolPlan) {
	name := len("tool")
	for _, t := range tools {
		name = max(name, utf8.RuneCountInString(visible.String(t.Name)))
	}
	b.WriteString("  per tool, the rules about its probes judged on them alone (n/a: no probe of the rule's kind):\n")
	head := fmt.Sprintf("  %-*s", name, "tool")
	for _, tr := range ToolRules {
		head += fmt.Sprintf("  %-*s", max(4, len(tr.Label)), tr.Label)
	}
	b.WriteString(strings.TrimRight(head, " ") + "\n")
	var fails []string
	for _, t := range tools {
		by := map[string]judge.Check{}
		for _, c := range t.Checks {
			by[c.Rule] = c
		}
		row := fmt.Sprintf("  %-*s", name, visible.String(t.Name))
		for _, tr := range ToolRules {
			v := "n/a"
			if c, ok := by[tr.Rule]; ok {
				v = verdictWord(c.Verdict)
				if c.Verdict == judge.Fail {
					fails = append(fails, fmt.Sprintf("  FAIL %s %s: %s", visible.String(t.Name), ruleAndSeverity(c), visible.String(c.Evidence)))
				}
			}
			row += fmt.Sprintf("  %-*s", max(4, len(tr.Label)), v)
		}
		b.WriteString(strings.TrimRight(row, " ") + "\n")
	}
	for _, f := range fails {
		b.WriteString(f + "\n")
	}
	var legend []string
	for _, tr := range ToolRules {
		legend = append(legend, tr.Label+" "+tr.Rule)
	}
	fmt.Fprintf(b, "  (columns: %s)\n", strings.Join(legend, ", "))
}

func verdictWord(v judge.Verdict) string {
	switch v {
	case judge.Fail:
		return "FAIL"
	case judge.NotApplicable:
		return "n/a"
	}
	return string(v)
}

// ruleAndSeverity is a check's rule, with its severity when it failed:
// "probe.origin (must)".
func ruleAndSeverity(c judge.Check) string {
	if c.Verdict == judge.Fail && c.Severity != "" {
		return fmt.Sprintf("%s (%s)", c.Rule, c.Severity)
	}
	return c.Rule
}

// gradeDetail says what a family's grade comes from: the rules that
// failed with their severities, the counts.
func (r *Report) gradeDetail(g Grade) string {
	var parts []string
	if g.Fail > 0 {
		sev := map[string]judge.Severity{}
		for _, c := range r.Checks {
			sev[c.Rule] = c.Severity
		}
		var failed []string
		for _, id := range g.Failed {
			failed = append(failed, fmt.Sprintf("%s (%s)", id, sev[id]))
		}
		parts = append(parts, "failed: "+strings.Join(failed, ", "))
	}
	parts = append(parts, fmt.Sprintf("%d pass", g.Pass))
	if g.NotApplicable > 0 {
		parts = append(parts, fmt.Sprintf("%d n/a", g.NotApplicable))
	}
	return strings.Join(parts, ", ")
}

// failOnSummary says which failures reach the threshold and so the exit
// status: "fail-on should: 2 rules fail at or above it (exit 1)".
func (r *Report) failOnSummary() string {
	below := 0
	for _, c := range r.Checks {
		if c.Verdict == judge.Fail && !c.Severity.AtLeast(r.FailOn) {
			below++
		}
	}
	s := fmt.Sprintf("--fail-on %s: ", r.FailOn)
	switch {
	case len(r.Findings) > 0:
		s += fmt.Sprintf("%d %s at or above it (%s)", len(r.Findings), plural(len(r.Findings), "failure", "failures"), strings.Join(r.Findings, ", "))
	default:
		s += "no failure at or above it"
	}
	if below > 0 {
		s += fmt.Sprintf(", %d below it", below)
	}
	return s + "."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
