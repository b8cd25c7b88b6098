package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ID is a JSON-RPC request id kept as its raw JSON text, so that its type
// survives: the number 7 and the string "7" are different ids. The zero ID is
// "absent".
type ID struct {
	raw []byte
}

// ParseID reads an id from JSON text such as `7` or `"abc"`. Only strings and
// numbers are ids; null, booleans, objects and arrays are rejected.
func ParseID(text string) (ID, error) {
	b := bytes.TrimSpace([]byte(text))
	if len(b) == 0 {
		return ID{}, fmt.Errorf("empty id")
	}
	if !json.Valid(b) {
		return ID{}, fmt.Errorf("id %q is not JSON (a string id needs quotes: '\"%s\"')", text, text)
	}
	switch b[0] {
	case '"':
		return ID{raw: b}, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return ID{raw: b}, nil
	}
	return ID{}, fmt.Errorf("id %s is not a string or a number", b)
}

// IntID returns the numeric id n.
func IntID(n int64) ID { return ID{raw: strconv.AppendInt(nil, n, 10)} }

// StringID returns the string id s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: b}
}

// IDFromRaw wraps raw JSON text as an id without checking it; callers use it
// for values already known to be valid JSON.
func IDFromRaw(raw []byte) ID { return ID{raw: raw} }

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return len(id.raw) == 0 }

// IsNull reports whether the id is the JSON literal null.
func (id ID) IsNull() bool { return string(id.raw) == "null" }

// Raw returns the id's JSON text (nil when absent).
func (id ID) Raw() []byte { return id.raw }

// String returns the id's JSON text, or "" when absent.
func (id ID) String() string { return string(id.raw) }

// IsString reports whether the id is a JSON string.
func (id ID) IsString() bool { return len(id.raw) > 0 && id.raw[0] == '"' }

// IsNumber reports whether the id is a JSON number.
func (id ID) IsNumber() bool {
	return len(id.raw) > 0 && (id.raw[0] == '-' || (id.raw[0] >= '0' && id.raw[0] <= '9'))
}

// IsInteger reports whether the id is a number without a fractional part, the
// only numeric ids the MCP schema allows, read exactly (see MCPProblem).
func (id ID) IsInteger() bool {
	return id.IsNumber() && id.MCPProblem() != IDNotInteger
}

// Equal reports whether two ids are the same JSON-RPC id: same JSON type and
// same value. Strings compare by their decoded value, exactly (see Key);
// numbers by their exact value (1, 1.0 and 1e0 are one id). Equal holds
// exactly when the two Keys are equal.
func (id ID) Equal(other ID) bool {
	if bytes.Equal(id.raw, other.raw) {
		return true
	}
	var a, b [64]byte
	return bytes.Equal(id.AppendKey(a[:0]), other.AppendKey(b[:0]))
}

// Key returns the id's canonical form, for pairing ids by value (a map of
// requests waiting for their answers, by id): two ids have the same Key
// exactly when Equal says they are the same id. The JSON types never share
// a key. A string's key is its decoded value, exactly: escapes are decoded
// ("\u0031" is "1"), a lone surrogate escape and a byte that is not UTF-8
// each keep a form of their own (neither becomes U+FFFD, which would make
// two different ids one). A number's key is its exact decimal value as
// appendDecimal reads it, never a float64's (9007199254740993 and
// 9007199254740992 differ; -0 is 0). Any other JSON text (true, an object:
// not an id JSON-RPC allows), and text that does not read as its type, is
// keyed by its bytes. The absent id's key is "".
func (id ID) Key() string {
	var b [64]byte
	return string(id.AppendKey(b[:0]))
}

// AppendKey appends the bytes of id's Key to dst.
func (id ID) AppendKey(dst []byte) []byte {
	switch {
	case len(id.raw) == 0:
		return dst
	case id.IsString():
		if out, ok := appendStringKey(append(dst, 's'), id.raw); ok {
			return out
		}
	case id.IsNumber():
		// The sign first, taken back for zero (-0 is 0).
		mark := len(dst)
		dst = append(dst, 'n', '-')
		if digits, neg, exp, bigExp, ok := appendDecimal(dst, id.raw); ok {
			if len(digits) == len(dst) {
				return append(dst[:mark], 'n', '0')
			}
			if !neg {
				copy(digits[mark+1:], digits[mark+2:])
				digits = digits[:len(digits)-1]
			}
			digits = append(digits, 'e')
			if bigExp != nil {
				return bigExp.Append(digits, 10)
			}
			return strconv.AppendInt(digits, exp, 10)
		}
		dst = dst[:mark]
	}
	return append(append(dst, 'r'), id.raw...)
}

