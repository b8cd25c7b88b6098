package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/atomicfile"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// The exit statuses of Main (mcpdiag probe's).
const (
	// ExitFinding: a rule failed with a severity at least Options.FailOn.
	ExitFinding = 1
	// ExitUsage: bad options (ErrUsage); nothing was sent.
	ExitUsage = 2
	// ExitNoRun: the tools could not be listed, or the run was stopped
	// (what was answered is judged and reported).
	ExitNoRun = 3
	// ExitNotWritten: a record (Output.Record) or the JUnit file could not
	// be written.
	ExitNotWritten = 6
)

// ExitError is how a Main that did not succeed ends: the exit status, and
// what to say on one line (Err nil: the report already said it).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Output says where Main writes a run.
type Output struct {
	// Stdout gets the report (text, or JSON with JSON set), unless Record
	// is "-": then Stdout holds only the records and the report goes to
	// Stderr. Stderr also gets what went wrong with the records. A nil
	// writer discards.
	Stdout, Stderr io.Writer
	// JSON prints the report as one JSON object (the Report's fields).
	JSON bool
	// JUnit, when set, is a file the verdicts are written to as JUnit XML
	// (Report.WriteJUnit), whole or not at all.
	JUnit string
	// Record, when set, is a file the records are appended to as JSON
	// lines (record.OpenSink: "-" for Stdout).
	Record string
}

// Main runs a probe as mcpdiag probe does: it checks opts, opens the
// record file before anything is sent, runs, writes the report (secrets of
// opts.Header redacted, as in the records) and the JUnit file, and returns
// nil when no rule failed at opts.FailOn or above, or an *ExitError with
// the exit status: ExitFinding, ExitUsage, ExitNoRun, ExitNotWritten (the
// report, the JUnit file or a record could not be written: it outranks the
// run's own status, which the report still gives).
// opts.OnRecord, when set, is called after each record is written.
func Main(ctx context.Context, opts Options, out Output) error {
	if out.Stdout == nil {
		out.Stdout = io.Discard
	}
	if out.Stderr == nil {
		out.Stderr = io.Discard
	}
	if err := opts.Validate(); err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	report := out.Stdout
	if out.Record == "-" {
		report = out.Stderr
	}
	red := record.NewRedactor()
	red.AddHeaderSecrets(opts.Header)
	opts.Redactor = red
	var sink *record.Sink
	if out.Record != "" {
		var err error
		sink, err = record.OpenSink(out.Record, record.SinkOptions{Stdout: out.Stdout, Encoder: record.Encoder{Redactor: red, BodyLimit: 16 << 10},
			OnLoss: record.PrintLosses(out.Stderr, "mcpdiag probe: --record: ")})
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--record: %w", err)}
		}
		then := opts.OnRecord
		opts.OnRecord = func(r *record.Record) {
			_ = sink.Write(r) // a loss is counted and named by the sink
			if then != nil {
				then(r)
			}
		}
	}
	rep, runErr := Run(ctx, opts)
	if errors.Is(runErr, ErrUsage) {
		closeSink(sink, out.Stderr)
		return &ExitError{Code: ExitUsage, Err: runErr}
	}
	var lost []string
	if rep != nil && rep.Tools != nil {
		// Every text field is redacted before any format is written (a
		// stdio server's command line may carry a credential as a flag's
		// value, "--api-key KEY"; a check's evidence quotes the server):
		// the formats' own escaping (XML's &#34;, JSON's \u0026) would
		// hide a credential from the text patterns afterwards.
		rep.Redact(red)
		var b strings.Builder
		var err error
		if out.JSON {
			err = rep.WriteJSON(&b)
		} else {
			err = rep.WriteText(&b)
		}
		if err == nil {
			text := b.String()
			if out.JSON {
				// Redacted as JSON, not scrubbed as text: the text has
				// "&" as \u0026 and a string's quotes escaped, where the
				// text patterns see no query name and no member name.
				text = string(visible.JSON(red.RedactJSON([]byte(text))))
			} else {
				text = red.Scrub(text)
			}
			_, err = io.WriteString(report, text)
		}
		if err != nil {
			lost = append(lost, fmt.Sprintf("the report: %v", err))
		}
		if out.JUnit != "" {
			b.Reset()
			err := rep.WriteJUnit(&b)
			if err == nil {
				err = atomicfile.WriteFile(out.JUnit, []byte(red.Scrub(b.String())), 0o600)
			}
			if err != nil {
				lost = append(lost, fmt.Sprintf("--junit: %v", err))
			}
		}
	}
	lost = append(lost, closeSink(sink, out.Stderr)...)
	if len(lost) > 0 {
		return &ExitError{Code: ExitNotWritten, Err: fmt.Errorf("not written: %s", strings.Join(lost, "; "))}
	}
	if runErr != nil {
		return &ExitError{Code: ExitNoRun, Err: runErr}
	}
	if rep.Failed() {
		return &ExitError{Code: ExitFinding}
	}
	return nil
}

// closeSink closes the record sink (nil: none) and says what it lost.
func closeSink(s *record.Sink, stderr io.Writer) []string {
	if s == nil {
		return nil
	}
	var lost []string
	if st := s.Stats(); st.Lost() > 0 {
		lost = append(lost, "--record: "+st.String())
	}
	var le *record.LostError
	if err := s.Close(); err != nil && !errors.As(err, &le) {
		fmt.Fprintf(stderr, "mcpdiag probe: --record: %v\n", err)
		lost = append(lost, fmt.Sprintf("--record: %v", err))
	}
	return lost
}

// WriteJSON writes the report as one indented JSON object. The text
// quotes the server: pass it through the records' redactor.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("probe report as JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Validate checks the options a run cannot start with: an error wrapping
// ErrUsage, one line.
func (o Options) Validate() error {
	if len(o.Command) == 0 {
		if !strings.HasPrefix(o.URL, "http://") && !strings.HasPrefix(o.URL, "https://") {
			return usageErr(fmt.Sprintf("URL %q: must start with http:// or https://", o.URL))
		}
		// A URL no request can be made to is the caller's mistake, not
		// the server's: it is said here, before anything is sent.
		u, err := url.Parse(o.URL)
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		switch {
		case err != nil:
			return usageErr(fmt.Sprintf("URL %q: %v", o.URL, err))
		case u.Host == "":
			return usageErr(fmt.Sprintf("URL %q: names no host", o.URL))
		}
	}
	switch o.Protocol {
	case "", client.ProtocolAuto, client.Protocol2026, client.Protocol2025:
	default:
		return usageErr(fmt.Sprintf("--protocol %q: must be auto, 2026-07-28 or 2025-11-25", o.Protocol))
	}
	if len(o.Command) > 0 && len(o.Header) > 0 {
		return usageErr("a stdio server (-- COMMAND) takes no --header (stdio has no header layer)")
	}
	if o.FailOn != "" {
		if _, err := judge.ParseSeverity(string(o.FailOn)); err != nil {
			return usageErr("--fail-on: " + err.Error())
		}
	}
	return nil
}

// usageErr is a one-line usage message that is ErrUsage.
type usageErr string

func (e usageErr) Error() string        { return string(e) }
func (e usageErr) Is(target error) bool { return target == ErrUsage }
