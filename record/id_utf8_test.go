package record

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestIDNotUTF8: a string id whose bytes are not UTF-8 (a client wrote
// "a\xffb" raw) cannot go into a record line, which is UTF-8 JSON
// (docs/records.md). The line stays UTF-8 and valid JSON, the id is
// recorded with U+FFFD in place of the bad bytes, and an id-not-utf8
// warning gives the bytes as sent, for the request's id and the
// response's. Before, the raw bytes were copied into the line. Valid ids,
// escapes included, are kept as sent and get no warning.
func TestIDNotUTF8(t *testing.T) {
	for _, c := range []struct {
		name, id, resp string
		wantID         string // the recorded id, as JSON text
		warnings       []string
	}{
		{"request id", "\"a\xffb\"", "", `"a\ufffdb"`, []string{"request id is not UTF-8", "2261ff6222"}},
		{"both ids", "\"\xfe\xff\"", "\"x\xc3\"", `"\ufffd"`, []string{"request id is not UTF-8", "22feff22", "response id is not UTF-8", "2278c322"}},
		{"escaped", `"a\u00ffb"`, "", `"a\u00ffb"`, nil},
		{"utf-8", `"año"`, "", `"año"`, nil},
		{"number", `7`, "", `7`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &Record{Kind: KindExchange, Method: "tools/call", JSONRPC: JSONRPC{ID: wire.IDFromRaw([]byte(c.id))}}
			if c.resp != "" {
				rec.JSONRPC.ResponseID = wire.IDFromRaw([]byte(c.resp))
			}
			var e Encoder
			line, err := e.Encode(rec)
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.Valid(line) || !json.Valid(line) {
				t.Fatalf("the record line is not UTF-8 JSON: %q", line)
			}
			var got struct {
				JSONRPC struct {
					ID json.RawMessage `json:"id"`
				} `json:"jsonrpc"`
				Warnings []Warning `json:"warnings"`
			}
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatal(err)
			}
			var have, want any
			_ = json.Unmarshal(got.JSONRPC.ID, &have)
			_ = json.Unmarshal([]byte(c.wantID), &want)
			if have != want {
				t.Errorf("recorded id %s, want %s", got.JSONRPC.ID, c.wantID)
			}
			var text []string
			for _, w := range got.Warnings {
				if w.Code != IDNotUTF8 {
					t.Errorf("warning %+v", w)
				}
				text = append(text, w.Message)
			}
			all := strings.Join(text, " | ")
			for _, w := range c.warnings {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", all, w)
				}
			}
			if c.warnings == nil && len(got.Warnings) > 0 {
				t.Errorf("warnings on a UTF-8 id: %s", all)
			}
			if rec.Warnings != nil {
				t.Errorf("Encode changed the record's warnings: %v", rec.Warnings)
			}
		})
	}
}
