package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/spf13/cobra"
)

type scenariosOptions struct {
	json     bool
	markdown bool
}

func newScenariosCmd() *cobra.Command {
	var o scenariosOptions
	cmd := &cobra.Command{
		Use:   "scenarios [ID]",
		Short: "List the fault scenarios of mcpdiag serve and mcpdiag proxy, with params and expected outcomes",
		Long: `Lists the catalogue of fault scenarios without starting a server: id,
transport, layer, the tool that triggers it, and the outcome a correct client
sees. For an HTTP scenario (mcpdiag serve, mcpdiag proxy --upstream) that is
what mcpdiag call URL TOOL --args ARGS --retries 0 --timeout 10s reports
against a fresh endpoint with the default params, and POSTS the count the
server logs; for a stdio scenario (mcpdiag proxy --stdio --scenario ID) it is
the outcome of the first record the proxy writes with the fault injected, and
POSTS counts request lines. With an ID, shows that scenario in full:
description, default params, an example, and the call that triggers it.`,
		Example: `  mcpdiag scenarios
  mcpdiag scenarios sse.truncated
  mcpdiag scenarios stdio.drop
  mcpdiag scenarios --json | jq '.[] | {id, transport, expectedOutcome}'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScenarios(cmd.OutOrStdout(), args, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the catalogue (or the scenario) as JSON")
	cmd.Flags().BoolVar(&o.markdown, "markdown", false, "print docs/scenarios.md")
	return cmd
}

func runScenarios(out io.Writer, args []string, o scenariosOptions) error {
	if o.markdown {
		return faults.WriteMarkdown(out)
	}
	if len(args) == 1 {
		e, ok := faults.Lookup(args[0])
		if !ok {
			return usageError("unknown scenario %q (mcpdiag scenarios lists them)", args[0])
		}
		if o.json {
			return writeIndented(out, e)
		}
		return describeScenario(out, e)
	}
	if o.json {
		return writeIndented(out, faults.Catalogue())
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTRANSPORT\tLAYER\tTOOL\tEXPECTED\tPOSTS\tTITLE")
	for _, e := range faults.Catalogue() {
		layer := string(e.Layer)
		if layer == "" {
			layer = "-"
		}
		transport := faults.TransportHTTP
		if e.OnStdio() {
			transport = faults.TransportStdio
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", e.ID, transport, layer, e.Tool, e.ExpectedOutcome, e.ExpectedPosts, e.Title)
	}
	return tw.Flush()
}

func writeIndented(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func describeScenario(out io.Writer, e faults.Entry) error {
	layer := string(e.Layer)
	if layer == "" {
		layer = "none (healthy)"
	}
	var defaults bytes.Buffer
	_ = json.Indent(&defaults, e.Defaults(), "  ", "  ")
	fmt.Fprintf(out, "%s: %s\nlayer: %s\n\n%s\n\n", e.ID, e.Title, layer, e.Description)
	fmt.Fprintf(out, "default params:\n  %s\n\n", defaults.String())
	fmt.Fprintf(out, "example:\n  %s\n\n", e.ExampleCommand())
	if e.OnStdio() {
		fmt.Fprintf(out, "trigger:\n  a client's tools/call of %s with %s, after initialize, through mcpdiag proxy --stdio --scenario %s\n", e.Tool, e.Args, e.ID)
		fmt.Fprintf(out, "\nexpected: %s (the first record with the fault injected), %d requests: %s\n", e.ExpectedOutcome, e.ExpectedPosts, e.Why)
		return nil
	}
	fmt.Fprintf(out, "trigger:\n  %s\n", e.CallCommand("http://127.0.0.1:8080/mcp"))
	if len(e.Input) > 0 {
		fmt.Fprintf(out, "  with input.json: %s\n", e.Input)
	}
	fmt.Fprintf(out, "\nexpected: %s, %d POSTs: %s\n", e.ExpectedOutcome, e.ExpectedPosts, e.Why)
	if e.AuthStep != "" {
		fmt.Fprintf(out, "auth step: %s\n", e.AuthStep)
	}
	if e.ServerMistake {
		fmt.Fprintf(out, "\na server mistake, for mcpdiag probe (the matrix skips it):\n  mcpdiag probe http://127.0.0.1:8080/s/%s/mcp\n", e.ID)
	}
	return nil
}
