package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/atomicfile"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/mcpdiag/mcpdiag/record"
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
	command    []string // a stdio server (after --)
}

// Exit statuses of mcpdiag probe.
const (
	probeExitFinding = 1 // a probe rule failed
	probeExitNoRun   = 3 // the tools could not be listed, or the run was stopped
)

func newProbeCmd() *cobra.Command {
	var o probeOptions
	cmd := &cobra.Command{
		Use:   "probe URL | probe [flags] -- COMMAND [ARGS…]",
		Short: "Grade an MCP server on how it reports failure, with probes made from its own tool schemas",
		Long: `Discovers the server (Streamable HTTP, either era or --protocol; or, after
--, a stdio server started as COMMAND ARGS…, 2025-11-25), lists every
tool, and sends a bounded, seeded set of probes: arguments that break each
read-only tool's inputSchema in one place (a required property missing, a
wrong type, a null, a value outside enum/minimum/maximum/maxLength/pattern,
an extra property where additionalProperties is false, empty arguments,
arguments that are not an object), an unknown tool name, a tools/call
without params.name, a string and a number request id, a notification.
Every answer is classified, recorded and judged by the probe rules
(docs/probe.md), each citing the spec. Over stdio the HTTP-only probes
(foreign Origin, bad MCP-Protocol-Version header, notification 202) are not
sent and their rules are n/a; a stdout line that is not JSON-RPC is a
finding; the server is stopped at the end (stdin closed, killed after 2s).

Safety: only tools annotated readOnlyHint true receive argument probes;
--allow TOOL or --allow-all widen that, with a warning on each tool that is
not read-only. The other probes call no listed tool.

Exit status: 0 no rule failed, 1 a rule failed, 2 usage error, 3 the tools
could not be listed (or the run was interrupted), 6 a record (--record) or the
JUnit file (--junit) could not be written.`,
		Example: `  mcpdiag probe http://127.0.0.1:8080/mcp
  mcpdiag probe https://mcp.example.com/mcp --protocol 2025-11-25 --json
  mcpdiag probe http://127.0.0.1:3000/mcp --seed 7 --max-probes 3 --record probe.jsonl
  mcpdiag probe http://127.0.0.1:3000/mcp --allow counter_set
  mcpdiag probe -- npx -y @modelcontextprotocol/server-everything stdio`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() == 0 && len(args) > 0 {
				return nil // a stdio server's argv
			}
			return cobra.ExactArgs(1)(cmd, args)
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
	f.StringVar(&o.recordFile, "record", "", "append the records (JSONL) to FILE")
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	f.StringVar(&o.junit, "junit", "", "also write the verdicts as JUnit XML to FILE (one test case per rule)")
	return cmd
}

func runProbe(ctx context.Context, stdout, stderr io.Writer, url string, o probeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.command == nil && !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return usageError("URL %q: must start with http:// or https://", url)
	}
	switch o.protocol {
	case client.ProtocolAuto, client.Protocol2026, client.Protocol2025:
	default:
		return usageError("--protocol %q: must be auto, 2026-07-28 or 2025-11-25", o.protocol)
	}
	if o.maxProbes < 1 || o.timeout <= 0 || o.interval < 0 {
		return usageError("--max-probes must be >= 1, --timeout positive and --interval >= 0")
	}
	if o.command != nil && (len(o.headers) > 0 || o.protocol == client.Protocol2026) {
		return usageError("a stdio server (-- COMMAND) takes no --header and speaks 2025-11-25 only")
	}
	opts := probe.Options{URL: url, Command: o.command, Protocol: o.protocol, Seed: o.seed, MaxPerTool: o.maxProbes, Allow: o.allow, AllowAll: o.allowAll,
		Timeout: o.timeout, Interval: o.interval}
	if o.interval == 0 {
		opts.Interval = -1
	}
	var err error
	if opts.Header, err = parseHeaders(o.headers); err != nil {
		return err
	}
	red := record.NewRedactor()
	red.AddHeaderSecrets(opts.Header)
	var file *record.Sink
	if o.recordFile != "" {
		file, err = record.OpenSink(o.recordFile, record.SinkOptions{Stdout: stdout, Encoder: record.Encoder{Redactor: red, BodyLimit: 16 << 10},
			OnLoss: record.PrintLosses(stderr, "mcpdiag probe: --record: ")})
		if err != nil {
			return usageError("--record: %v", err)
		}
		opts.OnRecord = func(r *record.Record) { _ = file.Write(r) } // a loss is counted and named by the sink
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	rep, runErr := probe.Run(ctx, opts)
	if errors.Is(runErr, probe.ErrUsage) {
		return usageError("%v", runErr)
	}
	if rep != nil && rep.Tools != nil {
		if o.json {
			b, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, red.Scrub(string(b)))
		} else {
			var b strings.Builder
			writeProbeReport(&b, rep)
			io.WriteString(stdout, red.Scrub(b.String()))
		}
	}
	if o.junit != "" && rep != nil && rep.Tools != nil {
		var b strings.Builder
		if err := rep.WriteJUnit(&b); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(o.junit, []byte(red.Scrub(b.String())), 0o644); err != nil {
			return &exitError{code: ExitRecordsLost, err: fmt.Errorf("--junit: %w", err)}
		}
	}
	if file != nil {
		// writeAll with no records left to write: it closes the sink and
		// says what was lost, as for mcpdiag call.
		if lost := writeAll(file, nil, stderr, "--record"); len(lost) > 0 {
			return &exitError{code: ExitRecordsLost, err: fmt.Errorf("records lost: %s", strings.Join(lost, "; "))}
		}
	}
	if runErr != nil {
		return &exitError{code: probeExitNoRun, err: runErr}
	}
	if rep.Failed() {
		return &exitError{code: probeExitFinding, err: errSilent}
	}
	return nil
}

