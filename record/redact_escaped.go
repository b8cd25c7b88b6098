package record

import (
	"strings"
	"unicode/utf8"
)

// Escaped names and separators in text (redact13): a credential written
// as name, separator and value where the name or the separator is escaped
// in a way the other text patterns do not read: a "\u" or "\x" escape in
// text that is no JSON string ("p\u0061ssword: v", "api\u005fkey=v",
// "p\x61ssword=v"), a percent-escaped separator ("password%3Dv" inside a
// query value, "password%3A+v", "password%20%3D%20v"), and HTML character
// references ("p&#97;ssword=v", "&quot;password&quot;:&quot;v&quot;", an
// HTML error page of a gateway). maskEscapedText decodes the text (twice
// over, as decodeName does), keeping for each decoded byte the place of
// what it was decoded from, finds name, separator and value in the decoded
// text, and masks the value's place in the text as written. It masks only
// where the name or the separator holds an escape: the other patterns see
// the rest.

// escUnit is the place in the text as written of one byte of the decoded
// text: the escape (or byte) it was decoded from.
type escUnit struct{ start, end int32 }

// htmlEntities are the named character references decodeEscapes decodes:
// the quotes, separators and the "&" of an escape escaped twice.
var htmlEntities = []struct{ name, val string }{
	{"&quot;", `"`}, {"&apos;", "'"}, {"&amp;", "&"}, {"&colon;", ":"}, {"&equals;", "="},
	{"&lt;", "<"}, {"&gt;", ">"}, {"&sol;", "/"}, {"&nbsp;", " "},
}

// decodeEscapes decodes one level of escapes of s: "%XX" ("+" as a blank
// when plus is set), "\uXXXX", "\xXX", "\"", "\\", "\/", "&#N;", "&#xH;"
// and htmlEntities. units[i] is the place in s of the decoded byte i (the
// bytes of a rune decoded from one escape share its place). It reports
// whether any escape was decoded.
func decodeEscapes(s string, plus bool) (d []byte, units []escUnit, any bool) {
	d = make([]byte, 0, len(s))
	units = make([]escUnit, 0, len(s))
	put := func(start, end int, b ...byte) {
		for _, c := range b {
			d = append(d, c)
			units = append(units, escUnit{int32(start), int32(end)})
		}
	}
	var rb [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			put(i, i+3, unhex(s[i+1])<<4|unhex(s[i+2]))
			i, any = i+3, true
			continue
		case c == '+' && plus:
			put(i, i+1, ' ')
			i, any = i+1, true
			continue
		case c == '\\' && i+5 < len(s) && s[i+1] == 'u' && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]):
			r := rune(unhex(s[i+2]))<<12 | rune(unhex(s[i+3]))<<8 | rune(unhex(s[i+4]))<<4 | rune(unhex(s[i+5]))
			n := utf8.EncodeRune(rb[:], r)
			put(i, i+6, rb[:n]...)
			i, any = i+6, true
			continue
		case c == '\\' && i+3 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) && isHex(s[i+3]):
			put(i, i+4, unhex(s[i+2])<<4|unhex(s[i+3]))
			i, any = i+4, true
			continue
		case c == '\\' && i+1 < len(s) && strings.IndexByte(`"\/`, s[i+1]) >= 0:
			put(i, i+2, s[i+1])
			i, any = i+2, true
			continue
		case c == '&' && i+3 < len(s) && s[i+1] == '#':
			if r, n := charRef(s[i:]); n > 0 {
				k := utf8.EncodeRune(rb[:], r)
				put(i, i+n, rb[:k]...)
				i, any = i+n, true
				continue
			}
		case c == '&':
			found := false
			for _, e := range htmlEntities {
				if hasFoldPrefix(s[i:], e.name) {
					put(i, i+len(e.name), e.val[0])
					i, any, found = i+len(e.name), true, true
					break
				}
			}
			if found {
				continue
			}
		}
		put(i, i+1, c)
		i++
	}
	return d, units, any
}

// charRef decodes a numeric character reference at the start of s
// ("&#97;", "&#x61;", "&#0061;"; the ";" may be missing, as browsers
// read it): the rune and the reference's length, or 0.
func charRef(s string) (rune, int) {
	i, base := 2, rune(10)
	if i < len(s) && (s[i] == 'x' || s[i] == 'X') {
		i, base = 3, 16
	}
	start := i
	for i < len(s) && s[i] == '0' {
		// Leading zeros, any number of them, as browsers read them
		// ("&#000000097;"): not counted in the digits' bound.
		i++
	}
	digits := i
	var r rune
	for i < len(s) && i-digits < 8 {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			r = r*base + rune(c-'0')
		case base == 16 && isHex(c):
			r = r*base + rune(unhex(c))
		default:
			goto done
		}
		i++
	}
done:
	if i == start || r > utf8.MaxRune {
		return 0, 0
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	return r, i
}

// escapedPairRE finds name, separator and the blanks around it in the
// decoded text; the name may stand in quotes (HTML-escaped JSON). It has
// no boundary before the name: the leftmost match starts where a run of
// name bytes does (or at its quote), and a match does not consume the
// byte before the next name ("log: password=…").
var escapedPairRE = lazyRegexp(`(["']?)([A-Za-z0-9_.\-\[\]]{1,200})(["']?)([ \t]*[:=][ \t]*)`)

