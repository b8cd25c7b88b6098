package wire

import (
	"regexp"
	"strings"
	"testing"
)

// protocolLiteral is a revision or a _meta key written out as a whole Go
// string literal.
var protocolLiteral = regexp.MustCompile(`"(2025-11-25|2026-07-28|io\.modelcontextprotocol/[A-Za-z]+)"`)

// TestProtocolNamesDefinedOnce: the revisions and _meta keys are written
// out in wire/protocol.go only; other non-test code names the constants.
// Comments, struct tags and JSON in raw (backquoted) strings are not
// names, nor are the programs under internal/ and testdata/ that play a
// client or server from outside.
func TestProtocolNamesDefinedOnce(t *testing.T) {
	eachModuleLine(t, func(rel string) bool { return rel == "internal" }, func(rel string) bool { return rel == "wire/protocol.go" }, func(rel string, n int, line string) {
		code, _, _ := strings.Cut(line, "//")
		loc := protocolLiteral.FindStringIndex(code)
		if loc == nil || strings.Contains(code[:loc[0]], "`") {
			return
		}
		t.Errorf("%s:%d writes out %s: use the constant in wire/protocol.go", rel, n, code[loc[0]:loc[1]])
	})
}
