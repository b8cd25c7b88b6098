package record

import "strings"

// unfinishedValue returns the quoted value v found in text (rest is the
// text after it) cut where it really ends when its closing quote is no
// closing quote but the opening quote of another credential: an
// unfinished first value ("password: \"Apw… then token: \"Btok…\"")
// would otherwise run to the second value's opening quote, and the mask
// of the first would leave the second in the clear. The quote opens
// another credential when the value ends in a credential name and its
// separator ("… token: ", "… api_key=") and a value follows the quote,
// or when the quote is followed by a credential name, the same quote and
// a colon (JSON text: "… then \"token\": …"). The returned value has no
// closing quote, so maskValue masks it as a cut value (Redacted) and the
// scan goes on at the second name. Any other v is returned unchanged.
func unfinishedValue(v, rest string) string {
	var q string
	switch {
	case v == "":
		return v
	case v[0] == '\'':
		q = "'"
	default:
		lead := len(v) - len(strings.TrimLeft(v, `\"`))
		if lead == 0 || v[lead-1] != '"' {
			return v
		}
		q = v[:lead]
	}
	if len(v) < 2*len(q) || !strings.HasSuffix(v, q) {
		return v // no closing quote: already masked as cut
	}
	inner := v[len(q) : len(v)-len(q)]
	if n := trailingCredentialName(inner); n >= 0 && rest != "" && !strings.ContainsRune(" \t\r\n,;})]", rune(rest[0])) {
		return v[:len(q)+n]
	}
	if leadingQuotedName(rest, q) {
		return v[:len(v)-len(q)]
	}
	return v
}

// trailingCredentialName returns where the blanks before a credential
// name and its separator (":" or "=", blanks around it) that end inner
// start, or -1 when inner ends otherwise.
func trailingCredentialName(inner string) int {
	i := len(inner)
	for i > 0 && (inner[i-1] == ' ' || inner[i-1] == '\t') {
		i--
	}
	if i == 0 || inner[i-1] != ':' && inner[i-1] != '=' {
		return -1
	}
	i--
	for i > 0 && (inner[i-1] == ' ' || inner[i-1] == '\t') {
		i--
	}
	j := i
	for i > 0 && (isFieldNameByte(inner[i-1]) || inner[i-1] == '.') {
		i--
	}
	if i == j || j-i > 200 || !isLetter(inner[i]) || !sensitiveName(inner[i:j], ctxJSON) {
		return -1
	}
	for i > 0 && (inner[i-1] == ' ' || inner[i-1] == '\t') {
		i--
	}
	return i
}

// leadingQuotedName reports whether rest starts with a credential name,
// the quote q and a colon (blanks before it allowed): the quote before
// rest opened that name.
func leadingQuotedName(rest, q string) bool {
	n := strings.Index(rest, q)
	if n < 1 || n > 200 || strings.ContainsAny(rest[:n], " \t\r\n\"'\\") {
		return false
	}
	after := strings.TrimLeft(rest[n+len(q):], " \t")
	return after != "" && after[0] == ':' && sensitiveName(rest[:n], ctxJSON)
}
