package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
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

// maxNestingDepth is encoding/json's limit on nested arrays and objects:
// json.Valid rejects a document that opens more than this many at once.
const maxNestingDepth = 10000

// Valid reports whether data is one valid JSON value, optionally surrounded
// by whitespace. It accepts exactly what encoding/json.Valid accepts (RFC
// 8259, at most 10000 nested arrays and objects, bytes that are not UTF-8
// allowed inside strings, control characters not) and does not allocate
// unless the nesting is deeper than 64; it runs several times faster, as it
// skims string contents eight bytes at a time instead of stepping a state
// machine through each byte.
func Valid(data []byte) bool {
	i := validValue(data, 0, 0)
	return i >= 0 && skipSpace(data, i) == len(data)
}

// ValidValue validates the JSON value that starts at data[i] or after the
// whitespace there, nested depth arrays and objects deep in its document
// (0 for a whole document), as json.Valid validates it there, and returns
// the index just past it (not past the whitespace after it), or -1. It
// reads the value once: a caller that walks an object's members with it
// validates the object, as Valid(obj) would, in the same pass.
func ValidValue(data []byte, i, depth int) int {
	if i < 0 || i > len(data) || depth < 0 || depth > maxNestingDepth {
		return -1
	}
	return validValue(data, i, depth)
}

// validValue is ValidValue: the value at data[i:] (after whitespace), at
// nesting depth base, and the index just past it.
func validValue(data []byte, i, base int) int {
	n := len(data)
	depth := 0
	maxDepth := maxNestingDepth - base
	var kinds uint64  // bit d-1 set: the container at depth d (<= 64) is an object
	var deeper []bool // the same for depths beyond 64: true for an object
	isObject := func(d int) bool {
		if d <= 64 {
			return kinds&(1<<(d-1)) != 0
		}
		return deeper[d-65]
	}
value:
	for i < n && isSpace(data[i]) {
		i++
	}
	if i >= n {
		return -1
	}
	switch c := data[i]; c {
	case '{', '[':
		depth++
		if depth > maxDepth {
			return -1
		}
		obj := c == '{'
		if depth <= 64 {
			if obj {
				kinds |= 1 << (depth - 1)
			} else {
				kinds &^= 1 << (depth - 1)
			}
		} else {
			deeper = append(deeper[:depth-65], obj)
		}
		i = skipSpace(data, i+1)
		if i >= n {
			return -1
		}
		if obj {
			if data[i] == '}' {
				i++
				depth--
				goto end
			}
			if i = validMember(data, i); i < 0 {
				return -1
			}
			goto value
		}
		if data[i] == ']' {
			i++
			depth--
			goto end
		}
		goto value
	case '"':
		if i = validString(data, i); i < 0 {
			return -1
		}
	case 't':
		if n-i < 4 || string(data[i:i+4]) != "true" {
			return -1
		}
		i += 4
	case 'f':
		if n-i < 5 || string(data[i:i+5]) != "false" {
			return -1
		}
		i += 5
	case 'n':
		if n-i < 4 || string(data[i:i+4]) != "null" {
			return -1
		}
		i += 4
	default:
		if i = validNumber(data, i); i < 0 {
			return -1
		}
	}
end:
	if depth == 0 {
		return i
	}
	for i < n && isSpace(data[i]) {
		i++
	}
	if i >= n {
		return -1
	}
	switch data[i] {
	case ',':
		i++
		if isObject(depth) {
			if i = validMember(data, skipSpace(data, i)); i < 0 {
				return -1
			}
		}
		goto value
	case '}':
		if !isObject(depth) {
			return -1
		}
	case ']':
		if isObject(depth) {
			return -1
		}
	default:
		return -1
	}
	i++
	depth--
	goto end
}

