package wire

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eachModuleLine calls line for every line of the module's non-test Go
// files (slash-separated path relative to the module root, 1-based line
// number), skipping hidden folders, testdata and the folders skipDir names.
// It fails the test when the walk finds fewer than 50 files: a broken
// walk must not pass by checking nothing.
func eachModuleLine(t *testing.T, skipDir func(rel string) bool, skipFile func(rel string) bool, line func(rel string, n int, text string)) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above wire: %v", err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || skipDir(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || skipFile(rel) {
			return nil
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, text := range strings.Split(string(b), "\n") {
			line(rel, i+1, text)
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
