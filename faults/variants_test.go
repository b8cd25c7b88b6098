package faults_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestVariants drives the params and paths the catalogue defaults do not:
// each row is a call with non-default params and what a correct client sees.
func TestVariants(t *testing.T) {
	approve := `{"approval":{"action":"accept","content":{"reason":"ok"}}}`
	tests := []struct {
		name, id, params string
		tool, args       string
		protocol, input  string
		want             classify.Outcome
		posts            int
		warning          string // a classifier warning the final exchange must carry
	}{
		{"status sequence counting tool calls", "errors.http_status_sequence", `{"statusCodes":[503],"retryAfter":"1","match":{"method":"tools/call"}}`, "echo", `{}`, "", "", classify.HTTPError, 2, ""},
		{"status sequence 2xx passes", "errors.http_status_sequence", `{"statusCodes":[200]}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"status sequence empty passes", "errors.http_status_sequence", `{"statusCodes":[]}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"jsonrpc error every 2nd call", "errors.jsonrpc_error", `{"code":-32603,"message":"boom","schedule":{"every":2}}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"connection close after the tool ran", "errors.connection_close", `{"when":"after_handler","mode":"close"}`, "echo", `{}`, "", "", classify.NetworkError, 2, ""},
		{"malformed wrong id", "errors.malformed_payload", `{"kind":"wrong_id"}`, "echo", `{}`, "", "", classify.InvalidEnvelope, 2, ""},
		{"malformed missing jsonrpc", "errors.malformed_payload", `{"kind":"missing_jsonrpc"}`, "echo", `{}`, "", "", classify.InvalidEnvelope, 2, ""},
		{"malformed duplicate response", "errors.malformed_payload", `{"kind":"duplicate_response"}`, "echo", `{}`, "", "", classify.MalformedJSON, 2, ""},
		{"malformed result and error", "errors.malformed_payload", `{"kind":"result_and_error"}`, "echo", `{}`, "", "", classify.InvalidEnvelope, 2, ""},
		{"non-compliant 400 falls back to 2025", "errors.non_compliant_envelope", `{"httpStatus":400}`, "echo", `{}`, "", "", classify.ToolSuccess, 5, ""},
		{"token lifecycle forever on tool calls", "auth.token_lifecycle", `{"schedule":{},"match":{"method":"tools/call"}}`, "echo", `{}`, "", "", classify.HTTPError, 2, ""},
		{"cooperative deadline within the timeout", "timeout.cooperative_deadline", `{"delayMs":50}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"init hang within the timeout", "timeout.init_hang", `{"delayMs":50}`, "echo", `{}`, "2025-11-25", "", classify.ToolSuccess, 4, ""},
		{"pagination cursor loop", "catalog.pagination", `{"pageSize":10,"fault":"cursor_loop","faultAtPage":2}`, "echo", `{}`, "", "", classify.ToolSuccess, 3, ""},
		{"pagination duplicate page", "catalog.pagination", `{"pageSize":10,"fault":"duplicate_page","faultAtPage":2}`, "echo", `{}`, "", "", classify.ToolSuccess, 5, ""},
		{"pagination error at page 2", "catalog.pagination", `{"pageSize":10,"fault":"error_at_page","faultAtPage":2}`, "echo", `{}`, "", "", classify.JSONRPCError, 2, ""},
		{"facet unavailable: tools", "catalog.facet_unavailable", `{"facets":["tools"]}`, "echo", `{}`, "", "", classify.HTTPError, 1, ""},
		{"approval declined", "elicitation.approval", ``, "approve", `{}`, "", `{"approval":{"action":"decline"}}`, classify.ToolError, 3, ""},
		{"approval without the capability", "elicitation.approval", ``, "approve", `{}`, "", "", classify.HTTPError, 2, ""},
		{"approval reason optional", "elicitation.approval", `{"requireReason":false}`, "approve", `{}`, "", `{"approval":{"action":"accept"}}`, classify.ToolSuccess, 3, ""},
		{"approval without an answer asks again", "elicitation.approval", ``, "approve", `{}`, "", `{"other":{"action":"accept"}}`, classify.InputRequired, 2, ""},
		{"decline scenario, client accepts", "elicitation.decline", ``, "delete_item", `{"id":"*"}`, "", `{"confirm":{"action":"accept","content":{"confirm":"DELETE"}}}`, classify.ToolError, 3, ""},
		{"url mode pending twice", "elicitation.url_mode", `{"pendingRounds":2}`, "approve", `{}`, "", `{"authorize":{"action":"accept"}}`, classify.ToolSuccess, 5, ""},
		{"url mode cancelled", "elicitation.url_mode", ``, "approve", `{}`, "", `{"authorize":{"action":"cancel"}}`, classify.ToolError, 3, ""},
		{"legacy result", "compat.legacy_result", ``, "echo", `{}`, "", "", classify.ToolSuccess, 2, "missing-result-type"},
		{"protocol reporter on 2025", "compat.protocol_reporter", ``, "protocol_report", `{}`, "2025-11-25", "", classify.ToolSuccess, 4, ""},
		{"rate limited with an HTTP-date", "errors.rate_limited", `{"format":"http-date"}`, "echo", `{}`, "", "", classify.HTTPError, 2, ""},
		{"empty 200 json", "errors.empty_response", `{"status":200,"contentType":"application/json"}`, "echo", `{}`, "", "", classify.EmptyResponse, 2, ""},
		{"invalid result: bad block", "errors.invalid_tool_result", `{"kind":"bad_block"}`, "echo", `{}`, "", "", classify.InvalidToolResult, 2, ""},
		{"invalid result: isError a string", "errors.invalid_tool_result", `{"kind":"non_boolean_is_error"}`, "echo", `{}`, "", "", classify.InvalidToolResult, 2, ""},
		{"invalid result: unknown resultType", "errors.invalid_tool_result", `{"kind":"unknown_result_type"}`, "echo", `{}`, "", "", classify.InvalidToolResult, 2, ""},
		{"unsupported version, nothing in common", "errors.unsupported_version", `{"reject":["2026-07-28","2025-11-25"],"supported":["2024-11-05"]}`, "echo", `{}`, "", "", classify.HTTPError, 1, ""},
		{"header mismatch about Mcp-Param-Region", "errors.header_mismatch", `{"header":"Mcp-Param-Region","match":{"method":"tools/call","tool":"header_echo"}}`, "header_echo", `{"region":"eu-west"}`, "", "", classify.ToolSuccess, 4, ""},
		// notifications/initialized is the first request with the session
		// id: it gets 404 during set-up, where the client does not
		// re-initialize.
		{"session expired at once", "session.expired", `{"after":0}`, "echo", `{}`, "2025-11-25", "", classify.HTTPError, 2, ""},
		{"sse truncated mid-event", "sse.truncated", `{"notifications":2,"afterEvents":1,"midEvent":true}`, "echo", `{}`, "", "", classify.StreamIncomplete, 2, ""},
		{"sse truncated, connection aborted", "sse.truncated", `{"end":"abort"}`, "echo", `{}`, "", "", classify.StreamIncomplete, 2, ""},
		{"sse truncated on 2025", "sse.truncated", ``, "echo", `{}`, "2025-11-25", "", classify.StreamIncomplete, 4, ""},
		{"sse wrong id then correct", "sse.wrong_id", `{"thenCorrect":true}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"sse server request without result", "sse.server_request", `{"thenResult":false,"method":"ping"}`, "echo", `{}`, "", "", classify.StreamIncomplete, 2, ""},
		{"sse framing cr", "sse.framing", `{"style":"cr"}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"sse framing crlf", "sse.framing", `{"style":"crlf"}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"sse framing bom", "sse.framing", `{"style":"bom"}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"sse framing multiline", "sse.framing", `{"style":"multiline"}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"sse framing no space", "sse.framing", `{"style":"nospace"}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"sse framing comments", "sse.framing", `{"style":"comments"}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"sse unterminated, no newline", "sse.unterminated_final_event", `{"trailing":"none"}`, "echo", `{}`, "", "", classify.StreamIncomplete, 2, ""},
		{"load shedding three rounds", "mrtr.load_shedding", `{"rounds":3}`, "echo", `{}`, "", "", classify.ToolSuccess, 5, ""},
		{"large result as JSON", "errors.large_result", `{"format":"json"}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"large result over many lines", "errors.large_result", `{"format":"sse_lines","lineBytes":4096}`, "echo", `{}`, "", "", classify.ToolSuccess, 2, ""},
		{"injection appended to the text", "content.injection", `{"mode":"append_text"}`, "echo", `{"text":"hi"}`, "", "", classify.ToolSuccess, 2, ""},
		{"composition: delay then tool error", "baseline+errors.tool_error", `[{"delay":{"ms":20}},{}]`, "echo", `{}`, "", "", classify.ToolError, 2, ""},
		{"composition: 503 outer, approval inner", "errors.http_status_sequence+elicitation.approval", `{"errors.http_status_sequence":{"statusCodes":[200]}}`, "approve", `{}`, "", approve, classify.ToolSuccess, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sel, err := faults.Select(tt.id, json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			s := serveSelection(t, sel, 1)
			e := faults.Entry{Tool: tt.tool, Args: json.RawMessage(tt.args), Protocol: tt.protocol, Input: json.RawMessage(tt.input)}
			call := callEntry(t, s.url, e, 10*time.Second)
			if call.Outcome != tt.want {
				t.Errorf("outcome %s (%s), want %s", call.Outcome, call.Final.Reason, tt.want)
				for _, ex := range call.Exchanges {
					t.Logf("  %d %s %d %s %s", ex.Seq, ex.Method, ex.Status, ex.Result.Outcome, ex.Result.Reason)
				}
			}
			if got := len(s.posts(t)); got != tt.posts {
				t.Errorf("the server observed %d POSTs, want %d", got, tt.posts)
			}
			if tt.warning != "" {
				found := false
				for _, w := range call.Final.Warnings() {
					found = found || w.Code == tt.warning
				}
				if !found {
					t.Errorf("no warning %s in %+v", tt.warning, call.Final.Warnings())
				}
			}
		})
	}
}

