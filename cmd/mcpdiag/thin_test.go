package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// cliForbidden are the library calls that must not appear in the CLI's own
// code, each with the reason: what they do belongs to a package, where code
// that embeds mcpdiag gets it too (issue 12, a thin CLI).
var cliForbidden = map[string]string{
	"loopback.Guard":            "a request guard in the CLI is lost by code that serves the handler itself: apply it inside the handler (loopback.GuardLoopback in the package)",
	"loopback.GuardLoopback":    "a request guard in the CLI is lost by code that serves the handler itself: apply it inside the handler",
	"loopback.Check":            "a request guard in the CLI is lost by code that serves the handler itself",
	"loopback.CheckDirect":      "a request guard in the CLI is lost by code that serves the handler itself",
	"record.NewAsync":           "open record sinks with record.OpenSink (one wiring: O_APPEND, 0600, stdout for -, the loss tally)",
	"record.OpenFile":           "open record sinks with record.OpenSink",
	"record.NewStreamWriter":    "open record sinks with record.OpenSink",
	"record.NewTally":           "a record.Sink counts its own losses",
	"signal.Ignore":             "sink signals are record.CatchSinkSignals'",
	"json.NewDecoder":           "parsing an input format belongs to its package (serve.ParseConfig, client.ReadInputs, …)",
	"proxy.Proxy.BeginShutdown": "the proxy's shutdown order is proxy.Proxy.Serve's",
	"probe.Run":                 "mcpdiag probe calls probe.Main, which runs, renders and picks the exit status (usable from Go)",
}

// TestCLIIsThin fails when the CLI's non-test code calls one of
// cliForbidden: the things the thin-CLI work moved into packages (the
// loopback guards, the record sink wiring, config parsing, the shutdown
// order) must not grow back here.
func TestCLIIsThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			what := ""
			if id, ok := sel.X.(*ast.Ident); ok {
				what = id.Name + "." + sel.Sel.Name
			}
			if sel.Sel.Name == "BeginShutdown" {
				what = "proxy.Proxy.BeginShutdown"
			}
			if why, bad := cliForbidden[what]; bad {
				t.Errorf("%s: %s: %s", fset.Position(sel.Pos()), what, why)
			}
			return true
		})
	}
}
