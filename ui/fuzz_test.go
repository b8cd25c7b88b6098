package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// FuzzHTMLWriterData: whatever text a record holds, the page's data element
// holds no "<" (nothing can end it or open a comment), there is exactly one
// closing tag after it, and the record decodes back with the same text.
func FuzzHTMLWriterData(f *testing.F) {
	for _, s := range []string{"", "</script>", "<!--", "</SCRIPT\n>", "\u2028\u2029", "a\x00b", "<\\/script>", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var buf bytes.Buffer
		w := NewHTMLWriter(&buf, HTMLOptions{})
		w.Add(&record.Record{Kind: record.KindExchange, ID: "X", Reason: text, ResponseBody: &record.Body{Text: text}})
		if err := w.Close(); err != nil {
			t.Skip(err) // a text the record package cannot marshal
		}
		open := `<script id="` + RecordsElementID + `" type="application/x-ndjson">`
		_, rest, ok := strings.Cut(buf.String(), open)
		if !ok {
			t.Fatal("no records element")
		}
		data, after, ok := strings.Cut(rest, "</script>")
		if !ok || !strings.Contains(after, `<script id="`+MatrixElementID) {
			t.Fatalf("the records element does not end where it should: %q", rest[:min(len(rest), 200)])
		}
		if strings.Contains(data, "<") {
			t.Fatalf("a raw '<' in the data: %q", data)
		}
		rec, err := record.Decode([]byte(strings.TrimSpace(data)))
		if err != nil {
			t.Fatalf("the data does not decode: %v", err)
		}
		// Invalid UTF-8 comes back as encoding/json writes it (U+FFFD a byte).
		var want string
		b, _ := json.Marshal(text)
		_ = json.Unmarshal(b, &want)
		if rec.Reason != want || rec.ResponseBody == nil || rec.ResponseBody.Text != want {
			t.Fatalf("text %q came back as %q", want, rec.Reason)
		}
	})
}
