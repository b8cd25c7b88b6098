package record

import (
	"math/rand/v2"
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

// TestIsCleanWord: isCleanWord is membership in cleanWords, for every word
// of it, for each with a byte changed, added or cut, and for random text.
func TestIsCleanWord(t *testing.T) {
	check := func(s string) {
		t.Helper()
		_, want := cleanWords[s]
		if got := isCleanWord(s); got != want {
			t.Fatalf("isCleanWord(%q) = %v, in cleanWords %v", s, got, want)
		}
	}
	check("")
	for w := range cleanWords {
		check(w)
		check(w + "x")
		check("x" + w)
		check(w[1:])
		check(w[:len(w)-1])
		for i := range len(w) {
			check(w[:i] + "\x00" + w[i+1:])
		}
	}
	rng := rand.New(rand.NewPCG(5, 13))
	for range 20000 {
		check(randomGateString(rng))
	}
	if len(cleanWords) < 40 {
		t.Errorf("cleanWords has %d words", len(cleanWords))
	}
}
