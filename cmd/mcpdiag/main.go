// Command mcpdiag tells in which layer an MCP tool call failed — HTTP
// transport, JSON-RPC envelope, MCP result shape, interaction or the tool
// itself — and whether it is safe to try again.
//
// The command only parses flags and calls the library packages; everything it
// does is available from Go.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/spf13/cobra"
)

// exitError carries a process exit code out of a subcommand.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad flags or unreadable input: exit code 2.
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "mcpdiag",
		Short:         "Find the layer where an MCP tool call failed",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError("%v", err)
	})
	root.AddCommand(newClassifyCmd())
	root.AddCommand(newCallCmd())
	root.AddCommand(newAuthCmd())
	root.AddCommand(newConformanceClientCmd())
	root.AddCommand(newReportCmd())
	root.AddCommand(newServeCmd())
	root.AddCommand(newScenariosCmd())
	root.AddCommand(newMatrixCmd())
	root.AddCommand(newProxyCmd())
	root.AddCommand(newUICmd())
	root.AddCommand(newProbeCmd())
	return root
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line args and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.err == errSilent {
		return ee.code
	}
	fmt.Fprintln(stderr, "mcpdiag: "+oneLine(err.Error()))
	if ee != nil {
		return ee.code
	}
	// cobra's own errors (unknown command, bad args) are usage errors.
	return 2
}

// oneLine returns the first line of s (an error's text, which may quote a
// peer), rendered with visible.String so that a control or bidi character
// in it is shown, never obeyed.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return visible.String(s)
}
