package record

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/wire"
)

// plainStringBytewise is plainString as it was before it relied on v being
// valid JSON: every byte checked for a control character, quote or
// backslash too (plainPrefix). The oracle of TestPlainStringOracle, and
// BenchmarkPlainString's A.
func plainStringBytewise(v []byte) bool {
	inner := v[1 : len(v)-1]
	high := false
	for _, c := range inner[plainPrefix(inner):] {
		switch {
		case c < 0x20, c == '\\', c == '"':
			return false
		case c >= 0x80:
			high = true
		}
	}
	return !high || utf8.Valid(inner) && !bytes.Contains(inner, []byte("\u2028")) && !bytes.Contains(inner, []byte("\u2029"))
}

// TestPlainStringOracle: on valid JSON strings (what canonicalValue passes
// it) plainString agrees with plainStringBytewise: strings of 0 to 200
// bytes drawn from ASCII, escapes, multi-byte characters, U+2028/2029
// raw and escaped, bytes that are not UTF-8, at every offset from a word's
// start.
func TestPlainStringOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "Z", " ", "~", "0", "é", "☃", "😀", "\u2028", "\u2029", "\xe2\x80", "\xff", "\x80",
		`\"`, `\\`, `\n`, `\u0041`, `\u2028`, `\/`, "<", "&"}
	n := 0
	for length := 0; length <= 200; length++ {
		for range 20 {
			var sb strings.Builder
			sb.WriteByte('"')
			for sb.Len() < length+1 {
				if rng.IntN(4) == 0 {
					sb.WriteString(pieces[rng.IntN(len(pieces))])
				} else {
					sb.WriteByte(byte('a' + rng.IntN(26)))
				}
			}
			sb.WriteByte('"')
			v := []byte(sb.String())
			if !wire.Valid(v) {
				t.Fatalf("%q: not a valid JSON string", v)
			}
			if got, want := plainString(v), plainStringBytewise(v); got != want {
				t.Fatalf("plainString(%q) = %v, want %v", v, got, want)
			}
			n++
		}
	}
	for _, s := range []string{`""`, `"a"`, `"` + strings.Repeat("x", 64) + `\n"`, `"` + strings.Repeat("x", 33) + "é\"", `"` + strings.Repeat("y", 40) + "\u2029\""} {
		if got, want := plainString([]byte(s)), plainStringBytewise([]byte(s)); got != want {
			t.Errorf("plainString(%q) = %v, want %v", s, got, want)
		}
	}
	if b, _ := json.Marshal("x"); !plainString(b) {
		t.Error(`"x" is not plain`)
	}
}

// BenchmarkPlainString: the strings of BenchmarkArgsHash's arguments (two
// keys, a short value, a 900-byte text) checked by plainString and by
// plainStringBytewise, one after the other in one loop ("ab": their
// shares of one CPU profile), and each alone.
func BenchmarkPlainString(b *testing.B) {
	strs := [][]byte{[]byte(`"query"`), []byte(`"mcp error layers"`), []byte(`"text"`), []byte(`"` + strings.Repeat("x", 900) + `"`)}
	run := func(name string, fs ...func([]byte) bool) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for _, f := range fs {
					for _, s := range strs {
						if !f(s) {
							b.Fatal("not plain")
						}
					}
				}
			}
		})
	}
	run("plainString", plainString)
	run("bytewise", plainStringBytewise)
	run("ab", plainString, plainStringBytewise)
}