// validMember checks `"key" :` at data[i] and returns the index after the
// colon, or -1.
func validMember(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = validString(data, i); i < 0 {
		return -1
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return i + 1
}

const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// validString checks the string that starts at data[i]=='"' and returns the
// index just past its closing quote, or -1.
func validString(data []byte, i int) int {
	end, _ := scanString(data, i)
	return end
}

// scanString is validString that also reports whether the string holds a
// backslash (escaped), found in the same pass. Eight bytes at a time it looks
// for the only bytes that matter: a quote, a backslash or a control character.
// A run of more than longRun bytes without one (a long text, a base64 blob)
// is finished by scanLong instead.
func scanString(data []byte, i int) (end int, escaped bool) {
	n := len(data)
	i++
	quote := -1 // where scanLong found the next quote (valid while i <= quote)
	for {
		lim := i + longRun
		if lim > n {
			lim = n
		}
		for i+8 <= lim {
			x := binary.LittleEndian.Uint64(data[i:])
			q := x ^ ('"' * swarOnes)
			bs := x ^ ('\\' * swarOnes)
			// Each term sets the high bit of a byte that is '"', '\\' or
			// below 0x20; a borrow can only mark bytes above a true match,
			// so the lowest mark is exact.
			m := ((q - swarOnes) &^ q) | ((bs - swarOnes) &^ bs) | ((x - 0x20*swarOnes) &^ x)
			m &= swarHighs
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto special
			}
			i += 8
		}
		if lim < n {
			// longRun plain bytes: the rest of the run is scanLong's.
			if i, quote = scanLong(data, i, quote); i < 0 {
				return -1, false
			}
		}
	special:
		if i >= n {
			return -1, false
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			escaped = true
			if i+1 >= n {
				return -1, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > n || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return -1, false
				}
				i += 6
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		default:
			i++
		}
	}
}

// longRun is how many bytes of a string scanString reads by words before it
// hands the rest to scanLong: strings shorter than that (keys, most values)
// never pay for scanLong's calls.
const longRun = 128

// scanLong finds the first byte at or after data[i] that ends a run of
// plain string bytes: the next quote or backslash, which it returns for
// scanString to handle, or len(data) when there is neither. It returns -1
// when a control character comes first (the string is invalid). quote is
// where an earlier call found the next quote (or -1); the returned one is
// for the next call, so that a long string with many escapes is searched
// for its closing quote once, not once per escape.
//
// The searches are bytes.IndexByte's (vectorised), and the control
// characters are looked for only up to the first quote or backslash, four
// words at a time with one test: on a long run this is several times
// faster than the word loop, which tests for all three kinds in each word.
func scanLong(data []byte, i, quote int) (stop, nextQuote int) {
	if quote < i {
		quote = len(data)
		if q := bytes.IndexByte(data[i:], '"'); q >= 0 {
			quote = i + q
		}
	}
	stop = quote
	if b := bytes.IndexByte(data[i:quote], '\\'); b >= 0 {
		stop = i + b
	}
	if hasControl(data[i:stop]) {
		return -1, quote
	}
	return stop, quote
}

