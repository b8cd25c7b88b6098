package record

import (
	"math/rand/v2"
	"testing"
)

// plainByte is plainWord's rule for one byte.
func plainByte(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }

// TestPlainWord: plainWord says true exactly when each of the 8 bytes is
// plain, for every byte value at every position among plain bytes (the
// borrows of the bit tricks run upwards, so each position is tried), and
// on random words mixing plain and other bytes.
func TestPlainWord(t *testing.T) {
	word := func(bs [8]byte) uint64 {
		var x uint64
		for i := 7; i >= 0; i-- {
			x = x<<8 | uint64(bs[i])
		}
		return x
	}
	for pos := range 8 {
		for _, fill := range []byte{'a', ' ', '~', '!', '#', '[', ']'} {
			for c := range 256 {
				var bs [8]byte
				for i := range bs {
					bs[i] = fill
				}
				bs[pos] = byte(c)
				if got, want := plainWord(word(bs)), plainByte(byte(c)); got != want {
					t.Fatalf("plainWord(%q) = %v, want %v", bs[:], got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	pick := []byte{0, 0x1f, 0x20, '!', '"', '#', '[', '\\', ']', 0x7f, 0x80, 0xa1, 0xff, 'x'}
	for range 200000 {
		var bs [8]byte
		want := true
		for i := range bs {
			bs[i] = pick[rng.IntN(len(pick))]
			want = want && plainByte(bs[i])
		}
		if got := plainWord(word(bs)); got != want {
			t.Fatalf("plainWord(%q) = %v, want %v", bs[:], got, want)
		}
	}
	for _, s := range []string{"", "short", "0123456789abcdef", "01234567\"abcdef", "abcdefghijklmnop\x00", "héllo world, long"} {
		n := plainPrefix(s)
		if n != plainPrefix([]byte(s)) || n%8 != 0 || n > len(s) {
			t.Fatalf("plainPrefix(%q) = %d", s, n)
		}
		for i := range n {
			if !plainByte(s[i]) {
				t.Fatalf("plainPrefix(%q) = %d past byte %d", s, n, i)
			}
		}
		if n+8 <= len(s) && plainWord(uint64(s[n])|uint64(s[n+1])<<8|uint64(s[n+2])<<16|uint64(s[n+3])<<24|uint64(s[n+4])<<32|uint64(s[n+5])<<40|uint64(s[n+6])<<48|uint64(s[n+7])<<56) {
			t.Fatalf("plainPrefix(%q) = %d stopped before a plain word", s, n)
		}
	}
}
