package wire

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// refScanString is ScanString written plainly, byte by byte, from the
// grammar: the end of the string token at data[i] and whether it holds a
// backslash, or -1.
func refScanString(data []byte, i int) (int, bool) {
	esc := false
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, esc
		case c == '\\':
			esc = true
			if j+1 >= len(data) {
				return -1, false
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+6 > len(data) {
					return -1, false
				}
				for _, h := range data[j+2 : j+6] {
					if !isHex(h) {
						return -1, false
					}
				}
				j += 5
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		}
	}
	return -1, false
}

// TestScanStringMatchesReference: ScanString, which finds escapes in its
// validating pass, gives the reference's end and escaped flag on strings
// with escapes, quotes, control characters and bytes that are not UTF-8 at
// every offset around its eight-byte words, on every prefix, and on random
// strings; a string it accepts is a JSON string for encoding/json too.
func TestScanStringMatchesReference(t *testing.T) {
	pieces := []string{`a`, `\"`, `\\`, `\/`, `\n`, `\u00e9`, `\u12`, `\x`, "\x01", "\x1f", "\xff", "é", `"`, ` `, `\`}
	var corpus []string
	for _, p := range pieces {
		for pad := 0; pad <= 17; pad++ {
			for tail := 0; tail <= 9; tail += 3 {
				s := `"` + repeat('x', pad) + p + repeat('y', tail) + `"`
				corpus = append(corpus, s, s+`,"k":1`)
			}
		}
	}
	// Past longRun plain bytes the rest of a string is scanned by scanLong:
	// the same pieces after runs around and well past it, twice in one
	// string (the second after an escape, when the closing quote is known
	// already), and a long text with an escape every few dozen bytes.
	for _, p := range pieces {
		for _, pad := range []int{longRun - 9, longRun - 1, longRun, longRun + 1, longRun + 7, 2*longRun + 3, 100, 257} {
			for _, tail := range []int{0, 5, 40} {
				s := `"` + repeat('x', pad) + p + repeat('y', tail) + `"`
				corpus = append(corpus, s, s+`,"k":1`, `"`+repeat('z', 50)+`\n`+s[1:])
			}
		}
	}
	long := `"`
	for len(long) < 3000 {
		long += repeat('w', 37) + `\"` + repeat('v', 61) + `\n`
	}
	corpus = append(corpus, long+`"`, long+"\x01"+`"`)
	rng := rand.New(rand.NewPCG(13, 1))
	alphabet := []byte("ab\"\\/nu0F\x01\xff ")
	for range 3000 {
		b := []byte{'"'}
		for range rng.IntN(40) {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		corpus = append(corpus, string(b))
	}
	// Random strings of long plain runs between the bytes that matter.
	for range 300 {
		b := []byte{'"'}
		for range rng.IntN(6) {
			b = append(b, repeat('p', rng.IntN(3*longRun))...)
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		corpus = append(corpus, string(b))
	}
	checked := 0
	for _, s := range corpus {
		for n := 1; n <= len(s); n++ {
			data := []byte(s[:n])
			end, esc := ScanString(data, 0)
			wantEnd, wantEsc := refScanString(data, 0)
			if end != wantEnd || esc != wantEsc {
				t.Fatalf("ScanString(%q) = %d, %v; want %d, %v", data, end, esc, wantEnd, wantEsc)
			}
			if end > 0 {
				checked++
				if !json.Valid(data[:end]) {
					t.Fatalf("ScanString(%q) accepted %q, which encoding/json rejects", data, data[:end])
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no string was accepted: the corpus tests nothing")
	}
}

func repeat(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}
