package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
	"github.com/mcpdiag/mcpdiag/wire"
	"github.com/spf13/cobra"
)

type classifyOptions struct {
	id           string
	idSet        bool // --id was given, even as "" (which is no JSON id)
	protocol     string
	method       string
	extensions   []string
	notification bool
	text         bool
	maxEvent     int
	maxHeader    int
	failOn       string
}

func newClassifyCmd() *cobra.Command {
	var o classifyOptions
	cmd := &cobra.Command{
		Use:   "classify [FILE]",
		Short: "Classify one raw HTTP response (as `curl -si` prints it) from FILE or stdin",
		Long: `Reads one raw HTTP response — status line, headers, blank line, body — exactly
as it came off the wire (JSON or an SSE stream), and names the layer and outcome.

Exit status: 0 when it classified (whatever the outcome: the verdict is the
output, so a pipeline that stores it is not stopped by a failed call), 1 when
--fail-on names the outcome (failure: any outcome that is not a success,
TASK_CREATED, INPUT_REQUIRED or NOT_CLASSIFIED, as report counts an
exchange), 2 for unreadable input or bad flags, 3 when the response was not
classified because it is over a limit (NOT_CLASSIFIED: the output says which,
with the size; raise --max-event-size).`,
		Example: `  curl -si -X POST http://127.0.0.1:8080/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -d @call.json | mcpdiag classify --id 1
  mcpdiag classify --id '"call-7"' --text response.txt
  curl -si … | mcpdiag classify --id 1 --fail-on failure > verdict.json   # exit 1 on a failed call`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.idSet = cmd.Flags().Changed("id")
			return runClassify(cmd.OutOrStdout(), cmd.InOrStdin(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.id, "id", "", "the request id, as JSON: 7 is a number, '\"a\"' a string (unchecked when absent)")
	f.StringVar(&o.protocol, "protocol", classify.Protocol2026, "protocol revision of the exchange: 2026-07-28 or 2025-11-25")
	f.StringVar(&o.method, "method", "tools/call", "JSON-RPC method of the request")
	f.StringArrayVar(&o.extensions, "extension", nil, "an extension the request declared (repeatable), e.g. io.modelcontextprotocol/tasks")
	f.BoolVar(&o.notification, "notification", false, "the request was a notification (202 with no body is then correct)")
	f.BoolVar(&o.text, "text", false, "print a short human explanation instead of JSON")
	f.IntVar(&o.maxEvent, "max-event-size", wire.DefaultMaxEventSize, "largest JSON body or SSE event held in memory, in bytes")
	f.IntVar(&o.maxHeader, "max-header-size", wire.DefaultMaxHeaderBytes, "largest response head (status lines and headers) read, in bytes")
	f.StringVar(&o.failOn, "fail-on", "", "exit 1 when the outcome is one of these OUTCOMES (comma-separated, e.g. TOOL_ERROR,HTTP_ERROR), or \"failure\" for any failed exchange")
	return cmd
}

func runClassify(out io.Writer, stdin io.Reader, args []string, o classifyOptions) error {
	ex := &classify.Exchange{Method: o.method, Extensions: o.extensions, Notification: o.notification}
	switch o.protocol {
	case classify.Protocol2026, classify.Protocol2025:
		ex.ProtocolVersion = o.protocol
	default:
		return usageError("--protocol %q: must be 2026-07-28 or 2025-11-25", o.protocol)
	}
	if o.method == "" {
		// As for --id: an empty method (a script's unset variable) would
		// be classified as the default, tools/call, and echoed so.
		return usageError("--method: empty method (the request's JSON-RPC method, such as tools/call)")
	}
	if o.id != "" || o.idSet {
		// An empty --id (a script's unset variable) is bad input, not
		// "unchecked": the check the user asked for would be skipped.
		id, err := wire.ParseID(o.id)
		if err != nil {
			return usageError("--id: %v", err)
		}
		ex.ID = id
	}
	if o.maxEvent <= 0 {
		return usageError("--max-event-size must be positive, got %d", o.maxEvent)
	}
	if o.maxHeader <= 0 {
		return usageError("--max-header-size must be positive, got %d", o.maxHeader)
	}
	failOn, anyFailure, err := parseClassifyFailOn(o.failOn)
	if err != nil {
		return usageError("--fail-on: %v", err)
	}
	in := stdin
	name := "stdin"
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return usageError("cannot open %s: %v", args[0], err)
		}
		defer f.Close()
		in, name = f, args[0]
	}
	resp, err := wire.ReadRawResponseLimit(in, o.maxHeader)
	if errors.Is(err, wire.ErrHeaderTooLarge) {
		return usageError("%s: %v (raise --max-header-size)", name, err)
	}
	if err != nil {
		return usageError("%s: %v", name, err)
	}
	ex.Status, ex.Header, ex.Body = resp.Status, resp.Header, resp.Body
	c := classify.Classifier{MaxEventSize: o.maxEvent}
	r, cerr := c.Classify(ex)
	var nc *classify.NotClassifiedError
	if cerr != nil && !errors.As(cerr, &nc) {
		return usageError("%s: %v", name, cerr)
	}
	// The verdict quotes the response (a JSON-RPC error's message and
	// data): redacted as a record is, with the response's own credential
	// headers as secrets, since what is printed ends up in issues and CI
	// logs. The JSON is redacted as JSON, not scrubbed as text, where a
	// string's escaped quotes hide a member name.
	red := record.NewRedactor()
	red.AddHeaderSecrets(resp.Header)
	var b bytes.Buffer
	if o.text {
		b.WriteString(classify.Explain(r))
		for _, n := range resp.Notes {
			fmt.Fprintf(&b, "  note:   %s\n", visible.String(n))
		}
		_, err = io.WriteString(out, red.Scrub(b.String()))
	} else if err = writeResultJSON(&b, r, resp.Notes); err == nil {
		_, err = out.Write(visible.JSON(keepInputKeys(red.RedactJSON(b.Bytes()), r, red)))
	}
	if err != nil {
		return err
	}
	if nc != nil {
		// The verdict is printed; the exit status and one line say there
		// is none.
		return &exitError{code: exitNotClassified, err: fmt.Errorf("%s: %s", name, red.Scrub(nc.Reason))}
	}
	if anyFailure && report.Failure(record.KindExchange, r.Outcome) || slices.Contains(failOn, r.Outcome) {
		return &exitError{code: 1, err: fmt.Errorf("%s: %s (%s layer) is in --fail-on %s", name, r.Outcome, r.Layer(), o.failOn)}
	}
	return nil
}

