package faults_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
)

// TestCatalogueEntries checks what every entry must have: a unique id, a
// title, a description, a layer the classifier knows, defaults that
// validate and survive a JSON round trip, an example that validates, a tool,
// arguments that are an object, and an expected outcome.
func TestCatalogueEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range faults.Catalogue() {
		t.Run(e.ID, func(t *testing.T) {
			if seen[e.ID] {
				t.Fatalf("duplicate id")
			}
			seen[e.ID] = true
			if e.Title == "" || e.Description == "" || e.Why == "" || e.Tool == "" || e.ExpectedPosts < 1 {
				t.Errorf("incomplete entry: %+v", e)
			}
			switch e.Layer {
			case classify.LayerTransport, classify.LayerProtocol, classify.LayerInteraction, classify.LayerApplication:
			case "":
				if e.ID != "baseline" {
					t.Errorf("no layer")
				}
			default:
				t.Errorf("layer %q", e.Layer)
			}
			if e.ExpectedOutcome.Layer() == "" {
				t.Errorf("expected outcome %q is not a classifier outcome", e.ExpectedOutcome)
			}
			if !json.Valid(e.Args) || e.Args[0] != '{' {
				t.Errorf("args %s", e.Args)
			}
			sel, other := faults.Select, faults.SelectStdio
			if e.OnStdio() {
				sel, other = other, sel
			}
			if _, err := sel(e.ID, nil); err != nil {
				t.Errorf("defaults: %v", err)
			}
			if _, err := sel(e.ID, e.Example); err != nil {
				t.Errorf("example %s: %v", e.Example, err)
			}
			if _, err := sel(e.ID, e.QuickParams); err != nil {
				t.Errorf("quick params %s: %v", e.QuickParams, err)
			}
			// The scenario type is of the entry's transport, and the other
			// transport refuses it by name.
			switch s := e.New().(type) {
			case faults.HTTPScenario:
				if e.OnStdio() {
					t.Errorf("a stdio entry with an HTTP scenario %T", s)
				}
			case faults.LineScenario:
				if !e.OnStdio() {
					t.Errorf("an HTTP entry with a line scenario %T", s)
				}
			default:
				t.Errorf("%T is neither an HTTPScenario nor a LineScenario", s)
			}
			if _, err := other(e.ID, nil); err == nil || !strings.HasPrefix(err.Error(), e.ID+" applies to ") {
				t.Errorf("the other transport's Select: %v, want %q", err, e.ID+" applies to …")
			}
			// The defaults, written out and read back, are the defaults.
			s, err := faults.NewScenario(e, e.Defaults())
			if err != nil {
				t.Fatalf("defaults round trip: %v", err)
			}
			if !reflect.DeepEqual(s, e.New()) {
				t.Errorf("defaults changed in a round trip:\n%#v\n%#v", s, e.New())
			}
			if _, ok := any(s).(interface{ CommonRules() *faults.Rules }); !ok {
				t.Errorf("the scenario does not embed Rules")
			}
		})
	}
}

