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

// htmlEntities are the named character references decodeEscapes decodes,
// by name folded to lower case: every one of HTML's that stands for a
// printable ASCII byte, a tab or a line end (an escaper of HTML5's table,
// PHP's htmlentities with ENT_HTML5, writes "api&lowbar;key&equals;" and
// a value's "." as "&period;"), and "&nbsp;" as a blank. Names are
// matched in any case ("&QUOT;" is HTML's too; a name HTML spells in one
// case only is decoded in all, which can only mask more).
var htmlEntities = map[string]byte{
	"tab": '\t', "newline": '\n', "nbsp": ' ', "nonbreakingspace": ' ',
	"excl": '!', "quot": '"', "num": '#', "dollar": '$', "percnt": '%', "amp": '&', "apos": '\'',
	"lpar": '(', "rpar": ')', "ast": '*', "midast": '*', "plus": '+', "comma": ',', "period": '.',
	"sol": '/', "colon": ':', "semi": ';', "lt": '<', "equals": '=', "gt": '>', "quest": '?',
	"commat": '@', "lsqb": '[', "lbrack": '[', "bsol": '\\', "rsqb": ']', "rbrack": ']', "hat": '^',
	"lowbar": '_', "underbar": '_', "grave": '`', "diacriticalgrave": '`', "lcub": '{', "lbrace": '{',
	"verbar": '|', "vert": '|', "verticalline": '|', "rcub": '}', "rbrace": '}',
}

// maxEntityName is the length of the longest name of htmlEntities.
const maxEntityName = len("diacriticalgrave")

// entityAt decodes the named character reference at the start of s
// ("&period;", its ";" required): the byte it stands for and its length,
// or 0. It allocates nothing.
func entityAt(s string) (byte, int) {
	var buf [maxEntityName]byte
	n := 0
	for n < len(s)-1 && n < len(buf) && isLetter(s[1+n]) {
		buf[n] = lowerASCII(s[1+n])
		n++
	}
	if n == 0 || 1+n >= len(s) || s[1+n] != ';' {
		return 0, 0
	}
	c, ok := htmlEntities[string(buf[:n])]
	if !ok {
		return 0, 0
	}
	return c, n + 2
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
			if b, n := entityAt(s[i:]); n > 0 {
				put(i, i+n, b)
				i, any = i+n, true
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

// escapedValueEnd returns the length of the value at text[vs:] (decoded
// text, units its places in s as written): a quoted string to its closing
// quote (or the end), an object or array to its end (redact_nested.go),
// or a bare run; and whether it ended (false: it ran to the end of the
// text where a quote or bracket was not closed). A mask in a bare run is
// part of it.
//
// A bare run ends where the plain pattern of its shape ends one, so that
// escaping a name or a separator never shows more of its value than
// writing it plainly (FuzzEscapedPairMetamorphic): after a name in quotes
// and ":" (JSON or a Python repr written with escapes, nameQuote its
// quote) at a blank, a line end, ",", "}", "]" or, after a name in
// double quotes, a "\"", as jsonMemberValueRE and pyValueRE do; after any other name and separator
// at a blank, a line end, "\"", "&", ";" or "#", as formValueRE does
// ("p\u0061ssword=ab,cd'ef<gh" is one value, as "password=ab,cd'ef<gh"
// is). A blank, "&", ";" or "#" percent-escaped ("two+words",
// "two%20words", "ab%26cd") does not end it: URL encoding escapes a
// component, the value with its name. An HTML reference or a "\u" escape
// escapes a whole document: its "&amp;" is the document's "&" (a query in
// an attribute), its "&#32;" a blank.
func escapedValueEnd(text string, vs int, units []escUnit, s string, nameQuote byte, colon bool) (n int, closed bool) {
	v := text[vs:]
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
				// A quoted string with more of the value right after it
				// ('PlAnTeD'0123, as a shell reads 'a'b) is one value.
				end := escapedBareEnd(v, i+1, vs, units, s, nameQuote, colon)
				if onlyMasks(v[i+1 : end]) {
					end = i + 1 // a cut's mark after it ("[redacted]"[redacted])
				}
				return end, true
			}
		}
		return len(v), false
	case '{', '[':
		if startsNested(v) {
			return nestedValue(v, `"'`)
		}
	}
	return escapedBareEnd(v, 0, vs, units, s, nameQuote, colon), true
}

