package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"testing"
)

func TestParseMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		kind       MessageKind
		method, id string
		tool, uri  string
		protocol   string
		client     string
		meta       []string
		ext        []string
		cancelled  string
		// caps are the declared capability names; declared says they
		// are declared at all (caps not nil).
		caps     []string
		declared bool
	}{
		{name: "empty", body: "", kind: MessageEmpty},
		{name: "whitespace", body: " \r\n\t", kind: MessageEmpty},
		{name: "form feed is no JSON whitespace", body: "\f{\"method\":\"ping\"}", kind: MessageInvalid},
		{name: "not JSON", body: `{"method":"ping"`, kind: MessageInvalid},
		{name: "scalar", body: `7`, kind: MessageInvalid},
		{name: "batch", body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, kind: MessageBatch},
		{name: "broken batch", body: `[{"id":1}`, kind: MessageInvalid},
		{name: "object without method or result", body: `{"jsonrpc":"2.0","id":1}`, kind: MessageInvalid, id: "1"},
		{name: "request number id", body: `{"jsonrpc":"2.0","id":7,"method":"ping"}`, kind: MessageRequest, method: "ping", id: "7"},
		{name: "request string id", body: `{"jsonrpc":"2.0","id":"7","method":"ping"}`, kind: MessageRequest, method: "ping", id: `"7"`},
		{name: "null id is a notification", body: `{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`, kind: MessageNotification, method: "notifications/initialized", id: "null"},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a\u0062"}}`, kind: MessageNotification, method: "notifications/cancelled", cancelled: `"a\u0062"`},
		{name: "response", body: `{"jsonrpc":"2.0","id":3,"result":{}}`, kind: MessageResponse, id: "3"},
		{name: "error response", body: `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}`, kind: MessageResponse, id: "3"},
		{
			name: "tools/call 2026", kind: MessageRequest, method: "tools/call", id: "1", tool: "echo", protocol: Protocol2026, client: "c@1.0",
			body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"_meta":{"` + MetaProtocolVersion + `":"` + Protocol2026 + `","` + MetaClientInfo + `":{"name":"c","version":"1.0"},"` + MetaClientCapabilities + `":{"extensions":{"x/a":{},"x/b":{}}},"progressToken":1}}}`,
			meta: []string{MetaClientCapabilities, MetaClientInfo, MetaProtocolVersion, "progressToken"}, ext: []string{"x/a", "x/b"},
			caps: []string{"extensions"}, declared: true,
		},
		{
			name: "_meta capabilities sorted, repeats once, escaped names read", kind: MessageRequest, method: "tools/call", id: "1", tool: "echo",
			body: `{"id":1,"method":"tools/call","params":{"name":"echo","_meta":{"` + MetaClientCapabilities + `":{"sampling":{},"roots":{"listChanged":true},"elicit\u0061tion":{"form":{}},"sampling":{"x":1},"x-vendor":null}}}}`,
			meta: []string{MetaClientCapabilities}, caps: []string{"elicitation", "roots", "sampling", "x-vendor"}, declared: true,
		},
		{
			name: "_meta capabilities empty: declared, none", kind: MessageRequest, method: "tools/call", id: "1", tool: "echo",
			body: `{"id":1,"method":"tools/call","params":{"name":"echo","_meta":{"` + MetaClientCapabilities + `":{}}}}`,
			meta: []string{MetaClientCapabilities}, declared: true,
		},
		{
			name: "_meta capabilities no object: none declared", kind: MessageRequest, method: "tools/call", id: "1", tool: "echo",
			body: `{"id":1,"method":"tools/call","params":{"name":"echo","_meta":{"` + MetaClientCapabilities + `":["elicitation"]}}}`,
			meta: []string{MetaClientCapabilities}, caps: []string{}, declared: true,
		},
		{
			name: "_meta capabilities: the last duplicate wins", kind: MessageRequest, method: "tools/call", id: "1", tool: "echo",
			body: `{"id":1,"method":"tools/call","params":{"name":"echo","_meta":{"` + MetaClientCapabilities + `":{"roots":{}},"` + MetaClientCapabilities + `":{"tasks":{}}}}}`,
			meta: []string{MetaClientCapabilities}, caps: []string{"tasks"}, declared: true,
		},
		{
			name: "initialize capabilities", kind: MessageRequest, method: "initialize", id: "0", protocol: Protocol2025,
			body: `{"id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{}}}}`,
			caps: []string{"elicitation", "roots"}, declared: true,
		},
		{
			name: "initialize capabilities empty", kind: MessageRequest, method: "initialize", id: "0",
			body: `{"id":0,"method":"initialize","params":{"capabilities":{}}}`, declared: true,
		},
		{
			name: "_meta capabilities over initialize's", kind: MessageRequest, method: "initialize", id: "0",
			body: `{"id":0,"method":"initialize","params":{"capabilities":{"roots":{}},"_meta":{"` + MetaClientCapabilities + `":{"sampling":{}}}}}`,
			meta: []string{MetaClientCapabilities}, caps: []string{"sampling"}, declared: true,
		},
		{
			name: "capabilities of another method are not read", kind: MessageRequest, method: "tools/list", id: "1",
			body: `{"id":1,"method":"tools/list","params":{"capabilities":{"roots":{}}}}`,
		},
		{name: "keys are case-sensitive", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"other"},"Method":"ping"}`, kind: MessageRequest, method: "tools/call", id: "1", tool: "echo"},
		{name: "the last duplicate wins", body: `{"jsonrpc":"2.0","id":1,"id":"2","method":"a","method":"b"}`, kind: MessageRequest, method: "b", id: `"2"`},
		{name: "escaped key", body: `{"jsonrpc":"2.0","id":1,"m\u0065thod":"ping"}`, kind: MessageRequest, method: "ping", id: "1"},
		{name: "resources/read", body: `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a","name":"n"}}`, kind: MessageRequest, method: "resources/read", id: "1", uri: "file:///a"},
		{name: "initialize", body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c"}}}`, kind: MessageRequest, method: "initialize", id: "0", protocol: Protocol2025, client: "c"},
		{name: "method not a string", body: `{"jsonrpc":"2.0","id":1,"method":5}`, kind: MessageRequest, id: "1"},
		{name: "client escaped", body: `{"id":0,"method":"initialize","params":{"clientInfo":{"name":"c\u0041","version":"1\n"}}}`, kind: MessageRequest, method: "initialize", id: "0", client: "cA@1\n"},
		{name: "client version no string", body: `{"id":0,"method":"initialize","params":{"clientInfo":{"version":2,"name":"c"}}}`, kind: MessageRequest, method: "initialize", id: "0", client: "c"},
		{name: "client version empty", body: `{"id":0,"method":"initialize","params":{"clientInfo":{"name":"c","version":""}}}`, kind: MessageRequest, method: "initialize", id: "0", client: "c"},
		{name: "client name empty", body: `{"id":0,"method":"initialize","params":{"clientInfo":{"name":"","version":"1"}}}`, kind: MessageRequest, method: "initialize", id: "0"},
		{name: "client name no string", body: `{"id":0,"method":"initialize","params":{"clientInfo":{"name":null,"version":"1"}}}`, kind: MessageRequest, method: "initialize", id: "0"},
		{name: "client last name wins", body: `{"id":0,"method":"initialize","params":{"clientInfo":{"name":"a","version":"1","name":"b"}}}`, kind: MessageRequest, method: "initialize", id: "0", client: "b@1"},
		{name: "_meta client over initialize's", body: `{"id":0,"method":"initialize","params":{"clientInfo":{"name":"a"},"_meta":{"` + MetaClientInfo + `":{"name":"m","version":"2"}}}}`, kind: MessageRequest, method: "initialize", id: "0", client: "m@2", meta: []string{MetaClientInfo}},
		{name: "member after the object", body: `{"id":1,"method":"ping"} 1`, kind: MessageInvalid},
		{name: "trailing comma", body: `{"id":1,"method":"ping",}`, kind: MessageInvalid},
		{name: "invalid value after the facts", body: `{"id":1,"method":"ping","x":[1,}`, kind: MessageInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ParseMessage([]byte(tt.body))
			if m.Kind != tt.kind || m.Method != tt.method || m.ID.String() != tt.id || m.Tool != tt.tool || m.URI != tt.uri ||
				m.Protocol != tt.protocol || m.Client != tt.client || !slices.Equal(m.MetaKeys, tt.meta) || !slices.Equal(m.Extensions, tt.ext) ||
				m.Cancelled.String() != tt.cancelled || !slices.Equal(m.Capabilities(), tt.caps) || (m.Capabilities() != nil) != tt.declared {
				t.Errorf("ParseMessage(%s) = kind %s method %q id %s tool %q uri %q protocol %q client %q meta %q ext %q cancelled %s capabilities %q (declared %v)",
					tt.body, m.Kind, m.Method, m.ID, m.Tool, m.URI, m.Protocol, m.Client, m.MetaKeys, m.Extensions, m.Cancelled, m.Capabilities(), m.Capabilities() != nil)
			}
		})
	}
}

