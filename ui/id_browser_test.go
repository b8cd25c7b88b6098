package ui

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
)

// TestJSONRPCIDAsRecorded: the detail pane shows a request's JSON-RPC id,
// and the response's when it differs, as the record wrote them, and "The
// record as JSON" is the record's own text. testdata/ids.jsonl is four
// exchanges mcpdiag proxy recorded in front of mcpdiag serve, sent with
// curl under the ids "7", 7.0, 9007199254740993 (which the go-sdk server
// answered as 9007199254740992: INVALID_ENVELOPE, response-for-other-id)
// and -0. Before, the page parsed ids as JavaScript numbers: it showed
// 9007199254740992 as the request's id (the very id the verdict says the
// server answered instead), 7 and 0, no response id at all, and its JSON
// had the numbers rewritten (and the page's own _eraFallback flag).
// Found by newuser7 comparing report --html with the records.
func TestJSONRPCIDAsRecorded(t *testing.T) {
	recs := recordtest.ReadFile(t, "testdata/ids.jsonl")
	path := writePage(t, recs)
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: path}).String())
	tests := []struct {
		rec, id, responseID, raw string
	}{
		{"01M95H3MBMBGQTHNVKMQF8TJVE", `"7"`, "", `"id": "7",`},
		{"01M95H3MDT658DP6P7HTRA61SN", "7.0", "", `"id": 7.0,`},
		{"01M95H3MKRMJYRCCKCASVPQS1D", "9007199254740993", "9007199254740992", `"id": 9007199254740993,`},
		{"01M95H3MPAPQZCR44FSP4HDP6B", "-0", "", `"id": -0,`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			clickRow(t, p, tt.rec)
			kv := func(key string) string {
				return browser.Eval[string](t, p, fmt.Sprintf(`(() => {
				  const dt = [...document.querySelectorAll('#detail [data-section="exchange"] dt')].find((d) => d.textContent === %q);
				  return dt ? dt.nextElementSibling.textContent : '';
				})()`, key))
			}
			if got := kv("JSON-RPC id"); got != tt.id {
				t.Errorf("JSON-RPC id %q, want %q", got, tt.id)
			}
			if got := kv("response id"); got != tt.responseID {
				t.Errorf("response id %q, want %q", got, tt.responseID)
			}
			raw := browser.Eval[string](t, p, `document.querySelector('#detail details.raw pre').textContent`)
			if !strings.Contains(raw, "\n    "+tt.raw+"\n") || strings.Contains(raw, "_eraFallback") {
				t.Errorf("the record as JSON does not hold %s as written:\n%s", tt.raw, raw)
			}
		})
	}
}
