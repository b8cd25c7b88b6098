package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/conformance"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/spf13/cobra"
)

// conformanceCallTimeout bounds each step (a whole logical call: the OAuth
// chain, the MRTR rounds). It stays under the 120 s each scenario gets
// (scripts/conformance-client.sh, --timeout 120000), so that a step that
// never ends is the adapter's verdict, not the suite's kill, and it is not
// shorter than a loaded machine needs: the suite runs every scenario at
// once in one Node process, and at load ~25 a step of an auth scenario
// outwaited 20 s (mend21; the suite's own 30 s had been raised to 120 s for
// the same reason, 580dc42).
const conformanceCallTimeout = 100 * time.Second

// conformanceTransport opens a connection per request. The suite's mock
// servers are Node HTTP servers in the suite's own process: when that
// process's event loop is blocked for Node's 5 s keep-alive after a
// response (a loaded machine), the keep-alive timer fires before the next
// request on the connection is read and Node destroys the connection with
// the request unread, a NETWORK_ERROR about 6 s after the call that no
// client idle timeout avoids (docs/decisions.md, flake16).
var conformanceTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableKeepAlives = true
	return t
}()

func newConformanceClientCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "conformance-client URL",
		Short: "Adapter for the official MCP conformance suite's client leg (run by `conformance client --command`)",
		Long: `Drives mcpdiag's client through the scenario named by MCP_CONFORMANCE_SCENARIO
against the suite's mock server at URL: it lists the tools, then calls what the
scenario asks for (MCP_CONFORMANCE_CONTEXT's toolCalls when given, otherwise
every tool the client kept, with arguments made from the input schema), in the
era MCP_CONFORMANCE_PROTOCOL_VERSION names. Each call's report goes to stderr.
Exit status: 0 when every step got an answer from the server (a tool error is
an answer), 1 otherwise.`,
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runConformanceClient(ctx, os.Getenv, cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0])
		},
	}
}

func runConformanceClient(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, url string) error {
	scenario, version := getenv(conformance.EnvScenario), getenv(conformance.EnvProtocol)
	sc, err := conformance.ParseContext(getenv(conformance.EnvContext))
	if err != nil {
		return usageError("%v", err)
	}
	protocol := client.ProtocolAuto
	switch version {
	case client.Protocol2026, client.Protocol2025:
		protocol = version
	case "":
	default:
		fmt.Fprintf(stderr, "note: %s=%s is not an era mcpdiag speaks (2026-07-28, 2025-11-25); negotiating\n", conformance.EnvProtocol, version)
	}
	fmt.Fprintf(stdout, "mcpdiag conformance-client: scenario %q, protocol %s, server %s\n", scenario, protocol, url)
	auth, err := sc.AuthOptions(stderr)
	if err != nil {
		return usageError("%v", err)
	}
	c, err := client.New(client.Options{URL: url, Protocol: protocol, Inputs: client.CooperativeInputs{SamplingText: conformance.SamplingText}, Timeout: conformanceCallTimeout, Auth: auth,
		HTTPClient: &http.Client{Transport: conformanceTransport}})
	if err != nil {
		return usageError("%v", err)
	}

	listing := c.ListTools(ctx)
	for _, ex := range listing.Excluded {
		// The spec's SHOULD: warn with the tool's name and the reason.
		fmt.Fprintf(stderr, "warning: tool %q excluded from tools/list: %s\n", ex.Name, visible.String(strings.Join(ex.Reasons, "; ")))
	}
	names := make([]string, 0, len(listing.Tools))
	for _, t := range listing.Tools {
		names = append(names, visible.String(t.Name))
	}
	if !listing.OK {
		what := "the listing failed"
		if listing.Final != nil {
			what = fmt.Sprintf("%s (%s layer): %s", listing.Final.Outcome, listing.Final.Layer(), listing.Final.Reason)
		}
		fmt.Fprintf(stdout, "tools/list: %s; decision %s: %s\n", visible.String(what), listing.Decision.Action, visible.String(listing.Decision.Reason))
		if listing.Auth != nil {
			fmt.Fprintf(stdout, "authorization failed at step %s: %s\n  rule: %s\n", listing.Auth.Step, visible.String(listing.Auth.Reason), visible.String(listing.Auth.Rule))
		}
		client.WriteAuthChain(stderr, listing.Exchanges)
		return &exitError{code: 1, err: errSilent}
	}
	fmt.Fprintf(stdout, "tools/list (%s): kept %d tool(s) %v, excluded %d\n", listing.Protocol, len(names), names, len(listing.Excluded))

	steps := conformance.Steps(scenario, sc, listing.Tools)
	failed := 0
	for _, s := range steps {
		call, err := c.CallTool(ctx, s.Tool, s.Args)
		if err != nil {
			fmt.Fprintf(stdout, "tools/call %s: not sent: %s\n", visible.String(s.Tool), visible.String(err.Error()))
			failed++
			continue
		}
		fmt.Fprintf(stdout, "tools/call %s: %s (%s layer), %d exchange(s), %d round(s), %d retr(ies)\n", visible.String(s.Tool), call.Outcome, call.Layer(), len(call.Exchanges), call.Rounds, call.Retries)
		_ = call.WriteReport(stderr)
		switch call.Layer() {
		case classify.LayerTransport, classify.LayerProtocol:
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d call(s) got no MCP answer\n", failed, len(steps))
		return &exitError{code: 1, err: errSilent}
	}
	return nil
}
