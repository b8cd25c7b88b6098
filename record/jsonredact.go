package record

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpdiag/mcpdiag/wire"
)

// redactJSON copies the JSON document b (json.Valid has accepted it),
// replacing the value of every member with a credential name (at any
// depth) by its mask, except null, true and false, and scrubbing every
// string as text. Bytes that need no change
// (white space, number spelling, escapes, key order) are kept exactly. If
// the walk fails it falls back to scrubbing b as text.
func (r *Redactor) redactJSON(b []byte) []byte {
	w := jsonRedactor{src: b, red: r, out: make([]byte, 0, len(b))}
	if !w.value() {
		return []byte(r.Scrub(string(b)))
	}
	w.out = append(w.out, b[w.i:]...) // trailing white space
	return w.out
}

// jsonRedactor walks valid JSON. Every method reports false on input it
// cannot follow, which valid JSON never produces.
type jsonRedactor struct {
	src []byte
	i   int
	out []byte
	red *Redactor
	// list says that the next value is a member's under a name that
	// says its array lists kinds of things (listMember): no pair array.
	list bool
}

func (w *jsonRedactor) space() {
	start := w.i
	for w.i < len(w.src) {
		switch w.src[w.i] {
		case ' ', '\t', '\r', '\n':
			w.i++
			continue
		}
		break
	}
	w.out = append(w.out, w.src[start:w.i]...)
}

func (w *jsonRedactor) value() bool {
	list := w.list
	w.list = false
	w.space()
	if w.i >= len(w.src) {
		return false
	}
	switch w.src[w.i] {
	case '{':
		return w.object()
	case '[':
		return w.array(list)
	case '"':
		_, ok := w.str()
		return ok
	}
	start := w.i
	for w.i < len(w.src) {
		switch w.src[w.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			w.out = append(w.out, w.src[start:w.i]...)
			return w.i > start
		}
		w.i++
	}
	w.out = append(w.out, w.src[start:w.i]...)
	return w.i > start
}

// str copies the string at w.i, scrubbed, and returns its decoded value.
func (w *jsonRedactor) str() (string, bool) {
	start := w.i
	w.i++
	for w.i < len(w.src) {
		switch w.src[w.i] {
		case '\\':
			w.i += 2
			continue
		case '"':
			w.i++
			raw := w.src[start:w.i]
			var s string
			if bytes.IndexByte(raw, '\\') < 0 {
				s = string(raw[1 : len(raw)-1])
			} else if json.Unmarshal(raw, &s) != nil {
				return "", false
			}
			if clean := w.red.Scrub(s); clean != s {
				var b bytes.Buffer
				writeJSONString(&b, clean)
				w.out = append(w.out, b.Bytes()...)
			} else {
				w.out = append(w.out, raw...)
			}
			return s, true
		}
		w.i++
	}
	return "", false
}

