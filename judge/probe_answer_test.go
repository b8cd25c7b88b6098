package judge_test

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestProbeAnswerFact: the probe rules know whether a probe was answered
// from the probe's own fact (record.Probe.Answer), whatever the transport
// and its URL: a stdio answer has no HTTP status. A record written before
// the fact existed is an HTTP one, judged by its status.
func TestProbeAnswerFact(t *testing.T) {
	rec := func(url string, status int, outcome classify.Outcome, answer string) *record.Record {
		return &record.Record{Kind: record.KindExchange, Method: "tools/call", Tool: "echo", URL: url, Status: status,
			Outcome: outcome, ProtocolVersion: "2025-11-25", IsError: boolPtr(outcome == classify.ToolError),
			Probe: &record.Probe{Kind: "wrong-type", Index: 0, Property: "text", Answer: answer}}
	}
	for _, tc := range []struct {
		name             string
		rec              *record.Record
		answered, invArg judge.Verdict
		says             string
	}{
		{"stdio line", rec("stdio:server", 0, classify.ToolError, record.ProbeAnswerResponse), judge.Pass, judge.Pass, "1 probe checked"},
		// The URL is a name, not a fact: a stdio record renamed (or a
		// transport the judge has not heard of) is judged the same.
		{"stdio line, other url", rec("pipe", 0, classify.ToolError, record.ProbeAnswerResponse), judge.Pass, judge.Pass, "1 probe checked"},
		{"stdio no line", rec("stdio:server", 0, classify.NetworkError, record.ProbeAnswerNone), judge.Fail, judge.NotApplicable, "no answer"},
		{"http", rec("http://127.0.0.1:1/mcp", 200, classify.ToolError, record.ProbeAnswerResponse), judge.Pass, judge.Pass, "1 probe checked"},
		{"http no response", rec("http://127.0.0.1:1/mcp", 0, classify.NetworkError, record.ProbeAnswerNone), judge.Fail, judge.NotApplicable, "no answer"},
		{"old http record", rec("http://127.0.0.1:1/mcp", 200, classify.ToolError, ""), judge.Pass, judge.Pass, "1 probe checked"},
		{"old http record, no response", rec("http://127.0.0.1:1/mcp", 0, classify.NetworkError, ""), judge.Fail, judge.NotApplicable, "no answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := tc.rec.Probe.Answer == ""
			tr := judge.NewTrace("probe", []*record.Record{tc.rec}, nil)
			tr.Probe = true
			got := map[string]judge.Check{}
			for _, c := range judge.Judge(tr) {
				got[c.Rule] = c
			}
			if c := got["probe.answered"]; c.Verdict != tc.answered || !strings.Contains(c.Evidence, tc.says) {
				t.Errorf("probe.answered %s %q, want %s saying %q", c.Verdict, c.Evidence, tc.answered, tc.says)
			}
			if c := got["probe.invalid-arguments"]; c.Verdict != tc.invArg {
				t.Errorf("probe.invalid-arguments %s %q, want %s", c.Verdict, c.Evidence, tc.invArg)
			}
			if old && tc.rec.Probe.Answer != "" {
				t.Errorf("judging changed the record's probe member (answer %q)", tc.rec.Probe.Answer)
			}
		})
	}
}

func boolPtr(v bool) *bool { return &v }

// TestProbeNotApplicableSaysWhy: a probe rule that does not apply says
// whether no probe of its kind was sent or none of those sent was
// answered. Before (outsider22), a tool with no property, which gets no
// argument probe, read "no probe of this kind was answered" in its
// probe.invalid-arguments cell, as if the server had not answered.
func TestProbeNotApplicableSaysWhy(t *testing.T) {
	rec := func(kind string, outcome classify.Outcome, answer string) *record.Record {
		return &record.Record{Kind: record.KindExchange, Method: "tools/call", Tool: "get-env", URL: "http://127.0.0.1:1/mcp",
			Status: 200, Outcome: outcome, ProtocolVersion: "2025-11-25", IsError: boolPtr(outcome == classify.ToolError),
			Probe: &record.Probe{Kind: kind, Index: 0, Answer: answer}}
	}
	for _, tc := range []struct {
		name string
		rec  *record.Record
		rule string
		says string
	}{
		{"no argument probe sent", rec("unknown-tool", classify.ToolError, record.ProbeAnswerResponse), "probe.invalid-arguments", "no probe of this kind was sent"},
		{"no origin probe sent", rec("unknown-tool", classify.ToolError, record.ProbeAnswerResponse), "probe.origin", "no probe of this kind was sent"},
		{"argument probe not answered", rec("wrong-type", classify.NetworkError, record.ProbeAnswerNone), "probe.invalid-arguments", "no probe of this kind was answered"},
		{"unknown-tool probe not answered", rec("unknown-tool", classify.NetworkError, record.ProbeAnswerNone), "probe.unknown-tool", "no probe of this kind was answered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := judge.NewTrace("probe", []*record.Record{tc.rec}, nil)
			tr.Probe = true
			for _, c := range judge.Judge(tr) {
				if c.Rule == tc.rule && (c.Verdict != judge.NotApplicable || c.Evidence != tc.says) {
					t.Errorf("%s %s %q, want n/a %q", c.Rule, c.Verdict, c.Evidence, tc.says)
				}
			}
		})
	}
}
