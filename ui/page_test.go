package ui

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// A record's text can hold anything a server sent; inside the page's data
// element none of it may end the element or open a comment.
func TestHTMLWriterEscapesRecordText(t *testing.T) {
	hostile := "</script><script>alert(1)</script><!-- </SCRIPT >"
	var buf bytes.Buffer
	w := NewHTMLWriter(&buf, HTMLOptions{Title: "<b>title</b>"})
	w.Add(&record.Record{Kind: record.KindExchange, ID: "A", Reason: hostile, ResponseBody: &record.Body{Text: hostile}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	_, data, ok := strings.Cut(page, `<script id="`+RecordsElementID+`" type="application/x-ndjson">`)
	if !ok {
		t.Fatal("no records element")
	}
	data, _, _ = strings.Cut(data, "</script>")
	if strings.Contains(strings.ToLower(data), "<") {
		t.Errorf("the data element holds a raw '<': %q", data)
	}
	rec, err := record.Decode([]byte(strings.TrimSpace(data)))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Reason != hostile || rec.ResponseBody.Text != hostile {
		t.Errorf("the text did not survive: %q", rec.Reason)
	}
	if strings.Contains(page, "<b>title</b>") {
		t.Error("the title is not escaped")
	}
	if w.Records() != 1 {
		t.Errorf("Records() = %d", w.Records())
	}
}

// The policy allows the inline module and style sheet by hash and forbids
// every fetch of a static page.
func TestContentSecurityPolicy(t *testing.T) {
	static := contentSecurityPolicy(false)
	for _, want := range []string{"default-src 'none'", "connect-src 'none'", hash(appJS), hash(appCSS)} {
		if !strings.Contains(static, want) {
			t.Errorf("static policy %q lacks %q", static, want)
		}
	}
	if strings.Contains(static, "unsafe-inline") {
		t.Errorf("static policy allows unsafe-inline: %q", static)
	}
	if !strings.Contains(contentSecurityPolicy(true), "connect-src 'self'") {
		t.Error("the live page cannot reach its event stream")
	}
}
