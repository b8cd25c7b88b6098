package ui

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestPageShowsTextAsVisibleLines (term15): the page renders a record's
// text with app.js's visible(), a second implementation of Go's
// visible.Lines; the tool column of each row shows exactly what
// visible.Lines makes of the recorded tool name: controls, bidi and other
// format characters, separators escaped, the backslash rule the same,
// newlines and tabs kept, other text as it is.
func TestPageShowsTextAsVisibleLines(t *testing.T) {
	texts := []string{
		"plain", "café 東京 🙂", "\x1b]52;c;ZXZpbA==\x07", "FAIL\rPASS", "a\u202eb\u2066c\u200ed", "\u009b2J\x7f",
		"\u2028\u2029", "\ufeff\u200b", "\U000E0041", `C:\Program Files\`, `\x1b`, `\u202e`, "\\\x1b", `\\`, `\q`,
		"tab\there", "a\\\nb", "\x00\x01\x1f", "a\ufffeb\uffff",
	}
	var recs []*record.Record
	for i, s := range texts {
		recs = append(recs, &record.Record{Kind: record.KindExchange, ID: fmt.Sprintf("01M9VISIBLE%015d", i), Method: "tools/call", Tool: s, Outcome: "TOOL_SUCCESS", Status: 200})
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	browser.WaitFor(t, p, "the rows", `document.querySelectorAll('#rows tr.row[data-id]').length > 0`)
	shown := map[string]string{}
	for _, r := range pageRows(t, p) {
		shown[r.ID] = r.Tool
	}
	for i, s := range texts {
		id := recs[i].ID
		if got, want := shown[id], visible.Lines(s); got != want {
			t.Errorf("tool %q: the page shows %q, visible.Lines %q", s, got, want)
		}
	}
}
