// Package pkgdoc holds tree-wide tests: every package of the module has a
// package doc comment, and nothing machine-local is tracked.
package pkgdoc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasADocComment fails for a directory of non-test Go files
// none of which carries a package doc comment.
func TestEveryPackageHasADocComment(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := map[string]bool{} // dir → has a doc comment
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		dirs[dir] = dirs[dir] || (f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("found only %d package directories under %s: the walk is wrong", len(dirs), root)
	}
	for dir, ok := range dirs {
		if !ok {
			t.Errorf("package in %s has no package doc comment (add a doc.go)", dir)
		}
	}
}
