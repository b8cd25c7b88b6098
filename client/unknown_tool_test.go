package client_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/pysdk"
	"github.com/mcpdiag/mcpdiag/record"
)

func hasWarning(ws []record.Warning, code string) bool {
	for _, w := range ws {
		if w.Code == code {
			return true
		}
	}
	return false
}

func warningsOf(r *classify.Result) (codes []string, text string) {
	for _, w := range r.Warnings() {
		codes = append(codes, w.Code)
		text += w.Message + "\n"
	}
	return codes, text
}

// TestUnknownToolAsToolError is defect 11(a): the Python SDK answers a
// tools/call of a tool it does not have with HTTP 200 and isError "Unknown
// tool: X". When the tool is absent from the complete tools/list the client
// read, the call warns that the spec makes that a protocol error; a listed
// tool that fails, or succeeds, gets no such warning. Both response modes
// and both ways of reaching the era (auto probes first, then initialize).
func TestUnknownToolAsToolError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool    string
		args    string
		outcome classify.Outcome
		warn    bool
	}{
		{"get_weather", `{"city":"Paris"}`, classify.ToolError, true},
		{"divide", `{"a":1,"b":0}`, classify.ToolError, false},
		{"get_forecast", `{"latitude":1,"longitude":2}`, classify.ToolSuccess, false},
	}
	for _, jsonResponse := range []bool{false, true} {
		for _, protocol := range []string{client.ProtocolAuto, client.Protocol2025} {
			for _, tt := range tests {
				name := tt.tool + "/" + protocol
				if jsonResponse {
					name += "/json"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					py := pysdk.Start(t, jsonResponse)
					c, err := client.New(client.Options{URL: py.URL, Protocol: protocol})
					if err != nil {
						t.Fatal(err)
					}
					call, err := c.CallTool(context.Background(), tt.tool, []byte(tt.args))
					if err != nil {
						t.Fatal(err)
					}
					if call.Outcome != tt.outcome || call.Protocol != client.Protocol2025 {
						t.Fatalf("outcome %s on %q (%s), want %s on 2025-11-25; server saw %s", call.Outcome, call.Protocol, call.Final.Reason, tt.outcome, py.Methods())
					}
					codes, text := warningsOf(call.Final)
					got := slices.Contains(codes, classify.WarnProtocolErrorAsTool)
					if got != tt.warn {
						t.Fatalf("warning %s: %v, want %v; warnings: %s", classify.WarnProtocolErrorAsTool, got, tt.warn, text)
					}
					if tt.warn && (!strings.Contains(text, `"get_weather"`) || !strings.Contains(text, "tools/list")) {
						t.Errorf("the warning does not name the tool and the listing: %s", text)
					}
					// The record of the tools/call and the call line carry it.
					exs, sum := call.Records(record.Record{Client: "test@1"}, py.URL)
					last := exs[len(exs)-1]
					if last.Method != "tools/call" || hasWarning(last.Warnings, classify.WarnProtocolErrorAsTool) != tt.warn ||
						hasWarning(sum.Warnings, classify.WarnProtocolErrorAsTool) != tt.warn {
						t.Errorf("records: exchange %s warnings %v, call warnings %v", last.Method, last.Warnings, sum.Warnings)
					}
				})
			}
		}
	}
}
