package probe

import (
	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// ToolRules are the probe rules judged per tool (ToolPlan.Checks): those
// about the answers to the probes that call a listed tool (the argument
// probes and arguments-not-object), with the short label of the text
// report's per-tool table. The other probe rules are about probes that
// call no listed tool (an unknown name, ids, headers, a notification).
var ToolRules = []struct {
	Rule, Label string
}{
	{"probe.answered", "answered"},
	{"probe.answer-shape", "shape"},
	{"probe.result-type", "resultType"},
	{"probe.invalid-arguments", "args"},
	{"probe.is-error-missing", "isError"},
	{"probe.malformed-call", "malformed"},
	{"probe.id-type", "id"},
}

func isToolRule(id string) bool {
	for _, r := range ToolRules {
		if r.Rule == id {
			return true
		}
	}
	return false
}

// fillTools fills in each tool's answer counts and its verdicts (the
// ToolRules judged on the records of its probes alone: a trace per tool),
// and the run's threshold and findings.
func (r *Report) fillTools(failOn judge.Severity) {
	at := map[string]*ToolPlan{}
	for i := range r.Tools {
		at[r.Tools[i].Name] = &r.Tools[i]
	}
	recs := map[string][]*record.Record{}
	// The answers the probe gave to a server's questions are recorded
	// just before the probe's own record: they go with its tool.
	var answers []*record.Record
	for _, rec := range r.Records {
		if rec.Probe == nil {
			if rec.ClientAnswer {
				answers = append(answers, rec)
			}
			continue
		}
		tp := at[rec.Tool]
		if tp == nil {
			answers = nil
			continue // an envelope probe: it names no listed tool
		}
		recs[rec.Tool] = append(recs[rec.Tool], answers...)
		recs[rec.Tool] = append(recs[rec.Tool], rec)
		answers = nil
		if !Kind(rec.Probe.Kind).IsArgument() {
			// arguments-not-object: probe.malformed-call's, not an
			// argument probe (a JSON-RPC error is its expected answer).
			tp.NotObject++
			continue
		}
		tp.Arguments++
		switch {
		case rec.Outcome == classify.ToolError:
			tp.ToolErrors++
		case rec.JSONRPC.ErrorCode != nil:
			tp.RPCErrors++
		case rec.Outcome == classify.ToolSuccess:
			tp.Successes++
		default:
			tp.Other++
		}
	}
	for i := range r.Tools {
		tp := &r.Tools[i]
		if len(recs[tp.Name]) == 0 {
			continue
		}
		tr := judge.NewTrace(r.URL+" "+tp.Name, recs[tp.Name], nil)
		tr.Probe = true
		for _, c := range judge.Judge(tr) {
			if isToolRule(c.Rule) {
				tp.Checks = append(tp.Checks, c)
			}
		}
	}
	r.FailOn = failOn
	r.Findings = []string{}
	for _, c := range r.Checks {
		if c.Verdict == judge.Fail && c.Severity.AtLeast(failOn) {
			r.Findings = append(r.Findings, c.Rule)
		}
	}
}
