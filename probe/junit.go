package probe

import (
	"encoding/xml"
	"fmt"
	"io"

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
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
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
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: one test suite per rule
// family, one test case per rule; a failed rule is a failure with its
// evidence, a rule that did not apply is skipped with the reason, and a
// passed rule keeps its evidence in system-out. The text quotes the
// server: pass it through the records' redactor.
func (r *Report) WriteJUnit(w io.Writer) error {
	by := map[string]judge.Check{}
	for _, c := range r.Checks {
		by[c.Rule] = c
	}
	all := junitSuites{Name: "mcpdiag probe " + r.URL}
	for _, f := range Families {
		s := junitSuite{Name: "probe." + f.Name}
		for _, id := range f.Rules {
			c, ok := by[id]
			if !ok {
				continue
			}
			tc := junitCase{Name: id, Classname: "probe." + f.Name}
			switch c.Verdict {
			case judge.Fail:
				tc.Failure = &junitMessage{Message: firstOf(c.Evidence), Text: c.Evidence}
				s.Failures++
			case judge.NotApplicable:
				tc.Skipped = &junitMessage{Message: c.Evidence}
				s.Skipped++
			default:
				tc.SystemOut = c.Evidence
			}
			s.Cases = append(s.Cases, tc)
			s.Tests++
		}
		all.Suites = append(all.Suites, s)
		all.Tests, all.Failures, all.Skipped = all.Tests+s.Tests, all.Failures+s.Failures, all.Skipped+s.Skipped
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

// firstOf is the first finding of an evidence ("a; b; c" → "a").
func firstOf(ev string) string {
	for i := 0; i+1 < len(ev); i++ {
		if ev[i] == ';' && ev[i+1] == ' ' {
			return ev[:i]
		}
	}
	return ev
}
