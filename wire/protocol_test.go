package wire

import (
	"io/fs"
	"os"
	"path/filepath"
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
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "internal" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "wire/protocol.go" {
			return nil
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			code, _, _ := strings.Cut(line, "//")
			loc := protocolLiteral.FindStringIndex(code)
			if loc == nil || strings.Contains(code[:loc[0]], "`") {
				continue
			}
			t.Errorf("%s:%d writes out %s: use the constant in wire/protocol.go", rel, i+1, code[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d Go files found under %s: the walk is broken", files, root)
	}
}
