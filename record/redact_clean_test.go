package record

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
)

// TestCleanWordsShortcut: the words Scrub returns without running the
// patterns are the ones the patterns leave unchanged, the set holds what
// every exchange record carries, and a registered secret equal to such a
// word is still masked (secrets go first).
func TestCleanWordsShortcut(t *testing.T) {
	for _, w := range []string{string(classify.ToolSuccess), string(classify.LayerApplication), "POST", "tools/call", "2026-07-28", "application/json", string(KindExchange), string(OriginNone)} {
		if _, ok := cleanWords[w]; !ok {
			t.Errorf("%q is not in cleanWords", w)
		}
	}
	r := NewRedactor()
	for w := range cleanWords {
		if got, want := r.Scrub(w), r.scrubPatterns(r.replaceSecrets(w), ctxJSON); got != want || got != w {
			t.Errorf("Scrub(%q) = %q, the patterns give %q", w, got, want)
		}
	}
	if err := r.AddSecret(string(classify.ToolSuccess)); err != nil {
		t.Fatal(err)
	}
	if got := r.Scrub(string(classify.ToolSuccess)); got == string(classify.ToolSuccess) || !IsRedacted(got) {
		t.Errorf("a registered secret equal to a clean word came out as %q", got)
	}
}
