package judge

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Verdict is a rule's judgement of one trace.
type Verdict string

// The verdicts.
const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// NotApplicable: the trace never met the situation the rule is about.
	NotApplicable Verdict = "n/a"
	// NotTested: the run did not exercise what its case is about (the
	// client did not declare the capability the scenario's interaction
	// needs, and the server answered without it; or the client's call ran
	// out of its time limit, so its classification cannot be compared):
	// neither a pass nor a failure. A run with such a check and no failed
	// one is not tested.
	NotTested Verdict = "not tested"
)

// Rule is one thing a client must (or must not) do, checked from the
// server's side. Each rule cites the spec text or the retry policy it
// enforces.
type Rule struct {
	// ID is stable: "spec.accept", "safety.retry-after", …
	ID string `json:"id"`
	// Title says what a passing client does.
	Title string `json:"title"`
	// Cite names the spec section or policy the rule enforces.
	Cite string `json:"cite"`
	// Active and Passive say where the rule runs: on matrix runs (a fault
	// injected), and on captured records (--from-records).
	Active  bool `json:"active"`
	Passive bool `json:"passive"`
	// Probe marks a rule about the server, judged on the records of an
	// mcpdiag probe run (Trace.Probe) and nowhere else.
	Probe bool `json:"probe,omitempty"`
	// HTTPOnly marks a rule about HTTP headers: not applicable to a trace
	// with no exchange over HTTP (the stdio proxy's records).
	HTTPOnly bool `json:"httpOnly,omitempty"`
	// Severity weighs a failure of a probe rule (SeverityMust, Should,
	// Advice: what the spec says about the behaviour); "" for the others.
	Severity Severity `json:"severity,omitempty"`
	// Applies reports whether the trace met the rule's situation; when it
	// did not, the reason is the evidence of NotApplicable.
	Applies func(*Trace) (bool, string) `json:"-"`
	// Untested, when set, says why a trace the rule applies to did not
	// exercise what the rule is about ("" when it did): the verdict is then
	// NotTested with that evidence, and Check is not asked.
	Untested func(*Trace) string `json:"-"`
	// Check judges a trace the rule applies to: pass or not, with the
	// evidence (POST numbers, ids, headers).
	Check func(*Trace) (bool, string) `json:"-"`
}

// Check is a rule's verdict on one trace, with its evidence.
type Check struct {
	Rule    string  `json:"rule"`
	Verdict Verdict `json:"verdict"`
	// Severity is the rule's (Rule.Severity): set for the probe rules.
	Severity Severity `json:"severity,omitempty"`
	Evidence string   `json:"evidence,omitempty"`
}

// Rules returns every rule, in the order verdicts are reported.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// Judge applies the rules that run on t (the active ones, or the passive
// ones for records) and returns one check per rule.
func Judge(t *Trace) []Check {
	t.Limits = t.Limits.WithDefaults()
	var out []Check
	for _, r := range rules {
		switch {
		case t.Probe != r.Probe:
			continue
		case t.Probe:
		case t.Passive && !r.Passive || !t.Passive && !r.Active:
			continue
		}
		out = append(out, judgeOne(r, t))
	}
	return out
}

func judgeOne(r Rule, t *Trace) Check {
	if c := t.Client; c != nil && c.NotStarted && r.ID != "client.ran" {
		// Nothing the client did not do can pass, and a start-up
		// that took too long says nothing of the server.
		return Check{Rule: r.ID, Verdict: NotApplicable, Severity: r.Severity, Evidence: notStarted(t)}
	}
	if r.HTTPOnly && !overHTTP(t) {
		return Check{Rule: r.ID, Verdict: NotApplicable, Severity: r.Severity, Evidence: noHTTPExchange(t)}
	}
	if ok, why := r.Applies(t); !ok {
		return Check{Rule: r.ID, Verdict: NotApplicable, Severity: r.Severity, Evidence: why}
	}
	if r.Untested != nil {
		if why := r.Untested(t); why != "" {
			return Check{Rule: r.ID, Verdict: NotTested, Severity: r.Severity, Evidence: why}
		}
	}
	ok, ev := r.Check(t)
	if ok {
		return Check{Rule: r.ID, Verdict: Pass, Severity: r.Severity, Evidence: ev}
	}
	return Check{Rule: r.ID, Verdict: Fail, Severity: r.Severity, Evidence: ev}
}

// overHTTP reports whether any exchange of t went over HTTP (not a stdio
// pipe).
func overHTTP(t *Trace) bool {
	for _, x := range t.Exchanges {
		if !x.Stdio {
			return true
		}
	}
	return false
}

// noHTTPExchange is the evidence of an HTTP-only rule on a trace with no
// exchange over HTTP: a stdio session's, or none recorded at all (a
// client that sent nothing to its HTTP endpoint has no headers to judge,
// but it was no stdio session either).
func noHTTPExchange(t *Trace) string {
	if len(t.Exchanges) == 0 {
		return "not applicable: no exchange was recorded (no request reached the server, so there are no request headers to check)"
	}
	return "not applicable on stdio: it has no HTTP layer (no request headers)"
}

// RuleByID returns the rule with id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// Worst returns Fail when a check failed, else NotTested when a check
// says the run did not test its case, else Pass.
func Worst(cs []Check) Verdict {
	v := Pass
	for _, c := range cs {
		switch c.Verdict {
		case Fail:
			return Fail
		case NotTested:
			v = NotTested
		}
	}
	return v
}