// escapedBareEnd is the end of escapedValueEnd's bare run in v from i.
func escapedBareEnd(v string, i, vs int, units []escUnit, s string, nameQuote byte, colon bool) int {
	jsonStyle := nameQuote != 0 && colon
	for ; i < len(v); i++ {
		c := v[i]
		switch c {
		case '[':
			// A mask in the run is part of it, its "]" too: masks at its
			// start ("[redacted]Sup3r", as maskedValueAt reads them) or
			// where an earlier pass masked the value's tail only (it read
			// "password%3Dv:0" as a number under the name "password%3Dv").
			if k := strings.IndexByte(v[i:], ']'); k > 0 && isMask(v[i:i+k+1]) {
				i += k
			}
		case '\n', '\r': // a value ends at its line's end (text, not an event stream)
			return i
		case ' ', '\t':
			if u := units[vs+i]; s[u.start] != '%' && s[u.start] != '+' {
				return i // written as itself, or escaped with the document
			}
		case '&', ';', '#':
			if u := units[vs+i]; !jsonStyle && s[u.start] != '%' {
				return i
			}
		case '"':
			if !jsonStyle || nameQuote == '"' {
				return i
			}
		case ',', '}', ']':
			if jsonStyle {
				return i
			}
		}
	}
	return len(v)
}

// escapedQuotedLen returns the length of a value at the start of s that
// opens, after blanks, with a quote, where the blanks or the quote are
// escaped ("%22", "\u0027", "&quot;", "%2522" escaped twice, "\x20'"): to
// the same quote, written the same way, closing it, or to the end of the
// text (as jsonMemberValueRE reads a quoted string, across lines); 0 when
// s opens otherwise. The plain patterns read such a value as
// a bare one, to its first blank ("%22two words%22"), and masked its head
// only, which maskEscapedText then read as a mask alone
// (FuzzEscapedPairMetamorphic: "\"acce%73s_token\" : %22v w%22" kept
// " w"). It allocates only when s opens with "%", "\u", "\x" or "&".
func escapedQuotedLen(s string) int {
	n, _ := escapedQuoted(s)
	return n
}

// escapedQuotedMask reports whether s starts with a value in escaped
// quotes that holds masks alone ("\x22[redacted…]\x22", as maskEscapedText
// writes one): a value masked already, which no pass masks again.
func escapedQuotedMask(s string) bool {
	n, inner := escapedQuoted(s)
	return n > 0 && onlyMasks(inner)
}

// escapedQuoted is escapedQuotedLen, and the text between the quotes
// when the closing one is found with nothing after it ("" otherwise).
func escapedQuoted(s string) (int, string) {
	if s == "" || s[0] != '%' && s[0] != '\\' && s[0] != '&' && s[0] != '+' ||
		s[0] == '\\' && (len(s) < 2 || s[1] != 'u' && s[1] != 'x') {
		return 0, "" // \" is escaped JSON's, which its own pattern reads
	}
	head := s[:min(len(s), 64)]
	// "+" is a blank in percent-encoded text (":+%22v w%22"), as
	// maskEscapedText reads it, which looks for a "%" in the whole text:
	// where that "%" is before s (in an escaped name:
	// "\"acc%65ss_token\" :+\u0022v w\u0022"), "+" opening s is still a
	// blank before a quote. Read as a bare value, "+\u0022v" was masked to
	// the blank and " w" kept.
	plus := s[0] == '+' || strings.IndexByte(head, '%') >= 0
	d, u, _ := decodeEscapes(head, plus)
	if d2, u2, any2 := decodeEscapes(string(d), plus); any2 {
		for i := range u2 { // escaped twice: compose the places
			u2[i] = escUnit{u[u2[i].start].start, u[u2[i].end-1].end}
		}
		d, u = d2, u2
	}
	i := 0
	for i < len(d) && (d[i] == ' ' || d[i] == '\t') {
		i++
	}
	if i == len(d) || d[i] != '"' && d[i] != '\'' || i == 0 && u[0].end == 1 {
		return 0, ""
	}
	qs, qe := int(u[i].start), int(u[i].end)
	open, rest := s[qs:qe], s[qe:]
	j := strings.Index(rest, open)
	if j < 0 {
		return qe + len(rest), ""
	}
	// More of the value right after the closing quote ('a'b, as a shell
	// reads it) is part of it: its mask is followed by a byte that ends a
	// value, so that a second pass reads the mask alone (maskedValueAt).
	n := qe + j + len(open)
	closed := n
	for n < len(s) && strings.IndexByte(maskedValueEnds, s[n]) < 0 {
		n++
	}
	if n == closed {
		return n, rest[:j]
	}
	return n, ""
}

