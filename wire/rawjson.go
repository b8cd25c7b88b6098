package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// The functions in this file walk JSON text that json.Valid has already
// accepted. They never allocate for the common case and never decode values
// the caller does not ask for, so classifying a 4 MiB tool result costs one
// validation pass plus a skim over the bytes, not a full decode into maps.
//
// On input that is not valid JSON they return ErrNotJSON rather than
// panicking, but they do not promise to detect every invalid document: call
// json.Valid first.

// ErrNotJSON is returned when the raw-JSON walkers meet text that is not JSON.
var ErrNotJSON = errors.New("not valid JSON")

// Kind returns the JSON type of the raw value v: '{', '[', '"', 'n' (null),
// 't'/'f' (booleans), '0' (numbers), or 0 for empty input.
func Kind(v []byte) byte {
	v = trimLeft(v)
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; c {
	case '{', '[', '"', 'n', 't', 'f':
		return c
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0'
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func trimLeft(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i]=='"'.
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, ErrNotJSON
		}
		end := i + j
		// Count the backslashes before the quote: an odd count escapes it.
		k := end - 1
		for k >= i && b[k] == '\\' {
			k--
		}
		if (end-1-k)%2 == 0 {
			return end + 1, nil
		}
		i = end + 1
	}
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return 0, ErrNotJSON
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				n, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = n
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, ErrNotJSON
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\n', '\r', '\t':
				return i, nil
			}
			i++
		}
		return i, nil
	}
}

// EachField calls fn for every member of the JSON object obj, in document
// order, with the member's raw key (quotes included) and raw value. It stops
// early when fn returns false. Duplicate keys are all reported.
func EachField(obj []byte, fn func(key, value []byte) bool) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ErrNotJSON
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return ErrNotJSON
		}
		kend, err := skipString(obj, i)
		if err != nil {
			return err
		}
		key := obj[i:kend]
		i = skipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return ErrNotJSON
		}
		vstart := skipSpace(obj, i+1)
		vend, err := skipValue(obj, vstart)
		if err != nil {
			return err
		}
		if !fn(key, obj[vstart:vend]) {
			return nil
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			return ErrNotJSON
		}
		if obj[i] == '}' {
			return nil
		}
		if obj[i] != ',' {
			return ErrNotJSON
		}
		i = skipSpace(obj, i+1)
	}
	return ErrNotJSON
}

// EachElement calls fn for every element of the JSON array arr, with its index
// and raw value. It stops early when fn returns false.
func EachElement(arr []byte, fn func(index int, value []byte) bool) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return ErrNotJSON
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for n := 0; i < len(arr); n++ {
		vend, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if !fn(n, arr[i:vend]) {
			return nil
		}
		i = skipSpace(arr, vend)
		if i >= len(arr) {
			return ErrNotJSON
		}
		if arr[i] == ']' {
			return nil
		}
		if arr[i] != ',' {
			return ErrNotJSON
		}
		i = skipSpace(arr, i+1)
	}
	return ErrNotJSON
}

// KeyIs reports whether the raw key (quotes included) names name. It
// compares bytes directly when the key has no escapes, which is the usual case.
func KeyIs(rawKey []byte, name string) bool {
	if len(rawKey) < 2 {
		return false
	}
	inner := rawKey[1 : len(rawKey)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == name
	}
	s, ok := StringValue(rawKey)
	return ok && s == name
}

// StringValue decodes the raw JSON string v. ok is false when v is not a
// string.
func StringValue(v []byte) (s string, ok bool) {
	v = trimLeft(v)
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// StringIs reports whether the raw JSON value v is the string want.
func StringIs(v []byte, want string) bool {
	v = trimLeft(v)
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == want
	}
	s, ok := StringValue(v)
	return ok && s == want
}

// Field returns the raw value of the first member of obj named name.
func Field(obj []byte, name string) (value []byte, found bool) {
	_ = EachField(obj, func(k, v []byte) bool {
		if KeyIs(k, name) {
			value, found = v, true
			return false
		}
		return true
	})
	return value, found
}
