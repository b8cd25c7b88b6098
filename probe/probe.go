package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Defaults of Options.
const (
	DefaultSeed       = 1
	DefaultMaxPerTool = 6
	DefaultTimeout    = 10 * time.Second
	DefaultInterval   = 5 * time.Millisecond
	// DefaultFailOn fails a run on a broken MUST or SHOULD; a failed
	// advice rule is reported and does not fail it.
	DefaultFailOn = judge.SeverityShould
)

// The values of the ForeignOrigin and BadProtocolVersion probes: a name
// under .invalid (RFC 6761: it never resolves) and a date before MCP.
const (
	ForeignOriginValue      = "http://mcpdiag-probe.invalid"
	BadProtocolVersionValue = "1999-01-01"
	// AcceptJSONOnlyValue is the Accept of the AcceptJSONOnly probe: a
	// client that reads JSON answers and no event stream.
	AcceptJSONOnlyValue = "application/json"
)

// ErrUsage marks a run that cannot start because of its inputs.
var ErrUsage = errors.New("usage")

// Options configure a probe run. The zero value of every field is a
// documented default.
type Options struct {
	// URL is the server's Streamable HTTP endpoint.
	URL string
	// Command, when set (instead of URL), is a stdio server to start and
	// probe: argv, newline-delimited JSON-RPC on its stdin and stdout, in
	// either era (server/discover first unless Protocol is 2025-11-25). The
	// HTTP-only probes (Origin, MCP-Protocol-Version header) are not sent:
	// their rules are n/a.
	Command []string
	// Protocol is client.ProtocolAuto (default), 2026-07-28 or 2025-11-25.
	Protocol string
	// Seed makes the run's probes (DefaultSeed when 0): the same seed, the
	// same listing and the same options give the same probes.
	Seed uint64
	// MaxPerTool bounds the argument probes per tool (DefaultMaxPerTool).
	MaxPerTool int
	// Allow names the tools that receive argument probes although they are
	// not annotated readOnlyHint true; AllowAll allows every tool. By
	// default only read-only tools receive them: a bad argument a server
	// does not validate can still run the tool.
	Allow    []string
	AllowAll bool
	// Timeout bounds each probe (DefaultTimeout).
	Timeout time.Duration
	// Interval is the pause between two probes (DefaultInterval; negative
	// for none).
	Interval time.Duration
	// Header is added to every request; HTTPClient sends them.
	Header     http.Header
	HTTPClient *http.Client
	// OnRecord, when set, receives every exchange record as it is made,
	// in order, redacted with Redactor.
	OnRecord func(*record.Record)
	// Redactor redacts every record as it is made (Redactor.Record), before
	// the rules judge it, so that what a check's evidence quotes of the
	// server was redacted with its record (the credentials of the record's
	// own headers among them), not scrubbed as text afterwards. Nil: a new
	// one with Header's credentials registered. Main passes the one its
	// record file and report use, so equal masks mean equal values across
	// them.
	Redactor *record.Redactor
	// FailOn is the lightest severity of a failed rule that fails the run
	// (Report.Failed): DefaultFailOn when "", judge.SeverityNone for none.
	FailOn judge.Severity
}

// ToolPlan says what the run did with one listed tool.
type ToolPlan struct {
	Name string `json:"name"`
	// ReadOnly reports readOnlyHint true; Allowed that the tool received
	// argument probes (read-only, or named by Allow/AllowAll).
	ReadOnly bool `json:"readOnly"`
	Allowed  bool `json:"allowed"`
	// Probes is how many probes the plan has for it (all sent unless the
	// run was interrupted: Arguments+NotObject were); Why says why none
	// did, or the warning for a tool allowed though not read-only.
	Probes int    `json:"probes"`
	Why    string `json:"why,omitempty"`
	// Arguments counts its argument probes (Kind.IsArgument), the probes
	// probe.invalid-arguments judges; NotObject its arguments-not-object
	// probes (probe.malformed-call's). Probes is their sum.
	Arguments int `json:"argumentProbes"`
	NotObject int `json:"argumentsNotObjectProbes"`
	// Answers count how its argument probes were answered, as
	// probe.invalid-arguments counts them: a tool execution error (isError
	// true), a JSON-RPC error, a success, anything else (no answer, a
	// broken one, an HTTP error without a JSON-RPC error).
	ToolErrors int `json:"toolErrors"`
	RPCErrors  int `json:"rpcErrors"`
	Successes  int `json:"successes"`
	Other      int `json:"other"`
	// Checks are the verdicts of the ToolRules on this tool's probes
	// alone, in report order; none for a tool that received no probe.
	Checks []judge.Check `json:"checks,omitempty"`
}

