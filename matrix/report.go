package matrix

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/judge"
)

// layerOrder is the order of the table's sections.
var layerOrder = []classify.Layer{"", classify.LayerTransport, classify.LayerProtocol, classify.LayerInteraction, classify.LayerApplication}

func layerTitle(l classify.Layer) string {
	if l == "" {
		return "healthy server"
	}
	return string(l) + " layer"
}

// sections returns the cases grouped by the layer of their scenario, in
// catalogue order within a layer.
func (r *Report) sections() [][]*CaseResult {
	var out [][]*CaseResult
	for _, l := range layerOrder {
		var s []*CaseResult
		for _, c := range r.Cases {
			if c.Case.Layer() == l {
				s = append(s, c)
			}
		}
		if len(s) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// Row is one line of the table: a case with its runs aggregated.
type Row struct {
	Case     string           `json:"case"`
	Scenario string           `json:"scenario"`
	Probe    string           `json:"probe,omitempty"`
	Era      string           `json:"era"`
	Layer    classify.Layer   `json:"layer"`
	Expected classify.Outcome `json:"expected"`
	// Want is what the client had to print: Expected, or TOOL_SUCCESS when
	// a retry recovered the call (first run).
	Want classify.Outcome `json:"want"`
	// Observed is the classification the client printed ("-" none; several
	// joined with "|" when repeats differ). A run whose client sent no
	// request observed nothing, whatever it printed: "-" (client.ran fails
	// it, and client.classification's evidence names what it printed); so
	// does one that printed an answered call (a success, a tool error)
	// with no tools/call in the server's log (judge.Trace.CallUnseen).
	Observed string `json:"observed"`
	// Posts and Retries are the first run's; Why says why it retried;
	// Rounds counts its MRTR rounds.
	Posts    int           `json:"posts"`
	Retries  int           `json:"retries"`
	RetryTag string        `json:"-"`
	Why      string        `json:"why,omitempty"`
	Rounds   int           `json:"rounds"`
	Duration time.Duration `json:"-"`
	Verdict  judge.Verdict `json:"verdict"`
	Failures int           `json:"failedRuns"`
	// NotTested counts the runs that did not test the case (verdict "not
	// tested": the client did not declare the capability the scenario's
	// interaction needs); NotTestedWhy is the first one's evidence.
	NotTested    int      `json:"notTestedRuns"`
	NotTestedWhy string   `json:"notTested,omitempty"`
	Runs         int      `json:"runCount"`
	FailRules    []string `json:"failedRules,omitempty"`
}

// Row returns the table row of a case.
func (c *CaseResult) Row() Row {
	cs := c.Case
	name, probe := cs.Name, ""
	if base, _, ok := strings.Cut(name, "@"); ok {
		name = base
	}
	if _, p, ok := strings.Cut(name, "/"); ok {
		probe = p
	}
	row := Row{Case: cs.Name, Scenario: cs.Scenario(), Probe: probe, Era: cs.Era(), Layer: cs.Layer(), Expected: cs.Expected,
		Verdict: c.Verdict(), Failures: c.Failures(), NotTested: c.NotTested(), Runs: len(c.Runs)}
	seen := map[string]bool{}
	var obs []string
	for _, r := range c.Runs {
		o := string(r.Client.Outcome)
		if o == "" || r.Client.NoRequest || r.Trace != nil && r.Trace.CallUnseen(r.Client.Outcome) {
			// Nothing reached the server, or no tools/call behind a
			// printed answer: a printed outcome is no observation, and
			// "=" would say the case went as expected.
			o = "-"
		}
		if !seen[o] {
			seen[o] = true
			obs = append(obs, o)
		}
		row.Duration = max(row.Duration, r.Client.Duration)
	}
	row.Observed = strings.Join(obs, "|")
	if len(c.Runs) > 0 && c.Runs[0].Trace != nil {
		t := c.Runs[0].Trace
		row.Want, row.Posts = t.Want(), t.Posts()
		row.Retries, row.RetryTag, row.Why, row.Rounds = retrySummary(t)
	}
	for _, ch := range c.Checks() {
		if ch.Verdict == judge.Fail {
			row.FailRules = append(row.FailRules, ch.Rule)
		}
	}
	if row.NotTested > 0 {
		row.NotTestedWhy = c.notTestedWhy()
	}
	return row
}

// notTestedWhy is the evidence of the first run that did not test the
// case.
func (c *CaseResult) notTestedWhy() string {
	for _, r := range c.Runs {
		for _, ch := range r.Checks {
			if ch.Verdict == judge.NotTested {
				return ch.Evidence
			}
		}
	}
	return ""
}

// retrySummary counts the repeats after failures and says why, in a word
// and in a sentence, and counts the MRTR rounds.
func retrySummary(t *judge.Trace) (n int, tag, why string, rounds int) {
	rs := t.Retries()
	for _, x := range t.Exchanges {
		if x.IsRequest() && t.IsRound(x) {
			rounds++
		}
	}
	if len(rs) == 0 {
		return 0, "", "", rounds
	}
	first := rs[0].Prev
	var waits []string
	for _, r := range rs {
		waits = append(waits, ms(r.Next.Start.Sub(r.Prev.End)))
	}
	why = fmt.Sprintf("after %s; waited %s", first.What, strings.Join(waits, ", "))
	if first.RetryAfter != "" {
		why = fmt.Sprintf("after %s with Retry-After %s; waited %s", first.What, first.RetryAfter, strings.Join(waits, ", "))
	}
	return len(rs), first.Tag, why, rounds
}

// WriteTable writes the table: 80 columns, or every column when wide.
func (r *Report) WriteTable(w io.Writer, wide bool) error {
	return r.WriteText(w, TextOptions{Wide: wide, Verbose: true})
}

// TextOptions choose the table's form.
type TextOptions struct {
	// Wide shows every column.
	Wide bool
	// Verbose explains every failed check of every case in a paragraph of
	// its own; otherwise the failures are summed up per rule: the rule,
	// how many runs failed it and in which cases, and the first evidence.
	Verbose bool
}

// WriteText renders the table and its summary. What the client wrote (its
// printed outcome, its stderr in evidence) and names from records are
// rendered with visible.String.
func (r *Report) WriteText(w io.Writer, o TextOptions) error {
	wide := o.Wide
	var b strings.Builder
	who := "the built-in client (mcpdiag)"
	if len(r.Command) > 0 {
		who = visible.String(strings.Join(r.Command, " "))
	}
	runs := 0
	for _, c := range r.Cases {
		runs += len(c.Runs)
	}
	if in := r.Incomplete; in != nil {
		fmt.Fprintf(&b, "mcpdiag matrix: %s, %d runs planned: %d done, %d interrupted, %d not started; %d at a time, seed %d\n\n",
			who, in.Planned, in.Finished, in.Interrupted, in.Planned-in.Finished-in.Interrupted, r.Parallel, r.Seed)
	} else {
		fmt.Fprintf(&b, "mcpdiag matrix: %s, %d runs, %d at a time, seed %d\n\n", who, runs, r.Parallel, r.Seed)
	}
	if r.Incomplete != nil {
		fmt.Fprintf(&b, "INCOMPLETE: stopped (%s); only the runs that finished are judged.\n\n", r.Incomplete)
	}
	if wide {
		fmt.Fprintf(&b, "%-42s %-10s %-11s %-23s %-23s %5s %6s %-50s %7s %s\n", "SCENARIO", "ERA", "LAYER", "EXPECTED", "OBSERVED", "POSTS", "ROUNDS", "RETRIES (WHY)", "TIME", "VERDICT")
	} else {
		// The header names the era of the rows whose name names none: a
		// run of 2025-11-25 alone (--protocol) has no such row.
		scenario := "SCENARIO"
		if r.anyEra(Era2026) {
			scenario += " (" + Era2026 + ")"
		}
		fmt.Fprintf(&b, "%-30s %-13s %-13s %5s %-7s %s\n", scenario, "EXPECTED", "OBSERVED", "POSTS", "RETRIES", "VERDICT")
	}
	for _, sec := range r.sections() {
		if !wide {
			title := "── " + layerTitle(sec[0].Case.Layer()) + " "
			fmt.Fprintf(&b, "%s%s\n", title, strings.Repeat("─", max(0, 80-utf8.RuneCountInString(title))))
		}
		prev := ""
		for _, c := range sec {
			row := c.Row()
			if wide {
				b.WriteString(wideRow(row))
			} else {
				b.WriteString(narrowRow(row, prev == row.Scenario))
			}
			prev = row.Scenario
		}
	}
	b.WriteString("\n")
	r.writeSummary(&b, o.Verbose)
	if r.LateLines > 0 {
		fmt.Fprintf(&b, "LATE: %d server log line(s) came after their run was judged: in no verdict; written to --record (when set) with the warning %s.\n", r.LateLines, LateWarning)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// anyEra reports whether a case of the report runs in era.
func (r *Report) anyEra(era string) bool {
	for _, c := range r.Cases {
		if c.Case.Era() == era {
			return true
		}
	}
	return false
}

// narrowRow formats a row in 80 columns. A row runs in 2026-07-28 unless
// its name says 2025-11-25: under its scenario ("  on 2025-11-25"), or after
// the scenario id when the scenario runs in that era only.
func narrowRow(row Row, underScenario bool) string {
	name := row.Scenario
	switch {
	case row.Probe != "" && row.Era == Era2025:
		name = "  └ " + row.Probe + ", " + Era2025
	case row.Probe != "":
		name = "  └ " + row.Probe
	case row.Era == Era2025 && underScenario:
		name = "  on " + Era2025
	case row.Era == Era2025:
		name += " (" + Era2025 + ")"
	}
	obs := row.Observed
	if obs == string(row.Expected) {
		obs = "="
	}
	retries := strconv.Itoa(row.Retries)
	if row.RetryTag != "" {
		retries += " " + row.RetryTag
	}
	verdict := string(row.Verdict)
	switch {
	case row.Verdict == judge.Fail:
		verdict = "FAIL"
		if row.Runs > 1 {
			verdict = fmt.Sprintf("FAIL %d/%d", row.Failures, row.Runs)
		}
	case row.Verdict == judge.NotTested && row.Runs > 1:
		verdict = fmt.Sprintf("not tested %d/%d", row.NotTested, row.Runs)
	}
	return fmt.Sprintf("%s %s %s %5d %s %s\n", fit(visible.String(name), 30), fit(string(row.Expected), 13), fit(visible.String(obs), 13), row.Posts, fit(visible.String(retries), 7), verdict)
}

func wideRow(row Row) string {
	name := row.Scenario
	if row.Probe != "" {
		name += "/" + row.Probe
	}
	layer := string(row.Layer)
	if layer == "" {
		layer = "-"
	}
	retries := strconv.Itoa(row.Retries)
	if row.Why != "" {
		retries += " " + row.Why
	}
	verdict := string(row.Verdict)
	switch row.Verdict {
	case judge.Fail:
		verdict = fmt.Sprintf("FAIL (%d/%d runs): %s", row.Failures, row.Runs, strings.Join(row.FailRules, ", "))
	case judge.NotTested:
		verdict = fmt.Sprintf("not tested (%d/%d runs): %s", row.NotTested, row.Runs, visible.String(row.NotTestedWhy))
	}
	obs := row.Observed
	if row.Want != "" && row.Want != row.Expected && row.Verdict == judge.Pass {
		obs += " (recovered)"
	}
	return fmt.Sprintf("%-42s %-10s %-11s %-23s %-23s %5d %6d %-50s %7s %s\n", visible.String(name), row.Era, layer, row.Expected, visible.String(obs), row.Posts, row.Rounds, fit(visible.String(retries), 50), ms(row.Duration), verdict)
}

// fit pads or cuts s to n columns (runes), marking a cut with "…".
func fit(s string, n int) string {
	if c := utf8.RuneCountInString(s); c <= n {
		return s + strings.Repeat(" ", n-c)
	}
	rs := []rune(s)
	return string(rs[:n-1]) + "…"
}

// Totals counts the runs and the checks by verdict. NotTestedRuns are the
// runs that did not test their case (neither passed nor failed: not in
// FailedRuns, not counted passed); NotTested the checks that said so.
type Totals struct {
	Cases, Runs, FailedRuns, NotTestedRuns int
	Pass, Fail, NotApplicable, NotTested   int
}

// PassedRuns counts the runs that passed: neither failed nor not tested.
func (t Totals) PassedRuns() int { return t.Runs - t.FailedRuns - t.NotTestedRuns }

// Totals counts the report's runs and checks.
func (r *Report) Totals() Totals {
	var t Totals
	for _, c := range r.Cases {
		t.Cases++
		for _, run := range c.Runs {
			t.Runs++
			switch run.Verdict() {
			case judge.Fail:
				t.FailedRuns++
			case judge.NotTested:
				t.NotTestedRuns++
			}
			for _, ch := range run.Checks {
				switch ch.Verdict {
				case judge.Pass:
					t.Pass++
				case judge.Fail:
					t.Fail++
				case judge.NotTested:
					t.NotTested++
				default:
					t.NotApplicable++
				}
			}
		}
	}
	return t
}

func (r *Report) writeSummary(b *strings.Builder, verbose bool) {
	t := r.Totals()
	fmt.Fprintf(b, "%d runs: %d passed, %d not tested, %d failed.\nChecks of %d rules: %d pass, %d fail, %d n/a, %d not tested.\n",
		t.Runs, t.PassedRuns(), t.NotTestedRuns, t.FailedRuns, len(activeRules()), t.Pass, t.Fail, t.NotApplicable, t.NotTested)
	if in := r.Incomplete; in != nil {
		fmt.Fprintf(b, "INCOMPLETE: stopped (%s); %d not judged: %s.\n", in, in.Planned-in.Finished, names(in.NotRun, 5))
	}
	if t.NotTestedRuns > 0 {
		r.writeNotTested(b)
	}
	if t.Fail == 0 {
		b.WriteString("OBSERVED \"=\" is the expected outcome; TOOL_SUCCESS after a retry is a recovery.\n" +
			"RETRIES counts repeats after a failure and names the first (503, cut, drop…).\n" +
			"--wide shows why and the waits; --json the evidence; docs/matrix.md the rules.\n")
		return
	}
	if !verbose {
		r.writeRuleSummary(b)
		return
	}
	b.WriteString("\nFailed verdicts (rule, evidence from the server's log, what the rule enforces):\n")
	for _, c := range r.Cases {
		for _, ch := range c.Checks() {
			if ch.Verdict != judge.Fail {
				continue
			}
			rule, _ := judge.RuleByID(ch.Rule)
			fmt.Fprintf(b, "\nFAIL %s (%s): %s\n  evidence: %s\n  rule:     %s\n  cites:    %s\n", visible.String(c.Case.Name), c.Case.Era(), ch.Rule, visible.String(ch.Evidence), rule.Title, rule.Cite)
			if run := c.Runs[0]; !run.Client.Builtin && run.Client.Error != "" {
				fmt.Fprintf(b, "  client:   %s\n", visible.String(run.Client.Error))
			}
		}
	}
}

// writeNotTested names the cases a run did not test, and why (the first
// one's evidence): neither passed nor failed, and no failure of the exit
// status (docs/decisions.md, capab17).
func (r *Report) writeNotTested(b *strings.Builder) {
	var where []string
	first, runs := "", 0
	for _, c := range r.Cases {
		n := c.NotTested()
		if n == 0 {
			continue
		}
		runs += n
		where = append(where, fmt.Sprintf("%s (%s)", c.Case.Name, c.Case.Era()))
		if first == "" {
			first = where[len(where)-1] + ": " + c.notTestedWhy()
		}
	}
	fmt.Fprintf(b, "NOT TESTED in %d %s: %s\n  neither passed nor failed (no failure of the exit status): the client declared no capability\n"+
		"  the scenario's interaction needs, and the server answered it without the interaction; or its call ran\n"+
		"  out of the time limit it was given, so what it printed was not compared with the server's answer.\n  first:    %s\n",
		runs, plural(runs, "run", "runs"), visible.String(names(where, 3)), visible.String(first))
}

// ruleFailures is one failed rule across the report.
type ruleFailures struct {
	rule  string
	runs  int      // runs that failed it
	cases []string // "case (era)", in report order
	first string   // the first evidence, with its case
	err   string   // the first failing external client's error
}

// writeRuleSummary sums the failed checks up per rule, in the report's
// order of rules: one paragraph per rule however many runs failed it.
func (r *Report) writeRuleSummary(b *strings.Builder) {
	byRule := map[string]*ruleFailures{}
	var order []string
	for _, c := range r.Cases {
		where := fmt.Sprintf("%s (%s)", c.Case.Name, c.Case.Era())
		for _, run := range c.Runs {
			for _, ch := range run.Checks {
				if ch.Verdict != judge.Fail {
					continue
				}
				f := byRule[ch.Rule]
				if f == nil {
					f = &ruleFailures{rule: ch.Rule, first: where + ": " + ch.Evidence}
					if !run.Client.Builtin && run.Client.Error != "" {
						f.err = run.Client.Error
					}
					byRule[ch.Rule] = f
					order = append(order, ch.Rule)
				}
				f.runs++
				if len(f.cases) == 0 || f.cases[len(f.cases)-1] != where {
					f.cases = append(f.cases, where)
				}
			}
		}
	}
	rank := map[string]int{}
	for i, rule := range judge.Rules() {
		rank[rule.ID] = i
	}
	slices.SortStableFunc(order, func(a, b string) int { return rank[a] - rank[b] })
	fmt.Fprintf(b, "\nFailed rules (%d): runs that failed each, the first evidence; --verbose explains every failure:\n", len(order))
	for _, id := range order {
		f := byRule[id]
		rule, _ := judge.RuleByID(id)
		fmt.Fprintf(b, "\nFAIL %s in %d %s: %s\n  first:    %s\n  rule:     %s\n  cites:    %s\n",
			id, f.runs, plural(f.runs, "run", "runs"), visible.String(names(f.cases, 3)), visible.String(f.first), rule.Title, rule.Cite)
		if f.err != "" {
			fmt.Fprintf(b, "  client:   %s\n", visible.String(f.err))
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// names joins the first n names, then counts the rest.
func names(ns []string, n int) string {
	if len(ns) <= n {
		return strings.Join(ns, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ns[:n], ", "), len(ns)-n)
}

func activeRules() []judge.Rule {
	var out []judge.Rule
	for _, r := range judge.Rules() {
		if r.Active {
			out = append(out, r)
		}
	}
	return out
}

// CaseJSON is the --json object of one case.
type CaseJSON struct {
	Row
	// Parallel is how many runs of the matrix went at once.
	Parallel int `json:"parallel"`
	// Incomplete, set when the matrix was stopped before every run
	// finished, says so ("interrupt after 12 of 84 runs"): this case's
	// runs are those that finished, and other cases may be missing.
	Incomplete string          `json:"incomplete,omitempty"`
	DurationMs float64         `json:"durationMs"`
	Protocol   string          `json:"protocol,omitempty"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	Params     json.RawMessage `json:"params,omitempty"`
	// NeedsCapability is the client capability the scenario's interaction
	// needs (the catalogue's): a run whose client did not declare it is
	// not tested.
	NeedsCapability string      `json:"needsCapability,omitempty"`
	Checks          []CheckJSON `json:"checks"`
	Runs            []RunJSON   `json:"runs"`
}

// CheckJSON is a check with its rule's citation.
type CheckJSON struct {
	judge.Check
	Title string `json:"title"`
	Cite  string `json:"cite"`
}

// RunJSON is one run: the client, the POSTs the server saw, the checks.
type RunJSON struct {
	Repeat     int             `json:"repeat"`
	URL        string          `json:"url"`
	Endpoint   string          `json:"endpoint"`
	Verdict    judge.Verdict   `json:"verdict"`
	Client     judge.ClientRun `json:"client"`
	DurationMs float64         `json:"durationMs"`
	// StartupMs is how long after its start the client's first request
	// arrived; ActiveMs how long it ran from then on (the liveness time).
	StartupMs float64        `json:"startupMs"`
	ActiveMs  float64        `json:"activeMs"`
	Posts     []ExchangeJSON `json:"posts"`
	Checks    []judge.Check  `json:"checks"`
}

// ExchangeJSON is one POST as the evidence shows it.
type ExchangeJSON struct {
	N          int     `json:"post"`
	AtMs       float64 `json:"atMs"`
	Method     string  `json:"method,omitempty"`
	Tool       string  `json:"tool,omitempty"`
	ID         string  `json:"id,omitempty"`
	Status     int     `json:"status"`
	Failed     string  `json:"failed,omitempty"`
	Fired      string  `json:"fired,omitempty"`
	RetryAfter string  `json:"retryAfter,omitempty"`
	State      string  `json:"requestState,omitempty"`
	Issued     string  `json:"issuedState,omitempty"`
	IdemKey    string  `json:"idempotencyKey,omitempty"`
	Protocol   string  `json:"protocolHeader,omitempty"`
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// JSON returns the --json object of the case.
func (c *CaseResult) JSON() CaseJSON {
	row := c.Row()
	out := CaseJSON{Row: row, DurationMs: msf(row.Duration), Protocol: c.Case.Protocol, Tool: c.Case.Tool, Args: c.Case.Args, Params: c.Case.Params,
		NeedsCapability: c.Case.Entry.NeedsCapability}
	for _, ch := range c.Checks() {
		r, _ := judge.RuleByID(ch.Rule)
		out.Checks = append(out.Checks, CheckJSON{Check: ch, Title: r.Title, Cite: r.Cite})
	}
	for _, run := range c.Runs {
		rj := RunJSON{Repeat: run.Repeat, URL: run.URL, Endpoint: run.Endpoint, Verdict: run.Verdict(), Client: run.Client,
			DurationMs: msf(run.Client.Duration), StartupMs: msf(run.Client.Startup), ActiveMs: msf(run.Client.Active), Checks: run.Checks, Posts: []ExchangeJSON{}}
		if run.Trace != nil {
			rj.Posts = exchangesJSON(run.Trace)
		}
		out.Runs = append(out.Runs, rj)
	}
	return out
}

func exchangesJSON(t *judge.Trace) []ExchangeJSON {
	out := []ExchangeJSON{}
	start := t.Start()
	for _, x := range t.Exchanges {
		e := ExchangeJSON{N: x.N, AtMs: msf(x.Start.Sub(start)), Method: x.Method, Tool: x.Tool, Status: x.Status, Fired: x.Fired,
			RetryAfter: x.RetryAfter, State: x.State, Issued: x.Issued, IdemKey: x.Header.Get("Idempotency-Key"), Protocol: x.Header.Get("MCP-Protocol-Version")}
		if !x.ID.IsZero() {
			e.ID = x.ID.String()
		}
		if x.Failed {
			e.Failed = x.What
		}
		out = append(out, e)
	}
	return out
}

// WriteJSON writes one JSON object per case (JSON Lines).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if len(r.Cases) == 0 && r.Incomplete != nil {
		// Stopped before any run finished: no case object carries the
		// state, so one object without a case says it (matrixna22:
		// nothing was written, and a JSON consumer got nothing).
		in := r.Incomplete
		return enc.Encode(IncompleteJSON{Incomplete: in.String(), Reason: in.Reason, Finished: in.Finished, Planned: in.Planned,
			Interrupted: in.Interrupted, NotRun: in.NotRun, Parallel: r.Parallel})
	}
	for _, c := range r.Cases {
		j := c.JSON()
		j.Parallel = r.Parallel
		if r.Incomplete != nil {
			j.Incomplete = r.Incomplete.String()
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}

// IncompleteJSON is the one --json object of a matrix stopped before any
// run finished: no "case", the "incomplete" line every case object would
// carry, and the Incomplete fields.
type IncompleteJSON struct {
	Incomplete  string   `json:"incomplete"`
	Reason      string   `json:"reason"`
	Finished    int      `json:"finishedRuns"`
	Planned     int      `json:"plannedRuns"`
	Interrupted int      `json:"interruptedRuns"`
	NotRun      []string `json:"notRun"`
	Parallel    int      `json:"parallel,omitempty"`
}

// The JUnit XML shape most CI systems read.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Properties []junitProperty `xml:"properties>property,omitempty"`
		Cases      []junitCase     `xml:"testcase"`
		SystemOut  string          `xml:"system-out,omitempty"`
		SystemErr  string          `xml:"system-err,omitempty"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		Error     *junitFailure `xml:"error,omitempty"`
		Skipped   *junitSkipped `xml:"skipped,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
)

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// suite builds one testsuite: a test case per rule. What a peer wrote (the
// case's name from records, the properties, the evidence; the client's
// stdout and stderr, kept as lines) is rendered with the visible package:
// XML would carry a bidi override as it is, and a control character as
// U+FFFD, losing what was sent.
func suite(name string, props []junitProperty, checks []judge.Check, d time.Duration, stdout, stderr string) junitSuite {
	name = visible.String(name)
	for i := range props {
		props[i].Value = visible.String(props[i].Value)
	}
	s := junitSuite{Name: name, Time: secs(d), Properties: props, SystemOut: visible.Lines(stdout), SystemErr: visible.Lines(stderr)}
	for _, ch := range checks {
		ch.Evidence = visible.String(ch.Evidence)
		r, _ := judge.RuleByID(ch.Rule)
		tc := junitCase{Name: ch.Rule, Classname: "mcpdiag.matrix." + name, Time: "0.000"}
		switch ch.Verdict {
		case judge.Fail:
			tc.Failure = &junitFailure{Message: ch.Evidence, Type: ch.Rule, Text: fmt.Sprintf("%s\n\nevidence: %s\nrule: %s\ncites: %s\n", name, ch.Evidence, r.Title, r.Cite)}
			s.Failures++
		case judge.NotApplicable:
			tc.Skipped = &junitSkipped{Message: "n/a: " + ch.Evidence}
			s.Skipped++
		case judge.NotTested:
			tc.Skipped = &junitSkipped{Message: "not tested: " + ch.Evidence}
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	return s
}

func writeJUnit(w io.Writer, name string, d time.Duration, suites []junitSuite) error {
	all := junitSuites{Name: name, Time: secs(d), Suites: suites}
	for _, s := range suites {
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		all.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJUnit writes JUnit XML: a testsuite per case, a testcase per rule
// (failure with the evidence; skipped for n/a).
func (r *Report) WriteJUnit(w io.Writer) error {
	var suites []junitSuite
	for _, c := range r.Cases {
		row := c.Row()
		props := []junitProperty{
			{"scenario", c.Case.Scenario()}, {"era", c.Case.Era()}, {"layer", string(c.Case.Layer())},
			{"tool", c.Case.Tool}, {"expected", string(c.Case.Expected)}, {"observed", row.Observed},
			{"posts", strconv.Itoa(row.Posts)}, {"retries", strconv.Itoa(row.Retries)},
			{"parallel", strconv.Itoa(r.Parallel)},
		}
		var stdout, stderr string
		if run := c.Runs[0]; !run.Client.Builtin {
			stdout, stderr = run.Client.Stdout, run.Client.Stderr
		}
		suites = append(suites, suite(c.Case.Name, props, c.Checks(), row.Duration, stdout, stderr))
	}
	name := "mcpdiag matrix"
	if in := r.Incomplete; in != nil {
		// An error, not a failure of the client: CI shows the run as
		// broken, and no reader takes the missing cases for passes.
		name += " (incomplete)"
		props := []junitProperty{{"reason", in.Reason}, {"finishedRuns", strconv.Itoa(in.Finished)}, {"plannedRuns", strconv.Itoa(in.Planned)},
			{"interruptedRuns", strconv.Itoa(in.Interrupted)},
			{"parallel", strconv.Itoa(r.Parallel)}}
		msg := fmt.Sprintf("the matrix was stopped (%s): only the runs that finished are judged", in)
		suites = append(suites, junitSuite{Name: "mcpdiag.matrix.incomplete", Tests: 1, Errors: 1, Time: secs(r.Duration), Properties: props,
			Cases: []junitCase{{Name: "matrix.complete", Classname: "mcpdiag.matrix", Time: secs(r.Duration),
				Error: &junitFailure{Message: msg, Type: "incomplete", Text: msg + "\nnot run: " + strings.Join(in.NotRun, ", ") + "\n"}}}})
	}
	return writeJUnit(w, name, r.Duration, suites)
}