// escapedValueEnd returns the length of the value at the start of v
// (decoded text): a quoted string to its closing quote (or the end), an
// object or array to its end (redact_nested.go), or a run of bytes that
// are no blank, quote or delimiter; and whether it ended (false: it ran
// to the end of the text where a quote or bracket was not closed).
func escapedValueEnd(v string) (n int, closed bool) {
	if v == "" {
		return 0, true
	}
	switch v[0] {
	case '"', '\'':
		for i := 1; i < len(v); i++ {
			if v[i] == '\\' {
				i++
				continue
			}
			if v[i] == v[0] {
				return i + 1, true
			}
		}
		return len(v), false
	case '{', '[':
		if startsNested(v) {
			return nestedValue(v, `"'`)
		}
	}
	i := 0
	for i < len(v) && strings.IndexByte(" \t\r\n\"'&;,})]<>", v[i]) < 0 {
		i++
	}
	return i, true
}

// hasTextEscape reports whether s holds an escape decodeEscapes decodes
// other than "\"", "\\", "\/", "+" and a bare "&amp;" (which the other
// patterns read, or which hide nothing): "%XX", "\uXXXX", "\xXX", a
// numeric character reference or a named one of htmlEntities, also after
// "&amp;" (escaped twice). It allocates nothing, so that a text with "&"
// only as a query's separator costs one scan.
func hasTextEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				return true
			}
		case '\\':
			if i+5 < len(s) && s[i+1] == 'u' && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]) ||
				i+3 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) && isHex(s[i+3]) {
				return true
			}
		case '&':
			j := i + 1
			for hasFoldPrefix(s[j:], "amp;") {
				j += 4
			}
			if j < len(s) && s[j] == '#' {
				return true
			}
			for _, e := range htmlEntities {
				if e.name != "&amp;" && hasFoldPrefix(s[j:], e.name[1:]) {
					return true
				}
			}
		}
	}
	return false
}

// maskEscapedText masks the value after every credential name whose name
// or separator is escaped in s (see the comment at the top of this file).
func (r *Redactor) maskEscapedText(s string, ctx nameContext) string {
	if !hasTextEscape(s) {
		return s
	}
	plus := strings.IndexByte(s, '%') >= 0
	d1, u1, _ := decodeEscapes(s, plus)
	dec, units := d1, u1
	if d2, u2, any2 := decodeEscapes(string(d1), plus); any2 {
		// Escaped twice ("%253D", "&amp;#97;"): compose the places.
		for i := range u2 {
			u2[i] = escUnit{u1[u2[i].start].start, u1[u2[i].end-1].end}
		}
		dec, units = d2, u2
	}
	text := string(dec)
	if !hasAny(strings.ToLower(text), nameHints) && !(ctx == ctxForm && hasAny(strings.ToLower(text), formHints)) {
		return s
	}
	idx := escapedPairRE.get().FindAllStringSubmatchIndex(text, -1)
	var b strings.Builder
	last := 0 // in s
	for _, m := range idx {
		ns, vs := m[2], m[9] // name (with its quote) start, value start
		if int(units[ns].start) < last || !sensitiveName(text[m[4]:m[5]], ctx) {
			continue
		}
		// Only where the name or the separator was escaped.
		if int(units[vs-1].end-units[ns].start) == vs-ns {
			continue
		}
		n, closed := escapedValueEnd(text[vs:])
		if m[3] == m[2] && strings.IndexByte(text[m[8]:m[9]], ':') >= 0 && n > 0 && closed &&
			strings.IndexByte(`"'{[`, text[vs]) < 0 {
			// A field line ("p\u0061ssword: two words"): as maskFieldLines
			// reads one, the value runs to the end of its line or a quote.
			n = vs + n
			for n < len(text) && strings.IndexByte("\r\n\"'", text[n]) < 0 {
				n++
			}
			for n > vs && (text[n-1] == ' ' || text[n-1] == '\t') {
				n--
			}
			n -= vs
		}
		v := text[vs : vs+n]
		if n == 0 || IsRedacted(strings.Trim(v, `"'`)) || strings.HasPrefix(strings.Trim(v, `"'`), "[redacted") {
			continue
		}
		if j := strings.Index(v, "[redacted"); j > 0 && closed && v[0] != '"' && v[0] != '\'' {
			// An earlier pass masked the tail of this value only: it read
			// the escaped name, separator and the value's head as a name
			// ("password%3Dv:0", a number under the name "password%3Dv").
			// The whole value goes, the earlier mask with it.
			if k := strings.IndexByte(text[vs+j:], ']'); k >= 0 {
				n = j + k + 1
			}
			v = text[vs : vs+n]
		}
		name := text[m[4]:m[5]]
		switch {
		case v == "true" || v == "false" || v == "null":
			continue
		case m[3] > m[2] && countValue(name, v, text[:ns], text[vs+n:]):
			continue // a count in escaped JSON ({"pass": 5, "fail": 0}), as countValue keeps it
		case onlyDigits(v) && countName(name) == countAlways:
			continue
		}
		os, oe := int(units[vs].start), int(units[vs+n-1].end)
		if strings.HasPrefix(s[os:oe], "[redacted") {
			continue
		}
		b.WriteString(s[last:os])
		switch {
		case !closed:
			b.WriteString(Redacted)
		case v[0] == '"' || v[0] == '\'':
			// Keep the quotes as written (an escaped quote stays escaped).
			qs, qe := int(units[vs].end), int(units[vs+n-1].start)
			b.WriteString(s[os:qs])
			b.WriteString(r.Mask(v[1 : len(v)-1]))
			b.WriteString(s[qe:oe])
		default:
			b.WriteString(r.Mask(v))
		}
		last = oe
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
