package wire

import (
	"regexp"
	"strings"
	"testing"
)

// sseParsePatterns are the shapes an event-stream parse takes in Go
// source: a data: prefix cut off a line, a search for the blank line that
// ends an event, a split at CR and LF, a test for a CR line end.
var sseParsePatterns = regexp.MustCompile(`(HasPrefix|CutPrefix|TrimPrefix)\(.*"data:"|Index\(.*"\\n\\n"|IndexAny\(.*"\\r\\n"|IndexAny\(.*"\\n\\r"|case '\\r'|== '\\r'`)

// sseParseKnown would list files allowed to parse event streams outside
// wire while they move onto SSEScanner; none does since issue 12. The
// test fails if a listed file no longer parses, or an unlisted one does.
var sseParseKnown = map[string]bool{}

// TestNoSSEParsingOutsideWire: event streams are parsed in one place,
// SSEScanner (and SSEReader on it). The non-test Go files of the module
// outside wire must not take a stream apart themselves.
func TestNoSSEParsingOutsideWire(t *testing.T) {
	seen := map[string]bool{}
	eachModuleLine(t, func(rel string) bool { return rel == "wire" }, func(string) bool { return false }, func(rel string, n int, line string) {
		if strings.HasPrefix(strings.TrimSpace(line), "//") || !sseParsePatterns.MatchString(line) {
			return
		}
		if sseParseKnown[rel] {
			seen[rel] = true
			return
		}
		t.Errorf("%s:%d parses an event stream outside package wire (use wire.SSEScanner or wire.SSEReader): %s", rel, n, strings.TrimSpace(line))
	})
	for f := range sseParseKnown {
		if !seen[f] {
			t.Errorf("%s no longer parses an event stream: take it off sseParseKnown", f)
		}
	}
}
