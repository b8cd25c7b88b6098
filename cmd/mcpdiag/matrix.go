package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/atomicfile"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/ui"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type matrixOptions struct {
	wide        bool
	json        bool
	junit       string
	record      string
	scenarios   []string
	protocol    string
	repeat      int
	seed        uint64
	parallel    int
	timeout     time.Duration
	startup     time.Duration
	maxRetries  int
	fromRecords string
	verbose     bool
	html        string
	uiAddr      string // --ui: the live page's address; "" for none

	// stderr receives the live page's URL (the command's stderr).
	stderr io.Writer
	// uiReady, when set (tests), is called with the live page's URL.
	uiReady func(url string)

	// progress, when set, receives a progress line after each run
	// (rewritten in place with \r): the command sets it to stderr when
	// stderr is a terminal.
	progress io.Writer
}

func newMatrixCmd() *cobra.Command {
	var o matrixOptions
	cmd := &cobra.Command{
		Use:   "matrix [flags] [-- COMMAND ARGS...]",
		Short: "Run a client against every fault scenario and judge, from the server's side, what it did",
		Long: `Starts the fault server on 127.0.0.1 and runs a client against every scenario
of the catalogue (both protocol eras where the scenario applies, plus probes
that call the destructive delete_item), each on its own endpoint. The
verdicts come from the server's own log of what the client sent, checked
against rules that each cite the spec or the retry policy (docs/matrix.md).

Without a command the built-in client runs. After --, COMMAND ARGS... runs
once per scenario with the endpoint URL as its last argument and in MCP_URL;
MCP_SCENARIO, MCP_CASE, MCP_TOOL, MCP_ARGS, MCP_TIMEOUT_MS, and MCP_PROTOCOL
and MCP_INPUT when the case has them, say what to call. A line "outcome: NAME"
on its stdout is the classification it printed.

--from-records FILE judges records captured by mcpdiag proxy (or mcpdiag call,
or mcpdiag serve --log) with the rules that need no injected fault.

On SIGINT or SIGTERM the runs in flight are stopped, and the table (or JSON)
and --junit are written with the runs that finished, marked incomplete; a
second signal stops at once. --junit and other whole files are written to a
temporary file renamed into place: an interrupted run never truncates them.

A run whose client did not declare the capability the scenario's
interaction needs (elicitation.* needs elicitation) is "not tested":
neither passed nor failed, counted apart in the summary.

Exit status: 0 no verdict failed (not tested is no failure), 1 some verdict
failed, 2 usage error, 128+N stopped by signal N (130 for SIGINT) with the
output marked incomplete.`,
		Example: `  mcpdiag matrix
  mcpdiag matrix --wide --scenarios 'sse.*,errors.rate_limited'
  mcpdiag matrix --junit matrix.xml --record matrix.jsonl -- node my-client.js
  mcpdiag matrix --protocol 2026-07-28 --repeat 5 -- python3 client.py --verbose
  mcpdiag matrix --from-records proxy.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := strayUIAddr(cmd.Flags(), args, cmd.ArgsLenAtDash()); err != nil {
				return err
			}
			var command []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if dash > 0 {
					return usageError("unexpected argument %q: put the client's command after --", args[0])
				}
				command = args[dash:]
				if len(command) == 0 {
					return usageError("no command after --")
				}
			} else if len(args) > 0 {
				return usageError("unexpected argument %q: put the client's command after --, as in mcpdiag matrix -- node my-client.js", args[0])
			}
			ctx, stop := interruptContext(cmd.Context())
			defer stop()
			o.stderr = cmd.ErrOrStderr()
			if writesToTerminal(cmd.ErrOrStderr()) {
				o.progress = cmd.ErrOrStderr()
			}
			return runMatrix(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), o, command, cmd.Flags().Changed)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.verbose, "verbose", false, "explain every failed check of every case (default: the failures summed up per rule, with the first evidence)")
	f.BoolVar(&o.wide, "wide", false, "every column: layer, MRTR rounds, why each retry, time, the failed rules")
	f.BoolVar(&o.json, "json", false, "one JSON object per scenario with the evidence (JSON Lines), instead of the table")
	f.StringVar(&o.junit, "junit", "", "also write JUnit XML to FILE (a testsuite per scenario, a testcase per rule)")
	f.StringVar(&o.html, "html", "", "also write one self-contained HTML page to `FILE`: the verdicts as a grid of scenarios by era, and every exchange (docs/ui.md)")
	f.StringVar(&o.uiAddr, "ui", "", "serve a live page at `ADDR` (loopback; 127.0.0.1:0 picks a port): the grid fills in as cases finish, with every exchange; it stays until Ctrl-C (docs/ui.md)")
	f.Lookup("ui").NoOptDefVal = "127.0.0.1:0"
	f.StringVar(&o.record, "record", "", "append every exchange to FILE (JSONL): the server's log lines, and the built-in client's records (\"-\" for stdout; the verdicts then go to stderr)")
	f.StringSliceVar(&o.scenarios, "scenarios", nil, "only the scenarios (or cases) matching these globs, comma-separated (e.g. 'sse.*,errors.rate_limited')")
	f.StringVar(&o.protocol, "protocol", "", "only the cases of one era: 2026-07-28 or 2025-11-25 (default both)")
	f.IntVar(&o.repeat, "repeat", 1, "run every case N times, each on a fresh endpoint, and aggregate (for flaky behaviour)")
	f.Uint64Var(&o.seed, "seed", matrix.DefaultSeed, "seed of the scenarios' schedules and the built-in client's jitter")
	f.IntVar(&o.parallel, "parallel", 0, "runs in flight at once (default: the built-in client max(8, 4×CPUs), a client command one per CPU, at least 2)")
	f.DurationVar(&o.timeout, "timeout", matrix.DefaultRunTimeout, "time limit for one run of the client command, from its first request (it is killed after)")
	f.DurationVar(&o.startup, "start-timeout", matrix.DefaultStartTimeout, "time limit from the client command's start to its first request (it is killed after: the run fails client.ran, did not start within …, and no other rule judges it)")
	f.IntVar(&o.maxRetries, "max-retries", matrix.DefaultMaxRetries, "retries of one request the rule safety.retry-bound allows")
	f.StringVar(&o.fromRecords, "from-records", "", "judge captured records (FILE, or - for stdin) instead of running scenarios")
	return cmd
}

func runMatrix(ctx context.Context, stdin io.Reader, stdout io.Writer, o matrixOptions, command []string, changed func(string) bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.wide && o.json {
		return usageError("--wide and --json cannot both be set")
	}
	if o.repeat < 1 || o.parallel < 0 || o.maxRetries < 1 || o.timeout <= 0 || o.startup <= 0 {
		return usageError("--repeat, --max-retries, --timeout and --start-timeout must be positive, --parallel at least 0")
	}
	limits := matrix.Limits{MaxRetries: o.maxRetries, RunTimeout: o.timeout, StartTimeout: o.startup}
	if o.fromRecords != "" {
		for _, name := range []string{"scenarios", "protocol", "repeat", "seed", "parallel", "timeout", "start-timeout", "record", "html", "ui"} {
			if changed(name) {
				return usageError("--%s does not apply to --from-records", name)
			}
		}
		if command != nil {
			return usageError("--from-records judges records: it runs no command")
		}
		return runPassive(stdin, stdout, o, limits)
	}
	cases, err := matrix.Select(matrix.Cases(), o.scenarios, o.protocol)
	if err != nil {
		return usageError("%v", err)
	}
	opts := matrix.Options{Cases: cases, Command: command, Repeat: o.repeat, Seed: o.seed, Parallel: o.parallel, Limits: limits}
	if o.seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano()) | 1
	}
	if command != nil {
		// Before any file is opened: a missing client leaves nothing behind.
		if err := matrix.CheckCommand(command); err != nil {
			return usageError("%v", err)
		}
	}
	var junit *atomicfile.File
	if o.junit != "" {
		// Written whole at the end: until then the old file stays.
		if junit, err = atomicfile.Create(o.junit, 0o600); err != nil {
			return usageError("--junit: %v", err)
		}
		defer junit.Abort()
	}
	if o.record != "" {
		w, err := record.OpenSink(o.record, record.SinkOptions{Stdout: visible.JSONWriter{W: stdout}})
		if err != nil {
			return usageError("--record: %v", err)
		}
		defer w.Close()
		opts.Records = w
	}
	if o.progress != nil {
		opts.Progress = progressLine(o.progress, len(cases)*o.repeat)
	}
	var live *ui.Live
	var liveReport *matrix.Report // the report, for the page when the matrix stopped
	if o.uiAddr != "" {
		if o.stderr == nil {
			o.stderr = io.Discard
		}
		live, err = ui.StartLive(o.uiAddr, "mcpdiag matrix", record.Encoder{})
		if err != nil {
			return usageError("--ui %v", err)
		}
		defer live.Close()
		fmt.Fprintf(o.stderr, "mcpdiag matrix: live page at %s\n", live.URL)
		if o.uiReady != nil {
			o.uiReady(live.URL)
		}
		opts.Records = ui.LineTee{Primary: opts.Records, Page: live.Server}
		// Every case has its cell from the start, "running" until judged.
		for i := range cases {
			_ = live.Server.PublishCase(caseCell(&cases[i], "running", o.repeat, ""))
		}
		// A case reaches the grid when its last run is judged: the
		// calls are serialized, and each run's result was stored before
		// its call, so the case is whole and no run is still writing it.
		prev, finished := opts.Progress, map[*matrix.CaseResult]int{}
		opts.Progress = func(c *matrix.CaseResult, r *matrix.RunResult) {
			if prev != nil {
				prev(c, r)
			}
			if finished[c]++; finished[c] == len(c.Runs) {
				if b, err := json.Marshal(c.JSON()); err == nil {
					_ = live.Server.PublishCase(b)
				}
			}
		}
		cut := map[string]bool{} // the cases with a run the stop cut short
		opts.Stopped = func(c *matrix.CaseResult, _ *matrix.RunResult) { cut[c.Case.Name] = true }
		// Stopped before every case was judged: no cell stays
		// "running" (the page outlives the process on the screen).
		defer func() {
			if rep := liveReport; rep != nil && rep.Incomplete != nil {
				publishStopped(live.Server, cases, rep, finished, cut, o.repeat)
			}
		}()
	}
	var page *ui.HTMLWriter
	var pageFile *atomicfile.File
	if o.html != "" {
		if o.junit != "" && filepath.Clean(o.junit) == filepath.Clean(o.html) || o.record != "" && filepath.Clean(o.record) == filepath.Clean(o.html) {
			return usageError("--html %s is also the --junit or --record file", o.html)
		}
		// Written whole at the end, like --junit.
		if pageFile, err = atomicfile.Create(o.html, 0o600); err != nil {
			return usageError("--html: %v", err)
		}
		defer pageFile.Abort()
		page = ui.NewHTMLWriter(pageFile, ui.HTMLOptions{Title: "mcpdiag matrix"})
		opts.Records = &pageRecords{primary: opts.Records, page: page}
	}
	rep, runErr := matrix.Run(ctx, opts)
	liveReport = rep
	if o.progress != nil {
		fmt.Fprint(o.progress, "\r\033[K") // the table follows on stdout
	}
	if rep == nil {
		if ctx.Err() != nil {
			if o.json {
				// A JSON consumer gets the state, as after a run
				// (matrixna22): nothing ran, every case is not run.
				in := &matrix.Incomplete{Reason: context.Cause(ctx).Error(), Planned: len(cases) * max(1, o.repeat), NotRun: []string{}}
				for _, c := range cases {
					in.NotRun = append(in.NotRun, c.Name)
				}
				out := stdout
				if o.record == "-" && o.stderr != nil {
					out = o.stderr
				}
				if err := (&matrix.Report{Incomplete: in}).WriteJSON(visible.JSONWriter{W: out}); err != nil {
					return &exitError{code: 2, err: fmt.Errorf("matrix stopped (%v) before any run; writing the report: %w", context.Cause(ctx), err)}
				}
			}
			return &exitError{code: interruptCode(ctx), err: fmt.Errorf("matrix stopped (%v) before any run: %w", context.Cause(ctx), runErr)}
		}
		return &exitError{code: 2, err: runErr}
	}
	// With --record - the records are stdout: the verdicts go to stderr.
	out := stdout
	if o.record == "-" && o.stderr != nil {
		out = o.stderr
	}
	switch {
	case o.json:
		err = rep.WriteJSON(visible.JSONWriter{W: out})
		if err == nil && rep.LateLines > 0 && o.stderr != nil {
			// The objects are per case; the late lines are no case's.
			fmt.Fprintf(o.stderr, "mcpdiag matrix: %d server log line(s) came after their run was judged: in no verdict; written to --record (when set) with the warning %s\n", rep.LateLines, matrix.LateWarning)
		}
	default:
		err = rep.WriteText(out, matrix.TextOptions{Wide: o.wide, Verbose: o.verbose})
		if err == nil && rep.Incomplete != nil {
			fmt.Fprintf(out, "Stopped after %s (incomplete).\n", rep.Duration.Round(100*time.Millisecond))
		} else if err == nil {
			fmt.Fprintf(out, "Finished in %s.\n", rep.Duration.Round(100*time.Millisecond))
		}
	}
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("writing the report: %w", err)}
	}
	if junit != nil {
		if err := rep.WriteJUnit(junit); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--junit: %w", err)}
		}
		if err := junit.Commit(); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--junit: %w", err)}
		}
	}
	if page != nil {
		var cases bytes.Buffer
		if err := rep.WriteJSON(&cases); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--html: %w", err)}
		}
		page.SetMatrix(cases.Bytes())
		if err := page.Close(); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--html: %w", err)}
		}
		if err := pageFile.Commit(); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--html: %w", err)}
		}
	}
	if opts.Records != nil {
		if err := opts.Records.Close(); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--record: %w", err)}
		}
	}
	if live != nil && rep.Incomplete == nil && ctx.Err() == nil {
		fmt.Fprintf(o.stderr, "mcpdiag matrix: finished; the page stays at %s until Ctrl-C\n", live.URL)
		<-ctx.Done()
	}
	switch {
	case rep.Incomplete != nil:
		return &exitError{code: interruptCode(ctx), err: fmt.Errorf("matrix stopped (%s): the output holds the runs that finished, marked incomplete", rep.Incomplete)}
	case runErr != nil:
		return &exitError{code: 2, err: runErr}
	case rep.Failed():
		return &exitError{code: 1, err: errSilent}
	}
	return nil
}

// signalCause is the cause of a context ended by a signal.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return s.sig.String() }

// interruptContext returns a context that ends on the first SIGINT or
// SIGTERM, with the signal as its cause. After the first signal the
// default action is back: a second one stops the process at once.
func interruptContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			cancel(signalCause{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel(nil)
	}
}

// interruptCode is the exit code of a run that ctx stopped: 128+N for
// signal N, else 130 (as for SIGINT).
func interruptCode(ctx context.Context) int {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		if n, ok := sc.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return 130
}

func runPassive(stdin io.Reader, stdout io.Writer, o matrixOptions, limits matrix.Limits) error {
	in, name := stdin, "stdin"
	if o.fromRecords != "-" {
		f, err := os.Open(o.fromRecords)
		if err != nil {
			return usageError("--from-records: %v", err)
		}
		defer f.Close()
		in, name = f, o.fromRecords
	}
	p, err := matrix.FromRecords(in, name, limits)
	if err != nil {
		return usageError("--from-records: %v", err)
	}
	if p.Used == 0 {
		return usageError("--from-records %s: no exchange or server records (%d lines read)", name, p.Lines)
	}
	if o.json {
		err = p.WriteJSON(visible.JSONWriter{W: stdout})
	} else {
		err = p.WriteTable(stdout)
	}
	if err != nil {
		return err
	}
	if o.junit != "" {
		f, err := atomicfile.Create(o.junit, 0o600)
		if err != nil {
			return usageError("--junit: %v", err)
		}
		defer f.Abort()
		if err := p.WriteJUnit(f); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--junit: %w", err)}
		}
		if err := f.Commit(); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--junit: %w", err)}
		}
	}
	if p.Failed() {
		return &exitError{code: 1, err: errSilent}
	}
	return nil
}

// writesToTerminal reports whether w is a terminal (progress is drawn only
// there: a log file or a CI console gets the table alone).
func writesToTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine returns a matrix.Options.Progress that rewrites one line:
// runs done of the total, how many failed, the last case.
func progressLine(w io.Writer, total int) func(*matrix.CaseResult, *matrix.RunResult) {
	done, failed := 0, 0
	return func(c *matrix.CaseResult, r *matrix.RunResult) {
		done++
		if r.Verdict() == judge.Fail {
			failed++
		}
		fmt.Fprintf(w, "\r\033[Kmatrix: %d/%d runs done, %d failed (last: %s)", done, total, failed, fit(visible.String(c.Case.Name), 40))
	}
}

func fit(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// pageRecords hands matrix's record lines to the --record file (when there
// is one) and to the --html page.
type pageRecords struct {
	mu      sync.Mutex
	primary record.LineWriter
	page    *ui.HTMLWriter
}

func (p *pageRecords) WriteLine(line []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if p.primary != nil {
		err = p.primary.WriteLine(line)
	}
	if rec, derr := record.Decode(bytes.TrimRight(line, "\r\n")); derr == nil {
		p.page.Add(rec)
	}
	return err
}

func (p *pageRecords) Close() error {
	if p.primary != nil {
		return p.primary.Close()
	}
	return nil
}

// publishStopped gives the live page the cell of every case a stopped
// matrix did not judge whole: its finished runs' verdicts marked
// incomplete, or "interrupted" (a run was in flight) or "not run" (none
// started) with the reason, as the records and the summary say it.
func publishStopped(page *ui.Server, cases []matrix.Case, rep *matrix.Report, finished map[*matrix.CaseResult]int, cut map[string]bool, repeat int) {
	kept := map[string]*matrix.CaseResult{}
	for _, c := range rep.Cases {
		kept[c.Case.Name] = c
	}
	for i := range cases {
		c := &cases[i]
		if cr := kept[c.Name]; cr != nil {
			if finished[cr] == repeat {
				continue // published whole when judged
			}
			j := cr.JSON()
			j.Parallel, j.Incomplete = rep.Parallel, rep.Incomplete.String()
			if b, err := json.Marshal(j); err == nil {
				_ = page.PublishCase(b)
			}
			continue
		}
		verdict := "not run"
		if cut[c.Name] {
			verdict = "interrupted"
		}
		_ = page.PublishCase(caseCell(c, verdict, repeat, rep.Incomplete.String()))
	}
}

// caseCell is the live page's cell of a case no run judged: "running"
// from the start, "interrupted" or "not run" when the matrix stopped
// (incomplete says why).
func caseCell(c *matrix.Case, verdict string, repeat int, incomplete string) []byte {
	name, probe := c.Name, ""
	if base, _, ok := strings.Cut(name, "@"); ok {
		name = base
	}
	if _, p, ok := strings.Cut(name, "/"); ok {
		probe = p
	}
	cell := map[string]any{"case": c.Name, "scenario": c.Scenario(), "probe": probe, "era": c.Era(),
		"layer": c.Layer(), "expected": c.Expected, "verdict": verdict, "runCount": repeat}
	if incomplete != "" {
		cell["incomplete"] = incomplete
	}
	b, _ := json.Marshal(cell)
	return b
}
