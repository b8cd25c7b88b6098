package record

import "strings"

// A text cut by a capture before it was redacted (the proxy's record
// limit, a stream that stopped) may end inside a credential: the start of
// a token, a URL whose user information lost its "@". The redactor judges
// a value by its whole shape, so such a fragment would be kept as it is.
// trimUnfinished drops it instead: the last token, from the last delimiter
// to the cut, is not recorded, and the text says so with Redacted.

// cutDelim marks the bytes that end a token for trimUnfinished: quotes,
// white space, ',', braces, brackets, '&' and '='. A value a name rule
// judges ("password": "ab,c) stays recorded up to a delimiter inside it,
// as the name rule masks a value that ends at the cut.
var cutDelim = func() (t [256]bool) {
	for _, c := range "\"' \t\r\n,{}[]&=" {
		t[c] = true
	}
	return
}()

// urlDelim marks the bytes that cannot be in a URL written in text: the
// URL user information may hold ',', '&' and '=' (RFC 3986's sub-delims),
// so it is found from the last of these.
var urlDelim = func() (t [256]bool) {
	for _, c := range "\"' \t\r\n<>" {
		t[c] = true
	}
	return
}()

// trimUnfinished returns s without its unfinished last token and whether
// it dropped one: the bytes after the last cutDelim byte, and, when the
// text ends inside the authority of a URL ("postgres://admin:p&ss", no
// "/", "?" or "#" after the "://"), the whole URL, whose user information
// may not be whole. A text that ends at a delimiter is
// returned as it is, so trimming twice changes nothing.
func trimUnfinished(s string) (string, bool) {
	end := len(s)
	for end > 0 && !cutDelim[s[end-1]] {
		end--
	}
	start := len(s)
	for start > 0 && !urlDelim[s[start-1]] {
		start--
	}
	if seg := s[start:]; strings.Contains(seg, "://") {
		if i := strings.LastIndex(seg, "://"); !strings.ContainsAny(seg[i+3:], "/?#") {
			end = min(end, start)
		}
	}
	if end == len(s) {
		return s, false
	}
	return s[:end], true
}
