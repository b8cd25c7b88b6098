package visible

import (
	"bytes"
	"testing"
	"unicode"
	"unicode/utf8"
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

// naiveJSON is JSON without its fast paths: each character decoded, and
// escaped when Escaped says so (a byte that is not UTF-8 as \ufffd).
func naiveJSON(b []byte) string {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case b[i] < 0x7f || !Escaped(r):
			out = append(out, b[i:i+n]...)
		case r > 0xffff:
			out = appendU(appendU(out, 0xd800+((r-0x10000)>>10)), 0xdc00+((r-0x10000)&0x3ff))
		default:
			out = appendU(out, r)
		}
		i += n
	}
	return string(out)
}

// TestJSONEveryRune: JSON writes every rune (and every lead byte cut
// short) as the decoding loop does: the ranges plainMultibyte skips hold
// no escaped character.
func TestJSONEveryRune(t *testing.T) {
	var buf [8]byte
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		n := utf8.EncodeRune(buf[:], r)
		in := append(append([]byte(`"a`), buf[:n]...), `b"`...)
		if got, want := string(JSON(in)), naiveJSON(in); got != want {
			t.Fatalf("JSON(%q) = %q, want %q", in, got, want)
		}
		for cut := 1; cut < n; cut++ {
			in := append(append([]byte(`"a`), buf[:cut]...), `b"`...)
			if got, want := string(JSON(in)), naiveJSON(in); got != want {
				t.Fatalf("JSON(%q) = %q, want %q", in, got, want)
			}
		}
	}
}

// FuzzJSONNaive: JSON equals the decoding loop on any bytes.
func FuzzJSONNaive(f *testing.F) {
	for _, s := range []string{"", "é東\u202e\x7f\xc3", "\xe3\x81", "\xed\xa0\x80", "\xc2\xad", "\xee\x80\x80\xef\xbb\xbf"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := string(JSON(b)), naiveJSON(b); got != want {
			t.Fatalf("JSON(%q) = %q, want %q", b, got, want)
		}
	})
}
