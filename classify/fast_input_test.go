package classify

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestFastInputRequiredMatchesGeneral: the fast path's verdict on an
// input_required result equals the general path's, compared as the JSON a
// user sees, on both revisions; and the fast path does answer the cases it
// is for (so the comparison is not vacuous) and declines the others.
func TestFastInputRequiredMatchesGeneral(t *testing.T) {
	const head = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required",`
	for _, tc := range []struct {
		name, result string
		fast         bool // the fast path answers (on 2026-07-28)
	}{
		{"the article's", `"inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`, true},
		{"mode absent", `"inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m"}}}}}`, true},
		{"mode url", `"inputRequests":{"k":{"params":{"message":"m","mode":"url","url":"https://x"},"method":"elicitation/create"}}}}`, true},
		{"empty mode", `"inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"","message":"m"}}}}}`, true},
		{"three kinds and state", `"inputRequests":{"a":{"method":"sampling/createMessage","params":{"messages":[{"role":"user"}],"maxTokens":9}},"b":{"method":"elicitation/create","params":{"message":"m","mode":"form"}},"c":{"method":"roots/list","x":[1]}},"requestState":"abc"}}`, true},
		{"state only", `"requestState":"opaque\u0041"}}`, true},
		{"empty inputRequests and state", `"inputRequests":{},"requestState":"s","_meta":{"a":1}}}`, true},
		{"empty inputRequests", `"inputRequests":{}}}`, true},
		{"four requests", `"inputRequests":{"a":{"method":"roots/list"},"b":{"method":"roots/list"},"c":{"method":"roots/list"},"d":{"method":"roots/list"}}}}`, true},
		{"content ignored", `"inputRequests":{"a":{"method":"roots/list"}},"content":[{"type":"text","text":"MCP error -32602"}],"isError":true}}`, true},
		{"non-ASCII key", `"inputRequests":{"año":{"method":"roots/list"}}}}`, true},
		{"five requests", `"inputRequests":{"a":{"method":"roots/list"},"b":{"method":"roots/list"},"c":{"method":"roots/list"},"d":{"method":"roots/list"},"e":{"method":"roots/list"}}}}`, false},
		{"neither", `"_meta":{}}}`, false},
		{"repeated key", `"inputRequests":{"a":{"method":"roots/list"},"a":{"method":"roots/list"}}}}`, false},
		{"escaped key", `"inputRequests":{"\u0061":{"method":"roots/list"}}}}`, false},
		{"unknown method", `"inputRequests":{"a":{"method":"tools/call"}}}}`, false},
		{"no params", `"inputRequests":{"a":{"method":"elicitation/create"}}}}`, false},
		{"no message", `"inputRequests":{"a":{"method":"elicitation/create","params":{"mode":"form"}}}}}`, false},
		{"message not a string", `"inputRequests":{"a":{"method":"elicitation/create","params":{"message":1}}}}}`, false},
		{"mode not a string", `"inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m","mode":null}}}}}`, false},
		{"sampling without messages", `"inputRequests":{"a":{"method":"sampling/createMessage","params":{}}}}}`, false},
		{"no method", `"inputRequests":{"a":{"params":{}}}}}`, false},
		{"request not an object", `"inputRequests":{"a":[]}}}`, false},
		{"state not a string", `"requestState":1}}`, false},
		{"meta not an object", `"inputRequests":{},"_meta":[]}}`, false},
		{"broken", `"inputRequests":{"a":{"method":"roots/list"}}}`, false},
	} {
		body := head + tc.result
		for _, proto := range []string{"", Protocol2025} {
			ex := func() *Exchange {
				return &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(body), ID: wire.IntID(1), ProtocolVersion: proto}
			}
			fast, _ := (&Classifier{KeepResponse: true}).Classify(ex())
			slow, _ := (&Classifier{KeepResponse: true, noFastPath: true}).Classify(ex())
			a, _ := json.Marshal(fast)
			b, _ := json.Marshal(slow)
			if string(a) != string(b) {
				t.Errorf("%s (%q): fast and general paths differ:\nfast    %s\ngeneral %s", tc.name, proto, a, b)
			}
			var r Result
			r.SetMethod("tools/call")
			r.SetProtocol(Protocol2026)
			if proto != "" {
				r.SetProtocol(proto)
			}
			took := (&Classifier{}).fastToolCall(&r, ex(), []byte(body), false)
			if want := tc.fast && proto == ""; took != want {
				t.Errorf("%s (%q): fast path answered %v, want %v", tc.name, proto, took, want)
			}
			if took && (r.Outcome != InputRequired || !strings.HasPrefix(r.Reason, "the server needs input")) {
				t.Errorf("%s: fast path says %s (%s)", tc.name, r.Outcome, r.Reason)
			}
		}
	}
}

