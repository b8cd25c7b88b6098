package judge

import "fmt"

// Severity says how much a failed probe rule weighs, from what the spec
// says about the behaviour it checks. The probe rules (Rule.Probe) each
// have one; the other rules have none ("").
type Severity string

// The severities, from the heaviest. SeverityNone is not a rule's: as a
// threshold (mcpdiag probe --fail-on none) it is above every severity, so
// no finding reaches it.
const (
	// SeverityMust: the server breaks a MUST (RFC 2119) of the MCP
	// specification or of JSON-RPC 2.0, or the schema of the era.
	SeverityMust Severity = "must"
	// SeverityShould: the server breaks a SHOULD, or gives another answer
	// than the one the spec prescribes without a key word.
	SeverityShould Severity = "should"
	// SeverityAdvice: the spec allows the behaviour, but clients or the
	// model fare worse with it.
	SeverityAdvice Severity = "advice"
	// SeverityNone is a threshold only: no finding reaches it.
	SeverityNone Severity = "none"
)

// Severities are the severities of rules, heaviest first.
var Severities = []Severity{SeverityMust, SeverityShould, SeverityAdvice}

// rank orders severities: a higher rank weighs more; 0 is not a severity.
func (s Severity) rank() int {
	switch s {
	case SeverityNone:
		return 4
	case SeverityMust:
		return 3
	case SeverityShould:
		return 2
	case SeverityAdvice:
		return 1
	}
	return 0
}

// AtLeast reports whether s weighs at least as much as threshold. A
// severity that is not one of Severities reaches no threshold, and no
// severity reaches SeverityNone.
func (s Severity) AtLeast(threshold Severity) bool {
	r := s.rank()
	return r > 0 && r < 4 && r >= threshold.rank()
}

// ParseSeverity reads a threshold: must, should, advice or none.
func ParseSeverity(s string) (Severity, error) {
	if v := Severity(s); v.rank() > 0 {
		return v, nil
	}
	return "", fmt.Errorf("severity %q: must be must, should, advice or none", s)
}
