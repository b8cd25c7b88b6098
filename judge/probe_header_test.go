package judge_test

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestHeaderProbeAnswers: probe.protocol-version-missing and probe.accept
// pass every answer their era's text allows, naming which in the evidence,
// and fail the others, one case per branch (the goldens hold one real run
// of each rule).
func TestHeaderProbeAnswers(t *testing.T) {
	code := func(c int64) *int64 { return &c }
	rec := func(kind, protocol string, status int, outcome classify.Outcome, errCode *int64, contentType string, warn ...string) *record.Record {
		r := &record.Record{Kind: record.KindExchange, HTTPMethod: "POST", Method: "tools/list", Status: status, Outcome: outcome,
			ProtocolVersion: protocol, ContentType: contentType, JSONRPC: record.JSONRPC{ID: wire.IntID(7), ErrorCode: errCode},
			Probe: &record.Probe{Kind: kind, Index: 3, Answer: record.ProbeAnswerResponse}}
		for _, w := range warn {
			r.Warnings = append(r.Warnings, record.Warning{Code: w})
		}
		return r
	}
	const (
		missing = "probe.protocol-version-missing"
		accept  = "probe.accept"
		p26     = "2026-07-28"
		p25     = "2025-11-25"
		nv      = "no-protocol-version"
		aj      = "accept-json-only"
		json    = "application/json"
	)
	for _, tc := range []struct {
		name    string
		rule    string
		rec     *record.Record
		verdict judge.Verdict
		says    string
	}{
		{"2026 HeaderMismatch", missing, rec(nv, p26, 400, classify.HTTPError, code(-32020), json), judge.Pass, "400 HeaderMismatch -32020 (the MUST"},
		{"2026 another 400", missing, rec(nv, p26, 400, classify.HTTPError, code(-32600), json), judge.Pass, "400 (JSON-RPC error -32600): allowed as the answer to a 2025-03-26 request"},
		{"2026 bare 400", missing, rec(nv, p26, 400, classify.HTTPError, nil, "text/plain"), judge.Pass, "400 (no JSON-RPC error): allowed"},
		{"2026 HeaderMismatch in 200", missing, rec(nv, p26, 200, classify.JSONRPCError, code(-32020), json), judge.Fail, "HeaderMismatch -32020 in HTTP 200: §Server Validation wants 400"},
		{"2026 JSON-RPC error in 200", missing, rec(nv, p26, 200, classify.JSONRPCError, code(-32600), json), judge.Pass, "JSON-RPC error -32600 in HTTP 200: allowed as the answer to a 2025-03-26 request"},
		{"2026 served as 2026", missing, rec(nv, p26, 200, classify.ResultSuccess, nil, json), judge.Fail, "served as a 2026-07-28 request (its result has resultType)"},
		{"2026 served as 2025-03-26", missing, rec(nv, p26, 200, classify.ResultSuccess, nil, json, classify.WarnMissingResultType), judge.Pass, "served without resultType: allowed"},
		{"2026 server error", missing, rec(nv, p26, 500, classify.HTTPError, nil, "text/plain"), judge.Fail, "HTTP 500 (HTTP_ERROR): the era allows a 400 HeaderMismatch -32020"},
		{"2025 served", missing, rec(nv, p25, 200, classify.ResultSuccess, nil, "text/event-stream"), judge.Pass, "served (the session's version, or 2025-03-26: the SHOULD)"},
		{"2025 400", missing, rec(nv, p25, 400, classify.HTTPError, code(-32022), json), judge.Pass, "400 (JSON-RPC error -32022): allowed for a server that does not support 2025-03-26"},
		{"2025 JSON-RPC error in 200", missing, rec(nv, p25, 200, classify.JSONRPCError, code(-32600), json), judge.Fail, "JSON-RPC error -32600 in HTTP 200: the era wants the request served"},
		{"2025 session lost", missing, rec(nv, p25, 404, classify.HTTPError, nil, ""), judge.Fail, "HTTP 404 (HTTP_ERROR): the era wants the request served"},

		{"406", accept, rec(aj, p25, 406, classify.HTTPError, code(-32000), json), judge.Pass, "406 Not Acceptable (Accept honored)"},
		{"400", accept, rec(aj, p26, 400, classify.HTTPError, nil, "text/plain"), judge.Pass, "400 (the request breaks the transport's MUST)"},
		{"JSON answer", accept, rec(aj, p26, 200, classify.ResultSuccess, nil, "application/json; charset=utf-8"), judge.Pass, "answered application/json"},
		{"event stream", accept, rec(aj, p25, 200, classify.ResultSuccess, nil, "text/event-stream"), judge.Pass, "answered text/event-stream, which the request's Accept does not list: allowed (RFC 9110"},
		{"500", accept, rec(aj, p26, 500, classify.HTTPError, nil, "text/plain"), judge.Fail, "HTTP 500 (HTTP_ERROR), not 406 Not Acceptable, 400 or an answer: a server error"},
		{"405", accept, rec(aj, p25, 405, classify.HTTPError, nil, ""), judge.Fail, "says the endpoint or POST is missing"},
		{"415", accept, rec(aj, p25, 415, classify.HTTPError, nil, ""), judge.Fail, "415 is about the request's Content-Type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := judge.NewTrace("probe", []*record.Record{tc.rec}, nil)
			tr.Probe = true
			for _, c := range judge.Judge(tr) {
				if c.Rule != tc.rule {
					continue
				}
				if c.Verdict != tc.verdict || !strings.Contains(c.Evidence, tc.says) {
					t.Errorf("%s %s %q, want %s saying %q", c.Rule, c.Verdict, c.Evidence, tc.verdict, tc.says)
				}
				return
			}
			t.Fatalf("no %s check", tc.rule)
		})
	}
}

// TestResultTypeSkipsMissingVersion: a result without resultType to the
// request without MCP-Protocol-Version is the answer to a 2025-03-26
// request, which has none: probe.result-type does not judge it.
func TestResultTypeSkipsMissingVersion(t *testing.T) {
	r := &record.Record{Kind: record.KindExchange, HTTPMethod: "POST", Method: "tools/list", Status: 200, Outcome: classify.ResultSuccess,
		ProtocolVersion: "2026-07-28", JSONRPC: record.JSONRPC{ID: wire.IntID(7)},
		Warnings: []record.Warning{{Code: classify.WarnMissingResultType}},
		Probe:    &record.Probe{Kind: "no-protocol-version", Answer: record.ProbeAnswerResponse}}
	tr := judge.NewTrace("probe", []*record.Record{r}, nil)
	tr.Probe = true
	for _, c := range judge.Judge(tr) {
		if c.Rule == "probe.result-type" && c.Verdict != judge.NotApplicable {
			t.Errorf("probe.result-type %s: %s", c.Verdict, c.Evidence)
		}
	}
}
