package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

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
	l.WriteAuthRun(&b, url)
	if err := c.StoreError(); err != nil {
		fmt.Fprintf(&b, "  cache:     --token-cache: %v\n", err)
	}
	if _, err := io.WriteString(stdout, red.Scrub(b.String())); err != nil {
		return err
	}
	if code := l.AuthExitCode(); code != 0 {
		return &exitError{code: code, err: errSilent}
	}
	return nil
}
