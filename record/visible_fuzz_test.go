package record

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/wire"
)

// asJSONReads is s as a JSON decoder reads it back: each byte that is not
// UTF-8 becomes U+FFFD (encoding/json writes such a byte as \ufffd).
func asJSONReads(s string) string { return string([]rune(s)) }

// FuzzRecordLineVisible (truth16): a record line holds none of the
// characters internal/visible shows escaped (C0, DEL, C1, bidi and other
// format characters, U+2028/9, U+FFFE/F, a byte that is not UTF-8) but the
// line's own newline, and decodes to the same values: x in a record's text
// fields, a header, a body, error data and a string id comes back as the
// redacted record holds it. Before, encoding/json left U+202E, C1 and DEL
// raw in record files.
func FuzzRecordLineVisible(f *testing.F) {
	for _, s := range []string{"", "plain", "PASS\u202eLIAF\u2066\u009b\x7f", "\x1b[2J\r", "\u2028\u2029\ufeff\u200b", "\U000E0041",
		"\xff\xfe", "\ufffe\uffff", "東京 café 🙂", `\u202e`, "\\\u202e\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, x string) {
		errData, _ := json.Marshal(map[string]string{"detail": x})
		rec := &Record{
			Kind: KindExchange, Method: "tools/call", Tool: x, Reason: "reason " + x, Note: x, ErrorMessage: x,
			URL: "http://127.0.0.1:1/mcp", ResponseHeaders: http.Header{"X-Peer": {x}},
			ResponseBody: &Body{Text: x}, ErrorData: errData,
			JSONRPC: JSONRPC{ID: wire.StringID(x)},
		}
		var e Encoder
		line, err := e.Encode(rec)
		if err != nil {
			return // too large, or not encodable: nothing written
		}
		for i := 0; i < len(line)-1; {
			r, n := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && n == 1 || visible.Escaped(r) {
				t.Fatalf("the line holds %q raw at byte %d: %q", line[i:i+n], i, line)
			}
			i += n
		}
		if line[len(line)-1] != '\n' {
			t.Fatalf("the line does not end in a newline: %q", line)
		}
		got, err := Decode(line)
		if err != nil {
			t.Fatalf("Decode: %v\n%q", err, line)
		}
		want := e.sanitize(e.redactor(), rec)
		for _, c := range []struct{ name, got, want string }{
			{"tool", got.Tool, want.Tool}, {"reason", got.Reason, want.Reason}, {"note", got.Note, want.Note},
			{"errorMessage", got.ErrorMessage, want.ErrorMessage}, {"header", got.ResponseHeaders.Get("X-Peer"), want.ResponseHeaders.Get("X-Peer")},
			{"body", got.ResponseBody.Text, want.ResponseBody.Text},
		} {
			if c.got != asJSONReads(c.want) {
				t.Errorf("%s: decoded %q, the record holds %q", c.name, c.got, c.want)
			}
		}
		if !got.JSONRPC.ID.Equal(want.JSONRPC.ID) {
			t.Errorf("id: decoded %s, the record holds %s", got.JSONRPC.ID, want.JSONRPC.ID)
		}
		var gd, wd any
		if json.Unmarshal(got.ErrorData, &gd) != nil || json.Unmarshal(want.ErrorData, &wd) != nil || !jsonEqual(gd, wd) {
			t.Errorf("errorData: decoded %s, the record holds %s", got.ErrorData, want.ErrorData)
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// BenchmarkEncodeNonASCII encodes an exchange record whose body is 4 KiB
// of text that is not ASCII (Chinese, with no character to escape) and
// one whose body holds a bidi override: the cost of reading every rune of
// a line for the escape pass, and of the pass itself.
func BenchmarkEncodeNonASCII(b *testing.B) {
	for name, text := range map[string]string{"cjk": strings.Repeat("東京の天気は晴れです。", 128), "bidi": strings.Repeat("東京の天気は晴れです。", 127) + "PASS\u202eLIAF"} {
		b.Run(name, func(b *testing.B) {
			rec := benchExchangeRecord()
			rec.ResponseBody = &Body{Text: text}
			var e Encoder
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Encode(rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
