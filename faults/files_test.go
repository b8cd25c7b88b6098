package faults_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
)

// frameworkFiles hold the machinery every scenario shares; no scenario type
// may be declared in them.
var frameworkFiles = []string{
	"alias.go", "catalogue.go", "delay.go", "doc.go", "endpoint.go", "lines.go", "log.go",
	"markdown.go", "match.go", "request.go", "respond.go", "scenario.go", "select.go",
}

// scenarioFiles is the layout of the scenarios: one file per id prefix
// (issue 12, plan §2d). The errors.* ids are split between the transport
// faults (http.go) and the protocol and application ones (jsonrpc.go), by
// name, so that a new errors.* id has to be placed here on purpose.
var scenarioFiles = map[string]string{
	"baseline":    "baseline.go",
	"auth":        "auth.go",
	"timeout":     "timeout.go",
	"catalog":     "lists.go",
	"elicitation": "mrtr.go",
	"mrtr":        "mrtr.go",
	"compat":      "compat.go",
	"session":     "session.go",
	"sse":         "sse.go",
	"content":     "content.go",
	"stdio":       "stdio.go",
	"server":      "server.go",
}

var errorsFiles = map[string]string{
	"errors.http_status_sequence":    "http.go",
	"errors.http_status_per_method":  "http.go",
	"errors.connection_close":        "http.go",
	"errors.non_compliant_envelope":  "http.go",
	"errors.rate_limited":            "http.go",
	"errors.unexpected_content_type": "http.go",
	"errors.empty_response":          "http.go",

	"errors.jsonrpc_error":       "jsonrpc.go",
	"errors.tool_error":          "jsonrpc.go",
	"errors.malformed_payload":   "jsonrpc.go",
	"errors.invalid_tool_result": "jsonrpc.go",
	"errors.unsupported_version": "jsonrpc.go",
	"errors.header_mismatch":     "jsonrpc.go",
	"errors.missing_capability":  "jsonrpc.go",
	"errors.large_result":        "jsonrpc.go",
}

// scenarioFile returns the file the scenario with id belongs in.
func scenarioFile(id string) (string, bool) {
	if strings.HasPrefix(id, "errors.") {
		f, ok := errorsFiles[id]
		return f, ok
	}
	prefix, _, _ := strings.Cut(id, ".")
	f, ok := scenarioFiles[prefix]
	return f, ok
}

// packageTypes parses the package's non-test files and returns the file
// each type is declared in, and the types that have a Wrap or WrapLines
// method (the scenario types, whatever the catalogue says).
func packageTypes(t *testing.T) (declared map[string]string, wrappers map[string]bool, files []string) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared, wrappers = map[string]string{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		files = append(files, name)
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						declared[ts.Name.Name] = name
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 || d.Name.Name != "Wrap" && d.Name.Name != "WrapLines" {
					continue
				}
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					wrappers[id.Name] = true
				}
			}
		}
	}
	return declared, wrappers, files
}

// TestScenarioFiles holds the layout of the package: the framework apart
// from the scenarios, and each scenario type in the file of its id prefix.
// It fails on the layout before the split of issue 12 (catalog.go, and
// Baseline, ProtocolReporter, LegacyResult and ContentInjection in the files
// of other prefixes).
func TestScenarioFiles(t *testing.T) {
	declared, wrappers, files := packageTypes(t)

	want := map[string]bool{} // every file the table names
	for _, f := range frameworkFiles {
		want[f] = true
	}
	inTable := map[string]bool{}
	for _, f := range scenarioFiles {
		want[f], inTable[f] = true, true
	}
	for _, f := range errorsFiles {
		want[f], inTable[f] = true, true
	}
	for _, f := range files {
		if !want[f] {
			t.Errorf("%s: a file the layout does not know: add it to frameworkFiles or scenarioFiles in files_test.go", f)
		}
		delete(want, f)
	}
	for f := range want {
		if f == "log.go" { // goes when serve writes records (plan C8)
			continue
		}
		t.Errorf("%s: in the layout table but not in the package", f)
	}

	used := map[string]string{} // scenario type → the first id using it
	perFile := map[string]int{}
	for _, e := range faults.Catalogue() {
		typ := reflect.TypeOf(e.New())
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		name := typ.Name()
		file, ok := scenarioFile(e.ID)
		if !ok {
			t.Errorf("%s: no file for this id: add its prefix (or, for errors.*, its id) to the table in files_test.go", e.ID)
			continue
		}
		got, ok := declared[name]
		switch {
		case !ok:
			t.Errorf("%s: type %s is not declared in package faults", e.ID, name)
		case got != file:
			t.Errorf("%s: type %s is declared in %s, want %s", e.ID, name, got, file)
		}
		if prev, ok := used[name]; ok {
			if pf, _ := scenarioFile(prev); pf != file {
				t.Errorf("%s and %s share type %s but belong in different files", prev, e.ID, name)
			}
		} else {
			used[name] = e.ID
		}
		perFile[file]++
	}

	var orphans []string
	for name := range wrappers {
		file := declared[name]
		if slices.Contains(frameworkFiles, file) {
			t.Errorf("%s: scenario type %s in a framework file", file, name)
		}
		if _, ok := used[name]; !ok {
			orphans = append(orphans, name+" ("+file+")")
		}
	}
	sort.Strings(orphans)
	for _, o := range orphans {
		t.Errorf("scenario type %s is in no catalogue entry", o)
	}
	for f := range inTable {
		if perFile[f] == 0 {
			t.Errorf("%s: a scenario file without a catalogue scenario", f)
		}
	}
}