// keyMark starts, in a string id's key, a byte the key cannot hold as it
// is (0xFF is in no UTF-8 encoding): keyMark 0 b for a byte b of the id's
// text that is not UTF-8, keyMark 1 h l for the escape of a lone surrogate
// h<<8|l. Every other character is its UTF-8 bytes, so that no two
// different values share a key.
const keyMark = 0xFF

// appendStringKey appends the key of the JSON string raw (quotes
// included): its decoded value, with keyMark for what has no UTF-8
// encoding. ok is false when raw is not a whole JSON string.
func appendStringKey(dst, raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return dst, false
	}
	in := raw[1 : len(raw)-1]
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '"' || c < 0x20:
			return dst, false
		case c == '\\':
			if i+1 >= len(in) {
				return dst, false
			}
			switch e := in[i+1]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := hex4(in, i+2)
				if !ok {
					return dst, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r < 0xDC00 && i+1 < len(in) && in[i] == '\\' && in[i+1] == 'u' {
						if lo, ok := hex4(in, i+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
							dst = utf8.AppendRune(dst, utf16.DecodeRune(r, lo))
							i += 6
							continue
						}
					}
					dst = append(dst, keyMark, 1, byte(r>>8), byte(r))
					continue
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				return dst, false
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, keyMark, 0, c)
				i++
				continue
			}
			dst = append(dst, in[i:i+n]...)
			i += n
		}
	}
	return dst, true
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendDecimal reads the JSON number n exactly (no float64 rounding: the
// ids 9007199254740993 and 9007199254740992 differ): it appends to dst its
// significant digits, without leading or trailing zeros (none for zero, so
// that -0 is 0), and returns with them its sign and the power of ten of its
// last digit: exp, or bigExp when the exponent written has more than 15
// digits (1e100000000000000000 and 10e99999999999999999 are one value).
// ok is false for text that is not a JSON number.
func appendDecimal(dst, n []byte) (out []byte, neg bool, exp int64, bigExp *big.Int, ok bool) {
	i := 0
	if i < len(n) && n[i] == '-' {
		neg = true
		i++
	}
	start := i
	for i < len(n) && n[i] >= '0' && n[i] <= '9' {
		i++
	}
	intPart := n[start:i]
	if len(intPart) == 0 || (len(intPart) > 1 && intPart[0] == '0') {
		return dst, false, 0, nil, false
	}
	var frac []byte
	if i < len(n) && n[i] == '.' {
		i++
		fs := i
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
		}
		frac = n[fs:i]
		if len(frac) == 0 {
			return dst, false, 0, nil, false
		}
	}
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		eneg := false
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			eneg = n[i] == '-'
			i++
		}
		es := i
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			if exp < 1e15 {
				exp = exp*10 + int64(n[i]-'0')
			}
			i++
		}
		if i == es {
			return dst, false, 0, nil, false
		}
		if exp >= 1e15 {
			// Too long for int64 arithmetic: read exactly.
			bigExp, _ = new(big.Int).SetString(string(n[es:i]), 10)
			if eneg {
				bigExp.Neg(bigExp)
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(n) {
		return dst, false, 0, nil, false
	}
	adj := -int64(len(frac))
	// The digits of intPart then frac, without leading zeros, then
	// without trailing ones (each a power of ten more).
	mark := len(dst)
	for _, part := range [2][]byte{intPart, frac} {
		for _, c := range part {
			if c == '0' && len(dst) == mark {
				continue
			}
			dst = append(dst, c)
		}
	}
	for len(dst) > mark && dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
		adj++
	}
	if len(dst) == mark {
		return dst, false, 0, nil, true
	}
	if bigExp != nil {
		// The exponent written is too long for int64: adjust it exactly.
		return dst, neg, 0, bigExp.Add(bigExp, big.NewInt(adj)), true
	}
	return dst, neg, exp + adj, nil, true
}

