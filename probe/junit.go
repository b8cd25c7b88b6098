package probe

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/judge"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: one test suite per rule
// family, one test case per rule; then one suite per probed tool
// ("probe.tool NAME"), one test case per ToolRules rule judged on that
// tool's probes alone. A failed rule is a failure with its evidence and
// its severity as the failure's type ("must", "should", "advice": every
// failed rule is a failure, whatever --fail-on says; the suite property
// fail-on names the threshold of the exit status), a rule that did not
// apply is skipped with the reason, and a passed rule keeps its evidence
// in system-out. Each suite's properties give its rules' severities
// ("severity probe.origin" = "must"). The text quotes the server: pass it
// through the records' redactor.
func (r *Report) WriteJUnit(w io.Writer) error {
	by := map[string]judge.Check{}
	for _, c := range r.Checks {
		by[c.Rule] = c
	}
	all := junitSuites{Name: "mcpdiag probe " + visible.String(r.URL)}
	add := func(s junitSuite) {
		all.Suites = append(all.Suites, s)
		all.Tests, all.Failures, all.Skipped = all.Tests+s.Tests, all.Failures+s.Failures, all.Skipped+s.Skipped
	}
	for _, f := range Families {
		s := junitSuite{Name: "probe." + f.Name}
		for _, id := range f.Rules {
			if c, ok := by[id]; ok {
				s.add(junitCheck(c, c.Rule, "probe."+f.Name), c, string(r.FailOn))
			}
		}
		add(s)
	}
	for _, t := range r.Tools {
		if len(t.Checks) == 0 {
			continue
		}
		name := visible.String(t.Name)
		s := junitSuite{Name: "probe.tool " + name}
		for _, c := range t.Checks {
			s.add(junitCheck(c, name+" "+c.Rule, "probe.tool."+name), c, string(r.FailOn))
		}
		add(s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return fmt.Errorf("writing JUnit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// add appends a test case to the suite, counts it, and names the check's
// severity (and the run's threshold, once) in the suite's properties.
func (s *junitSuite) add(tc junitCase, c judge.Check, failOn string) {
	if len(s.Properties) == 0 {
		s.Properties = append(s.Properties, junitProperty{Name: "fail-on", Value: failOn})
	}
	s.Properties = append(s.Properties, junitProperty{Name: "severity " + c.Rule, Value: string(c.Severity)})
	switch c.Verdict {
	case judge.Fail:
		s.Failures++
	case judge.NotApplicable:
		s.Skipped++
	}
	s.Cases = append(s.Cases, tc)
	s.Tests++
}

// junitCheck is a check's test case. Its evidence, which quotes the
// server, is rendered with visible.String: XML would carry a bidi override
// as it is, and a control character as U+FFFD, losing what was sent.
func junitCheck(c judge.Check, name, class string) junitCase {
	tc := junitCase{Name: name, Classname: class}
	c.Evidence = visible.String(c.Evidence)
	switch c.Verdict {
	case judge.Fail:
		tc.Failure = &junitMessage{Message: firstOf(c.Evidence), Type: string(c.Severity), Text: c.Evidence}
	case judge.NotApplicable:
		tc.Skipped = &junitMessage{Message: c.Evidence}
	default:
		tc.SystemOut = c.Evidence
	}
	return tc
}

// firstOf is the first finding of an evidence ("a; b; c" → "a").
func firstOf(ev string) string {
	for i := 0; i+1 < len(ev); i++ {
		if ev[i] == ';' && ev[i+1] == ' ' {
			return ev[:i]
		}
	}
	return ev
}
