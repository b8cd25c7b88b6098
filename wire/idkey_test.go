package wire

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestIDKey: ids pair by value, as JSON-RPC's "the same value" reads
// (docs/decisions.md, ids15): a string by its decoded value, a number by
// its exact value, never across JSON types, never through float64 or
// U+FFFD.
func TestIDKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b string
		same bool
	}{
		{`"1"`, `"\u0031"`, true},
		{`"a/b"`, `"a\/b"`, true},
		{`"é"`, `"\u00e9"`, true},
		{`"😀"`, `"\ud83d\ude00"`, true},
		{`"😀"`, `"\uD83D\uDE00"`, true},
		{`"\n"`, `"\u000a"`, true},
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`100`, `1e2`, true},
		{`-0`, `0`, true},
		{`1.50`, `15e-1`, true},
		{`1`, `"1"`, false},
		{`1`, `1.5`, false},
		{`9007199254740993`, `9007199254740992`, false},
		{`"\ud800"`, `"\ufffd"`, false},
		{`"\ud800"`, `"\udc00"`, false},
		{"\"\xff\"", "\"\xfe\"", false},
		{"\"\xff\"", `"\ufffd"`, false},
		{"\"\xff\"", `"\u00ff"`, false},
		{`"a"`, `"A"`, false},
		{`true`, `"true"`, false},
		{`null`, `"null"`, false},
		{`{}`, `{}`, true},
		// Exponents past int64 arithmetic, read exactly (review15: each
		// was its raw text's key, so one value had two keys).
		{`1e100000000000000000`, `10e99999999999999999`, true},
		{`1e100000000000000000`, `1.0e100000000000000000`, true},
		{`-25e-100000000000000001`, `-2.5e-100000000000000000`, true},
		{`1e1000000000000000`, `10e999999999999999`, true},
		{`0e100000000000000000`, `0`, true},
		{`-0.0E-100000000000000000`, `0`, true},
		{`1e100000000000000000`, `1e100000000000000001`, false},
		{`1e100000000000000000`, `-1e100000000000000000`, false},
		{`1e-100000000000000000`, `1e100000000000000000`, false},
		{`1e100000000000000000`, `"1e100000000000000000"`, false},
	}
	for _, c := range cases {
		a, b := IDFromRaw([]byte(c.a)), IDFromRaw([]byte(c.b))
		if (a.Key() == b.Key()) != c.same || a.Equal(b) != c.same || b.Equal(a) != c.same {
			t.Errorf("%s and %s: keys %q %q, Equal %v; want the same id: %v", c.a, c.b, a.Key(), b.Key(), a.Equal(b), c.same)
		}
	}
	if k := (ID{}).Key(); k != "" {
		t.Errorf("absent: key %q", k)
	}
}

// TestIDKeyAllocs: a key for a map lookup is appended to a caller's buffer.
func TestIDKeyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ids := []ID{IDFromRaw([]byte(`"r-\u0031"`)), IDFromRaw([]byte(`1.0`))}
	var buf [64]byte
	if n := testing.AllocsPerRun(100, func() {
		for _, id := range ids {
			_ = id.AppendKey(buf[:0])
			_ = id.Equal(ids[0])
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// surrogateEscape finds the escape of a UTF-16 surrogate, which
// encoding/json decodes to U+FFFD when it is alone.
var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// escapedSpelling writes s with every character as a \u escape (a pair
// for one past U+FFFF): another spelling of the same JSON string.
func escapedSpelling(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r > 0xFFFF {
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04X`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzIDKey: Key and Equal agree, and pair ids exactly by value: strings
// (that encoding/json decodes without loss) by encoding/json's decoding,
// numbers by math/big's reading, every other spelling of a string (all
// escaped) to the same key, and no key across JSON types.
func FuzzIDKey(f *testing.F) {
	for _, s := range [][2]string{{`"1"`, `"\u0031"`}, {`1`, `1.0`}, {`9007199254740993`, `9007199254740992`},
		{`"\ud800"`, `"\ufffd"`}, {"\"\xff\"", "\"\xfe\""}, {`"😀"`, `"\ud83d\ude00"`}, {`-0`, `0e5`}, {`1`, `"1"`}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 256 || len(b) > 256 {
			return
		}
		ida, erra := ParseID(a)
		idb, errb := ParseID(b)
		if erra != nil || errb != nil {
			return
		}
		ka, kb := ida.Key(), idb.Key()
		if ida.Equal(idb) != (ka == kb) || idb.Equal(ida) != (ka == kb) {
			t.Fatalf("%s, %s: keys %q %q, Equal %v", a, b, ka, kb, ida.Equal(idb))
		}
		if ka == "" || kb == "" {
			t.Fatalf("%s, %s: an empty key", a, b)
		}
		if ida.IsString() != idb.IsString() || ida.IsNumber() != idb.IsNumber() {
			if ka == kb {
				t.Fatalf("%s and %s, two JSON types, share key %q", a, b, ka)
			}
			return
		}
		switch {
		case ida.IsString():
			lossless := func(id ID) bool { return utf8.Valid(id.Raw()) && !surrogateEscape.Match(id.Raw()) }
			var sa, sb string
			if !lossless(ida) || !lossless(idb) || json.Unmarshal(ida.Raw(), &sa) != nil || json.Unmarshal(idb.Raw(), &sb) != nil {
				return
			}
			if (ka == kb) != (sa == sb) {
				t.Fatalf("%s (%q), %s (%q): same key %v", a, sa, b, sb, ka == kb)
			}
			if k := IDFromRaw([]byte(escapedSpelling(sa))).Key(); k != ka {
				t.Fatalf("%s spelled %s: key %q, not %q", a, escapedSpelling(sa), k, ka)
			}
		case ida.IsNumber():
			x, okx := new(big.Rat).SetString(string(ida.Raw()))
			y, oky := new(big.Rat).SetString(string(idb.Raw()))
			if !okx || !oky {
				return
			}
			if (ka == kb) != (x.Cmp(y) == 0) {
				t.Fatalf("%s, %s: same key %v, values equal %v", a, b, ka == kb, x.Cmp(y) == 0)
			}
		}
	})
}
