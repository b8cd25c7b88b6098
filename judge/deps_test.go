package judge_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestJudgeReadsFactsOnly: the judge's code imports no mcpdiag package but
// record, classify, retry and wire (not the runner, the fault server, the
// scenarios or the client), and reads no record's note text (a Note field
// is for people).
func TestJudgeReadsFactsOnly(t *testing.T) {
	allowed := map[string]bool{}
	for _, p := range []string{"record", "classify", "retry", "wire"} {
		allowed["github.com/mcpdiag/mcpdiag/"+p] = true
	}
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		n++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/mcpdiag/mcpdiag/") && !allowed[path] {
				t.Errorf("%s imports %s: the judge depends on record, classify, retry and wire only", p, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok && s.Sel.Name == "Note" {
				t.Errorf("%s reads a Note: a rule judges by typed fields and flags, never by note text", fset.Position(s.Pos()))
			}
			return true
		})
	}
	if n == 0 {
		t.Fatal("no source files read")
	}
}
