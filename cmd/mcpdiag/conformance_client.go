package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/spf13/cobra"
)

// The environment the official conformance suite (@modelcontextprotocol/
// conformance, `conformance client --command …`) sets for the client under
// test. The server URL is the last argument.
const (
	envScenario = "MCP_CONFORMANCE_SCENARIO"
	envContext  = "MCP_CONFORMANCE_CONTEXT"
	envProtocol = "MCP_CONFORMANCE_PROTOCOL_VERSION"
)

// conformanceCallTimeout bounds each step; the suite kills the client after
// 30 s by default.
const conformanceCallTimeout = 20 * time.Second

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

// conformanceContext is the part of MCP_CONFORMANCE_CONTEXT the adapter
// uses.
type conformanceContext struct {
	Name      string `json:"name"`
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
	// The auth scenarios' client credentials: a pre-registered client
	// (with the issuer it belongs to), or the client credentials
	// extension's secret or private key.
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	Issuer           string `json:"issuer"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
}

// conformanceClientMetadataURL is the Client ID Metadata Document URL the
// suite's auth scenarios expect a client to present (auth/basic-cimd checks
// client_id against it; the suite never fetches it).
const conformanceClientMetadataURL = "https://conformance-test.local/client-metadata.json"

// conformanceAuth is the OAuth flow the auth scenarios run: the suite's
// authorization servers are on loopback and approve at once, so the client
// fetches the authorization URL itself.
func conformanceAuth(sc conformanceContext, stderr io.Writer) (*client.AuthOptions, error) {
	o := &client.AuthOptions{ClientMetadataURL: conformanceClientMetadataURL, ClientID: sc.ClientID, ClientSecret: sc.ClientSecret,
		ClientIssuer: sc.Issuer, Authorize: client.AuthorizeFetch, Prompt: stderr}
	if sc.PrivateKeyPEM != "" {
		key, err := client.ParseClientKey([]byte(sc.PrivateKeyPEM))
		if err != nil {
			return nil, fmt.Errorf("the context's private_key_pem: %w", err)
		}
		o.ClientKey, o.ClientKeyAlg, o.ClientSecret = key, sc.SigningAlgorithm, ""
	}
	return o, nil
}

// conformanceSamplingText is the text of the adapter's sampling answers.
const conformanceSamplingText = "mcpdiag conformance answer"

// conformanceStep is one tools/call the scenario asks for.
type conformanceStep struct {
	tool string
	args json.RawMessage
}

func runConformanceClient(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, url string) error {
	scenario, version := getenv(envScenario), getenv(envProtocol)
	var sc conformanceContext
	if raw := getenv(envContext); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return usageError("%s is not the JSON object the suite sends: %v", envContext, err)
		}
	}
	protocol := client.ProtocolAuto
	switch version {
	case client.Protocol2026, client.Protocol2025:
		protocol = version
	case "":
	default:
		fmt.Fprintf(stderr, "note: %s=%s is not an era mcpdiag speaks (2026-07-28, 2025-11-25); negotiating\n", envProtocol, version)
	}
	fmt.Fprintf(stdout, "mcpdiag conformance-client: scenario %q, protocol %s, server %s\n", scenario, protocol, url)
	auth, err := conformanceAuth(sc, stderr)
	if err != nil {
		return usageError("%v", err)
	}
	c, err := client.New(client.Options{URL: url, Protocol: protocol, Inputs: client.CooperativeInputs{SamplingText: conformanceSamplingText}, Timeout: conformanceCallTimeout, Auth: auth})
	if err != nil {
		return usageError("%v", err)
	}

	listing := c.ListTools(ctx)
	for _, ex := range listing.Excluded {
		// The spec's SHOULD: warn with the tool's name and the reason.
		fmt.Fprintf(stderr, "warning: tool %q excluded from tools/list: %s\n", ex.Name, strings.Join(ex.Reasons, "; "))
	}
	names := make([]string, 0, len(listing.Tools))
	for _, t := range listing.Tools {
		names = append(names, t.Name)
	}
	if !listing.OK {
		what := "the listing failed"
		if listing.Final != nil {
			what = fmt.Sprintf("%s (%s layer): %s", listing.Final.Outcome, listing.Final.Layer, listing.Final.Reason)
		}
		fmt.Fprintf(stdout, "tools/list: %s; decision %s: %s\n", what, listing.Decision.Action, listing.Decision.Reason)
		if listing.Auth != nil {
			fmt.Fprintf(stdout, "authorization failed at step %s: %s\n  rule: %s\n", listing.Auth.Step, listing.Auth.Reason, listing.Auth.Rule)
		}
		client.WriteAuthChain(stderr, listing.Exchanges)
		return &exitError{code: 1, err: errSilent}
	}
	fmt.Fprintf(stdout, "tools/list (%s): kept %d tool(s) %v, excluded %d\n", listing.Protocol, len(names), names, len(listing.Excluded))

	steps := conformanceSteps(scenario, sc, listing.Tools)
	failed := 0
	for _, s := range steps {
		call, err := c.CallTool(ctx, s.tool, s.args)
		if err != nil {
			fmt.Fprintf(stdout, "tools/call %s: not sent: %v\n", s.tool, err)
			failed++
			continue
		}
		fmt.Fprintf(stdout, "tools/call %s: %s (%s layer), %d exchange(s), %d round(s), %d retr(ies)\n", s.tool, call.Outcome, call.Layer(), len(call.Exchanges), call.Rounds, call.Retries)
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

// conformanceSteps turns the scenario into calls. Most scenarios are served
// by the generic rule (the context's toolCalls, or every kept tool); the
// exceptions are scenarios whose server expects specific arguments or no
// call at all.
func conformanceSteps(scenario string, sc conformanceContext, tools []client.Tool) []conformanceStep {
	var steps []conformanceStep
	switch scenario {
	case "json-schema-ref-no-deref":
		// Listing is the whole scenario: it checks that no network $ref is
		// fetched. mcpdiag never dereferences $ref; the server has no
		// tools/call handler.
		return nil
	case "json-schema-2020-12-preservation":
		// Send the focal tool's inputSchema back, byte for byte as listed,
		// through the echo tool.
		const echo = "json_schema_echo"
		for _, t := range tools {
			if t.Name != echo {
				args := append(append([]byte(`{"schema":`), t.InputSchema...), '}')
				return []conformanceStep{{tool: echo, args: args}}
			}
		}
	case "tools_call":
		for _, t := range tools {
			if t.Name == "add_numbers" {
				return []conformanceStep{{tool: t.Name, args: json.RawMessage(`{"a":5,"b":3}`)}}
			}
		}
	}
	if len(sc.ToolCalls) > 0 {
		for _, tc := range sc.ToolCalls {
			steps = append(steps, conformanceStep{tool: tc.Name, args: tc.Arguments})
		}
		return steps
	}
	for _, t := range tools {
		steps = append(steps, conformanceStep{tool: t.Name, args: client.ExampleArguments(t.InputSchema)})
	}
	return steps
}
