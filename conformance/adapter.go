// Package conformance is mcpdiag's side of the official MCP conformance
// suite (@modelcontextprotocol/conformance, pinned by package.json in this
// directory; *-expected-failures.yml list the known failures): what the
// suite tells the client under test through its environment, and the
// tools/call steps each scenario asks for. `mcpdiag conformance-client` is
// the adapter the suite runs (`conformance client --command …`); it lists
// the tools with package client, then makes the Steps.
package conformance

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpdiag/mcpdiag/client"
)

// The environment the suite sets for the client under test; the server URL
// is the last argument.
const (
	EnvScenario = "MCP_CONFORMANCE_SCENARIO"
	EnvContext  = "MCP_CONFORMANCE_CONTEXT"
	EnvProtocol = "MCP_CONFORMANCE_PROTOCOL_VERSION"
)

// ClientMetadataURL is the Client ID Metadata Document URL the suite's
// auth scenarios expect a client to present (auth/basic-cimd checks
// client_id against it; the suite never fetches it).
const ClientMetadataURL = "https://conformance-test.local/client-metadata.json"

// SamplingText is the text of the adapter's sampling answers
// (client.CooperativeInputs.SamplingText).
const SamplingText = "mcpdiag conformance answer"

// Context is the part of MCP_CONFORMANCE_CONTEXT the adapter uses.
type Context struct {
	Name      string     `json:"name"`
	ToolCalls []ToolCall `json:"toolCalls"`
	// The auth scenarios' client credentials: a pre-registered client
	// (with the issuer it belongs to), or the client credentials
	// extension's secret or private key.
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	Issuer           string `json:"issuer"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
}

// ToolCall is a call the context asks for.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ParseContext reads MCP_CONFORMANCE_CONTEXT ("" is the empty context).
func ParseContext(raw string) (Context, error) {
	var c Context
	if raw == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return Context{}, fmt.Errorf("%s is not the JSON object the suite sends: %w", EnvContext, err)
	}
	return c, nil
}

// AuthOptions is the OAuth flow the auth scenarios run: the suite's
// authorization servers are on loopback and approve at once, so the client
// fetches the authorization URL itself; prompt receives what the chain
// says to a person.
func (c Context) AuthOptions(prompt io.Writer) (*client.AuthOptions, error) {
	o := &client.AuthOptions{ClientMetadataURL: ClientMetadataURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		ClientIssuer: c.Issuer, Authorize: client.AuthorizeFetch, Prompt: prompt,
		// The suite gives the client credentials of its scenario's own
		// authorization server (on another port than its MCP server),
		// without naming it: the suite is one party.
		SecretToAnyIssuer: c.Issuer == ""}
	if c.PrivateKeyPEM != "" {
		key, err := client.ParseClientKey([]byte(c.PrivateKeyPEM))
		if err != nil {
			return nil, fmt.Errorf("the context's private_key_pem: %w", err)
		}
		o.ClientKey, o.ClientKeyAlg, o.ClientSecret = key, c.SigningAlgorithm, ""
	}
	return o, nil
}

// Step is one tools/call a scenario asks for.
type Step struct {
	Tool string
	Args json.RawMessage
}

// Steps turns a scenario into calls, given the tools the client kept. Most
// scenarios are served by the generic rule (the context's toolCalls, or
// every kept tool with client.ExampleArguments); the exceptions are
// scenarios whose server expects specific arguments or no call at all.
func Steps(scenario string, c Context, tools []client.Tool) []Step {
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
				return []Step{{Tool: echo, Args: args}}
			}
		}
	case "tools_call":
		for _, t := range tools {
			if t.Name == "add_numbers" {
				return []Step{{Tool: t.Name, Args: json.RawMessage(`{"a":5,"b":3}`)}}
			}
		}
	}
	var steps []Step
	if len(c.ToolCalls) > 0 {
		for _, tc := range c.ToolCalls {
			steps = append(steps, Step{Tool: tc.Name, Args: tc.Arguments})
		}
		return steps
	}
	for _, t := range tools {
		steps = append(steps, Step{Tool: t.Name, Args: client.ExampleArguments(t.InputSchema)})
	}
	return steps
}
