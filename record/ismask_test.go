package record

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestIsMaskMatchesRegexp: isMask and isSessionHash accept exactly what
// the regular expressions they replace accept, on masks, session hashes,
// each with a byte changed, cut or added, and on random strings built from
// their pieces.
func TestIsMaskMatchesRegexp(t *testing.T) {
	maskRE := regexp.MustCompile(`^\[redacted(?::len=\d+:h=[0-9a-f]{8})?\]$`)
	sessionRE := regexp.MustCompile(`^sha256:[0-9a-f]{16}$`)
	r := NewRedactorKey([]byte("k"))
	in := []string{"", "[redacted]", "[redacted:len=0:h=00000000]", "[redacted:len=12:h=0a1b2c3d]", "[redacted:len=:h=0a1b2c3d]",
		"[redacted:len=1:h=0A1B2C3D]", "[redacted:len=1:h=0a1b2c3]", "[redacted:len=1:h=0a1b2c3d0]", "[redacted:len=1]", "[redacted:]",
		"[REDACTED]", " [redacted]", "[redacted] ", "sha256:0123456789abcdef", "sha256:0123456789ABCDEF", "sha256:0123456789abcde",
		HashSession("s"), r.Mask("secret"), r.Mask(""), "[redacted:len=١:h=0a1b2c3d]"}
	base := len(in)
	for _, s := range in[:base] {
		for i := range len(s) {
			in = append(in, s[:i], s[i+1:], s[:i]+"x"+s[i+1:], s[:i]+"9"+s[i:], s[:i]+"]"+s[i+1:])
		}
	}
	rng := rand.New(rand.NewPCG(9, 13))
	pieces := []string{"[redacted", "]", ":len=", "12", "0", ":h=", "0a1b2c3d", "ff", "G", "sha256:", "0123456789abcdef", ":", "x"}
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in = append(in, b.String())
	}
	for _, s := range in {
		if got, want := isMask(s), maskRE.MatchString(s); got != want {
			t.Fatalf("isMask(%q) = %v, the regexp says %v", s, got, want)
		}
		if got, want := isSessionHash(s), sessionRE.MatchString(s); got != want {
			t.Fatalf("isSessionHash(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