// order is the order verdicts are reported in (tables, JSON, JUnit): the
// order the rules were written in, across the families.
var order = []string{
	"spec.accept", "spec.protocol-header", "spec.method-headers", "spec.mrtr-new-id", "spec.mrtr-same-call",
	"spec.mrtr-echo-state", "spec.mrtr-no-invented-state", "spec.reissue-new-id", "spec.era-fallback",
	"safety.unsafe-repeat", "safety.retry-bound", "safety.retry-after", "safety.backoff", "safety.4xx-unchanged",
	"live.finish", "client.ran", "client.classification", "client.capability", "loop.identical-calls", "live.pending",
	"auth.no-token-elsewhere", "auth.pkce", "auth.bounded-step-up", "auth.no-token-in-url",
	"probe.answered", "probe.answer-shape", "probe.result-type", "probe.invalid-arguments", "probe.is-error-missing", "probe.unknown-tool",
	"probe.malformed-call", "probe.id-type", "probe.origin", "probe.protocol-version", "probe.protocol-version-missing", "probe.accept",
	"probe.notification-202",
}

// rules are the families' rules in report order.
var rules = inOrder(order, specRules, safetyRules, livenessRules, classificationRules, capabilityRules, authRules, probeRules)

// inOrder returns the rules of the families in the order of ids; it panics
// when a rule is missing from ids or an id names no rule (a programming
// error the package's tests catch at init).
func inOrder(ids []string, families ...[]Rule) []Rule {
	byID := map[string]Rule{}
	for _, f := range families {
		for _, r := range f {
			if _, dup := byID[r.ID]; dup {
				panic("judge: rule " + r.ID + " defined twice")
			}
			byID[r.ID] = r
		}
	}
	if len(byID) != len(ids) {
		panic(fmt.Sprintf("judge: %d rules but %d ids in the report order", len(byID), len(ids)))
	}
	out := make([]Rule, 0, len(ids))
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			panic("judge: no rule " + id)
		}
		out = append(out, r)
	}
	return out
}

// verdict returns pass with ok when nothing is bad, else fail with the
// bad lines (the first five).
func verdict(bad []string, ok string) (bool, string) {
	if len(bad) == 0 {
		return true, ok
	}
	if len(bad) > 5 {
		bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
	}
	return false, strings.Join(bad, "; ")
}

func anyPost(t *Trace) (bool, string) {
	if len(t.Exchanges) == 0 {
		return false, "the client sent no POST"
	}
	return true, ""
}

// failureFollowed is safety.retry-bound's situation: a request failed and
// the client sent another request after it (in arrival order). A failure
// of the client's last request has nothing after it to bound, and whether
// the last request failed can depend on the race between the client's
// leaving and the server's answer, not on the client: a client that sends
// its call and exits without reading gets "no response (the client left
// first)" when its close reaches the server before the answer, and HTTP 200
// when the answer was written first. Both read the same (determinism12).
func failureFollowed(t *Trace) (bool, string) {
	for i, x := range t.Exchanges {
		if x.Failed && i+1 < len(t.Exchanges) {
			return true, ""
		}
	}
	return false, "no request failed before the client's last POST"
}

func someRound(t *Trace) (bool, string) {
	for _, x := range t.Exchanges {
		if x.IsRequest() && t.IsRound(x) {
			return true, ""
		}
	}
	return false, "no MRTR round"
}

// eachPost fails with the first few POSTs f objects to.
func eachPost(f func(*Trace, *Exchange) string) func(*Trace) (bool, string) {
	return func(t *Trace) (bool, string) {
		var bad []string
		for _, x := range t.Exchanges {
			if s := f(t, x); s != "" {
				bad = append(bad, s)
			}
		}
		return verdict(bad, fmt.Sprintf("%d POST(s) checked", len(t.Exchanges)))
	}
}

// withClient applies a rule to the runs that ran a client (not to
// --from-records traces).
// notStarted says that a client the matrix stopped at its start-up limit
// did not start.
func notStarted(t *Trace) string {
	return fmt.Sprintf("the client did not start within %s (the start-up limit, from its start to its first request): it sent no request, so nothing of the case was tested", FormatDuration(t.Limits.StartTimeout))
}

func withClient(t *Trace) (bool, string) {
	if t.Client == nil {
		return false, "no client run"
	}
	return true, ""
}

// FormatDuration formats a duration for evidence: "4ms", "2.01s".
func FormatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + FormatDuration(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// groupByKey groups exchanges by their Key, each group in the order given and
// the groups in the order of their first exchange.
func groupByKey(xs []*Exchange) [][]*Exchange {
	at := map[string]int{}
	var groups [][]*Exchange
	for _, x := range xs {
		i, ok := at[x.Key()]
		if !ok {
			i = len(groups)
			at[x.Key()] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], x)
	}
	return groups
}

func posts(xs []*Exchange) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x.N)
	}
	return strings.Join(s, ", ")
}

func short(hash string) string {
	if len(hash) > len("sha256:")+12 {
		return hash[:len("sha256:")+12] + "…"
	}
	if hash == "" {
		return "none"
	}
	return hash
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