// hasControl reports whether b holds a byte below 0x20.
func hasControl(b []byte) bool {
	const lim = 0x20 * swarOnes
	var m uint64
	for len(b) >= 32 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		x2 := binary.LittleEndian.Uint64(b[16:])
		x3 := binary.LittleEndian.Uint64(b[24:])
		// (x - 0x20…) &^ x marks, in some byte, every word that holds a
		// byte below 0x20, and no other word (see scanString).
		m |= (x0 - lim) &^ x0
		m |= (x1 - lim) &^ x1
		m |= (x2 - lim) &^ x2
		m |= (x3 - lim) &^ x3
		if m&swarHighs != 0 {
			return true
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		m |= (x - lim) &^ x
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return m&swarHighs != 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// validNumber checks the number that starts at data[i] and returns the index
// just past it, or -1: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(data []byte, i int) int {
	n := len(data)
	if data[i] == '-' {
		i++
		if i >= n {
			return -1
		}
	}
	switch c := data[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i++
		for i < n && isDigit(data[i]) {
			i++
		}
	default:
		return -1
	}
	if i < n && data[i] == '.' {
		i++
		if i >= n || !isDigit(data[i]) {
			return -1
		}
		for i < n && isDigit(data[i]) {
			i++
		}
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n || !isDigit(data[i]) {
			return -1
		}
		for i < n && isDigit(data[i]) {
			i++
		}
	}
	return i
}

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
		// Keys and short values end within a few bytes: look for the quote
		// inline before paying for a call to bytes.IndexByte.
		end := -1
		lim := min(len(b), i+16)
		for k := i; k < lim; k++ {
			if b[k] == '"' {
				end = k
				break
			}
		}
		if end < 0 {
			j := bytes.IndexByte(b[lim:], '"')
			if j < 0 {
				return 0, ErrNotJSON
			}
			end = lim + j
		}
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

// hasBackslash reports whether b holds a backslash. Keys and short values
// are looked at with two overlapping word loads, which costs less than a loop
// or a call.
func hasBackslash(b []byte) bool {
	const bs4, bs8 = 0x5C5C5C5C, 0x5C5C5C5C5C5C5C5C
	switch n := len(b); {
	case n > 16:
		return bytes.IndexByte(b, '\\') >= 0
	case n >= 8:
		x := binary.LittleEndian.Uint64(b) ^ bs8
		y := binary.LittleEndian.Uint64(b[n-8:]) ^ bs8
		return ((x-swarOnes)&^x|(y-swarOnes)&^y)&swarHighs != 0
	case n >= 4:
		x := binary.LittleEndian.Uint32(b) ^ bs4
		y := binary.LittleEndian.Uint32(b[n-4:]) ^ bs4
		return ((x-0x01010101)&^x|(y-0x01010101)&^y)&0x80808080 != 0
	}
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// KeyIs reports whether the raw key (quotes included) names name. It
// compares bytes directly when the key has no escapes, which is the usual case.
func KeyIs(rawKey []byte, name string) bool {
	if len(rawKey) < 2 {
		return false
	}
	inner := rawKey[1 : len(rawKey)-1]
	// Looking at the whole key, quotes and all, gives longer loads; the
	// quotes are no backslashes.
	whole := rawKey
	if rawKey[0] == '\\' || rawKey[len(rawKey)-1] == '\\' {
		whole = inner
	}
	if !hasBackslash(whole) {
		return string(inner) == name
	}
	s, ok := StringValue(rawKey)
	return ok && s == name
}

// Key returns the name of a raw key (quotes included): its inner bytes when
// it has no escapes (no allocation), else its decoded text. Callers switch
// on string(Key(k)), which Go compiles without a conversion.
func Key(rawKey []byte) []byte {
	if len(rawKey) < 2 {
		return nil
	}
	inner := rawKey[1 : len(rawKey)-1]
	if !hasBackslash(inner) {
		return inner
	}
	s, _ := StringValue(rawKey)
	return []byte(s)
}

// StringValue decodes the raw JSON string v. ok is false when v is not a
// string.
func StringValue(v []byte) (string, bool) {
	v = trimLeft(v)
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if !hasBackslash(inner) && utf8.Valid(inner) {
		return internString(inner), true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// internString returns string(b), without allocating for the values MCP
// messages repeat (result types, content block types, request methods,
// protocol revisions).
func internString(b []byte) string {
	switch len(b) {
	case 3:
		if string(b) == "url" {
			return "url"
		}
	case 4:
		switch {
		case string(b) == "ping":
			return "ping"
		case string(b) == "text":
			return "text"
		case string(b) == "task":
			return "task"
		case string(b) == "form":
			return "form"
		}
	case 5:
		switch {
		case string(b) == "image":
			return "image"
		case string(b) == "audio":
			return "audio"
		}
	case 8:
		switch {
		case string(b) == "complete":
			return "complete"
		case string(b) == "resource":
			return "resource"
		}
	case 10:
		switch {
		case string(b) == "tools/call":
			return "tools/call"
		case string(b) == "tools/list":
			return "tools/list"
		case string(b) == "initialize":
			return "initialize"
		case string(b) == Protocol2026:
			return Protocol2026
		case string(b) == Protocol2025:
			return Protocol2025
		case string(b) == "roots/list":
			return "roots/list"
		}
	case 13:
		if string(b) == "resource_link" {
			return "resource_link"
		}
	case 14:
		if string(b) == "input_required" {
			return "input_required"
		}
	case 18:
		if string(b) == "elicitation/create" {
			return "elicitation/create"
		}
	case 22:
		if string(b) == "sampling/createMessage" {
			return "sampling/createMessage"
		}
	}
	return string(b)
}

// StringIs reports whether the raw JSON value v is the string want.
func StringIs(v []byte, want string) bool {
	v = trimLeft(v)
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	inner := v[1 : len(v)-1]
	if !hasBackslash(inner) {
		return string(inner) == want
	}
	s, ok := StringValue(v)
	return ok && s == want
}

// Field returns the raw value of the member of obj named name. When a name
// repeats, the last member wins, as in encoding/json and JSON.parse, so every
// reader of a message agrees on what it says.
func Field(obj []byte, name string) (value []byte, found bool) {
	_ = EachField(obj, func(k, v []byte) bool {
		if KeyIs(k, name) {
			value, found = v, true
		}
		return true
	})
	return value, found
}

// The Scan functions validate one JSON token or value in place, for parsers
// that walk a document once instead of validating it first and walking it
// after. Each returns the index just past what it read, or -1 when the bytes
// are not valid JSON.

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(data []byte, i int) int { return skipSpace(data, i) }

// ScanString validates the string that starts at data[i] == '"'. escaped
// reports a backslash inside it (its bytes then differ from its value).
func ScanString(data []byte, i int) (end int, escaped bool) {
	return scanString(data, i)
}

// ScanValue validates the value (of any type) that starts at data[i],
// exactly as json.Valid would, and returns the index just past it.
func ScanValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return validString(data, i)
	case 't':
		return scanLiteral(data, i, "true")
	case 'f':
		return scanLiteral(data, i, "false")
	case 'n':
		return scanLiteral(data, i, "null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return validNumber(data, i)
	case '{', '[':
		// Find the end without validating, then validate that span: a valid
		// value is self-delimiting, so the span is exactly the value.
		end, err := skipValue(data, i)
		if err != nil || !Valid(data[i:end]) {
			return -1
		}
		return end
	}
	return -1
}

func scanLiteral(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// ScanHead reads the top-level members at the start of a JSON-RPC
// message's data that may be cut anywhere (the head of an event read
// through, SkippedEventError.Head): whether a "method" and a "result" or
// "error" member show before the cut, and the raw "id" when its whole
// value does (nil otherwise). Members after one whose value runs past the
// cut are not seen: a result written first (as the TypeScript SDK writes
// it) hides the id behind it.
func ScanHead(head []byte) (id []byte, method, response bool) {
	i := skipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return nil, false, false
	}
	i = skipSpace(head, i+1)
	for i < len(head) && head[i] == '"' {
		end, _ := ScanString(head, i)
		if end < 0 {
			break
		}
		key := Key(head[i:end])
		i = skipSpace(head, end)
		if i >= len(head) || head[i] != ':' {
			break
		}
		i = skipSpace(head, i+1)
		switch string(key) {
		case "method":
			method = true
		case "result", "error":
			response = true
		}
		vend := ScanValue(head, i)
		if vend < 0 {
			break
		}
		if string(key) == "id" {
			id = head[i:vend]
		}
		i = skipSpace(head, vend)
		if i >= len(head) || head[i] != ',' {
			break
		}
		i = skipSpace(head, i+1)
	}
	return id, method, response
}