// refRunLen extends a bare value s[:n] that a plain pattern ended at an
// "&" which starts an HTML character reference of a byte that ends no
// value ("PlAnTeD&#39;0123", "ab&period;cd": in an HTML page the value is
// "PlAnTeD'0123"): past the reference and the bare run after it, as long
// as such references follow. A reference of "&", ";", "#", "\"" or a
// blank ("&amp;" between a query's pairs) still ends it, as they end
// formValueRE's value. It returns n
// when s[n] is no such "&", allocating nothing.
func refRunLen(s string, n int) int {
	if n == 0 || s[0] == '"' || s[0] == '\'' {
		return n
	}
	for n < len(s) && s[n] == '&' {
		var c byte
		var k int
		if n+1 < len(s) && s[n+1] == '#' {
			r, rk := charRef(s[n:])
			if rk == 0 || r >= utf8.RuneSelf {
				return n
			}
			c, k = byte(r), rk
		} else if c, k = entityAt(s[n:]); k == 0 {
			return n
		}
		if strings.IndexByte(" \t\r\n\f\v&;#\"", c) >= 0 {
			return n
		}
		n += k
		for n < len(s) && strings.IndexByte(" \t\r\n\f\v&;#\"", s[n]) < 0 {
			n++
		}
	}
	return n
}

