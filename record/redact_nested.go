package record

import "strings"

// The bounds of nestedValueEnd's scan: past either, a value under a
// credential name is taken to the end of its text (fail closed).
const (
	maxNestDepth = 64
	maxNestLen   = 1 << 20
)

// nestedValueEnd returns the length of the object or array at the start
// of s (s[0] is '{' or '['), found by counting brackets of both kinds,
// skipping strings in any quote byte of quotes (a backslash escapes the
// byte after it, in a string and out of one), so that a value nested to
// any depth under a credential name in text ("password={\"a\":{\"b\":…}}",
// "secret: {x: {y: …}}") is masked whole, not to its inner "{". closed
// is false when the text ends first, or the scan passes maxNestDepth
// levels or maxNestLen bytes: the value then runs to the end of s, since
// what follows may still be part of it. With quotes escQuote the text is
// escaped JSON (inside a JSON string), whose strings are quoted with \"
// and skipped as well.
func nestedValueEnd(s, quotes string) (n int, closed bool) {
	depth := 0
	var inString byte
	for i := 0; i < len(s); i++ {
		if i >= maxNestLen {
			return len(s), false
		}
		c := s[i]
		if c == '\\' && quotes == escQuote && i+1 < len(s) {
			// Escaped JSON: \" is the inner text's quote, \\ its
			// backslash, which escapes the inner byte after it (\\\"
			// a quote inside an inner string, \\\\ a backslash).
			switch s[i+1] {
			case '"':
				if inString != 0 {
					inString = 0
				} else {
					inString = '"'
				}
				i++
				continue
			case '\\':
				i += 2
				if i+1 < len(s) && s[i] == '\\' {
					i++
				}
				continue
			}
		}
		if c == '\\' {
			i++
			continue
		}
		if inString != 0 {
			if c == inString {
				inString = 0
			}
			continue
		}
		switch c {
		case '{', '[':
			depth++
			if depth > maxNestDepth {
				return len(s), false
			}
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		default:
			if quotes != "" && quotes != escQuote && strings.IndexByte(quotes, c) >= 0 {
				inString = c
			}
		}
	}
	return len(s), false
}

// nestedValue is nestedValueEnd for a value in text: a closed value that
// more of a bare value follows ("[ ]abc") runs through it, up to a blank,
// a quote or a delimiter, so that its mask is not a mask followed by
// more (which maskedValueAt would mask again).
func nestedValue(s, quotes string) (n int, closed bool) {
	n, closed = nestedValueEnd(s, quotes)
	if closed {
		for n < len(s) && !strings.ContainsRune(" \t\r\n\"',;&#)}]<>", rune(s[n])) {
			n++
		}
	}
	return n, closed
}

// startsNested reports whether a value at the start of s is an object or
// an array (not a mask, which also starts with "[").
func startsNested(s string) bool {
	if s == "" || s[0] != '{' && s[0] != '[' {
		return false
	}
	n, _ := maskedValueAt(s)
	return n == 0
}

// escQuote is nestedValueEnd's quotes for escaped JSON text, whose
// strings are quoted with \".
const escQuote = `\"`

// nestQuotes are the quotes of the strings a value matched by valueRE
// may hold, for nestedValueEnd; ok is false for a value pattern whose
// values are never a structure (a flag's one word).
func nestQuotes(valueRE *lazyRE) (quotes string, ok bool) {
	switch valueRE {
	case jsonMemberValueRE, jsonValueRE:
		return `"`, true
	case pyValueRE, formValueRE, assignValueRE:
		return `"'`, true
	case jsonEscValueRE:
		return escQuote, true
	}
	return "", false
}

// maskNested masks a structure v found by nestedValueEnd: whole, or, when
// it did not close (cut, or past the scan's bounds), as Redacted, since
// its length would mislead.
func (r *Redactor) maskNested(v string, closed bool) string {
	if !closed {
		return Redacted
	}
	return r.Mask(v)
}
