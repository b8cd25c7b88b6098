package record

import "strings"

// The gate of scrubPatterns: one pass over a string, without allocating,
// that decides whether any of its patterns could change it. scrubPatterns
// runs each pattern only under a condition on the string as it was given
// (lower is computed once, before any pattern runs):
//
//	"@" and "://" in s                         → maskUserinfo
//	"-----begin" in lower                      → maskPEM
//	"bearer", "basic" or "dpop" in lower       → bearerRE
//	a nameHint in lower, or (ctxForm) a formHint → the name patterns
//	a providerHint in lower                     → maskProviderKeys, maskWebhookURLs
//	not ctxForm, "?" or "&" in s, a queryHint in lower → queryNameRE
//	two "." or a "\u002" in s                  → maskJWTs
//
// and scrubPatterns looks for the name hints in the text with its escapes
// decoded too when it holds an escape of a letter or a digit: the gate
// opens on any "%3"–"%7" or "\u" (escapeHints), a superset of those.
//
// When none holds, no pattern runs and scrubPatterns returns s: that is
// what patternsMayApply checks, and it checks a superset of it, so when it
// says false the result is s. It is exact only on ASCII text, where
// strings.ToLower is the byte-wise fold of 'A'–'Z' it uses; a string with
// any other byte (the Kelvin sign lowers to "k", U+0130 to "i") is left to
// the patterns. The last condition is narrowed by what jwtRE must match
// first, an "e" followed by one of [w-z0-9_-]: without such a pair jwtRE
// has no match and maskJWTs returns s; a "\u002" (a dot escaped) opens the
// gate as every "\u" does (escapeHints).

// escapeHints open the gate on an escape that may be of an ASCII letter or
// digit ("%61", "\\u0061"): a name hint may hide behind it, and
// scrubPatterns then looks for the hints in the text decoded too
// (hasLetterEscape). "%3"–"%7" are the escapes of the bytes 0x30–0x7F,
// "%25" the start of one escaped twice ("p%2561ssword", which decodeName
// decodes); "%2F" and the other escapes of punctuation below "0" do not
// open it.
// "\\x" and "#" before a digit or "x" (a character reference, "&#97;",
// "&#x61;"; the loop does not look behind "&", a query byte) open it for
// maskEscapedText (redact_escaped.go), which decodes them too (redact13).
var escapeHints = []string{"%3", "%4", "%5", "%6", "%7", "%25", `\u`, `\x`,
	"#0", "#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8", "#9", "#x"}

// pemHints are the substrings of lower that make scrubPatterns look for a
// PEM block or an authorization scheme.
var pemHints = []string{"-----begin", "bearer", "basic", "dpop"}

// formHints are the names scrubPatterns looks for in a form (ctxForm).
var formHints = []string{"code", "state", "sig"}

// gateHint is one hint of the gate; form marks the hints that count only
// in a form or next to a URL query (formHints, queryHints).
type gateHint struct {
	hint string
	form bool
}

// The gate's tables, built from the very lists scrubPatterns tests (so
// that a hint added there is in the gate too): gateHints[c] are the hints
// starting with the byte c, and gatePairs has the bit c1<<7|c2 set for
// each hint starting with c1 c2, so that most bytes cost one look-up.
// The hints of each first byte share one array, sized by a first count:
// appending byte by byte left each list's spare room allocated, at init
// (TestInitHeap's budget; redact20).
//
// A hint in gateTailAnchored is looked up by its last byte instead
// (tailHints, tailPairs): its first byte is a common letter of text ("o"
// of otp, "n" of npm_, "h" of hf_), which would make most bytes of every
// string a byte to look at, or its first pair is ("pp" of pplx-, in
// "application/json": each such pair tries every hint of its first
// byte; names21).
var gateHints, gatePairs, tailHints, tailPairs = func() (hints [128][]gateHint, pairs [128 * 128 / 64]uint64, tails [128][]gateHint, tpairs [128 * 128 / 64]uint64) {
	lists := []struct {
		form  bool
		hints []string
	}{
		{false, pemHints}, {false, nameHints}, {false, providerHints}, {false, escapeHints},
		// Each queryHint starts with a formHint; both are listed so that
		// the gate stays a superset if either list changes.
		{true, formHints}, {true, queryHints},
	}
	var count, tcount [128]int
	total := 0
	for _, l := range lists {
		for _, h := range l.hints {
			if len(h) < 2 {
				panic("record: a redaction hint must be 2 bytes or more: " + h)
			}
			for i := 0; i < len(h); i++ {
				if h[i] >= 'A' && h[i] <= 'Z' || h[i] >= 0x80 {
					panic("record: a redaction hint must be lower-case ASCII: " + h)
				}
			}
			if tailAnchored(h) {
				tcount[h[len(h)-1]]++
			} else {
				count[h[0]]++
			}
			total++
		}
	}
	all := make([]gateHint, 0, total)
	for c := range hints {
		hints[c] = all[len(all) : len(all) : len(all)+count[c]]
		all = all[:len(all)+count[c]]
	}
	for c := range tails {
		tails[c] = all[len(all) : len(all) : len(all)+tcount[c]]
		all = all[:len(all)+tcount[c]]
	}
	for _, l := range lists {
		for _, h := range l.hints {
			if tailAnchored(h) {
				last := h[len(h)-1]
				tails[last] = append(tails[last], gateHint{h, l.form})
				p := uint(h[len(h)-2])<<7 | uint(last)
				tpairs[p/64] |= 1 << (p % 64)
				continue
			}
			hints[h[0]] = append(hints[h[0]], gateHint{h, l.form})
			p := uint(h[0])<<7 | uint(h[1])
			pairs[p/64] |= 1 << (p % 64)
		}
	}
	return
}()