func (w *jsonRedactor) object() bool {
	w.out = append(w.out, '{')
	w.i++
	// A name/value pair ({"name": "API_KEY", "value": "…"}: a HAR
	// header, a Kubernetes env entry, a form field, an SSM parameter):
	// its "value" is a credential when its "name" (or "key") is a
	// credential name, whichever of the two comes first. The value's
	// place in out is kept until the object ends.
	pairSecret := false
	valStart, valEnd := -1, -1
	var valRaw []byte
	// A number under "pass" is a count only beside a count of another
	// kind ({"pass": 5, "fail": 0}; countBeside): its place in out is
	// kept until the object ends, and it is masked then when no such
	// member was seen.
	// More than one such member ({"pass": …, "Pass": …}, a duplicate
	// name) keeps the later ones in morePass, each masked alike.
	sibling := false
	passStart, passEnd := -1, -1
	var passRaw []byte
	var morePass []maskSpan
	end := func() {
		// The later range first, so that the earlier ones' offsets hold.
		ranges := [2]maskSpan{}
		n := 0
		if pairSecret && valStart >= 0 {
			ranges[n] = maskSpan{valStart, valEnd, valRaw}
			n++
		}
		if !sibling && passStart >= 0 {
			ranges[n] = maskSpan{passStart, passEnd, passRaw}
			n++
		}
		if !sibling && len(morePass) > 0 {
			morePass = append(morePass, ranges[:n]...)
			slices.SortFunc(morePass, func(a, b maskSpan) int { return b.start - a.start })
			n = 0
		}
		if n == 2 && ranges[0].start < ranges[1].start {
			ranges[0], ranges[1] = ranges[1], ranges[0]
		}
		for _, rg := range ranges[:n] {
			w.maskRange(rg.start, rg.end, rg.raw)
		}
		if !sibling {
			for _, rg := range morePass {
				w.maskRange(rg.start, rg.end, rg.raw)
			}
		}
		w.out = append(w.out, '}')
		w.i++
	}
	for {
		w.space()
		if w.i >= len(w.src) {
			return false
		}
		if w.src[w.i] == '}' {
			end()
			return true
		}
		if w.src[w.i] != '"' {
			return false
		}
		key, ok := w.str()
		if !ok {
			return false
		}
		w.space()
		if w.i >= len(w.src) || w.src[w.i] != ':' {
			return false
		}
		w.out = append(w.out, ':')
		w.i++
		pair := pairMember(key)
		if pair == pairName {
			w.space()
			if w.i < len(w.src) && w.src[w.i] == '"' && pairNameSensitive(w.src[w.i:]) {
				pairSecret = true
			}
		}
		if !sibling && isCountSibling(key) {
			sibling = true
		}
		sens := sensitiveName(key, ctxJSON)
		count := countNone
		if sens && w.nextIsBare() {
			count = countName(key)
		}
		if sens && count == countBeside {
			w.space()
			mark, start := len(w.out), w.i
			if !w.value() {
				return false
			}
			if passStart >= 0 {
				morePass = append(morePass, maskSpan{mark, len(w.out), w.src[start:w.i]})
			} else {
				passStart, passEnd, passRaw = mark, len(w.out), w.src[start:w.i]
			}
		} else if sens && count == countNone {
			w.space()
			mark, start := len(w.out), w.i
			if !w.value() {
				return false
			}
			raw := w.src[start:w.i]
			switch string(raw) {
			case "null", "true", "false":
				// Not a credential: keep it (a diagnosis may need it).
			default:
				// A string is masked by its decoded value, anything else
				// by its JSON text.
				v := string(raw)
				if raw[0] == '"' {
					_ = json.Unmarshal(raw, &v)
				}
				var b bytes.Buffer
				writeJSONString(&b, w.red.Mask(v))
				w.out = append(w.out[:mark], b.Bytes()...)
			}
		} else if pair == pairValue {
			w.space()
			mark, start := len(w.out), w.i
			if !w.value() {
				return false
			}
			valStart, valEnd, valRaw = mark, len(w.out), w.src[start:w.i]
		} else {
			if i := wire.SkipSpace(w.src, w.i); i < len(w.src) && w.src[i] == '[' {
				w.list = listMember(key)
			}
			if !w.value() {
				return false
			}
		}
		w.space()
		if w.i >= len(w.src) {
			return false
		}
		switch w.src[w.i] {
		case ',':
			w.out = append(w.out, ',')
			w.i++
		case '}':
			end()
			return true
		default:
			return false
		}
	}
}

// nextIsBare reports whether the value after white space at w.i is a
// scalar that is no string (a number, true, false, null): what a count
// under a count name is (countName). A string, an object or an array is not: it may
// hold the password ({"pass": ["…"]}).
func (w *jsonRedactor) nextIsBare() bool {
	i := wire.SkipSpace(w.src, w.i)
	return i < len(w.src) && w.src[i] != '"' && w.src[i] != '{' && w.src[i] != '['
}

// The members of a name/value pair (see object).
const (
	pairNone = iota
	pairName
	pairValue
)

// pairMember says whether a member name is the name or the value of a
// name/value pair: "name" or "key", "value", in any case.
func pairMember(key string) int {
	switch len(key) {
	case 3, 4:
		if strings.EqualFold(key, "key") || strings.EqualFold(key, "name") {
			return pairName
		}
	case 5:
		if strings.EqualFold(key, "value") {
			return pairValue
		}
	}
	return pairNone
}

