// Package visible renders text that came from a peer (a server's error
// message, a tool's text, a header value, a client's stderr line, a tool
// name) for a person: every character that a terminal or a browser would
// obey instead of show is written as a visible escape, so that a hostile
// peer cannot clear the screen, write the clipboard (OSC 52), fake a link
// (OSC 8), overwrite a verdict with a carriage return or reverse text with a
// bidi override.
//
// Escaped: the control characters (Unicode Cc: C0, DEL and C1), the format
// characters (Cf: the bidi embeddings, overrides, isolates and marks, the
// zero-width characters, the tag characters), the line and paragraph
// separators (U+2028, U+2029), U+FFFE and U+FFFF (XML has no place for
// them) and each byte of invalid UTF-8. The escapes
// are Go's: \t \n \r, \xHH for another C0 character, DEL or a byte that is
// not UTF-8 (below 80 a character, from 80 on a raw byte), \uHHHH and
// \UHHHHHHHH for a rune. A backslash is written \\ when what follows it
// would read as an escape, so that no two inputs print the same.
//
// String and Lines are applied once, at the output edge (text reports, log
// lines, JUnit, the HTML page's text), never to records: records keep the
// text as data. JSON keeps the data too, and is applied to every record
// line, to JSON on stdout and to HAR files.
package visible

import (
	"encoding/binary"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// String returns s with every control, format (bidi, zero-width) and
// separator character and every byte of invalid UTF-8 written as a visible
// escape, newlines and tabs included: the result is one line. It returns s
// itself when nothing needs escaping.
func String(s string) string { return render(s, false) }

// Lines is String for a text shown as lines (a client's stdout in JUnit
// system-out, a body in a pre block): a newline and a tab stay as they are,
// every other character String escapes is escaped (a carriage return
// included: it would overwrite its line).
func Lines(s string) string { return render(s, true) }

// render escapes s; lines keeps '\n' and '\t'.
func render(s string, lines bool) string {
	i := 0
	for i < len(s) {
		if c := s[i]; c >= 0x20 && c < 0x7f && c != '\\' {
			i++
			continue
		}
		if n, esc := next(s, i, lines); esc || s[i] == '\\' && backslashEscaped(s, i+n, lines) {
			break
		} else {
			i += n
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if c == '\\' {
			if backslashEscaped(s, i+1, lines) {
				b.WriteString(`\\`)
			} else {
				b.WriteByte('\\')
			}
			i++
			continue
		}
		n, esc := next(s, i, lines)
		if !esc {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		r, _ := utf8.DecodeRuneInString(s[i:])
		switch {
		case n == 1 && c >= utf8.RuneSelf:
			// A byte that does not start a valid UTF-8 sequence.
			writeHex(&b, `\x`, uint32(c), 2)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == 0x0d: // a carriage return
			b.WriteString(`\r`)
		case r < 0x80:
			writeHex(&b, `\x`, uint32(r), 2)
		case r <= 0xffff:
			writeHex(&b, `\u`, uint32(r), 4)
		default:
			writeHex(&b, `\U`, uint32(r), 8)
		}
		i += n
	}
	return b.String()
}

// next returns the length of the character (or invalid byte) at s[i] and
// whether it is escaped.
func next(s string, i int, lines bool) (n int, escaped bool) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case c == '\n' || c == '\t':
			return 1, !lines
		case c < 0x20 || c == 0x7f:
			return 1, true
		}
		return 1, false
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n == 1 {
		return 1, true
	}
	return n, Escaped(r)
}

// Escaped reports whether String writes r as an escape: a control (Cc), a
// format character (Cf), a line or paragraph separator, or U+FFFE or
// U+FFFF (noncharacters that XML refuses: encoding/xml writes each as
// U+FFFD, so a JUnit file would show two different names alike).
func Escaped(r rune) bool {
	if uint32(r) < 0x10000 {
		return escapedBMP[r>>6]&(1<<(r&63)) != 0
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

// escapedBMP holds Escaped's answer for each rune below U+10000, a bit per
// rune (8 KiB), set from the range tables once: the record encoder asks for
// every non-ASCII rune of a line (a body in Chinese is thousands), and a
// table search per rune cost more than the encoding.
var escapedBMP = func() (set [0x10000 / 64]uint64) {
	mark := func(r rune) { set[r>>6] |= 1 << (r & 63) }
	for _, t := range []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp} {
		for _, rg := range t.R16 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				mark(r)
			}
		}
	}
	mark(0xFFFE)
	mark(0xFFFF)
	return set
}()

