package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/atomicfile"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
	"github.com/mcpdiag/mcpdiag/ui"
	"github.com/spf13/cobra"
)

type reportOptions struct {
	json            bool
	failOn          []string
	baseline        string
	maxRateIncrease float64
	maxP95Ratio     float64
	gateOn          string
	har             string
	html            string
	top             int
}

// maxBadLinesShown bounds the malformed-line warnings printed on stderr;
// the rest are only counted.
const maxBadLinesShown = 20

func newReportCmd() *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report [FILE…]",
		Short: "Summarise record files: counts by layer, outcome and tool, latency percentiles, worst offenders; CI gates; HAR export",
		Long: `Reads record files (JSONL written by mcpdiag call --record, serve's log or
proxy --record) from FILEs, or stdin when FILE is "-" or absent, streaming, and
prints a summary. Calls, exchanges and server lines are counted separately.
A malformed line is reported on stderr with its line number and skipped. An
input given twice (the same file under two names, a link to it, "-" twice, or
two inputs that begin with the same record, as cat f | mcpdiag report f -) is
refused: its records would be counted twice.

Gates for CI: --fail-on OUTCOME,… fails when any call (or exchange, see
--gate-on) has one of the outcomes; --baseline FILE compares with the --json
output of an earlier report: each failure rate may rise by at most
--max-rate-increase (absolute) and p95 may reach at most --max-p95-ratio
times the baseline's. Each failed gate is explained in one line on stderr.

When stdin is a pipe (proxy --record - | mcpdiag report), the first Ctrl-C,
which stops the writer too, does not stop report: it summarises what the
writer wrote before it closed the pipe. A second Ctrl-C stops it at once.

Records of matrix runs that an interrupt (or a limit) cut short, and of
calls mcpdiag call was stopped in, carry the warning matrix-run-interrupted
or call-interrupted: they are counted apart as interrupted, never as
failures, and the report says the run was incomplete. Exchanges that the
recording proxy's or server's own shutdown cut (flag SD: mcpdiag proxy or
serve stopped with them in flight) are counted apart the same way, as cut
by shutdown.

Exit status: 0 ok, 1 a gate failed, 2 usage error or unreadable input, 3 no
gate failed but records of interrupted runs or calls, or of exchanges cut by
the proxy's or server's shutdown, were read (the run or capture they came
from was incomplete).`,
		Example: `  mcpdiag report calls.jsonl
  mcpdiag call http://127.0.0.1:8080/mcp echo --json | mcpdiag report
  mcpdiag report --json proxy.jsonl > baseline.json
  mcpdiag report --fail-on TOOL_ERROR,JSONRPC_ERROR --baseline baseline.json proxy.jsonl
  mcpdiag report --har exchanges.har proxy.jsonl
  mcpdiag report --html report.html proxy.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the summary as JSON (usable later as --baseline)")
	f.StringSliceVar(&o.failOn, "fail-on", nil, "exit 1 when a record has one of these `OUTCOMES` (comma-separated, e.g. TOOL_ERROR,HTTP_ERROR)")
	f.StringVar(&o.baseline, "baseline", "", "compare with an earlier report's --json output in `FILE`; exit 1 past the thresholds")
	f.Float64Var(&o.maxRateIncrease, "max-rate-increase", report.DefaultMaxRateIncrease, "with --baseline: largest allowed rise of a failure rate, absolute (0.05 = 5 points)")
	f.Float64Var(&o.maxP95Ratio, "max-p95-ratio", report.DefaultMaxP95Ratio, "with --baseline: largest allowed p95 latency as a multiple of the baseline's")
	f.StringVar(&o.gateOn, "gate-on", "auto", "`KIND` of records the gates look at: auto (calls if any, else exchanges, else server lines), call, exchange or server")
	f.StringVar(&o.har, "har", "", "also write the HTTP exchanges as a HAR 1.2 archive to `FILE` (opens in browser devtools; stdio exchanges are left out)")
	f.StringVar(&o.html, "html", "", "also write one self-contained HTML page (table, detail, charts; records embedded, nothing fetched) to `FILE`")
	f.IntVar(&o.top, "top", report.DefaultTop, "list the `N` worst offenders and slowest records")
	return cmd
}

func runReport(stdin io.Reader, stdout, stderr io.Writer, files []string, o reportOptions) error {
	// Everything that can be refused is checked before the first record is
	// read, so a usage error never leaves a half-written output.
	gates := report.Gates{MaxRateIncrease: o.maxRateIncrease, MaxP95Ratio: o.maxP95Ratio}
	outcomes, err := report.ParseOutcomes(strings.Join(o.failOn, ","))
	if err != nil {
		return usageError("--fail-on: %v", err)
	}
	gates.FailOn = outcomes
	switch on := strings.TrimSuffix(o.gateOn, "s"); on {
	case "auto":
	case "call", "exchange", "server":
		gates.On = on
	default:
		return usageError("--gate-on %q: want auto, call, exchange or server", o.gateOn)
	}
	if o.maxRateIncrease < 0 || o.maxRateIncrease > 1 {
		return usageError("--max-rate-increase must be between 0 and 1, got %g", o.maxRateIncrease)
	}
	if o.maxRateIncrease == 0 {
		gates.MaxRateIncrease = -1 // no increase at all; 0 would mean the default
	}
	if !(o.maxP95Ratio > 0) {
		return usageError("--max-p95-ratio must be positive, got %g", o.maxP95Ratio)
	}
	if o.top < 1 {
		return usageError("--top must be at least 1, got %d", o.top)
	}
	if o.baseline != "" {
		f, err := os.Open(o.baseline)
		if err != nil {
			return usageError("--baseline: %v", err)
		}
		gates.Baseline, err = report.ReadSummary(f)
		f.Close()
		if err != nil {
			return usageError("--baseline %s: %v", o.baseline, err)
		}
	}

	if len(files) == 0 {
		files = []string{"-"}
	}
	inputs := make([]io.Reader, len(files))
	var harTarget, htmlTarget os.FileInfo
	if o.har != "" {
		harTarget, _ = os.Stat(o.har)
	}
	if o.html != "" {
		htmlTarget, _ = os.Stat(o.html)
		if o.har != "" && filepath.Clean(o.har) == filepath.Clean(o.html) {
			return usageError("--har and --html name the same file %s", o.html)
		}
	}
	// One input given twice (the same name, "./f" and "f", a link to it,
	// stdin twice) would have its records counted twice, in every count of
	// the report, without a word: refused (docs/decisions.md).
	seen := make([]os.FileInfo, len(files))
	same := func(i int, st os.FileInfo) error {
		seen[i] = st
		for j := range i {
			if seen[j] != nil && os.SameFile(seen[j], st) {
				return usageError("%s and %s are the same file: its records would be counted twice; name each input once", inputName(files[j]), inputName(files[i]))
			}
		}
		return nil
	}
	for i, name := range files {
		if name == "-" {
			if slices.Contains(files[:i], "-") {
				return usageError("stdin (-) is given twice: name each input once")
			}
			if f, ok := stdin.(*os.File); ok {
				if st, err := f.Stat(); err == nil {
					if err := same(i, st); err != nil {
						return err
					}
				}
			}
			inputs[i] = stdin
			if release := holdInterrupt(stdin, stderr); release != nil {
				defer release()
			}
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return usageError("cannot open %s: %v", name, err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			if st.IsDir() {
				return usageError("%s is a directory", name)
			}
			if err := same(i, st); err != nil {
				return err
			}
			if harTarget != nil && os.SameFile(st, harTarget) {
				return usageError("--har %s would overwrite an input", o.har)
			}
			if htmlTarget != nil && os.SameFile(st, htmlTarget) {
				return usageError("--html %s would overwrite an input", o.html)
			}
		}
		inputs[i] = f
	}

	acc := report.New(report.Options{Top: o.top})
	reports := []report.Report{acc}
	var har *report.HARWriter
	var harFile *atomicfile.File
	if o.har != "" {
		// Written whole: the old archive stays until the new one is done.
		harFile, err = atomicfile.Create(o.har, 0o600)
		if err != nil {
			return usageError("--har: %v", err)
		}
		defer harFile.Abort()
		har = report.NewHARWriter(harFile, report.HAROptions{Creator: "mcpdiag", Version: client.DefaultClientInfo.Version})
		reports = append(reports, har)
	}
	var page *ui.HTMLWriter
	var pageFile *atomicfile.File
	if o.html != "" {
		// Written whole, like the HAR: a failed run leaves the old page.
		pageFile, err = atomicfile.Create(o.html, 0o600)
		if err != nil {
			return usageError("--html: %v", err)
		}
		defer pageFile.Abort()
		page = ui.NewHTMLWriter(pageFile, ui.HTMLOptions{Title: "mcpdiag report: " + strings.Join(files, ", ")})
		reports = append(reports, page)
	}

	// Malformed lines are named on stderr only (the text report counts
	// them). A file's messages wait for its first record: an input that
	// holds no record at all (/etc/passwd, an empty file) is refused in
	// one line, not reported as twenty skipped lines and "0 records".
	var bad int64
	show := func(b report.BadLine) {
		bad++
		switch {
		case bad > maxBadLinesShown:
		case b.NoOutcome:
			fmt.Fprintf(stderr, "mcpdiag: %s:%d: %s\n", b.File, b.Line, oneLine(b.Error))
		default:
			fmt.Fprintf(stderr, "mcpdiag: %s:%d: skipped malformed line: %s\n", b.File, b.Line, oneLine(b.Error))
		}
	}
	// The same records given twice through another route than the same
	// file (cat f | report f -, a copy of f) are not told apart by name:
	// an input whose first record (by id) is an earlier input's first is
	// refused too. Only first records are compared: counting every id
	// would hold memory in the input's size (docs/decisions.md).
	firsts := make([]firstRecord, len(inputs))
	for i, in := range inputs {
		name := files[i]
		if name == "-" {
			name = "stdin"
		}
		st, err := report.ReadFile(in, name, show, append(reports, &firsts[i])...)
		if id := firsts[i].id; err == nil && id != "" {
			for j := range i {
				if firsts[j].id == id {
					if har != nil {
						har.Close()
					}
					return usageError("%s begins with record %s, as %s does: the same records given twice would be counted twice; name each input once", inputName(files[i]), id, inputName(files[j]))
				}
			}
		}
		var notRecords *report.NotRecordsError
		if err != nil {
			if har != nil {
				har.Close()
			}
			if errors.As(err, &notRecords) {
				return usageError("%v", err)
			}
			return usageError("reading %s: %v", name, err)
		}
		bad += st.Undelivered // counted in the total, past what is shown anyway
		if har != nil && har.Err() != nil {
			return usageError("--har %s: %v", o.har, har.Err())
		}
	}
	if bad > maxBadLinesShown {
		fmt.Fprintf(stderr, "mcpdiag: %d more malformed lines skipped (%d in all)\n", bad-maxBadLinesShown, bad)
	}
	acc.Close()
	if har != nil {
		if err := har.Close(); err != nil {
			return usageError("--har %s: %v", o.har, err)
		}
		if err := harFile.Commit(); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--har: %w", err)}
		}
		if n := har.Stdio(); n > 0 {
			fmt.Fprintf(stderr, "mcpdiag: --har %s: %d stdio exchange(s) left out: a HAR entry is an HTTP request and response, and stdio has no HTTP method or status\n", o.har, n)
		}
		if n := har.LeftOut(); n > 0 {
			fmt.Fprintf(stderr, "mcpdiag: --har %s: %d exchange record(s) without an outcome left out (named above by file and line, and in the archive's log.comment)\n", o.har, n)
		}
	}
	if page != nil {
		if err := page.Close(); err != nil {
			return usageError("--html %s: %v", o.html, err)
		}
		if err := pageFile.Commit(); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--html: %w", err)}
		}
		if n := page.LeftOut(); n > 0 {
			fmt.Fprintf(stderr, "mcpdiag: --html %s: %d call or exchange record(s) without an outcome left out (named above by file and line, and on the page beside its count of records)\n", o.html, n)
		}
	}

	s := acc.Summary()
	s.Files = files
	if gates.Enabled() {
		s.Gates, err = gates.Check(s)
		if err != nil {
			return usageError("--baseline %s: %v", o.baseline, err)
		}
	}
	render, out := report.NewTextReporter(s), stdout
	if o.json {
		render, out = report.NewJSONReporter(s), visible.JSONWriter{W: stdout}
	}
	if err := render.Report(out); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("writing the report: %w", err)}
	}
	if s.Gates != nil && !s.Gates.Passed {
		for _, f := range s.Gates.Failures {
			fmt.Fprintf(stderr, "mcpdiag: gate failed: %s\n", oneLine(f.Message))
		}
		return &exitError{code: 1, err: errSilent}
	}
	// The records are true, but the run or capture they came from is not
	// whole: a CI step must not read a green report of it.
	var incomplete []string
	if s.Interrupted > 0 {
		incomplete = append(incomplete, fmt.Sprintf("%d record(s) of runs an interrupt cut short (%s): the run was incomplete; they are counted apart, not as failures",
			s.Interrupted, report.InterruptedWords(s.InterruptedWarnings)))
	}
	if s.CutByShutdown > 0 {
		incomplete = append(incomplete, fmt.Sprintf("%d record(s) of exchanges the recording proxy's or server's own shutdown cut (flag SD): the capture was incomplete; they are counted apart, not as failures",
			s.CutByShutdown))
	}
	if s.NoOutcome > 0 {
		incomplete = append(incomplete, fmt.Sprintf("%d call or exchange record(s) without an outcome (named above by file and line): the input is partial; they are counted apart, in no section",
			s.NoOutcome))
	}
	if len(incomplete) > 0 {
		return &exitError{code: ExitReportIncomplete, err: errors.New(strings.Join(incomplete, "; "))}
	}
	return nil
}

// inputName is how report names an input: "stdin" for "-".
func inputName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// ExitReportIncomplete is the exit status of `mcpdiag report` when no gate
// failed but the records include ones of matrix runs or calls an interrupt
// cut short (record.InterruptedWarnings) or of exchanges the recording
// proxy's or server's own shutdown cut (record.FlagSD), or call or
// exchange records without an outcome (report.Summary.NoOutcome): the
// report is printed, and the run, capture or input it describes was
// incomplete. A failed gate (exit 1) takes precedence: the
// failures it found are in the records that were judged.
const ExitReportIncomplete = 3

// holdInterrupt keeps report alive through the first Ctrl-C when its stdin
// is a pipe: in `mcpdiag proxy --record - | mcpdiag report` (or probe, call,
// serve --log -) a terminal's Ctrl-C reaches both; the writer stops, writes
// its last records and closes the pipe, and report summarises them instead
// of dying with it and printing nothing. A second Ctrl-C stops report at
// once (the default action, restored after the first). It returns nil, and
// changes nothing, when stdin is not a pipe; otherwise the function that
// stops holding.
func holdInterrupt(stdin io.Reader, stderr io.Writer) func() {
	f, ok := stdin.(*os.File)
	if !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	sigs := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(sigs, os.Interrupt)
	go func() {
		select {
		case <-sigs:
			signal.Reset(os.Interrupt)
			fmt.Fprintln(stderr, "mcpdiag report: interrupt: summarising the records read when stdin ends (again to stop at once)")
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
		})
	}
}

// firstRecord keeps the id of the first record of an input that has one.
type firstRecord struct{ id string }

// Add keeps r's id when it is the input's first with one.
func (f *firstRecord) Add(r *record.Record) {
	if f.id == "" && r != nil {
		f.id = r.ID
	}
}