// post sends one raw JSON-RPC POST and returns the status, headers and body.
func post(t *testing.T, url, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

var modernHeaders = map[string]string{"MCP-Protocol-Version": "2026-07-28"}

func TestFacetUnavailableStatus(t *testing.T) {
	sel, _ := faults.Select("catalog.facet_unavailable", nil)
	s := serveSelection(t, sel, 1)
	status, _, body := post(t, s.url, `{"jsonrpc":"2.0","id":"r1","method":"resources/list","params":{`+modernMeta+`}}`, modernHeaders)
	if status != http.StatusNotFound || body != `{"jsonrpc":"2.0","id":"r1","error":{"code":-32601,"message":"Method not found"}}` {
		t.Errorf("2026: %d %s", status, body)
	}
	status, _, body = post(t, s.url, `{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	if status != http.StatusOK || !strings.Contains(body, `"code":-32601`) {
		t.Errorf("2025: %d %s", status, body)
	}
}

// TestApprovalTampering checks that a requestState that was altered, or
// that belongs to other arguments, is rejected with -32602.
func TestApprovalTampering(t *testing.T) {
	sel, _ := faults.Select("elicitation.approval", nil)
	s := serveSelection(t, sel, 1)
	first := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve","arguments":{"change":"a"},` + modernMeta + `}}`
	_, _, body := post(t, s.url, first, modernHeaders)
	var res struct {
		Result struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.Result.ResultType != "input_required" || res.Result.RequestState == "" {
		t.Fatalf("first round: %s", body)
	}
	state := res.Result.RequestState
	answer := `"inputResponses":{"approval":{"action":"accept","content":{"reason":"ok"}}}`
	retry := func(args, st string) string {
		_, _, b := post(t, s.url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"approve","arguments":`+args+`,`+answer+`,"requestState":"`+st+`",`+modernMeta+`}}`, modernHeaders)
		return b
	}
	if b := retry(`{"change":"a"}`, state); !strings.Contains(b, "approved: ok") {
		t.Errorf("a genuine state: %s", b)
	}
	tampered := []byte(state)
	tampered[3] ^= 1
	if b := retry(`{"change":"a"}`, string(tampered)); !strings.Contains(b, `"code":-32602`) {
		t.Errorf("a tampered state: %s", b)
	}
	if b := retry(`{"change":"b"}`, state); !strings.Contains(b, `"code":-32602`) || !strings.Contains(b, "another request") {
		t.Errorf("a state for other arguments: %s", b)
	}
	if b := retry(`{"change":"a"}`, "not-a-state"); !strings.Contains(b, `"code":-32602`) {
		t.Errorf("a foreign state: %s", b)
	}
}

// TestRugPull checks that the second client sees the read-only tool as
// destructive, and so does not retry it.
func TestRugPull(t *testing.T) {
	sel, _ := faults.Select("catalog.rug_pull", nil)
	s := serveSelection(t, sel, 1)
	e, _ := faults.Lookup("catalog.rug_pull")
	first := callEntry(t, s.url, e, 10*time.Second)
	second := callEntry(t, s.url, e, 10*time.Second)
	if first.Safety != retry.ReadOnly || second.Safety != retry.Unsafe {
		t.Errorf("safety before %s, after %s; want read-only, then unsafe", first.Safety, second.Safety)
	}
}

// TestHangsRunTheToolOrNot checks what the server log says the server did
// after the client gave up: an uncooperative hang runs the tool anyway, a
// cooperative one does not.
func TestHangsRunTheToolOrNot(t *testing.T) {
	for _, tt := range []struct{ id, params, note string }{
		{"timeout.uncooperative_hang", `{"hangMs":6000}`, "the tool ran anyway"},
		{"timeout.cooperative_deadline", `{"delayMs":6000}`, "the tool was not run"},
		{"timeout.late_response", `{"delayMs":6000}`, "the tool had run"},
		{"errors.connection_close", `{"when":"after_handler"}`, "discarded"},
	} {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			sel, err := faults.Select(tt.id, json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			s := serveSelection(t, sel, 1)
			e, _ := faults.Lookup(tt.id)
			callEntry(t, s.url, e, 1500*time.Millisecond)
			// The last POST by number, not by observation: a POST's
			// observation is made when its handler ends, and the call's
			// (after the connection was dropped) can come before the
			// tools/list's that preceded it.
			posts := s.posts(t)
			last := posts[0]
			for _, p := range posts {
				if p.Request.Count.Post > last.Request.Count.Post {
					last = p
				}
			}
			if notes := strings.Join(last.Firings[0].Notes, "; "); !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q, want %q", notes, tt.note)
			}
		})
	}
}

// TestProtocolReport reads the reporter's text.
func TestProtocolReport(t *testing.T) {
	sel, _ := faults.Select("compat.protocol_reporter", nil)
	s := serveSelection(t, sel, 1)
	e, _ := faults.Lookup("compat.protocol_reporter")
	call := callEntry(t, s.url, e, 10*time.Second)
	var res struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	_ = json.Unmarshal(call.Result, &res)
	var report struct {
		NegotiatedVersion string            `json:"negotiatedVersion"`
		Headers           map[string]string `json:"headers"`
		MetaKeys          []string          `json:"metaKeys"`
	}
	if len(res.Result.Content) == 0 || json.Unmarshal([]byte(res.Result.Content[0].Text), &report) != nil {
		t.Fatalf("no report in %s", call.Result)
	}
	if report.NegotiatedVersion != "2026-07-28" || report.Headers["Mcp-Method"] != "tools/call" || report.Headers["Mcp-Name"] != "protocol_report" || len(report.MetaKeys) == 0 {
		t.Errorf("report %+v", report)
	}
}

var listHeaders = map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/list"}

// TestPaginationResources walks resources/list page by page with the
// cursor the scenario hands out.
func TestPaginationResources(t *testing.T) {
	sel, err := faults.Select("catalog.pagination", json.RawMessage(`{"facet":"resources","pageSize":4,"totalItems":10}`))
	if err != nil {
		t.Fatal(err)
	}
	s := serveSelection(t, sel, 1)
	var names []string
	cursor := ""
	for page := 0; page < 10; page++ {
		params := modernMeta
		if cursor != "" {
			params = `"cursor":"` + cursor + `",` + modernMeta
		}
		_, _, body := post(t, s.url, `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{`+params+`}}`, listHeaders)
		// The fixture answers with one SSE event.
		data := body[strings.Index(body, "data: ")+6:]
		var res struct {
			Result struct {
				Resources  []struct{ Name string } `json:"resources"`
				NextCursor *string                 `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &res); err != nil {
			t.Fatalf("page %d: %v: %s", page, err, body)
		}
		for _, r := range res.Result.Resources {
			names = append(names, r.Name)
		}
		if res.Result.NextCursor == nil {
			break
		}
		cursor = *res.Result.NextCursor
	}
	if len(names) != 10 || names[9] != "filler_10" {
		t.Errorf("%d resources: %v", len(names), names)
	}
	if _, _, body := post(t, s.url, `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"bogus",`+modernMeta+`}}`, listHeaders); !strings.Contains(body, `"code":-32602`) {
		t.Errorf("a bogus cursor: %s", body)
	}
}
