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
		Short: "List the fault scenarios of mcpdiag serve, with params and expected outcomes",
		Long: `Lists the catalogue of fault scenarios without starting a server: id, layer,
the tool that triggers it, and the outcome a correct client sees
(mcpdiag call URL TOOL --args ARGS --retries 0 --timeout 10s against a fresh
endpoint with the default params). With an ID, shows that scenario in full:
description, default params, an example, and the call that triggers it.`,
		Example: `  mcpdiag scenarios
  mcpdiag scenarios sse.truncated
  mcpdiag scenarios --json | jq '.[] | {id, expectedOutcome}'`,
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
	fmt.Fprintln(tw, "ID\tLAYER\tTOOL\tEXPECTED\tPOSTS\tTITLE")
	for _, e := range faults.Catalogue() {
		layer := string(e.Layer)
		if layer == "" {
			layer = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", e.ID, layer, e.Tool, e.ExpectedOutcome, e.ExpectedPosts, e.Title)
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
	fmt.Fprintf(out, "example:\n  mcpdiag serve --scenario %s --params '%s'\n\n", e.ID, e.Example)
	fmt.Fprintf(out, "trigger:\n  %s\n", e.CallCommand("http://127.0.0.1:8080/mcp"))
	if len(e.Input) > 0 {
		fmt.Fprintf(out, "  with input.json: %s\n", e.Input)
	}
	fmt.Fprintf(out, "\nexpected: %s, %d POSTs: %s\n", e.ExpectedOutcome, e.ExpectedPosts, e.Why)
	return nil
}