// MessageFor hands down the context's message only for the bytes it was
// parsed from: a body changed in between is parsed anew.
func TestMessageFor(t *testing.T) {
	t.Parallel()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	m := ParseMessage(body)
	ctx := WithMessage(context.Background(), &m)
	if got := MessageFor(ctx, bytes.Clone(body)); got != &m {
		t.Errorf("MessageFor(same bytes) parsed again")
	}
	other := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"other"}}`)
	if got := MessageFor(ctx, other); got == &m || got.Tool != "other" || got.ID.String() != "2" {
		t.Errorf("MessageFor(other bytes) = %+v, want a parse of them", got)
	}
	if got := MessageFor(context.Background(), body); got.Tool != "echo" {
		t.Errorf("MessageFor without a message = %+v", got)
	}
	if MessageFrom(context.Background()) != nil {
		t.Errorf("MessageFrom(empty context) is not nil")
	}
}

// FuzzParseMessage: ParseMessage never panics; what it reads from valid
// JSON equals encoding/json's reading of the same bytes (members by exact
// key, the last duplicate winning): the kind, the id with its JSON type, the
// method, params, arguments, the tool, the _meta keys and the protocol; and
// input that is not JSON is invalid.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		``, ` `, `[]`, `7`, `{`, `{}`, `{"id":1}`, `{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2]},"_meta":{"progressToken":"t"}}}`,
		`{"id":null,"method":"notifications/cancelled","params":{"requestId":1}}`, `{"id":1.50,"result":{}}`, `{"id":-0,"error":{}}`,
		`{"method":"tools/call","params":{"name":"a","name":"b","Name":"c"}}`, `{"m\u0065thod":"x","id":"\u0031"}`,
		`{"method":"initialize","id":1,"params":{"protocolVersion":"2025-11-25","_meta":{"` + MetaProtocolVersion + `":"2026-07-28"}}}`,
		"{\"method\":\"\xff\",\"id\":1}", "\f{}", `{"method":"x","params":{"_meta":{"a":1,"a":2,"b":3}}}`,
		`{"method":"initialize","id":0,"params":{"capabilities":{"roots":{},"elicit\u0061tion":{},"roots":1}}}`,
		`{"method":"tools/call","id":1,"params":{"_meta":{"` + MetaClientCapabilities + `":{"b":{},"a":{}},"` + MetaClientCapabilities + `":null}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m := ParseMessage(body)
		if !bytes.Equal(m.Body, body) {
			t.Fatalf("Body is not the input")
		}
		if !json.Valid(body) {
			want := MessageInvalid
			if len(trimSpace(body)) == 0 {
				want = MessageEmpty
			}
			if m.Kind != want {
				t.Fatalf("ParseMessage(%q) kind %s, want %s (not JSON)", body, m.Kind, want)
			}
			return
		}
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) == nil {
			if m.Kind != MessageBatch {
				t.Fatalf("ParseMessage(%q) kind %s, want batch", body, m.Kind)
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) != nil || obj == nil {
			if m.Kind != MessageInvalid {
				t.Fatalf("ParseMessage(%q) kind %s, want invalid (not an object)", body, m.Kind)
			}
			return
		}
		rawID, hasID := obj["id"]
		if !bytes.Equal(m.ID.Raw(), rawID) || hasID && m.ID.IsString() != (rawID[0] == '"') {
			t.Fatalf("ParseMessage(%q) id %s, encoding/json %s", body, m.ID, rawID)
		}
		rawMethod, hasMethod := obj["method"]
		_, hasResult := obj["result"]
		_, hasError := obj["error"]
		want := MessageInvalid
		switch {
		case hasMethod && hasID && string(rawID) != "null":
			want = MessageRequest
		case hasMethod:
			want = MessageNotification
		case hasResult || hasError:
			want = MessageResponse
		}
		if m.Kind != want {
			t.Fatalf("ParseMessage(%q) kind %s, want %s", body, m.Kind, want)
		}
		if !m.IsRPC() {
			return
		}
		var method string
		_ = json.Unmarshal(rawMethod, &method)
		if m.Method != method {
			t.Fatalf("ParseMessage(%q) method %q, encoding/json %q", body, m.Method, method)
		}
		if want == MessageResponse {
			return
		}
		if !bytes.Equal(m.Params, obj["params"]) {
			t.Fatalf("ParseMessage(%q) params %q, encoding/json %q", body, m.Params, obj["params"])
		}
		var params map[string]json.RawMessage
		if json.Unmarshal(obj["params"], &params) != nil || params == nil {
			if m.Tool != "" || m.Arguments != nil || m.MetaKeys != nil || m.Protocol != "" {
				t.Fatalf("ParseMessage(%q): facts %+v from params that are no object", body, m)
			}
			return
		}
		var tool string
		if method == "tools/call" || method == "prompts/get" {
			_ = json.Unmarshal(params["name"], &tool)
		}
		if m.Tool != tool || !bytes.Equal(m.Arguments, params["arguments"]) {
			t.Fatalf("ParseMessage(%q) tool %q arguments %q, encoding/json %q %q", body, m.Tool, m.Arguments, tool, params["arguments"])
		}
		var meta map[string]json.RawMessage
		var keys []string
		var protocol string
		if method == "initialize" {
			_ = json.Unmarshal(params["protocolVersion"], &protocol)
		}
		if json.Unmarshal(params["_meta"], &meta) == nil && meta != nil {
			keys = []string{}
			for k := range meta {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var p string
			if v := meta[MetaProtocolVersion]; len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &p) == nil {
				protocol = p
			}
		}
		if !slices.Equal(m.MetaKeys, keys) || m.Protocol != protocol {
			t.Fatalf("ParseMessage(%q) meta %q protocol %q, encoding/json %q %q", body, m.MetaKeys, m.Protocol, keys, protocol)
		}
		var client string
		if method == "initialize" {
			client = jsonImplementation(params["clientInfo"])
		}
		if c := jsonImplementation(meta[MetaClientInfo]); c != "" {
			client = c
		}
		if m.Client != client {
			t.Fatalf("ParseMessage(%q) client %q, encoding/json %q", body, m.Client, client)
		}
		// The declared capabilities: the keys of _meta's clientCapabilities
		// when it is an object, else of initialize's capabilities, sorted
		// and once each; none ([]) when a member is there but no object;
		// nil when neither member is there.
		var caps []string
		if v, ok := params["capabilities"]; ok && method == "initialize" {
			if caps = jsonKeys(v); caps == nil {
				caps = []string{}
			}
		}
		if v, ok := meta[MetaClientCapabilities]; ok {
			if c := jsonKeys(v); c != nil {
				caps = c
			} else if caps == nil {
				caps = []string{}
			}
		}
		if got := m.Capabilities(); !slices.Equal(got, caps) || (got == nil) != (caps == nil) {
			t.Fatalf("ParseMessage(%q) capabilities %q (nil %v), encoding/json %q (nil %v)", body, got, got == nil, caps, caps == nil)
		}
	})
}