// pairNameSensitive reports whether the JSON string at the start of b is
// a credential name. A name without escapes is judged without a copy.
func pairNameSensitive(b []byte) bool {
	escaped := false
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			if !escaped {
				return sensitiveName(string(b[1:i]), ctxJSON)
			}
			var s string
			return json.Unmarshal(b[:i+1], &s) == nil && sensitiveName(s, ctxJSON)
		}
	}
	return false
}

// maskRange replaces out[start:end], a value copied from raw, with the
// mask of raw, as a member with a credential name is masked (null, true
// and false kept).
// maskSpan is a value's place in jsonRedactor.out, to be masked when
// its object ends (maskRange), and its source bytes.
type maskSpan struct {
	start, end int
	raw        []byte
}

func (w *jsonRedactor) maskRange(start, end int, raw []byte) {
	switch string(raw) {
	case "null", "true", "false":
		return
	}
	v := string(raw)
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &v)
	}
	var b bytes.Buffer
	writeJSONString(&b, w.red.Mask(v))
	tail := append(b.Bytes(), w.out[end:]...)
	w.out = append(w.out[:start], tail...)
}

// array copies the array at w.i. list says that it is the value of a
// member whose name says it lists kinds of things (listMember).
func (w *jsonRedactor) array(list bool) bool {
	w.out = append(w.out, '[')
	w.i++
	// A pair array (["X-Api-Key", "v"], as header lists are written):
	// its second string is a credential when its first is a credential
	// name and the array holds nothing else, unless the array is a list
	// member's value and the second string a registered name too
	// (grant_types: ["password", "refresh_token"]; registeredName).
	n, pairSecret := 0, false
	valStart, valEnd := -1, -1
	var valRaw []byte
	var valName string
	// An argument list (a command's args: ["-y", "server", "--api-key",
	// "v"]): the string after a credential's flag is its value, masked
	// unless it is a flag itself (mask22), as "--api-key v" in text.
	flag := false
	for {
		w.space()
		if w.i >= len(w.src) {
			return false
		}
		if w.src[w.i] == ']' {
			w.out = append(w.out, ']')
			w.i++
			return true
		}
		isStr := w.src[w.i] == '"'
		switch {
		case flag && w.src[w.i] != '{' && w.src[w.i] != '[' && !(isStr && w.i+1 < len(w.src) && w.src[w.i+1] == '-'):
			mark, start := len(w.out), w.i
			if !w.value() {
				return false
			}
			w.maskRange(mark, len(w.out), w.src[start:w.i])
			flag = false
		case n == 0 && isStr:
			name, ok := w.str()
			if !ok {
				return false
			}
			pairSecret = sensitiveName(name, ctxJSON)
			flag = credentialFlag(name)
		case n == 1 && pairSecret && isStr:
			mark, start := len(w.out), w.i
			v, ok := w.str()
			if !ok {
				return false
			}
			valStart, valEnd, valRaw, valName = mark, len(w.out), w.src[start:w.i], v
			flag = credentialFlag(v)
		case isStr:
			v, ok := w.str()
			if !ok {
				return false
			}
			flag = credentialFlag(v)
		default:
			if !w.value() {
				return false
			}
			flag = false
		}
		n++
		w.space()
		if w.i >= len(w.src) {
			return false
		}
		switch w.src[w.i] {
		case ',':
			w.out = append(w.out, ',')
			w.i++
		case ']':
			if n == 2 && valStart >= 0 && !(list && registeredName(valName)) {
				w.maskRange(valStart, valEnd, valRaw)
			}
			w.out = append(w.out, ']')
			w.i++
			return true
		default:
			return false
		}
	}
}

// RedactJSON returns a redacted copy of a JSON document (see Redactor.Body),
// or the document scrubbed as text when it is not valid JSON.
func (r *Redactor) RedactJSON(b []byte) []byte {
	if !json.Valid(b) {
		return []byte(r.Scrub(string(b)))
	}
	return r.redactJSON(b)
}

// credentialFlag reports whether s is a command-line flag whose name is a
// credential name ("--api-key", "--password", "--client_secret"): the
// argument after it is its value.
func credentialFlag(s string) bool {
	if len(s) < 3 || s[0] != '-' || s[1] != '-' || !isLetter(s[2]) {
		return false
	}
	for i := 3; i < len(s); i++ {
		if !isFieldNameByte(s[i]) {
			return false
		}
	}
	return sensitiveName(s[2:], ctxJSON)
}