// gateTailAnchored are the hints the gate looks up by their last byte
// (see gateHints).
var gateTailAnchored = [...]string{"otp", "npm_", "whsec_", "hf_", "lin_api_", "dop_v1_", "doo_v1_", "dor_v1_",
	"shpat_", "shpca_", "shppa_", "shpss_", "sntryu_", "pplx-"}

func tailAnchored(h string) bool {
	for _, t := range gateTailAnchored {
		if t == h {
			return true
		}
	}
	return false
}

// gateByte marks the bytes at which patternsMayApply has something to
// check (gateVisit): a byte that is not ASCII, '.', '?', '&', '@', 'e' (a
// JWT's start) and each byte that folds to the first or, for a
// tail-anchored hint, the last byte of a hint; gateTail marks the last.
// Every other byte is skipped at once (the pair a hint needs starts at its
// first byte, and a byte after it is looked at in its own turn).
var gateByte = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= 0x80, c == '.', c == '?', c == '&', c == '@', c == 'e':
			t[c] = gateVisit
		case len(gateHints[lowerASCII(byte(c))]) > 0:
			t[c] = gateVisit
		}
		if c < 0x80 && len(tailHints[lowerASCII(byte(c))]) > 0 {
			t[c] |= gateVisit | gateTail
		}
	}
	return
}()

// The bits of gateByte.
const (
	gateVisit = 1 << iota
	gateTail
)

// lowerASCII folds an ASCII upper-case letter to lower case, as
// strings.ToLower does on ASCII text.
func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiLower is lowerASCII as a table.
var asciiLower = func() (t [128]byte) {
	for c := range t {
		t[c] = lowerASCII(byte(c))
	}
	return
}()

// hasFoldPrefix reports whether s starts with h (lower-case ASCII) under
// lowerASCII.
func hasFoldPrefix(s, h string) bool {
	if len(s) < len(h) {
		return false
	}
	for j := 0; j < len(h); j++ {
		if lowerASCII(s[j]) != h[j] {
			return false
		}
	}
	return true
}

// isJWTSecond reports whether c may follow the "e" that starts a JWT
// (jwtRE's [w-z0-9_-]).
func isJWTSecond(c byte) bool {
	return c >= 'w' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// patternsMayApply reports whether scrubPatterns(s, ctx) may differ from
// s. False means it returns s (see the comment at the top of this file).
func patternsMayApply(s string, ctx nameContext) bool {
	dots, jwtStart, query, form, at := 0, false, false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		g := gateByte[c]
		if g == 0 {
			continue // none of the conditions below can hold at c
		}
		if c >= 0x80 {
			return true // not ASCII: strings.ToLower may map it to ASCII
		}
		switch c {
		case '.':
			dots++
			continue
		case '?', '&':
			query = true
			continue
		case '@':
			at = true
			continue
		}
		if g&gateTail != 0 && i > 0 {
			lc := asciiLower[c]
			// A hint that ends at c (gateTailAnchored). s[i-1] is ASCII:
			// a byte that is not returned above.
			p := uint(asciiLower[s[i-1]])<<7 | uint(lc)
			if tailPairs[p/64]&(1<<(p%64)) != 0 {
				for _, h := range tailHints[lc] {
					if i+1 >= len(h.hint) && hasFoldPrefix(s[i+1-len(h.hint):], h.hint) {
						if !h.form {
							return true
						}
						form = true
					}
				}
			}
		}
		if i+1 == len(s) {
			break // every hint has 2 bytes or more
		}
		c2 := s[i+1]
		if c == 'e' && isJWTSecond(c2) {
			jwtStart = true
		}
		if c2 >= 0x80 {
			return true
		}
		c = asciiLower[c]
		p := uint(c)<<7 | uint(asciiLower[c2&0x7f])
		if gatePairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, h := range gateHints[c] {
			if hasFoldPrefix(s[i:], h.hint) {
				if !h.form {
					return true
				}
				form = true
			}
		}
	}
	if form && (ctx == ctxForm || query) || at && strings.Contains(s, "://") {
		return true
	}
	return dots >= 2 && jwtStart
}

// letterEscapeAt reports whether s[i:] starts with an escape of an ASCII
// letter or digit: "%XX", "%25XX" (escaped twice) or "\uXXXX".
func letterEscapeAt(s string, i int) bool {
	var c byte
	switch {
	case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
		c = unhex(s[i+1])<<4 | unhex(s[i+2])
		if c == '%' && i+4 < len(s) && isHex(s[i+3]) && isHex(s[i+4]) {
			// Escaped twice: "%2561" is "%61", an "a".
			c = unhex(s[i+3])<<4 | unhex(s[i+4])
		}
	case s[i] == '\\' && i+5 < len(s) && s[i+1] == 'u' && s[i+2] == '0' && s[i+3] == '0' && isHex(s[i+4]) && isHex(s[i+5]):
		c = unhex(s[i+4])<<4 | unhex(s[i+5])
	default:
		return false
	}
	return isLetter(c) || c >= '0' && c <= '9'
}

// hasLetterEscape reports whether s holds an escape of an ASCII letter or
// digit (letterEscapeAt).
func hasLetterEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] == '%' || s[i] == '\\') && letterEscapeAt(s, i) {
			return true
		}
	}
	return false
}