// jsonKeys returns the keys of the object raw by encoding/json, sorted
// (each once: a map has no repeats); nil when raw is no object.
func jsonKeys(raw json.RawMessage) []string {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil || o == nil {
		return nil
	}
	keys := []string{}
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonImplementation is implementation by encoding/json.
func jsonImplementation(raw json.RawMessage) string {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil || o == nil {
		return ""
	}
	var name, version string
	if json.Unmarshal(o["name"], &name) != nil || name == "" {
		return ""
	}
	if json.Unmarshal(o["version"], &version) != nil || version == "" {
		return name
	}
	return name + "@" + version
}

// A 2026-07-28 tools/call is parsed with three allocations: the tool name,
// the client ("name@version", built once) and the _meta keys' slice (the
// method, the protocol revision and the _meta keys themselves are the
// constants). Before: 11, a string per _meta key, the slice grown three
// times, name and version apart and then joined, method and revision.
func TestParseMessageAllocations(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"yyyy"},"_meta":{"` +
		MetaProtocolVersion + `":"` + Protocol2026 + `","` + MetaClientCapabilities + `":{},"` + MetaClientInfo + `":{"name":"bench","version":"1"}}}}`)
	var m Message
	n := testing.AllocsPerRun(100, func() { m = ParseMessage(body) })
	if m.Tool != "echo" || m.Client != "bench@1" || m.Protocol != Protocol2026 || len(m.MetaKeys) != 3 {
		t.Fatalf("%+v", m)
	}
	if n > 3 {
		t.Errorf("%v allocations per parse, want 3", n)
	}
}

// Capabilities allocates nothing for an empty declaration (the one every
// mcpdiag client and most others send) and one slice for a few names, the
// schema's names themselves without allocating.
func TestCapabilitiesAllocations(t *testing.T) {
	for caps, want := range map[string]float64{`{}`: 0, `{"elicitation":{"form":{}}}`: 1, `{"elicitation":{},"roots":{"listChanged":true},"sampling":{}}`: 1} {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"` + MetaClientCapabilities + `":` + caps + `}}}`)
		m := ParseMessage(body)
		if n := testing.AllocsPerRun(100, func() { _ = m.Capabilities() }); n != want {
			t.Errorf("%s: %v allocations, want %v", caps, n, want)
		}
	}
}