// Families are the rule families of the grade line, in report order, and
// the rules of each.
var Families = []struct {
	Name  string
	Rules []string
}{
	{"transport", []string{"probe.origin", "probe.protocol-version", "probe.protocol-version-missing", "probe.accept", "probe.notification-202"}},
	{"protocol", []string{"probe.answer-shape", "probe.result-type", "probe.unknown-tool", "probe.malformed-call", "probe.id-type"}},
	{"application", []string{"probe.invalid-arguments", "probe.is-error-missing"}},
	{"liveness", []string{"probe.answered"}},
}

// Grade is one family's verdict: fail when one of its rules failed, pass
// when one passed and none failed, n/a otherwise; with the count of each
// verdict, the rules that failed and the heaviest severity among them.
type Grade struct {
	Family        string        `json:"family"`
	Verdict       judge.Verdict `json:"verdict"`
	Pass          int           `json:"pass"`
	Fail          int           `json:"fail"`
	NotApplicable int           `json:"notApplicable"`
	// Failed are the rules of the family that failed, in report order;
	// Severity is the heaviest of their severities ("" when none failed).
	Failed   []string       `json:"failed,omitempty"`
	Severity judge.Severity `json:"severity,omitempty"`
}

// Grades returns the verdict of each family over the checks. A rule of a
// family with no check (not judged) counts as n/a.
func Grades(checks []judge.Check) []Grade {
	by := map[string]judge.Check{}
	for _, c := range checks {
		by[c.Rule] = c
	}
	var out []Grade
	for _, f := range Families {
		g := Grade{Family: f.Name, Verdict: judge.NotApplicable}
		for _, r := range f.Rules {
			c, ok := by[r]
			switch {
			case ok && c.Verdict == judge.Fail:
				g.Verdict = judge.Fail
				g.Fail++
				g.Failed = append(g.Failed, r)
				if g.Severity == "" || c.Severity.AtLeast(g.Severity) {
					g.Severity = c.Severity
				}
			case ok && c.Verdict == judge.Pass:
				if g.Verdict != judge.Fail {
					g.Verdict = judge.Pass
				}
				g.Pass++
			default:
				g.NotApplicable++
			}
		}
		out = append(out, g)
	}
	return out
}

// Report is the outcome of a run.
type Report struct {
	URL string `json:"url"`
	// Command is the stdio server's argv (Options.Command), and Stopped
	// how it ended when the run stopped it.
	Command []string `json:"command,omitempty"`
	Stopped string   `json:"stopped,omitempty"`
	// Interrupted says that the run stopped before it sent all its
	// probes ("stopped after 6 of 45 probes: context canceled"): the
	// verdicts judge the probes sent (Probes), and a tool's Probes counts
	// what was planned for it, of which Arguments and NotObject were sent.
	Interrupted string `json:"interrupted,omitempty"`
	Protocol    string `json:"protocol"`
	EraReason   string `json:"eraReason"`
	Seed        uint64 `json:"seed"`
	// Tools are the listed tools, in the server's order.
	Tools []ToolPlan `json:"tools"`
	// Probes are the probes sent, by index.
	Probes []Probe `json:"-"`
	// Records are every exchange of the run, the listing's included.
	Records []*record.Record `json:"-"`
	// Checks are the probe rules' verdicts, Grades each family's.
	Checks []judge.Check `json:"checks"`
	Grades []Grade       `json:"grades"`
	// FailOn is the run's threshold (Options.FailOn), Findings the rules
	// that failed with a severity at least FailOn, in report order: the
	// run failed (Failed) when there is one.
	FailOn   judge.Severity `json:"failOn"`
	Findings []string       `json:"findings"`
	// UnknownAllow are the names of Options.Allow that no listed tool has
	// (a typo probes nothing: the report says so).
	UnknownAllow []string `json:"unknownAllow,omitempty"`
	// ListingWarnings are the classifier's and the client's warnings on
	// the tools/list exchanges of the listing ("CODE: message"), such as a
	// cursor loop: the tools probed may not be all the server has.
	ListingWarnings []string `json:"listingWarnings,omitempty"`
}

