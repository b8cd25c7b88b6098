package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
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
// only numeric ids the MCP schema allows.
func (id ID) IsInteger() bool {
	if !id.IsNumber() {
		return false
	}
	return IsIntegerNumber(id.raw)
}

// Equal reports whether two ids are the same JSON-RPC id: same JSON type and
// same value. Strings compare after decoding escapes; numbers compare by value.
func (id ID) Equal(other ID) bool {
	if bytes.Equal(id.raw, other.raw) {
		return true
	}
	switch {
	case id.IsString() && other.IsString():
		var a, b string
		if json.Unmarshal(id.raw, &a) != nil || json.Unmarshal(other.raw, &b) != nil {
			return false
		}
		return a == b
	case id.IsNumber() && other.IsNumber():
		x, ok1 := parseDecimal(id.raw)
		y, ok2 := parseDecimal(other.raw)
		return ok1 && ok2 && x == y
	}
	return false
}

// decimal is a JSON number's exact value: sign, significant digits without
// leading or trailing zeros, and the power of ten of the last digit. Zero is
// the zero decimal (so -0 equals 0).
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// parseDecimal reads JSON number text exactly (no float64 rounding: the ids
// 9007199254740993 and 9007199254740992 differ). It reports false for text
// that is not a JSON number or whose exponent is beyond ±10^15.
func parseDecimal(n []byte) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(n) && n[i] == '-' {
		d.neg = true
		i++
	}
	start := i
	for i < len(n) && n[i] >= '0' && n[i] <= '9' {
		i++
	}
	intPart := n[start:i]
	if len(intPart) == 0 || (len(intPart) > 1 && intPart[0] == '0') {
		return decimal{}, false
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
			return decimal{}, false
		}
	}
	var exp int64
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		eneg := false
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			eneg = n[i] == '-'
			i++
		}
		es := i
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			if exp > 1e15 {
				return decimal{}, false
			}
			exp = exp*10 + int64(n[i]-'0')
			i++
		}
		if i == es {
			return decimal{}, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(n) {
		return decimal{}, false
	}
	digits := string(intPart) + string(frac)
	exp -= int64(len(frac))
	digits = strings.TrimLeft(digits, "0")
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	if trimmed == "" {
		return decimal{}, true
	}
	d.digits = trimmed
	d.exp = exp
	return d, true
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
// "integer" type defines it.
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
