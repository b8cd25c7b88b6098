package visible

import (
	"bytes"
	"testing"
	"unicode"
)

// TestEscapedIsTheSet: the table behind Escaped answers as its definition
// does for every rune (Cc, Cf, Zl, Zp, U+FFFE, U+FFFF).
func TestEscapedIsTheSet(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r == 0xFFFE || r == 0xFFFF || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
		if Escaped(r) != want {
			t.Fatalf("Escaped(%U) = %v, want %v", r, !want, want)
		}
	}
}

// naiveASCIIPrefix is asciiPrefix one byte at a time.
func naiveASCIIPrefix(b []byte) int {
	i := 0
	for i < len(b) && b[i] < 0x7f {
		i++
	}
	return i
}

// FuzzASCIIPrefix: the word-at-a-time scan stops where the byte-wise one
// does, DEL and every byte from 0x80 on included, at any offset.
func FuzzASCIIPrefix(f *testing.F) {
	for _, s := range []string{"", "abcdefgh", "abcdefg\x7f", "abcdefgh\x7e\x7f", "\xff", "0123456789abcdef\x80", "~~~~~~~~~~~~~~~~\xc2\x9b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for off := 0; off < len(b) && off < 9; off++ {
			if got, want := asciiPrefix(b[off:]), naiveASCIIPrefix(b[off:]); got != want {
				t.Fatalf("asciiPrefix(%q) = %d, want %d", b[off:], got, want)
			}
		}
	})
}

func TestASCIIPrefixEveryByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 17; pos++ {
			b := append(bytes.Repeat([]byte("a"), pos), byte(c), 'z')
			if got, want := asciiPrefix(b), naiveASCIIPrefix(b); got != want {
				t.Fatalf("byte %#x at %d: asciiPrefix = %d, want %d", c, pos, got, want)
			}
		}
	}
}