// unknownAllow returns the names of allow that no tool has.
func unknownAllow(tools []client.Tool, allow []string) []string {
	var out []string
	for _, a := range allow {
		if !slices.ContainsFunc(tools, func(t client.Tool) bool { return t.Name == a }) && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Failed reports a rule that failed with a severity at least FailOn.
func (r *Report) Failed() bool { return len(r.Findings) > 0 }

func (o Options) withDefaults() Options {
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.MaxPerTool <= 0 {
		o.MaxPerTool = DefaultMaxPerTool
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.FailOn == "" {
		o.FailOn = DefaultFailOn
	}
	if o.Redactor == nil {
		o.Redactor = record.NewRedactor()
		o.Redactor.AddHeaderSecrets(o.Header)
	}
	return o
}

// Plan returns the probes of a run over tools with opts, and what it does
// with each tool: the argument probes of every allowed tool (at most
// MaxPerTool each, a seeded choice among its candidates when it has more),
// then the envelope probes (an unknown tool name, a call without
// params.name, a string and a number id on tools/list, a notification, and
// tools/list with a foreign Origin, an unknown MCP-Protocol-Version, none,
// and an Accept without text/event-stream).
// It is a function of the tools and the options only: probe i of a seed is
// always the same request.
func Plan(tools []client.Tool, opts Options) ([]Probe, []ToolPlan) {
	opts = opts.withDefaults()
	var out []Probe
	var plans []ToolPlan
	names := map[string]bool{}
	for _, t := range tools {
		names[t.Name] = true
		ro := t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
		tp := ToolPlan{Name: t.Name, ReadOnly: ro, Allowed: ro || opts.AllowAll || slices.Contains(opts.Allow, t.Name)}
		switch {
		case !tp.Allowed:
			tp.Why = "not annotated readOnlyHint true: no argument probe (--allow " + t.Name + " to probe it)"
		case !ro:
			tp.Why = "warning: probed although not annotated readOnlyHint true"
			if t.Annotations.DestructiveHint == nil || *t.Annotations.DestructiveHint {
				tp.Why = "warning: probed although it may be destructive (destructiveHint not false)"
			}
		}
		if tp.Allowed {
			cs := candidates(t, opts.Seed)
			if len(cs) > opts.MaxPerTool {
				r := rng(opts.Seed, t.Name, -2)
				keep := r.Perm(len(cs))[:opts.MaxPerTool]
				slices.Sort(keep)
				var picked []Probe
				for _, i := range keep {
					picked = append(picked, cs[i])
				}
				cs = picked
			}
			if len(cs) == 0 {
				tp.Why = "its inputSchema could not be read (or uses anyOf/oneOf/allOf/$ref): no argument probe"
			}
			tp.Probes = len(cs)
			out = append(out, cs...)
		}
		plans = append(plans, tp)
	}
	out = append(out, envelope(names, opts.Seed)...)
	for i := range out {
		out[i].Index = i
	}
	return out, plans
}

// envelope returns the probes that call no listed tool.
func envelope(listed map[string]bool, seed uint64) []Probe {
	r := rand.New(rand.NewPCG(seed, 0x70726f6265))
	unknown := "mcpdiag_no_such_tool_" + strconv.Itoa(r.IntN(1_000_000))
	for listed[unknown] {
		unknown += "_"
	}
	un, _ := json.Marshal(unknown)
	idStr := "mcpdiag-" + strconv.Itoa(r.IntN(1_000_000))
	idNum := int64(1_000_000 + r.IntN(1_000_000))
	return []Probe{
		{Kind: UnknownTool, Detail: "tools/call of " + unknown + ", which tools/list does not name", Method: "tools/call", Name: unknown,
			Params: map[string]json.RawMessage{"name": un, "arguments": json.RawMessage(`{}`)}},
		{Kind: MissingName, Detail: "tools/call without params.name", Method: "tools/call",
			Params: map[string]json.RawMessage{"arguments": json.RawMessage(`{}`)}},
		{Kind: IDString, Detail: "tools/list with the string id " + strconv.Quote(idStr), Method: "tools/list", ID: wire.StringID(idStr),
			Params: map[string]json.RawMessage{}},
		{Kind: IDNumber, Detail: "tools/list with the number id " + strconv.FormatInt(idNum, 10), Method: "tools/list", ID: wire.IntID(idNum),
			Params: map[string]json.RawMessage{}},
		{Kind: Notification, Detail: "notifications/cancelled of a request that does not exist", Method: "notifications/cancelled", Notification: true,
			Params: map[string]json.RawMessage{"requestId": json.RawMessage(`"mcpdiag-none"`), "reason": json.RawMessage(`"mcpdiag probe"`)}},
		{Kind: ForeignOrigin, Detail: "tools/list with Origin: " + ForeignOriginValue, Method: "tools/list",
			Params: map[string]json.RawMessage{}, Header: http.Header{"Origin": {ForeignOriginValue}}},
		{Kind: BadProtocolVersion, Detail: "tools/list with MCP-Protocol-Version: " + BadProtocolVersionValue, Method: "tools/list",
			Params: map[string]json.RawMessage{}, Header: http.Header{"Mcp-Protocol-Version": {BadProtocolVersionValue}}},
		// A name with no values: the client removes the era's header.
		{Kind: NoProtocolVersion, Detail: "tools/list without the MCP-Protocol-Version header", Method: "tools/list",
			Params: map[string]json.RawMessage{}, Header: http.Header{"Mcp-Protocol-Version": nil}},
		{Kind: AcceptJSONOnly, Detail: "tools/list with Accept: " + AcceptJSONOnlyValue, Method: "tools/list",
			Params: map[string]json.RawMessage{}, Header: http.Header{"Accept": {AcceptJSONOnlyValue}}},
	}
}

// Run discovers the server (both eras, or Options.Protocol), lists every
// tool (all pages), sends the probes of Plan one by one, records every
// exchange and judges the records with the probe rules. The error is
// non-nil for bad options (ErrUsage) and when the tools could not be
// listed; every answer to a probe, whatever it is, is in the Report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if len(opts.Command) > 0 {
		return runStdio(ctx, opts)
	}
	// The answers the probe gives to a server's requests on a 2025-11-25
	// response stream (client.Client posts them during Send): collected
	// here, recorded before the probe's own record.
	var answers []*client.Exchange
	c, err := client.New(client.Options{URL: opts.URL, Protocol: opts.Protocol, HTTPClient: opts.HTTPClient, Header: opts.Header, Timeout: opts.Timeout,
		Inputs: declining{}, Capabilities: json.RawMessage(`{}`),
		OnExchange: func(ex *client.Exchange) {
			if ex.Origin == client.OriginMRTR {
				answers = append(answers, ex)
			}
		}})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	rep := &Report{URL: opts.URL, Seed: opts.Seed}
	asked := 0 // the server requests answered while the probe being emitted waited
	emit := func(exs []*client.Exchange, p *Probe) {
		for _, r := range client.ExchangeRecords(exs, record.Record{Client: client.DefaultClientInfo.Name + "@" + client.DefaultClientInfo.Version, ProtocolVersion: c.Protocol()}, opts.URL) {
			if p != nil {
				// Over HTTP a probe got an answer when a response came
				// back, whatever its status or body.
				answer := record.ProbeAnswerNone
				if r.Status != 0 {
					answer = record.ProbeAnswerResponse
				}
				r.Probe = &record.Probe{Kind: string(p.Kind), Seed: strconv.FormatUint(opts.Seed, 10), Index: p.Index, Property: p.Property, Detail: p.Detail, Answer: answer, Asked: asked}
			}
			// The rules judge (and quote) the record as it is written.
			r = opts.Redactor.Record(r)
			rep.Records = append(rep.Records, r)
			if opts.OnRecord != nil {
				opts.OnRecord(r)
			}
		}
	}
	l := c.ListTools(ctx)
	rep.Protocol, rep.EraReason = l.Protocol, l.EraReason
	emit(l.Exchanges, nil)
	for _, ex := range l.Exchanges {
		if ex.Method == "tools/list" && ex.Result != nil {
			for i := range ex.Result.NumWarnings() {
				w := ex.Result.Warning(i)
				rep.ListingWarnings = append(rep.ListingWarnings, w.Code+": "+w.Message)
			}
		}
	}
	if !l.OK {
		why := "the listing failed"
		if l.Final != nil {
			why = fmt.Sprintf("%s: %s", l.Final.Outcome, l.Final.Reason)
		}
		if l.LegacyTransport != "" {
			why += "; " + client.LegacyHint(opts.URL, l.LegacyTransport)
		}
		return rep, fmt.Errorf("listing the tools of %s: %s", record.RedactURL(opts.URL), record.Scrub(why))
	}
	probes, plans := Plan(l.Tools, opts)
	rep.Tools, rep.Probes = plans, probes
	rep.UnknownAllow = unknownAllow(l.Tools, opts.Allow)
	var stopped error
	for i, p := range probes {
		if !wait(ctx, i, opts.Interval) {
			// What was answered so far is judged and reported.
			stopped = fmt.Errorf("stopped after %d of %d probes: %w", i, len(probes), ctx.Err())
			rep.Probes, rep.Interrupted = probes[:i], stopped.Error()
			break
		}
		answers = nil
		ex := c.Send(ctx, p.Request(opts.Seed))
		judged := len(rep.Records)
		// The answers to the server's questions are exchanges of the run,
		// not probes: no probe rule judges them.
		emit(answers, nil)
		asked = len(answers)
		emit([]*client.Exchange{ex}, &probes[i])
		if ctx.Err() != nil {
			// The run ended with this probe in flight (Ctrl-C, the
			// caller's deadline): what came back, or did not, is the
			// interrupt's doing, not the server's silence. Its records
			// are written (OnRecord) but not judged.
			stopped = interruptedDuring(i, len(probes), ctx.Err())
			rep.Probes, rep.Interrupted, rep.Records = probes[:i], stopped.Error(), rep.Records[:judged]
			break
		}
	}
	tr := judge.NewTrace(opts.URL, rep.Records, nil)
	tr.Probe = true
	rep.Checks = judge.Judge(tr)
	rep.Grades = Grades(rep.Checks)
	rep.fillTools(opts.FailOn)
	return rep, stopped
}

// interruptedDuring is the error of a run whose context ended while probe
// i (of n) was in flight.
func interruptedDuring(i, n int, err error) error {
	return fmt.Errorf("stopped during probe %d of %d (%d answered before it; its own answer is not judged): %w", i+1, n, i, err)
}

// declining answers the requests a server sends the probe on a 2025-11-25
// response stream the least committal valid way, so that a tool that asks
// a question finishes and its answer can be judged: an elicitation is
// declined ({"action":"decline"}: the user said no, nothing is filled in or
// consented to), roots/list gets no roots, ping an empty result. Sampling
// and any other method get ErrNoAnswer, which the client sends as the
// JSON-RPC error -32601: the probe declares no capability and runs no
// model. (The probe declares no capability: it does not invite questions,
// it answers those it gets.)
type declining struct{}

// Answer implements client.InputProvider.
func (declining) Answer(_ context.Context, req client.InputRequest) (json.RawMessage, error) {
	switch req.Method {
	case "elicitation/create":
		return json.RawMessage(`{"action":"decline"}`), nil
	case "roots/list":
		return json.RawMessage(`{"roots":[]}`), nil
	case "ping":
		return json.RawMessage(`{}`), nil
	}
	return nil, client.ErrNoAnswer
}

// wait pauses before probe i (none before the first); false when ctx ended.
func wait(ctx context.Context, i int, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if i == 0 || d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