// MarshalJSON writes the id's JSON text, or null when absent.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsZero() {
		return []byte("null"), nil
	}
	return id.raw, nil
}

// UnmarshalJSON keeps the raw JSON text of the id.
func (id *ID) UnmarshalJSON(b []byte) error {
	id.raw = append([]byte(nil), bytes.TrimSpace(b)...)
	return nil
}

// IsIntegerNumber reports whether the JSON number text n has an integral
// value (7, -3, 1e3, 2.0 are integral; 1.5 is not), as JSON Schema's
// "integer" type defines it, read as an IEEE 754 double, as the
// classifier reads a result's numbers (1e400 is not finite, so not an
// integer; 1.0000000000000001 reads as 1). ID.MCPProblem reads an id
// exactly instead.
func IsIntegerNumber(n []byte) bool {
	if bytes.IndexAny(n, ".eE") < 0 {
		return true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return false
	}
	return !math.IsInf(f, 0) && math.Trunc(f) == f
}

// IDProblem is what keeps a request id from being one MCP allows, or
// from being read the same by every peer: IDAllowed, IDNotInteger or
// IDBeyondSafeInteger.
type IDProblem uint8

const (
	// IDAllowed is an id MCP allows: a string, or an integer within
	// ±(2^53−1), however it is spelled (1.0, 1e2 and -0 are integers).
	// The absent id and null are IDAllowed here: null has its own rule
	// (a request's id MUST NOT be null; a response may carry it).
	IDAllowed IDProblem = iota
	// IDNotInteger is a number with a fractional part (0.5, -1.5e-3):
	// JSON-RPC 2.0 allows it (its numbers SHOULD NOT have one), the MCP
	// schema's RequestId (string | integer) does not.
	IDNotInteger
	// IDBeyondSafeInteger is an integer beyond ±(2^53−1)
	// (9007199254740993): the MCP schema allows it, but RFC 8259 §6 and
	// I-JSON (RFC 7493 §2.2) say no peer can be expected to hold it
	// exactly, and a peer that reads JSON numbers as IEEE 754 doubles
	// (JavaScript) cannot.
	IDBeyondSafeInteger
)

// maxSafeInteger is 2^53−1, the largest integer every IEEE 754 double
// holds along with all smaller ones, in decimal.
const maxSafeInteger = "9007199254740991"

// MCPProblem says whether id is one MCP allows (IDAllowed), and if not,
// why. Strings, null and the absent id are IDAllowed; a number is read
// exactly (wire's decimal reading, never a float64). An id of 15 digits or
// fewer without a fraction or exponent is decided without reading it.
func (id ID) MCPProblem() IDProblem {
	raw := id.raw
	if !id.IsNumber() || len(raw) < len(maxSafeInteger) && bytes.IndexAny(raw, ".eE") < 0 {
		return IDAllowed
	}
	return numberProblem(raw)
}

// numberProblem is MCPProblem for the JSON number text n, read exactly.
func numberProblem(n []byte) IDProblem {
	var buf [64]byte
	digits, _, exp, bigExp, ok := appendDecimal(buf[:0], n)
	switch {
	case !ok:
		return IDAllowed // not a JSON number: no id to judge here
	case len(digits) == 0: // zero
		return IDAllowed
	case bigExp != nil:
		if bigExp.Sign() < 0 {
			return IDNotInteger
		}
		return IDBeyondSafeInteger
	case exp < 0:
		return IDNotInteger
	}
	// An integer: digits followed by exp zeros.
	width := int64(len(digits)) + exp
	switch {
	case width < int64(len(maxSafeInteger)):
		return IDAllowed
	case width > int64(len(maxSafeInteger)):
		return IDBeyondSafeInteger
	}
	var full [len(maxSafeInteger)]byte
	copy(full[:], digits)
	for i := len(digits); i < len(full); i++ {
		full[i] = '0'
	}
	if string(full[:]) > maxSafeInteger {
		return IDBeyondSafeInteger
	}
	return IDAllowed
}
