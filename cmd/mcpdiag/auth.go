package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/spf13/cobra"
)

type authOptions struct {
	protocol string
	headers  []string
	timeout  time.Duration
	auth     authFlags
}

func newAuthCmd() *cobra.Command {
	var o authOptions
	cmd := &cobra.Command{
		Use:   "auth URL",
		Short: "Run only the OAuth authorization chain against an MCP server and print it step by step",
		Long: `Sends the request that starts the authorization chain (tools/list, as call does
first) and, on the 401, runs the OAuth 2.1 chain of MCP authorization: protected
resource metadata, authorization server metadata, registration, authorization
(PKCE S256) or client credentials, token. It prints every exchange of the chain
with its step and what it learned, then the token it got (never the token
itself) and whether the server accepted it. docs/auth.md explains each step.

Exit status: 0 the chain got a token the server accepted (or the server asked
for none), 2 usage error, 4 AUTH_FAILED (the step that failed is named) or
another transport failure, 3 a protocol failure after the token was accepted.`,
		Example: `  mcpdiag auth http://127.0.0.1:8080/s/auth.oauth/mcp
  mcpdiag auth https://mcp.example.com/mcp --open
  mcpdiag auth https://mcp.example.com/mcp --grant client_credentials --client-id ID --client-secret "$SECRET"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAuth(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.protocol, "protocol", client.ProtocolAuto, "auto, 2026-07-28 or 2025-11-25")
	f.StringArrayVar(&o.headers, "header", nil, "an extra request header 'K: V' (repeatable)")
	f.DurationVar(&o.timeout, "timeout", client.DefaultTimeout, "time limit for the whole chain (a sign-in in a browser included)")
	o.auth.add(f, false)
	return cmd
}

func runAuth(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, url string, o authOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return usageError("URL %q: must start with http:// or https://", url)
	}
	switch o.protocol {
	case client.ProtocolAuto, client.Protocol2026, client.Protocol2025:
	default:
		return usageError("--protocol %q: must be auto, 2026-07-28 or 2025-11-25", o.protocol)
	}
	if o.timeout <= 0 {
		return usageError("--timeout must be positive, got %s", o.timeout)
	}
	red := record.NewRedactor()
	header, err := parseHeaders(o.headers)
	if err != nil {
		return err
	}
	red.AddHeaderSecrets(header)
	opts := client.Options{URL: url, Protocol: o.protocol, Timeout: o.timeout, Header: header}
	auth, err := o.auth.options(stdin, stderr, red)
	if err != nil {
		return err
	}
	opts.Auth = auth
	c, err := client.New(opts)
	if err != nil {
		return usageError("%v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	l := c.ListTools(ctx)
	var b strings.Builder
	writeAuthRun(&b, url, l)
	if err := c.StoreError(); err != nil {
		fmt.Fprintf(&b, "  cache:     --token-cache: %v\n", err)
	}
	if _, err := io.WriteString(stdout, red.Scrub(b.String())); err != nil {
		return err
	}
	if code := authExit(l); code != 0 {
		return &exitError{code: code, err: errSilent}
	}
	return nil
}

// chainRan reports whether the listing went through the authorization
// chain.
func chainRan(l *client.Listing) bool {
	for _, ex := range l.Exchanges {
		if ex.Auth != nil && ex.Auth.Step != client.StepRequest {
			return true
		}
	}
	return false
}

// writeAuthRun prints the chain of a listing and its verdict.
func writeAuthRun(b *strings.Builder, url string, l *client.Listing) {
	switch {
	case l.Auth != nil:
		fmt.Fprintf(b, "%s at step %s — %s\n", client.AuthFailed, l.Auth.Step, url)
		fmt.Fprintf(b, "  what:      %s\n", l.Auth.Reason)
		if l.Auth.Rule != "" {
			fmt.Fprintf(b, "  rule:      %s\n", l.Auth.Rule)
		}
	case !chainRan(l) && l.OK:
		fmt.Fprintf(b, "no authorization needed — %s\n", url)
		fmt.Fprintf(b, "  what:      tools/list was answered without a token (%s): there is no chain to run\n", l.Protocol)
		return
	case l.OK:
		fmt.Fprintf(b, "authorized — %s\n", url)
	default:
		what := "the listing failed"
		if l.Final != nil {
			what = fmt.Sprintf("%s (%s layer): %s", l.Final.Outcome, l.Final.Outcome.Layer(), l.Final.Reason)
		}
		fmt.Fprintf(b, "not authorized — %s\n  what:      %s\n", url, what)
	}
	writeSteps(b, url, l.Exchanges)
	if tok := lastToken(l.Exchanges); tok != nil && l.Auth == nil {
		a := tok.Auth
		fmt.Fprintf(b, "  token:     from %s for %s", a.Issuer, a.Resource)
		if a.Granted != "" {
			fmt.Fprintf(b, ", scope %q", a.Granted)
		}
		fmt.Fprintf(b, "; grant %s, client %s", a.Grant, a.ClientID)
		if a.Registration != "" {
			fmt.Fprintf(b, " (%s)", a.Registration)
		}
		b.WriteString(" — the token itself is never printed\n")
	}
	if l.OK {
		fmt.Fprintf(b, "  check:     tools/list answered with the token (%s): %d tool(s)\n", l.Protocol, len(l.Tools))
	}
}

// lastToken is the last token or refresh exchange that got a token.
func lastToken(exs []*client.Exchange) *client.Exchange {
	var out *client.Exchange
	for _, ex := range exs {
		if ex.Auth != nil && (ex.Auth.Step == client.StepToken || ex.Auth.Step == client.StepRefresh) && ex.Auth.Failure == "" &&
			ex.Result != nil && ex.Result.Outcome.Success() {
			out = ex
		}
	}
	return out
}

// authExit is auth's exit status.
func authExit(l *client.Listing) int {
	switch {
	case l.Auth != nil:
		return client.ExitTransport
	case l.OK:
		return 0
	case l.Final != nil && l.Final.Outcome.Layer() == classify.LayerProtocol:
		return client.ExitProtocol
	}
	return client.ExitTransport
}

// writeSteps prints the chain one step a paragraph: what was sent where,
// the answer, and what the step learned or which rule the answer broke.
// Addresses are shown without their query (an authorization request's
// holds the state).
func writeSteps(b *strings.Builder, url string, exs []*client.Exchange) {
	n := 0
	for _, ex := range exs {
		a := ex.Auth
		if a == nil || a.Step == client.StepRequest {
			continue
		}
		n++
		step := a.Step
		if a.StepUp > 0 {
			step += fmt.Sprintf(" (step-up %d)", a.StepUp)
		}
		method := ex.HTTPMethod
		if method == "" {
			method = "POST"
		}
		target := noQuery(ex.URL)
		if a.Step == client.StepChallenge {
			if target == "" {
				target = noQuery(url)
			}
			target += " (" + ex.Method
			if ex.Tool != "" {
				target += " " + ex.Tool
			}
			target += ")"
		}
		answer := "no answer"
		if ex.Status != 0 {
			answer = fmt.Sprintf("%d %s", ex.Status, http.StatusText(ex.Status))
		}
		fmt.Fprintf(b, "  %2d. %-20s %s %s → %s (%s)\n", n, step, method, target, answer, ex.Total.Round(time.Millisecond))
		switch {
		case a.Failure != "":
			fmt.Fprintf(b, "      ✗ %s\n", a.Failure)
			if a.Rule != "" {
				fmt.Fprintf(b, "      rule: %s\n", a.Rule)
			}
		case ex.Result != nil && ex.Result.Outcome != "" && !ex.Result.Outcome.Success() && a.Step != client.StepChallenge:
			fmt.Fprintf(b, "      %s\n", ex.Result.Reason)
		case a.Note != "":
			fmt.Fprintf(b, "      %s\n", a.Note)
		}
	}
}

// noQuery is an address without its query ("?…" marks one was there).
func noQuery(s string) string {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[:i] + "?…"
	}
	return s
}