// TestParamsValidation is the table of bad params: each must fail with an
// error naming the scenario and the param.
func TestParamsValidation(t *testing.T) {
	tests := []struct{ id, params, want string }{
		{"errors.http_status_sequence", `{"statusCodes":null}`, "param statusCodes"},
		{"errors.http_status_sequence", `{"statusCodes":[503,99]}`, "param statusCodes[1]"},
		{"errors.http_status_sequence", `{"statusCodes":"503"}`, "param statusCodes: got string, want an array"},
		{"errors.http_status_per_method", `{"statuses":{}}`, "param statuses"},
		{"errors.http_status_per_method", `{"statuses":{"tools/call":1000}}`, "param statuses.tools/call"},
		{"errors.jsonrpc_error", `{"data":"x`, "params: not JSON: unexpected EOF"},
		{"errors.jsonrpc_error", `{"status":42}`, "param status"},
		{"errors.jsonrpc_error", `{"code":"x"}`, "param code: got string, want a number"},
		{"errors.connection_close", `{"when":"later"}`, "param when"},
		{"errors.connection_close", `{"mode":"rst"}`, "param mode"},
		{"errors.malformed_payload", `{"kind":"bad"}`, "param kind"},
		{"errors.non_compliant_envelope", `{"httpStatus":200}`, "param httpStatus"},
		{"errors.non_compliant_envelope", `{"resultPayload":{"a":}}`, "params: not JSON: invalid character"},
		{"auth.insufficient_scope", `{"scope":" "}`, "param scope"},
		{"auth.token_lifecycle", `{"scope":"a\nb"}`, "param scope"},
		{"timeout.uncooperative_hang", `{"hangMs":-1}`, "param hangMs"},
		{"timeout.late_response", `{"delayMs":999999999}`, "param delayMs"},
		{"catalog.pagination", `{"pageSize":0}`, "param pageSize"},
		{"catalog.pagination", `{"facet":"files"}`, "param facet"},
		{"catalog.pagination", `{"fault":"duplicate_page","faultAtPage":1}`, "param faultAtPage"},
		{"catalog.facet_unavailable", `{"facets":["tools","x"]}`, "param facets[1]"},
		{"elicitation.approval", `{"reasonMaxLength":0}`, "param reasonMaxLength"},
		{"elicitation.approval", `{"key":""}`, "param key"},
		{"elicitation.decline", `{"expect":"maybe"}`, "param expect"},
		{"elicitation.url_mode", `{"url":""}`, "param url"},
		{"elicitation.url_mode", `{"stateTtlSeconds":0}`, "param stateTtlSeconds"},
		{"compat.protocol_reporter", `{"tool":""}`, "param tool"},
		{"errors.rate_limited", `{"format":"minutes"}`, "param format"},
		{"errors.rate_limited", `{"retryAfterSeconds":-5}`, "param retryAfterSeconds"},
		{"errors.unexpected_content_type", `{"contentType":""}`, "param contentType"},
		{"errors.empty_response", `{"status":404}`, "param status"},
		{"errors.invalid_tool_result", `{"kind":"unknown_result_type","resultType":"complete"}`, "param resultType"},
		{"errors.unsupported_version", `{"reject":[]}`, "param reject"},
		{"errors.unsupported_version", `{"supported":["2026-07-28"]}`, "param supported"},
		{"errors.header_mismatch", `{"header":"a b"}`, "param header"},
		{"errors.missing_capability", `{"required":[]}`, "param required"},
		{"session.expired", `{"after":-1}`, "param after"},
		{"sse.truncated", `{"afterEvents":5}`, "param afterEvents"},
		{"sse.truncated", `{"end":"crash"}`, "param end"},
		{"sse.error_in_stream", `{"notifications":-1}`, "param notifications"},
		{"sse.server_request", `{"method":"tools/call"}`, "param method"},
		{"sse.keepalive_then_hang", `{"intervalMs":0}`, "param intervalMs"},
		{"sse.slow_drip", `{"bytesPerChunk":0}`, "param bytesPerChunk"},
		{"sse.framing", `{"style":"weird"}`, "param style"},
		{"sse.unterminated_final_event", `{"trailing":"crlf"}`, "param trailing"},
		{"mrtr.load_shedding", `{"rounds":0}`, "param rounds"},
		{"errors.large_result", `{"bytes":0}`, "param bytes"},
		{"errors.large_result", `{"format":"xml"}`, "param format"},
		{"content.injection", `{"text":""}`, "param text"},
		{"catalog.rug_pull", `{"tool":""}`, "param tool"},
		// The common rules, on any scenario.
		{"baseline", `{"colour":"red"}`, `unknown param "colour"`},
		{"baseline", `{"match":{"method":"[x"}}`, "param match.method"},
		{"baseline", `{"match":{"protocol":"2024-11-05"}}`, "param match.protocol"},
		{"baseline", `{"match":{"tools":"echo"}}`, `match: unknown param "tools"`},
		{"baseline", `{"schedule":{"nth":-1}}`, "param schedule.nth"},
		{"baseline", `{"schedule":{"from":5,"to":2}}`, "param schedule.to"},
		{"baseline", `{"schedule":{"p":1.5}}`, "param schedule.p"},
		{"baseline", `{"schedule":{"seed":3}}`, "param schedule.seed"},
		{"baseline", `{"delay":{"dist":"pareto"}}`, "param delay.dist"},
		{"baseline", `{"delay":{"dist":"uniform","minMs":10,"maxMs":5}}`, "param delay.maxMs"},
		{"baseline", `{"delay":{"dist":"lognormal"}}`, "param delay.medianMs"},
		{"baseline", `{"delay":{"ms":-1}}`, "param delay.ms"},
		{"baseline", `{"delay":{"ms":5,"place":"after"}}`, "param delay.place"},
		{"baseline", `[]`, "want a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.id+" "+tt.params, func(t *testing.T) {
			_, err := faults.Select(tt.id, json.RawMessage(tt.params))
			if err == nil {
				t.Fatalf("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), tt.id+": ") {
				t.Errorf("error %q, want it to start with %q and contain %q", err, tt.id+": ", tt.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	if _, err := faults.Select("no.such", nil); !errors.Is(err, faults.ErrUnknownScenario) {
		t.Errorf("unknown id: %v", err)
	}
	sel, err := faults.Select("errors.tool_error+baseline", json.RawMessage(`[{"errorMessage":"x"},{"delay":{"ms":1}}]`))
	if err != nil || sel.String() != "errors.tool_error+baseline" || sel[0].Scenario.(*faults.ToolError).ErrorMessage != "x" {
		t.Fatalf("array params: %v %v", sel, err)
	}
	sel, err = faults.Select("errors.tool_error+baseline", json.RawMessage(`{"baseline":{"delay":{"ms":1}}}`))
	if err != nil || sel[1].Scenario.(*faults.Baseline).Delay.Ms != 1 || sel[0].Scenario.(*faults.ToolError).ErrorMessage != "Tool-side failure" {
		t.Fatalf("params by id: %v %v", sel, err)
	}
	if _, err := faults.Select("errors.tool_error+baseline", json.RawMessage(`{"errorMessage":"x"}`)); err == nil || !strings.Contains(err.Error(), `"errorMessage" is not one of the scenarios`) {
		t.Errorf("a single params object for a composition: %v", err)
	}
	if _, err := faults.Select("baseline+errors.tool_error", json.RawMessage(`[{},{"errorMessage":5}]`)); err == nil || !strings.HasPrefix(err.Error(), "errors.tool_error: param errorMessage") {
		t.Errorf("bad params of the second: %v", err)
	}
	sel, err = faults.Select("", nil)
	if err != nil || len(sel) != 0 {
		t.Errorf("empty spec: %v %v", sel, err)
	}
	// JSON round trip of a selection.
	sel, _ = faults.Select("errors.http_status_sequence+errors.tool_error", json.RawMessage(`[{"statusCodes":[500,200]},{"schedule":{"every":3}}]`))
	b, _ := json.Marshal(sel)
	var back faults.Selection
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, sel) {
		t.Errorf("round trip %s: %v %v", b, back, err)
	}
	if err := json.Unmarshal([]byte(`"baseline+sse.framing"`), &back); err != nil || back.String() != "baseline+sse.framing" {
		t.Errorf("spec string: %v %v", back, err)
	}
}

func TestSelectQuery(t *testing.T) {
	q, _ := url.ParseQuery("statusCodes=[500,200]&retryAfter=7&match.method=tools/call&schedule.first=2&run=abc")
	sel, err := faults.SelectQuery("errors.http_status_sequence", q)
	if err != nil {
		t.Fatal(err)
	}
	s := sel[0].Scenario.(*faults.StatusSequence)
	if !reflect.DeepEqual(s.StatusCodes, []int{500, 200}) || s.RetryAfter != "7" || s.Match.Method != "tools/call" || s.Schedule.First != 2 {
		t.Errorf("%+v", s)
	}
	q, _ = url.ParseQuery(`params={"errorMessage":"q"}`)
	if sel, err := faults.SelectQuery("errors.tool_error", q); err != nil || sel[0].Scenario.(*faults.ToolError).ErrorMessage != "q" {
		t.Errorf("params=: %v %v", sel, err)
	}
	q, _ = url.ParseQuery("statusCodes=abc")
	if _, err := faults.SelectQuery("errors.http_status_sequence", q); err == nil || !strings.Contains(err.Error(), "param statusCodes") {
		t.Errorf("bad query param: %v", err)
	}
	q, _ = url.ParseQuery("x=1")
	if _, err := faults.SelectQuery("baseline+baseline", q); err == nil {
		t.Errorf("a composition with loose params was accepted")
	}
}