// writeProbeReport prints the run: the era, each tool and what was done
// with it, one line per rule (FAIL lines carry the evidence), a summary.
func writeProbeReport(w io.Writer, rep *probe.Report) {
	fmt.Fprintf(w, "probe %s: era %s (%s), seed %d, %d probes\n", rep.URL, rep.Protocol, rep.EraReason, rep.Seed, len(rep.Probes))
	var skipped, unread []string
	for _, t := range rep.Tools {
		switch {
		case !t.Allowed:
			skipped = append(skipped, t.Name)
		case t.Probes == 0:
			unread = append(unread, t.Name)
		default:
			line := fmt.Sprintf("  tool %s: %d argument %s: %d isError, %d JSON-RPC error, %d success, %d other", t.Name, t.Probes,
				map[bool]string{true: "probe", false: "probes"}[t.Probes == 1], t.ToolErrors, t.RPCErrors, t.Successes, t.Other)
			if t.Why != "" {
				line += "; " + t.Why
			}
			fmt.Fprintln(w, line)
		}
	}
	if len(unread) > 0 {
		fmt.Fprintf(w, "  no argument probe (inputSchema unreadable, or anyOf/oneOf/allOf/$ref): %s\n", strings.Join(unread, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "  not probed, not annotated readOnlyHint true (--allow TOOL to probe one): %s\n", strings.Join(skipped, ", "))
	}
	n := map[judge.Verdict]int{}
	for _, c := range rep.Checks {
		n[c.Verdict]++
		fmt.Fprintf(w, "%-4s %s: %s\n", strings.ToUpper(string(c.Verdict)), c.Rule, c.Evidence)
	}
	var grades []string
	for _, g := range rep.Grades {
		grades = append(grades, g.Family+" "+string(g.Verdict))
	}
	fmt.Fprintf(w, "grade: %s\n", strings.Join(grades, ", "))
	if rep.Stopped != "" {
		fmt.Fprintf(w, "stdio server %s: %s\n", strings.Join(rep.Command, " "), rep.Stopped)
	}
	fmt.Fprintf(w, "%d rules: %d pass, %d fail, %d n/a.\n", len(rep.Checks), n[judge.Pass], n[judge.Fail], n[judge.NotApplicable])
}