// parseClassifyFailOn reads classify's --fail-on: outcome names as report
// takes them, and the word "failure" for any outcome report counts as a
// failed exchange.
func parseClassifyFailOn(list string) (outcomes []classify.Outcome, anyFailure bool, err error) {
	var names []string
	for name := range strings.SplitSeq(list, ",") {
		if strings.EqualFold(strings.TrimSpace(name), "failure") {
			anyFailure = true
			continue
		}
		names = append(names, name)
	}
	outcomes, err = report.ParseOutcomes(strings.Join(names, ","))
	return outcomes, anyFailure, err
}

// writeResultJSON writes r as indented JSON, with the capture's notes as a
// last member "captureNotes" when there are any. (The Result encodes itself,
// so it is not embedded in a struct with the notes: its MarshalJSON would
// be the struct's and drop them.)
func writeResultJSON(out io.Writer, r *classify.Result, notes []string) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the verdict: %w", err)
	}
	if len(notes) > 0 {
		nb, err := json.Marshal(notes)
		if err != nil {
			return fmt.Errorf("encoding the capture notes: %w", err)
		}
		b = append(append(append(b[:len(b)-1], `,"captureNotes":`...), nb...), '}')
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return fmt.Errorf("encoding the verdict: %w", err)
	}
	buf.WriteByte('\n')
	_, err = out.Write(buf.Bytes())
	return err
}

// keepInputKeys puts back in the redacted verdict b the MRTR input request
// keys (input.requests[].key) that redacting it as JSON masked, "key" being
// a credential name there: each is the server's name for one of its
// requests, what an --input FILE answers, and records keep it scrubbed as
// text, as it is here (a key that looks like a credential stays masked).
// The mask is found by value under the member "key" of the indented JSON;
// a verdict with input requests has no JSON-RPC error data, the one other
// place a member of that name could hold it.
func keepInputKeys(b []byte, r *classify.Result, red *record.Redactor) []byte {
	in := r.Input()
	if in == nil {
		return b
	}
	for _, q := range in.Requests {
		masked, err := json.Marshal(red.Mask(q.Key))
		if err != nil {
			continue
		}
		kept, err := json.Marshal(red.Scrub(q.Key))
		if err != nil {
			continue
		}
		b = bytes.ReplaceAll(b, append([]byte(`"key": `), masked...), append([]byte(`"key": `), kept...))
	}
	return b
}

// exitNotClassified is classify's exit status for a NOT_CLASSIFIED result.
const exitNotClassified = 3
