package ui

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestPageNamesRecordsWithoutOutcome: a call or exchange record without an
// outcome, which mcpdiag report names on stderr and counts apart, is named
// on the page too, by file and line beside the count of records, with the
// same words; a page without one says nothing of it. Before, the page left
// it out without a word ("2 of 2 records").
func TestPageNamesRecordsWithoutOutcome(t *testing.T) {
	good, err := os.ReadFile("../report/testdata/designed-answers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(good, []byte("\n"))
	in := string(first) + "\n" + `{"v":2,"kind":"exchange","id":"x","method":"tools/call","status":200}` + "\n" +
		`{"v":2,"kind":"call","id":"c","method":"tools/call","tool":"echo"}` + "\n" + string(first) + "\n"
	for _, tt := range []struct {
		name, input, want string
	}{
		{"two left out", in, " · 2 left out, without an outcome (counted apart by mcpdiag report): in.jsonl:2 (exchange), in.jsonl:3 (call)"},
		{"none left out", string(first) + "\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewHTMLWriter(&buf, HTMLOptions{Title: "fixture"})
			if _, err := report.Read(strings.NewReader(tt.input), "in.jsonl", nil, w); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			p := browser.Open(t, (&url.URL{Scheme: "file", Path: path}).String())
			browser.WaitFor(t, p, "the rows", `document.body.dataset.ready === 'true' && document.querySelectorAll('#rows tr.row[data-id]').length > 0`)
			count := browser.Eval[string](t, p, `document.getElementById('count').textContent`)
			if !strings.HasSuffix(count, tt.want) || (tt.want == "" && strings.Contains(count, "left out")) {
				t.Errorf("count line %q, want it to end with %q", count, tt.want)
			}
		})
	}
}
