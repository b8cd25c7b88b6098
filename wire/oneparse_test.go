package wire

import (
	"io/fs"
	"os"
	"path/filepath"
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
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above wire: %v", err)
	}
	seen := map[string]bool{}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "wire" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") || !sseParsePatterns.MatchString(line) {
				continue
			}
			if sseParseKnown[rel] {
				seen[rel] = true
				continue
			}
			t.Errorf("%s:%d parses an event stream outside package wire (use wire.SSEScanner or wire.SSEReader): %s", rel, i+1, strings.TrimSpace(line))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d Go files found under %s: the walk is broken", files, root)
	}
	for f := range sseParseKnown {
		if !seen[f] {
			t.Errorf("%s no longer parses an event stream: take it off sseParseKnown", f)
		}
	}
}
