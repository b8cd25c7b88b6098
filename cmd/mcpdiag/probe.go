package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/spf13/cobra"
)

type probeOptions struct {
	protocol   string
	seed       uint64
	maxProbes  int
	allow      []string
	allowAll   bool
	timeout    time.Duration
	interval   time.Duration
	headers    []string
	recordFile string
	junit      string
	json       bool
	failOn     string
	command    []string // a stdio server (after --)
}

func newProbeCmd() *cobra.Command {
	var o probeOptions
	cmd := &cobra.Command{
		Use:   "probe URL | probe [flags] -- COMMAND [ARGS…]",
		Short: "Grade an MCP server on how it reports failure, with probes made from its own tool schemas",
		Long: `Discovers the server (Streamable HTTP, either era or --protocol; or, after
--, a stdio server started as COMMAND ARGS…, either era), lists every
tool, and sends a bounded, seeded set of probes: arguments that break each
read-only tool's inputSchema in one place (a required property missing, a
wrong type, a null, a value outside enum/minimum/maximum/maxLength/pattern,
an extra property where additionalProperties is false, empty arguments,
arguments that are not an object), an unknown tool name, a tools/call
without params.name, a string and a number request id, a notification.
Every answer is classified, recorded and judged by the probe rules
(docs/probe.md), each citing the spec. Over stdio the HTTP-only probes
(foreign Origin, bad MCP-Protocol-Version header) are not sent and their
rules are n/a; a notification must get no line; a stdout line that is not
JSON-RPC is a finding; the server is stopped at the end (stdin closed,
killed after 2s).

Safety: only tools annotated readOnlyHint true receive argument probes;
--allow TOOL or --allow-all widen that, with a warning on each tool that is
not read-only. The other probes call no listed tool.

Output: a table per tool (each probed tool × the rules about its probes),
one line per rule (a FAIL with its severity and evidence naming the probe
by index; the seed is on the first line), a grade per rule family, and a
summary; --json and --junit FILE carry the same. With --record - stdout
holds only the records and the report goes to stderr.

Severities (docs/probe.md): must (a MUST of MCP or JSON-RPC broken), should
(a SHOULD, or the answer the spec prescribes without a key word), advice.
--fail-on SEVERITY (default should) picks the failures that exit 1; none
never does.

Exit status: 0 no rule failed at --fail-on or above, 1 one did, 2 usage
error, 3 the tools could not be listed, 6 a record (--record) or the JUnit
file (--junit) could not be written, 130 stopped by Ctrl-C (what was
answered is judged and printed).`,
		Example: `  mcpdiag probe http://127.0.0.1:8080/mcp
  mcpdiag probe https://mcp.example.com/mcp --protocol 2025-11-25 --json
  mcpdiag probe http://127.0.0.1:3000/mcp --seed 7 --max-probes 3 --record probe.jsonl
  mcpdiag probe http://127.0.0.1:3000/mcp --allow counter_set
  mcpdiag probe http://127.0.0.1:3000/mcp --fail-on must --junit probe.xml
  mcpdiag probe http://127.0.0.1:3000/mcp --record - | mcpdiag report
  mcpdiag probe -- npx -y @modelcontextprotocol/server-everything stdio`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch dash := cmd.ArgsLenAtDash(); {
			case dash == 0 && len(args) > 0:
				return nil // a stdio server's argv
			case dash == 0:
				return errors.New("probe: no command after --: give the command that starts the stdio server (mcpdiag probe -- COMMAND [ARGS…])")
			case len(args) == 0:
				return errors.New("probe: give the server's URL (mcpdiag probe URL), or -- and the command that starts a stdio server (mcpdiag probe -- COMMAND [ARGS…])")
			case len(args) > 1:
				return fmt.Errorf("probe: one URL, or -- and a command, not both: %d arguments (%s)", len(args), strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() == 0 {
				o.command = args
				return runProbe(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), "", o)
			}
			return runProbe(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.protocol, "protocol", client.ProtocolAuto, "auto, 2026-07-28 or 2025-11-25")
	f.Uint64Var(&o.seed, "seed", probe.DefaultSeed, "seed of the probes (the same seed makes the same probes)")
	f.IntVar(&o.maxProbes, "max-probes", probe.DefaultMaxPerTool, "most argument probes per tool")
	f.StringArrayVar(&o.allow, "allow", nil, "also send argument probes to TOOL, though it is not read-only (repeatable)")
	f.BoolVar(&o.allowAll, "allow-all", false, "send argument probes to every tool, destructive ones included")
	f.DurationVar(&o.timeout, "timeout", probe.DefaultTimeout, "time limit of each probe")
	f.DurationVar(&o.interval, "interval", probe.DefaultInterval, "pause between two probes")
	f.StringArrayVar(&o.headers, "header", nil, "an extra request header 'K: V' (repeatable)")
	f.StringVar(&o.recordFile, "record", "", "append the records (JSONL) to FILE; - for stdout (then the report goes to stderr)")
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	f.StringVar(&o.junit, "junit", "", "also write the verdicts as JUnit XML to FILE (a test case per rule, and per tool and rule)")
	f.StringVar(&o.failOn, "fail-on", string(probe.DefaultFailOn), "exit 1 when a rule fails with this severity or a heavier one: must, should, advice or none")
	return cmd
}

// runProbe parses the flags into probe.Options and probe.Output and runs
// probe.Main, which validates, runs, renders and picks the exit status.
func runProbe(ctx context.Context, stdout, stderr io.Writer, url string, o probeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.maxProbes < 1 || o.timeout <= 0 || o.interval < 0 {
		return usageError("--max-probes must be >= 1, --timeout positive and --interval >= 0")
	}
	failOn, err := judge.ParseSeverity(o.failOn)
	if err != nil {
		return usageError("--fail-on: %v", err)
	}
	opts := probe.Options{URL: url, Command: o.command, Protocol: o.protocol, Seed: o.seed, MaxPerTool: o.maxProbes, Allow: o.allow, AllowAll: o.allowAll,
		Timeout: o.timeout, Interval: o.interval, FailOn: failOn}
	if o.interval == 0 {
		opts.Interval = -1 // --interval 0: no pause (0 is the default in Options)
	}
	if opts.Header, err = parseHeaders(o.headers); err != nil {
		return err
	}
	parent := ctx
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	if w := readableByOthers("--record", o.recordFile); w != "" {
		fmt.Fprintf(stderr, "mcpdiag probe: %s\n", w)
	}
	err = probe.Main(ctx, opts, probe.Output{Stdout: stdout, Stderr: stderr, JSON: o.json, JUnit: o.junit, Record: o.recordFile})
	var pe *probe.ExitError
	if errors.As(err, &pe) && pe.Code == probe.ExitNoRun && ctx.Err() != nil && parent.Err() == nil {
		// Stopped by Ctrl-C, as call and matrix are: what was answered
		// is judged and printed, the records written (else exit 6),
		// but 3 would say the server's tools could not be listed.
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("probe stopped (%v) before it finished: only what was answered until then is judged and recorded", context.Cause(ctx))}
	}
	if errors.As(err, &pe) {
		if pe.Err == nil {
			return &exitError{code: pe.Code, err: errSilent}
		}
		return &exitError{code: pe.Code, err: pe.Err}
	}
	return err
}