// escapedBlanksOnly reports whether v, a value a plain pattern read at the
// start of rest, is escaped blanks ("%20", "\u0020\u0009", "+") and
// nothing else, or then masks alone: the blanks after an escaped separator
// ("apiSecret%20=%20\"v w\""), which maskEscapedText reads as the
// separator's, taking the value after them. Masked as the value, they left
// that value to be read as following a mask, and kept; and once
// maskEscapedText masked it, "%20[redacted…]" is a value masked already
// (rest, not v: a bare pattern stops inside a mask, at its "]").
//
// A "+" is a blank when text (the whole text) holds a "%", as
// maskEscapedText decodes it ("\"%61ccess_token\":+\"v w\"").
func escapedBlanksOnly(v, rest, text string) bool {
	if v == "" || v[0] != '%' && v[0] != '\\' && v[0] != '+' && v[0] != '&' {
		return false
	}
	plus := strings.IndexByte(text, '%') >= 0
	k, escaped := 0, false
	for k < len(rest) {
		n := 0
		switch r := rest[k:]; {
		case r[0] == ' ' || r[0] == '\t':
			k++
			continue
		case r[0] == '+' && plus:
			n = 1
		case hasFoldPrefix(r, "%20") || hasFoldPrefix(r, "%09"):
			n = 3
		case hasFoldPrefix(r, "%2520") || hasFoldPrefix(r, "%2509"):
			n = 5
		case hasFoldPrefix(r, `\x20`) || hasFoldPrefix(r, `\x09`):
			n = 4
		case hasFoldPrefix(r, `\u0020`) || hasFoldPrefix(r, `\u0009`):
			n = 6
		case hasFoldPrefix(r, "&#32;") || hasFoldPrefix(r, "&#9;") || hasFoldPrefix(r, "&#x20;") ||
			hasFoldPrefix(r, "&#x9;") || hasFoldPrefix(r, "&nbsp;") || hasFoldPrefix(r, "&tab;"):
			n = strings.IndexByte(r, ';') + 1
		}
		if n == 0 {
			break
		}
		k, escaped = k+n, true
	}
	if !escaped {
		return false
	}
	if k >= len(v) || rest[k] == '"' || rest[k] == '\'' || escapedQuotedMask(rest[k:]) {
		// Blanks alone, or before a value in quotes ("':+'v w'"), which
		// maskEscapedText reads whole.
		return true
	}
	_, whole := maskedValueAt(rest[k:])
	return whole
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
			if _, n := entityAt(s[j-1:]); n > 0 { // s[j-1] is "&" or the ";" of "&amp;"
				return true
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
		var nameQuote byte
		if m[3] > m[2] && m[7] > m[6] && text[m[6]] == text[m[2]] &&
			s[units[m[2]].start:units[m[2]].end] == s[units[m[6]].start:units[m[6]].end] {
			// A name in quotes written alike; a quote on one side only
			// ("\"client_assertion : v"), or two written unlike
			// ("'client_assertion%27 : v", which maskFieldLines reads as
			// a field's name), is the text's: a field line.
			nameQuote = text[m[2]]
		}
		n, closed := escapedValueEnd(text, vs, units, s, nameQuote, strings.IndexByte(text[m[8]:m[9]], ':') >= 0)
		if nameQuote == 0 && strings.IndexByte(text[m[8]:m[9]], ':') >= 0 && n > 0 && closed &&
			text[vs] != '{' && text[vs] != '[' &&
			!((text[vs] == '"' || text[vs] == '\'') && n >= 2 && text[vs+n-1] == text[vs]) {
			// (Not a string in quotes alone; one with more after it is
			// no string, and its line is the field's.)
			// A field line ("p\u0061ssword: two words"): as maskFieldLines
			// reads one, the value runs to the end of its line or a "\"".
			n = vs + n
			for n < len(text) && strings.IndexByte("\r\n\"", text[n]) < 0 {
				n++
			}
			for n > vs && (text[n-1] == ' ' || text[n-1] == '\t') {
				n--
			}
			n -= vs
		}
		for closed && n > 0 && (text[vs+n-1] == ' ' || text[vs+n-1] == '\t') {
			// A blank escaped at the end ("v+" in a query) is no part of
			// the value; kept in it, a second pass read "[redacted…] "
			// as more than a mask.
			n--
		}
		v := text[vs : vs+n]
		if n == 0 || IsRedacted(strings.Trim(v, `"'`)) || onlyMasks(v) || maskAmidBlanks(v) {
			continue // a mask alone; one with more after it is masked whole
		}
		name := text[m[4]:m[5]]
		switch {
		case v == "true" || v == "false" || v == "null":
			continue
		case nameQuote != 0 && countValue(name, v, text[:ns], text[vs+n:]):
			continue // a count in escaped JSON ({"pass": 5, "fail": 0}), as countValue keeps it
		case onlyDigits(v) && countName(name) == countAlways:
			continue
		}
		os, oe := int(units[vs].start), int(units[vs+n-1].end)
		if onlyMasks(s[os:oe]) {
			continue
		}
		b.WriteString(s[last:os])
		switch {
		case !closed:
			b.WriteString(Redacted)
		case (v[0] == '"' || v[0] == '\'') && len(v) >= 2 && v[len(v)-1] == v[0]:
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

// maskAmidBlanks reports whether v is a mask (in quotes or not) between
// blanks only, escaped ones included: the blanks a first pass read as
// blanks while the text held a "%" (maskEscapedText's plus: "+", "%20",
// "%09", "\x20", "&#32;"), which the mask then left beside it, after it
// ("p\x61ssword: \x27v%21w\x27+") or before it ("DPoP\x20\x3D+v%21w",
// "p%61ssword:%09'v'0+" masked to "%09[redacted…]+"). A second pass,
// reading them as part of a value, must leave the mask as it is.
func maskAmidBlanks(v string) bool {
	if !strings.Contains(v, "[redacted") {
		return false
	}
	d, _, _ := decodeEscapes(v, true)
	t := strings.Trim(string(d), " \t")
	return len(t) < len(d) && t != "" && (IsRedacted(strings.Trim(t, `"'`)) || onlyMasks(t))
}
