package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
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
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"` + wire.MetaClientCapabilities + `":null}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"` + wire.MetaClientCapabilities + `":"elicitation"}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":null,"_meta":{"` + wire.MetaClientCapabilities + `":{"roots":{}}}}}`,
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
			// A member that is there but no object declares none ([]).
			if json.Unmarshal(obj["method"], &method) == nil && method == "initialize" {
				if v, ok := params["capabilities"]; ok {
					want = keysOrNone(v)
				}
			}
			if json.Unmarshal(params["_meta"], &meta) == nil {
				if v, ok := meta[wire.MetaClientCapabilities]; ok {
					if c := keysOf(v); c != nil {
						want = c
					} else if want == nil {
						want = []string{}
					}
				}
			}
		}
		want, truncated := capped(want)
		if want != nil {
			cut := false
			for i, k := range want {
				want[i] = Default.Scrub(k)
				// Each name at most MaxCapabilityNameBytes bytes as
				// scrubbed, cut at a UTF-8 boundary, and "…".
				if r := []rune(want[i]); len(want[i]) > MaxCapabilityNameBytes {
					n := 0
					for len(string(r[:n+1])) <= MaxCapabilityNameBytes {
						n++
					}
					want[i], cut = string(r[:n])+"…", true
				}
			}
			if cut {
				slices.Sort(want)
				want, truncated = slices.Compact(want), true
			}
		}
		if !slices.Equal(back.ClientCapabilities, want) || (back.ClientCapabilities == nil) != (want == nil) {
			t.Fatalf("body %q: clientCapabilities %q (nil %v), want %q (nil %v)\n%s", body, back.ClientCapabilities, back.ClientCapabilities == nil, want, want == nil, line)
		}
		if back.ClientCapabilitiesTruncated != truncated {
			t.Fatalf("body %q: clientCapabilitiesTruncated %v, want %v\n%s", body, back.ClientCapabilitiesTruncated, truncated, line)
		}
	})
}

// capped is the cap wire.MaxCapabilityNames puts on sorted distinct names,
// written out plainly: past it, the schema's names and then the smallest
// others, sorted; and whether any were left out.
func capped(names []string) ([]string, bool) {
	if len(names) <= wire.MaxCapabilityNames {
		return names, false
	}
	var keep, others []string
	for _, n := range names {
		if wire.IsSchemaCapability(n) {
			keep = append(keep, n)
		} else {
			others = append(others, n)
		}
	}
	keep = append(keep, others[:wire.MaxCapabilityNames-len(keep)]...)
	sort.Strings(keep)
	return keep, true
}

