package probe

import (
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// Redact masks the credentials in every text field of the report with red,
// in place: the URL and the command line as the records redact them, every
// other string (the checks' evidence, which quotes the server, the tools'
// names and reasons, the warnings) scrubbed as text. Main calls it before
// writing any format: scrubbing a format's output afterwards misses what
// its escaping hides (XML's &#34; for '"' hides a JSON member name from the
// text patterns). Probes and Records are not written by any format and are
// left as they are.
func (r *Report) Redact(red *record.Redactor) {
	if r == nil {
		return
	}
	s := red.Scrub
	r.URL = red.URL(r.URL)
	r.Command = red.Args(r.Command)
	r.Stopped, r.Interrupted, r.Protocol, r.EraReason = s(r.Stopped), s(r.Interrupted), s(r.Protocol), s(r.EraReason)
	for i := range r.Tools {
		t := &r.Tools[i]
		t.Name, t.Why = s(t.Name), s(t.Why)
		redactChecks(s, t.Checks)
	}
	redactChecks(s, r.Checks)
	for i := range r.Grades {
		g := &r.Grades[i]
		g.Family = s(g.Family)
		g.Verdict, g.Severity = judge.Verdict(s(string(g.Verdict))), judge.Severity(s(string(g.Severity)))
		scrubStrings(s, g.Failed)
	}
	r.FailOn = judge.Severity(s(string(r.FailOn)))
	scrubStrings(s, r.Findings)
	scrubStrings(s, r.UnknownAllow)
	scrubStrings(s, r.ListingWarnings)
}

func redactChecks(s func(string) string, cs []judge.Check) {
	for i := range cs {
		c := &cs[i]
		c.Rule, c.Evidence = s(c.Rule), s(c.Evidence)
		c.Verdict, c.Severity = judge.Verdict(s(string(c.Verdict))), judge.Severity(s(string(c.Severity)))
	}
}

func scrubStrings(s func(string) string, ss []string) {
	for i, x := range ss {
		ss[i] = s(x)
	}
}
