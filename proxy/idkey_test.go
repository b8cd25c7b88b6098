package proxy

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestAnsweredKey: an answer finds the request of its id by value, else the
// one request whose number id a float64 reading makes its own (a server
// that rounds ids is paired, and the classification names the mismatch),
// or the one whose id is its text in the other JSON type (stdio22: "7"
// for 7, 7 for "7"; paired, and the classification names the mismatch);
// never one of two so rounded, never a string that is no number's text.
func TestAnsweredKey(t *testing.T) {
	t.Parallel()
	table := func(ids ...string) map[string]int {
		m := map[string]int{}
		for i, id := range ids {
			m[idKey(wire.IDFromRaw([]byte(id)))] = i
		}
		return m
	}
	cases := []struct {
		name    string
		pending []string
		answer  string
		want    int // the index in pending; -1: none
	}{
		{"same bytes", []string{`1`, `"1"`}, `1`, 0},
		{"escaped string", []string{`1`, `"1"`}, `"\u0031"`, 1},
		{"1.0", []string{`"1"`, `1`}, `1.0`, 1},
		{"1e0", []string{`1`}, `1e0`, 0},
		{"exact past float64", []string{`9007199254740993`, `9007199254740992`}, `9007199254740992`, 1},
		{"rounded by the server", []string{`9007199254740993`}, `9007199254740992`, 0},
		{"two so rounded", []string{`9007199254740993`, `9007199254740995`}, `9007199254740994`, -1},
		{"a string by a number's text", []string{`"9007199254740992"`}, `9007199254740992`, 0},
		{"a number by a string's text", []string{`7`}, `"7"`, 0},
		{"a number by a string of its value", []string{`7`}, `"7.0"`, 0},
		{"the same type first", []string{`7`, `"7"`}, `"7"`, 1},
		{"no number by a spaced string", []string{`7`}, `" 7"`, -1},
		{"no number by a string not a number", []string{`7`}, `"7a"`, -1},
		{"no string by a rounded number", []string{`"9007199254740993"`}, `9007199254740992`, -1},
		{"none", []string{`2`}, `1`, -1},
	}
	for _, c := range cases {
		m := table(c.pending...)
		if len(m) != len(c.pending) {
			t.Fatalf("%s: %d keys for %d ids", c.name, len(m), len(c.pending))
		}
		k, ok := answeredKey(m, wire.IDFromRaw([]byte(c.answer)))
		got := -1
		if ok {
			got = m[k]
		}
		if got != c.want {
			t.Errorf("%s: the answer %s found %d, want %d", c.name, c.answer, got, c.want)
		}
		if !ok && k != idKey(wire.IDFromRaw([]byte(c.answer))) {
			t.Errorf("%s: no request, key %q, not the answer's own", c.name, k)
		}
	}
}
