package judge

import (
	"slices"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestFromRecordCapabilities: an exchange's capability names are the
// record's clientCapabilities, read from the line a recorder wrote (a
// 2026-07-28 request's _meta, a 2025-11-25 initialize), else from a whole
// captured body (a record of an older mcpdiag); nil when neither says.
func TestFromRecordCapabilities(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve","arguments":{},"_meta":{"` +
		wire.MetaClientCapabilities + `":{"roots":{},"elicitation":{}}}}}`
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`
	legacyCall := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"approve","arguments":{}}}`
	tests := []struct {
		name string
		rec  func() *record.Record
		want []string
	}{
		{"2026-07-28 call", func() *record.Record { r := line(t, call); r.RequestBody = nil; return r }, []string{"elicitation", "roots"}},
		{"2025-11-25 initialize with none", func() *record.Record { return line(t, init) }, []string{}},
		{"2025-11-25 call", func() *record.Record { return line(t, legacyCall) }, nil},
		{"older record, body kept", func() *record.Record {
			r := line(t, call)
			r.ClientCapabilities = nil
			r.RequestBody = &record.Body{Text: call}
			return r
		}, []string{"elicitation", "roots"}},
		{"older record, body cut", func() *record.Record {
			r := line(t, call)
			r.ClientCapabilities = nil
			r.RequestBody = &record.Body{Text: call[:40], Truncated: true}
			return r
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := FromRecord(tt.rec(), "")
			if !slices.Equal(x.ClientCapabilities, tt.want) || (x.ClientCapabilities == nil) != (tt.want == nil) {
				t.Errorf("ClientCapabilities %q (nil %v), want %q (nil %v)", x.ClientCapabilities, x.ClientCapabilities == nil, tt.want, tt.want == nil)
			}
		})
	}
}

// line is the record of a request body as a reader decodes it from the
// line the encoder wrote.
func line(t *testing.T, body string) *record.Record {
	t.Helper()
	r := &record.Record{Kind: record.KindExchange, HTTPMethod: "POST", Status: 200}
	r.SetRequest([]byte(body))
	b, err := record.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := record.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