// TestClientCapabilitiesCapped: a declaration of 100,000 capability names
// (in _meta's clientCapabilities, and in initialize's capabilities) gives a
// record of wire.MaxCapabilityNames names, the schema's it declared among
// them wherever they stood, the smallest others, and
// clientCapabilitiesTruncated; the line stays small, and the names do not
// depend on the members' order. 32 names are kept whole and unmarked, 33
// are cut to 32 and marked. Before, the record carried all 100,000 names
// (a line of 1.5 MB for one request), and reading them took time quadratic
// in their number.
func TestClientCapabilitiesCapped(t *testing.T) {
	object := func(n int, reverse bool, extra ...string) string {
		keys := make([]string, 0, n+len(extra))
		for i := range n {
			keys = append(keys, fmt.Sprintf("x%06d", i))
		}
		keys = append(keys, extra...)
		if reverse {
			slices.Reverse(keys)
		}
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:{}", k)
		}
		b.WriteByte('}')
		return b.String()
	}
	meta := func(caps string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve","arguments":{},"_meta":{"` +
			wire.MetaClientCapabilities + `":` + caps + `}}}`
	}
	initialize := func(caps string) string {
		return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"c","version":"1"}}}`
	}
	others := func(n int) []string {
		var o []string
		for i := range n {
			o = append(o, fmt.Sprintf("x%06d", i))
		}
		return o
	}
	huge := append([]string{"elicitation", "roots"}, others(wire.MaxCapabilityNames-2)...)
	sort.Strings(huge)
	tests := []struct {
		name      string
		body      string
		want      []string
		truncated bool
	}{
		{"_meta, 100000 names, the schema's last", meta(object(100000, false, "roots", "elicitation")), huge, true},
		{"_meta, the same in reverse order", meta(object(100000, true, "roots", "elicitation")), huge, true},
		{"initialize, 100000 names", initialize(object(100000, false, "elicitation", "roots")), huge, true},
		{"exactly the cap", meta(object(wire.MaxCapabilityNames, false)), others(wire.MaxCapabilityNames), false},
		{"one past the cap", meta(object(wire.MaxCapabilityNames+1, true)), others(wire.MaxCapabilityNames), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Record{Kind: KindExchange, HTTPMethod: "POST", Status: 200}
			r.SetRequest([]byte(tt.body))
			line, err := Marshal(r)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if len(line) > 4096 {
				t.Errorf("the line is %d bytes for a request of %d: not bounded by the cap", len(line), len(tt.body))
			}
			back, err := Decode(line)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !slices.Equal(back.ClientCapabilities, tt.want) || back.ClientCapabilitiesTruncated != tt.truncated {
				t.Errorf("clientCapabilities %d names %q, truncated %v; want %q, %v", len(back.ClientCapabilities), trimList(back.ClientCapabilities), back.ClientCapabilitiesTruncated, tt.want, tt.truncated)
			}
			if has := contains(line, `"clientCapabilitiesTruncated":true`); has != tt.truncated {
				t.Errorf("the line marks the truncation %v, want %v", has, tt.truncated)
			}
		})
	}
}

func trimList(s []string) []string {
	if len(s) > 40 {
		return append(slices.Clip(s[:40]), "…")
	}
	return s
}

// keysOrNone is keysOf, or none ([]) for a value that is no object.
func keysOrNone(raw json.RawMessage) []string {
	if k := keysOf(raw); k != nil {
		return k
	}
	return []string{}
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

// TestClientCapabilityNameCapped (redact19): a capability name longer than
// MaxCapabilityNameBytes is cut to at most that many bytes at a UTF-8
// boundary, ends in "…" and sets clientCapabilitiesTruncated; names that
// are the same once cut are one; a name of that many bytes is kept whole.
// Before, a name was kept whole at any length (one of a mebibyte in every
// record of a client that declared it).
func TestClientCapabilityNameCapped(t *testing.T) {
	meta := func(names ...string) string {
		var b strings.Builder
		for i, n := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n)
			b.Write(k)
			b.WriteString(":{}")
		}
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{},"_meta":{"` +
			wire.MetaClientCapabilities + `":{` + b.String() + `}}}}`
	}
	a64, a65 := strings.Repeat("a", 64), strings.Repeat("a", 65)
	euro := strings.Repeat("b", 62) + "€x" // "€" is 3 bytes: 62+3 > 64
	huge := "x." + strings.Repeat("y", 1<<20)
	tests := []struct {
		name      string
		body      string
		want      []string
		truncated bool
	}{
		{"64 bytes kept whole", meta("roots", a64), []string{a64, "roots"}, false},
		{"65 bytes cut", meta("roots", a65), []string{a64 + "…", "roots"}, true},
		{"cut at a rune boundary", meta(euro), []string{strings.Repeat("b", 62) + "…"}, true},
		{"the same once cut: one", meta(a65, a64+"zz", "elicitation"), []string{a64 + "…", "elicitation"}, true},
		{"a mebibyte", meta(huge, "sampling"), []string{"sampling", "x." + strings.Repeat("y", 62) + "…"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, line := capabilitiesLine(t, []byte(tt.body))
			if !slices.Equal(got, tt.want) {
				t.Errorf("clientCapabilities %q, want %q", got, tt.want)
			}
			if has := contains(line, `"clientCapabilitiesTruncated":true`); has != tt.truncated {
				t.Errorf("clientCapabilitiesTruncated %v, want %v: %.300s", has, tt.truncated, line)
			}
			if len(line) > 4096 {
				t.Errorf("the line is %d bytes", len(line))
			}
			for _, n := range got {
				if len(n) > MaxCapabilityNameBytes+len("…") {
					t.Errorf("a name of %d bytes", len(n))
				}
			}
		})
	}
}
