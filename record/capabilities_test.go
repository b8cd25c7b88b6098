package record

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// capabilitiesLine is a request body through SetRequest, Encode and Decode:
// the record's clientCapabilities as a reader gets them.
func capabilitiesLine(t *testing.T, body []byte) ([]string, []byte) {
	t.Helper()
	r := &Record{Kind: KindExchange, HTTPMethod: "POST", Status: 200}
	r.SetRequest(body)
	line, err := Marshal(r)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := Decode(line)
	if err != nil {
		t.Fatalf("Decode(%s): %v", line, err)
	}
	return back.ClientCapabilities, line
}

// TestClientCapabilitiesEcho: the record's clientCapabilities are the
// top-level names the request declared, sorted and once each, from _meta's
// clientCapabilities (2026-07-28) or initialize's capabilities (2025-11-25);
// absent when it declared none this way, [] for an empty object.
func TestClientCapabilitiesEcho(t *testing.T) {
	meta := func(caps string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve","arguments":{},"_meta":{"` +
			wire.MetaProtocolVersion + `":"2026-07-28","` + wire.MetaClientCapabilities + `":` + caps + `}}}`
	}
	tests := []struct {
		name, body string
		want       []string // nil: absent from the line
		member     string   // how the line writes it ("" absent)
	}{
		{"2026-07-28 elicitation", meta(`{"elicitation":{"form":{}}}`), []string{"elicitation"}, `"clientCapabilities":["elicitation"]`},
		{"2026-07-28 none", meta(`{}`), []string{}, `"clientCapabilities":[]`},
		{"2026-07-28 several, repeated, unsorted", meta(`{"tasks":{},"roots":{"listChanged":true},"sampling":{},"roots":{}}`),
			[]string{"roots", "sampling", "tasks"}, `"clientCapabilities":["roots","sampling","tasks"]`},
		{"names only, never values", meta(`{"experimental":{"token":"sk-live-abcdefghijklmnopqrstuvwx"}}`), []string{"experimental"}, `"clientCapabilities":["experimental"]`},
		{"2025-11-25 initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`,
			[]string{"elicitation", "sampling"}, `"clientCapabilities":["elicitation","sampling"]`},
		{"2025-11-25 initialize, none", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			[]string{}, `"clientCapabilities":[]`},
		{"2025-11-25 tools/call declares nothing", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"approve","arguments":{}}}`, nil, ""},
		{"not JSON-RPC", `{"capabilities":{"roots":{}}}`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, line := capabilitiesLine(t, []byte(tt.body))
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("clientCapabilities %q (nil %v), want %q (nil %v)\n%s", got, got == nil, tt.want, tt.want == nil, line)
			}
			if has := contains(line, `"clientCapabilities"`); has != (tt.member != "") || tt.member != "" && !contains(line, tt.member) {
				t.Errorf("line %s, want the member %q", line, tt.member)
			}
			if contains(line, "sk-live") {
				t.Errorf("a capability's value reached the line: %s", line)
			}
		})
	}
}

func contains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }

// FuzzClientCapabilities: whatever the request body, the record's
// clientCapabilities, as a reader decodes them from the line, are the keys
// encoding/json reads from _meta's clientCapabilities (else initialize's
// capabilities), sorted, once each, each through the redactor's Scrub; absent
// exactly when neither is an object.
func FuzzClientCapabilities(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"` + wire.MetaClientCapabilities + `":{"elicitation":{},"roots":{}}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"` + wire.MetaClientCapabilities + `":{}}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"b":1,"a":2,"b":3}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"x\u00e9\ud83d\ude00":{},"\u202e":{}}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"Bearer abcdefghijklmnopqrstuvwxyz0123":{}}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := &Record{Kind: KindExchange, HTTPMethod: "POST", Status: 200}
		r.SetRequest(body)
		line, err := Marshal(r)
		if err != nil {
			return // a record too large to write is another test's business
		}
		back, err := Decode(line)
		if err != nil {
			t.Fatalf("Decode(%s): %v", line, err)
		}
		var want []string
		var obj, params, meta map[string]json.RawMessage
		var method string
		m := wire.ParseMessage(body)
		if json.Unmarshal(body, &obj) == nil && m.IsRPC() && json.Unmarshal(obj["params"], &params) == nil {
			if json.Unmarshal(obj["method"], &method) == nil && method == "initialize" {
				want = keysOf(params["capabilities"])
			}
			if json.Unmarshal(params["_meta"], &meta) == nil {
				if c := keysOf(meta[wire.MetaClientCapabilities]); c != nil {
					want = c
				}
			}
		}
		if want != nil {
			for i, k := range want {
				want[i] = Default.Scrub(k)
			}
		}
		if !slices.Equal(back.ClientCapabilities, want) || (back.ClientCapabilities == nil) != (want == nil) {
			t.Fatalf("body %q: clientCapabilities %q (nil %v), want %q (nil %v)\n%s", body, back.ClientCapabilities, back.ClientCapabilities == nil, want, want == nil, line)
		}
	})
}

// keysOf is the sorted keys of a JSON object by encoding/json; nil when raw
// is no object.
func keysOf(raw json.RawMessage) []string {
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
