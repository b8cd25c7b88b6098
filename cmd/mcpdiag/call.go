package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type callOptions struct {
	args           string
	protocol       string
	headers        []string
	bearer         string
	input          string
	maxRounds      int
	timeout        time.Duration
	firstByte      time.Duration
	retries        int
	backoff        time.Duration
	maxBackoff     time.Duration
	maxRetryAfter  time.Duration
	safe, unsafe   bool
	idempotencyKey string
	recordFile     string
	fsync          string
	json           bool
	attemptOf      string
	scenario       string
	seed           uint64
	seeded         bool
	auth           authFlags
}

func newCallCmd() *cobra.Command {
	var o callOptions
	p := retry.DefaultPolicy()
	cmd := &cobra.Command{
		Use:   "call URL TOOL",
		Short: "Call a tool on an MCP server and show, exchange by exchange, where it failed and what to do next",
		Long: `Performs one real tools/call against an MCP server (Streamable HTTP), in the
2026-07-28 stateless era or the 2025-11-25 session era, answering MRTR input
requests and applying a retry policy that never repeats an unsafe call blindly.

On a 401 (or a 403 insufficient_scope) it runs the OAuth 2.1 chain of MCP
authorization (discovery, registration, authorization code with PKCE or
client credentials, token, refresh, step-up), records every exchange with its
step, and names the step that failed (AUTH_FAILED). A sign-in that needs a
person is asked for on a terminal, with --open or with --auth-code; --bearer
or --no-auth turn the chain off. docs/auth.md has the details.

Exit status: 0 TOOL_SUCCESS (or another success), 1 TOOL_ERROR, 2 usage error,
3 protocol layer, 4 transport layer, 5 input required and not answered,
6 a record could not be written (--record, or stdout with --json), 130 stopped
by Ctrl-C (SIGINT; the report and records so far are printed and written).`,
		Example: `  mcpdiag call http://127.0.0.1:8080/mcp echo --args '{"text":"hi"}'
  mcpdiag call http://127.0.0.1:8080/mcp delete_item --args @args.json --idempotency-key k-42
  mcpdiag call https://mcp.example.com/mcp search --bearer "$TOKEN" --record calls.jsonl --json
  mcpdiag call https://mcp.example.com/mcp search --open --token-cache default
  mcpdiag call http://127.0.0.1:8080/s/auth.step_up/mcp delete_item --args '{"id":"item-1"}'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.seeded = cmd.Flags().Changed("seed")
			return runCall(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], args[1], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.args, "args", "", "tool arguments: a JSON object, or @FILE to read it from a file")
	f.StringVar(&o.protocol, "protocol", client.ProtocolAuto, "auto, 2026-07-28 or 2025-11-25")
	f.StringArrayVar(&o.headers, "header", nil, "an extra request header 'K: V' (repeatable)")
	f.StringVar(&o.bearer, "bearer", "", "a bearer token (sent as Authorization; never printed or recorded)")
	f.StringVar(&o.input, "input", "", "JSON file mapping input request keys (or methods) to responses, for MRTR")
	f.IntVar(&o.maxRounds, "max-rounds", client.DefaultMaxRounds, "most MRTR input rounds before giving up")
	f.DurationVar(&o.timeout, "timeout", client.DefaultTimeout, "time limit for the whole call")
	f.DurationVar(&o.firstByte, "first-byte-timeout", 0, "time limit for each response's headers (default: --timeout)")
	f.IntVar(&o.retries, "retries", p.MaxRetries, "most automatic retries (0 disables)")
	f.DurationVar(&o.backoff, "backoff", p.Backoff, "base of the exponential backoff (full jitter)")
	f.DurationVar(&o.maxBackoff, "max-backoff", p.MaxBackoff, "cap of one backoff wait")
	f.DurationVar(&o.maxRetryAfter, "max-retry-after", p.MaxRetryAfter, "longest Retry-After honoured; past it the call fails")
	f.BoolVar(&o.safe, "safe", false, "treat the tool as safe to repeat, whatever its annotations say")
	f.BoolVar(&o.unsafe, "unsafe", false, "treat the tool as unsafe to repeat, whatever its annotations say")
	f.StringVar(&o.idempotencyKey, "idempotency-key", "", "send Idempotency-Key: K on tools/call (makes the call retryable)")
	f.StringVar(&o.recordFile, "record", "", "append the records (JSONL) to FILE (\"-\" for stdout; the report then goes to stderr)")
	f.StringVar(&o.fsync, "fsync", string(record.SyncClose), "when --record syncs to disk: close, always or never")
	f.BoolVar(&o.json, "json", false, "print the records (JSONL) instead of the human report")
	f.StringVar(&o.attemptOf, "attempt-of", "", "the call record id this call repeats (retryOrigin user)")
	f.StringVar(&o.scenario, "scenario", "", "a scenario id to note in the records")
	f.Uint64Var(&o.seed, "seed", 0, "seed for the backoff jitter (reproducible delays)")
	o.auth.add(f, true)
	return cmd
}

func runCall(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, url, tool string, o callOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	opts := client.Options{URL: url, Protocol: o.protocol, Bearer: o.bearer, Timeout: o.timeout, FirstByteTimeout: o.firstByte, MaxRounds: o.maxRounds, IdempotencyKey: o.idempotencyKey}
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return usageError("URL %q: must start with http:// or https://", url)
	}
	if tool == "" {
		// No tool has an empty name (the spec: 1 to 128 characters): the
		// call would be sent and its refusal reported as the server's.
		return usageError("TOOL is empty: give the name of a tool the server lists in tools/list")
	}
	switch o.protocol {
	case client.ProtocolAuto, client.Protocol2026, client.Protocol2025:
	default:
		return usageError("--protocol %q: must be auto, 2026-07-28 or 2025-11-25", o.protocol)
	}
	if o.safe && o.unsafe {
		return usageError("--safe and --unsafe cannot both be set")
	}
	if o.safe {
		opts.Safety = retry.Idempotent
	}
	if o.unsafe {
		opts.Safety = retry.Unsafe
	}
	for name, d := range map[string]time.Duration{"--timeout": o.timeout, "--backoff": o.backoff, "--max-backoff": o.maxBackoff, "--max-retry-after": o.maxRetryAfter} {
		if d < 0 || (name == "--timeout" && d == 0) {
			return usageError("%s must be positive, got %s", name, d)
		}
	}
	if o.retries < 0 || o.maxRounds < 1 {
		return usageError("--retries must be >= 0 and --max-rounds >= 1")
	}
	pol := retry.DefaultPolicy()
	pol.MaxRetries, pol.Backoff, pol.MaxBackoff, pol.MaxRetryAfter = o.retries, o.backoff, o.maxBackoff, o.maxRetryAfter
	opts.Policy = &pol
	if o.seeded {
		opts.Rand = rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))
	}
	args, err := readArgs(o.args)
	if err != nil {
		return err
	}
	if opts.Header, err = parseHeaders(o.headers); err != nil {
		return err
	}
	switch {
	case o.input != "":
		f, err := os.Open(o.input)
		if err != nil {
			return usageError("--input: %v", err)
		}
		in, err := client.ReadInputs(f)
		f.Close()
		if err != nil {
			return usageError("--input %s: %v", o.input, err)
		}
		opts.Inputs = in
	case isTerminal(stdin):
		opts.Inputs = &client.PromptInputs{In: stdin, Out: stderr}
	}

	// Open the record file before calling, so a bad path fails before any
	// request is sent.
	red := record.NewRedactor()
	if o.bearer != "" {
		if err := red.AddSecret(o.bearer); err != nil {
			return usageError("--bearer: %v", err)
		}
	}
	// The values of credential headers given with --header are secrets
	// too: masked wherever they appear, not only in their header.
	red.AddHeaderSecrets(opts.Header)
	if o.bearer == "" {
		auth, err := o.auth.options(stdin, stderr, red)
		if err != nil {
			return err
		}
		opts.Auth = auth
	}
	enc := record.Encoder{Redactor: red, BodyLimit: 16 << 10}
	// A bad --fsync is refused with or without --record, as proxy does.
	sync, err := record.ParseSyncPolicy(o.fsync)
	if err != nil {
		return usageError("--fsync: %v", err)
	}
	var file *record.Sink
	if o.recordFile != "" {
		file, err = record.OpenSink(o.recordFile, record.SinkOptions{Stdout: visible.JSONWriter{W: stdout}, Sync: sync, Encoder: enc,
			OnLoss: record.PrintLosses(stderr, "mcpdiag call: --record: ")})
		if err != nil {
			return usageError("--record: %v", err)
		}
		defer file.Close()
		if w := readableByOthers("--record", o.recordFile); w != "" {
			fmt.Fprintf(stderr, "mcpdiag call: %s\n", w)
		}
	}

	c, err := client.New(opts)
	if err != nil {
		return usageError("%v", err)
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	call, err := c.CallTool(ctx, tool, args)
	if err != nil {
		return usageError("%v", err)
	}
	// Read at once: an interrupt after the call ended stops nothing of it.
	interrupted := ctx.Err() != nil
	if err := c.StoreError(); err != nil {
		fmt.Fprintf(stderr, "mcpdiag call: --token-cache: %v\n", err)
	}
	exchanges, summary := call.Records(record.Record{Client: client.DefaultClientInfo.Name + "@" + client.DefaultClientInfo.Version, Scenario: o.scenario, AttemptOf: o.attemptOf}, url)
	lines := append(exchanges, summary)
	if interrupted {
		// The call was stopped in flight: its records say so, so that
		// report counts them apart, not as the server's failures.
		w := record.Warning{Code: record.WarnCallInterrupted, Message: fmt.Sprintf("mcpdiag call was %s while this call was in flight: its verdict is the stop's, not the server's answer", stopWords(ctx))}
		for _, r := range lines {
			r.Warnings = append(slices.Clip(r.Warnings), w)
		}
	}
	// A record that cannot be written (a full disk, a closed pipe, one the
	// encoder refuses) does not stop the others nor the report: each is
	// named on stderr and counted, and the call exits ExitRecordsLost.
	var lost []string
	if file != nil {
		lost = append(lost, writeAll(file, lines, stderr, "--record")...)
	}
	if o.json {
		w, err := record.OpenSink("-", record.SinkOptions{Stdout: visible.JSONWriter{W: stdout}, Encoder: enc, OnLoss: record.PrintLosses(stderr, "mcpdiag call: --json: ")})
		if err != nil {
			return err
		}
		lost = append(lost, writeAll(w, lines, stderr, "--json")...)
	} else {
		// The report quotes the server (reasons, error messages, the
		// result): it goes through the records' redactor too.
		var rep strings.Builder
		if err := call.WriteReport(&rep); err != nil {
			return err
		}
		// With --record - the records are stdout: the report goes to stderr.
		human := stdout
		if o.recordFile == "-" {
			human = stderr
		}
		if _, err := io.WriteString(human, red.Scrub(rep.String())); err != nil {
			return err
		}
		fmt.Fprintf(human, "  record:    call %s\n", summary.ID)
	}
	if len(lost) > 0 {
		return &exitError{code: ExitRecordsLost, err: fmt.Errorf("records lost (the call's own exit status would be %d): %s", call.ExitCode(), strings.Join(lost, "; "))}
	}
	if ctx.Err() != nil {
		// Only the interrupt ends this context (the call's --timeout is
		// the client's own): the outcome's status would blame the
		// server's transport for what the user stopped.
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("call %s: no retry was made; the report and records above are what it had (its own exit status would be %d)", stopWords(ctx), call.ExitCode())}
	}
	if code := call.ExitCode(); code != 0 {
		return &exitError{code: code, err: errSilent}
	}
	return nil
}

// stopWords says what ended the call's context ctx: "interrupted by the
// user (SIGINT)" for the user's interrupt, else "stopped (CAUSE)".
func stopWords(ctx context.Context) string {
	if cause := context.Cause(ctx); errors.Is(cause, client.ErrInterrupted) {
		return cause.Error()
	}
	return fmt.Sprintf("stopped (%v)", context.Cause(ctx))
}

// interruptible returns ctx ended by the first SIGINT (Ctrl-C) with the
// cause client.ErrInterrupted, so that the call's decision says the user
// interrupted it; stop ends the watch (a later SIGINT then stops the
// program as by default).
func interruptible(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel(fmt.Errorf("%w (SIGINT)", client.ErrInterrupted))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// ExitInterrupted is the exit status of `mcpdiag call` stopped by SIGINT
// (Ctrl-C), as for the other commands (128 + 2). The report and the
// records of what happened until then are still printed and written.
const ExitInterrupted = 130

// ExitRecordsLost is the exit status of `mcpdiag call` when a record could
// not be written (to --record or, with --json, to stdout): it takes
// precedence over the outcome's status, which the report and stderr still
// give, because a script that reads the records would otherwise read an
// incomplete file as the whole story.
const ExitRecordsLost = 6

// writeAll writes every record to the sink, going on after a failure (the
// sink names each lost record on stderr), and closes it. It returns what
// was lost, in words, for the exit message.
func writeAll(s *record.Sink, recs []*record.Record, stderr io.Writer, flag string) []string {
	for _, r := range recs {
		_ = s.Write(r) // counted and named by the sink
	}
	var lost []string
	if st := s.Stats(); st.Lost() > 0 {
		lost = append(lost, flag+": "+st.String())
	}
	var le *record.LostError
	if err := s.Close(); err != nil && !errors.As(err, &le) {
		fmt.Fprintf(stderr, "mcpdiag call: %s: %v\n", flag, err)
		lost = append(lost, fmt.Sprintf("%s: %v", flag, err))
	}
	return lost
}

// ownHeaders are the request headers the client sets per request, which a
// --header would not reach on every request: refused, with what sets them.
var ownHeaders = map[string]string{
	"Mcp-Protocol-Version": "--protocol picks the era",
	"Mcp-Session-Id":       "the server's initialize answer gives it",
	"Last-Event-Id":        "a resumed stream's last event id",
}

// parseHeaders reads the --header flags, each "Name: value"; the headers
// the client sets itself (ownHeaders) are refused.
func parseHeaders(flags []string) (http.Header, error) {
	h := http.Header{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageError("--header %q: want 'Name: value'", f)
		}
		name := http.CanonicalHeaderKey(strings.TrimSpace(k))
		if why, ok := ownHeaders[name]; ok {
			return nil, usageError("--header %q: mcpdiag sets %s itself on every request it needs it on (%s): given here it would go on some requests and be replaced on the others", f, name, why)
		}
		h.Add(name, strings.TrimSpace(v))
	}
	return h, nil
}

// errSilent ends the process with a code but prints nothing: the report
// already said what happened.
var errSilent = errors.New("")

func readArgs(s string) (json.RawMessage, error) {
	if s == "" {
		return nil, nil
	}
	data := []byte(s)
	if strings.HasPrefix(s, "@") {
		b, err := os.ReadFile(s[1:])
		if err != nil {
			return nil, usageError("--args: %v", err)
		}
		data = b
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, usageError("--args: not valid JSON (%v): tool arguments are a JSON object, such as '{\"text\":\"hi\"}'", err)
	}
	if k := wire.Kind(data); k != '{' {
		// null passed json.Unmarshal into a map and was sent as
		// "arguments": null; an array's error named Go's types.
		what := map[byte]string{'[': "an array", '"': "a string", 'n': "null", 't': "a boolean", 'f': "a boolean", '0': "a number"}[k]
		return nil, usageError("--args: %s, not a JSON object: tool arguments are a JSON object, such as '{\"text\":\"hi\"}'", what)
	}
	return json.RawMessage(data), nil
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	// A character device is not enough: /dev/null is one, and a call
	// run with </dev/null (CI, cron) must not wait at a prompt.
	return ok && term.IsTerminal(int(f.Fd()))
}