// backslashEscaped reports whether a backslash followed by s[j:] is
// written \\: when what follows would otherwise read as an escape (a
// backslash, t, n, r, x, u, U, or a character that is itself escaped, whose
// escape begins with a backslash).
func backslashEscaped(s string, j int, lines bool) bool {
	if j >= len(s) {
		return false
	}
	switch s[j] {
	case '\\', 't', 'n', 'r', 'x', 'u', 'U':
		return true
	}
	_, esc := next(s, j, lines)
	return esc
}

func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	b.WriteString(prefix)
	for k := digits - 1; k >= 0; k-- {
		b.WriteByte(hexDigits[(v>>(4*k))&0xf])
	}
}

// JSON returns the JSON text b with every character from DEL on that
// String escapes (DEL, C1 controls, format and bidi characters, U+2028 and
// U+2029, which encoding/json writes as they are) written
// as a \u escape (a surrogate pair past U+FFFF), and each byte of invalid
// UTF-8 as \ufffd, as encoding/json reads it. Outside its strings, JSON
// text holds only printable ASCII and whitespace, so the value is the same: a reader decodes what
// the writer meant, a terminal shows the escape. It returns b itself when
// nothing needs escaping. A JSON text split across calls must be split
// between characters.
func JSON(b []byte) []byte {
	i := asciiPrefix(b)
	if i == len(b) {
		return b
	}
	var out []byte
	copied := 0
	for i < len(b) {
		if b[i] < 0x7f {
			i += asciiPrefix(b[i:])
			continue
		}
		if n := plainMultibyte(b[i:]); n > 0 {
			i += n
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		invalid := r == utf8.RuneError && n == 1
		if !invalid && !Escaped(r) {
			i += n
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b)+16)
		}
		out = append(out, b[copied:i]...)
		switch {
		case invalid:
			out = append(out, `\ufffd`...)
		case r > 0xffff:
			r -= 0x10000
			out = appendU(out, 0xd800+(r>>10))
			out = appendU(out, 0xdc00+(r&0x3ff))
		default:
			out = appendU(out, r)
		}
		i += n
		copied = i
	}
	if out == nil {
		return b
	}
	return append(out, b[copied:]...)
}

// plainMultibyte returns the length of the character at the start of b
// when it is well-formed UTF-8 in a range that holds no character Escaped
// names, without decoding it: U+00C0–U+05FF (lead bytes C3–D7: Latin,
// Greek, Cyrillic, Hebrew) and U+3000–U+CFFF, U+E000–U+EFFF (E3–EC, EE: CJK,
// kana, Hangul, private use); 0 for any other (DecodeRune and Escaped then
// read it). Most text that is not ASCII is in these ranges.
func plainMultibyte(b []byte) int {
	c := b[0]
	switch {
	case c >= 0xC3 && c <= 0xD7:
		if len(b) >= 2 && b[1]&0xC0 == 0x80 {
			return 2
		}
	case c >= 0xE3 && c <= 0xEC || c == 0xEE:
		if len(b) >= 3 && b[1]&0xC0 == 0x80 && b[2]&0xC0 == 0x80 {
			return 3
		}
	}
	return 0
}

// asciiPrefix returns the length of b's prefix of bytes below DEL (0x7f),
// sixteen bytes at a time: JSON's scan of a line with nothing to escape
// (the common case) costs a fraction of a byte-wise loop's.
func asciiPrefix(b []byte) int {
	// A byte's high bit is set in x (a byte from 0x80) or in its low seven
	// bits plus one (0x7f alone; no carry leaves a byte).
	const ones, high = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+16 <= len(b); i += 16 {
		x := binary.LittleEndian.Uint64(b[i:])
		y := binary.LittleEndian.Uint64(b[i+8:])
		if (x|y|((x&^high)+ones)|((y&^high)+ones))&high != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x|((x&^high)+ones))&high != 0 {
			break
		}
	}
	for i < len(b) && b[i] < 0x7f {
		i++
	}
	return i
}

func appendU(out []byte, r rune) []byte {
	out = append(out, '\\', 'u')
	for k := 3; k >= 0; k-- {
		out = append(out, hexDigits[(r>>(4*k))&0xf])
	}
	return out
}

// JSONWriter writes JSON text to W rendered with JSON. Each Write must end
// between characters (a record line, a whole document).
type JSONWriter struct{ W io.Writer }

// Write writes JSON(p) to W and reports p's length on success.
func (w JSONWriter) Write(p []byte) (int, error) {
	if _, err := w.W.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