// TestJSONRPCErrorMessageIsItsOwn: the fast path's error message shares its
// bytes with the reason; both must equal the general path's and survive a
// reuse of the body buffer.
func TestJSONRPCErrorMessageIsItsOwn(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`)
	ex := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: body, ID: wire.IntID(1)}
	r, err := (&Classifier{}).Classify(ex)
	if err != nil || r.Outcome != JSONRPCError {
		t.Fatalf("%s, %v", r.Outcome, err)
	}
	for i := range body {
		body[i] = 'x'
	}
	if r.JSONRPC().Error == nil || r.JSONRPC().Error.Message != "synthetic invalid params" || r.Reason != "JSON-RPC error -32602 InvalidParams: synthetic invalid params" {
		t.Errorf("error %+v, reason %q", r.JSONRPC().Error, r.Reason)
	}
}

// TestFastPathLargeBodies: the fast path now takes bodies of any length
// (as a JSON body and as an SSE event's data); on large tool results its
// verdict equals the general path's, and it declines a body whose
// structuredContent is a container longer than fastLimit (whose nesting it
// does not count).
func TestFastPathLargeBodies(t *testing.T) {
	big := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"` +
			strings.Repeat(`line \"quoted\"\tand año\n`, n) + `"},{"type":"text","text":"b"}],"isError":false}}`
	}
	deep := `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"a":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}}`
	for _, tc := range []struct {
		name, body string
		fast       bool
	}{
		{"64 KiB", big(64 << 10 / 26), true},
		{"4 MiB", big(4 << 20 / 26), true},
		{"nested 9998 deep, 10002 in all", deep, false},
		{"nested and cut", deep[:len(deep)-5], false},
	} {
		for _, asEvent := range []bool{false, true} {
			ex := func() *Exchange {
				e := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(tc.body), ID: wire.IntID(1)}
				if asEvent {
					e.Header = http.Header{"Content-Type": {"text/event-stream"}}
					e.BodyBytes, e.Body = nil, strings.NewReader(": hi\n\ndata: "+tc.body+"\n\n")
				}
				return e
			}
			fast, _ := (&Classifier{KeepResponse: true}).Classify(ex())
			slow, _ := (&Classifier{KeepResponse: true, noFastPath: true}).Classify(ex())
			a, _ := json.Marshal(fast)
			b, _ := json.Marshal(slow)
			if string(a) != string(b) || string(fast.Response()) != string(slow.Response()) {
				t.Errorf("%s (event %v): fast and general paths differ:\nfast    %.300s\ngeneral %.300s", tc.name, asEvent, a, b)
			}
		}
		var r Result
		r.SetMethod("tools/call")
		r.SetProtocol(Protocol2026)
		if took := (&Classifier{}).fastToolCall(&r, &Exchange{ID: wire.IntID(1)}, []byte(tc.body), false); took != tc.fast {
			t.Errorf("%s: fast path answered %v, want %v", tc.name, took, tc.fast)
		}
	}
}
