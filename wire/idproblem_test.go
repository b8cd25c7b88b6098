package wire

import (
	"math/big"
	"strings"
	"testing"
)

// TestMCPProblem: the MCP schema's RequestId is string | integer, where
// "integer" is JSON Schema's (draft 2020-12 §6.1.1: a number with a zero
// fractional part), so 1.0, 1e2 and -0 are integers and allowed; 0.5 and
// -1.5e-3 are not; 9007199254740993 is an integer past ±(2^53−1), which
// MCP allows and a peer reading doubles cannot hold. Each is decided
// exactly, never through a float64 (1.0000000000000001 is not an
// integer, though it rounds to 1).
func TestMCPProblem(t *testing.T) {
	tests := []struct {
		id   string
		want IDProblem
	}{
		{`1`, IDAllowed}, {`-7`, IDAllowed}, {`0`, IDAllowed}, {`-0`, IDAllowed}, {`1.0`, IDAllowed}, {`1e2`, IDAllowed},
		{`1E+2`, IDAllowed}, {`-0.0e-5`, IDAllowed}, {`12.50e1`, IDAllowed}, {`"0.5"`, IDAllowed}, {`"x"`, IDAllowed}, {`null`, IDAllowed},
		{`9007199254740991`, IDAllowed}, {`-9007199254740991`, IDAllowed}, {`9007199254740991.0`, IDAllowed}, {`900719925474099.1e1`, IDAllowed},
		{`0.5`, IDNotInteger}, {`-1.5e-3`, IDNotInteger}, {`1.0000000000000001`, IDNotInteger}, {`1e-1`, IDNotInteger},
		{`1e-10000000000000000000`, IDNotInteger}, {`123456789.5`, IDNotInteger},
		{`9007199254740992`, IDBeyondSafeInteger}, {`9007199254740993`, IDBeyondSafeInteger}, {`-9007199254740993`, IDBeyondSafeInteger},
		{`1e16`, IDBeyondSafeInteger}, {`1e400`, IDBeyondSafeInteger}, {`1e10000000000000000000`, IDBeyondSafeInteger},
		{`90071992547409910`, IDBeyondSafeInteger}, {`9.007199254740992e15`, IDBeyondSafeInteger},
	}
	for _, tt := range tests {
		if got := IDFromRaw([]byte(tt.id)).MCPProblem(); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.id, got, tt.want)
		}
		if got := (ID{}).MCPProblem(); got != IDAllowed {
			t.Errorf("the absent id: %d", got)
		}
	}
}

// FuzzMCPProblem holds MCPProblem against math/big's
// exact reading of the same number (big.Rat), for numbers whose exponent
// big.Rat can take.
func FuzzMCPProblem(f *testing.F) {
	for _, s := range []string{"0.5", "-1.5e-3", "9007199254740993", "1.0", "1e2", "-0", "1.0000000000000001", "9007199254740991", "12.50e1"} {
		f.Add(s)
	}
	limit := new(big.Rat).SetInt64(1<<53 - 1)
	f.Fuzz(func(t *testing.T, s string) {
		if !isNumberText(s) {
			return
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(s[i+1:], "+-")) > 4 {
			return // big.Rat would build 10^N
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read %q", s)
		}
		want := IDAllowed
		switch {
		case !r.IsInt():
			want = IDNotInteger
		case new(big.Rat).Abs(r).Cmp(limit) > 0:
			want = IDBeyondSafeInteger
		}
		if got := IDFromRaw([]byte(s)).MCPProblem(); got != want {
			t.Errorf("%s: MCPProblem %d, want %d", s, got, want)
		}
	})
}

// isNumberText reports whether s is one JSON number (RFC 8259 §6).
func isNumberText(s string) bool {
	return s != "" && (s[0] == '-' || isDigit(s[0])) && validNumber([]byte(s), 0) == len(s)
}
