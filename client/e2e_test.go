package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

func newClient(t *testing.T, url, protocol string, inputs client.InputProvider) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{
		URL: url, Protocol: protocol, Inputs: inputs, Timeout: 10 * time.Second,
		Bearer: "s3cr3t-token-value",
		Rand:   rand.New(rand.NewPCG(1, 2)),
		// Waits are real but short: tests must not sleep for seconds.
		Sleep: func(done <-chan struct{}, d time.Duration) bool {
			select {
			case <-time.After(min(d, 50*time.Millisecond)):
				return true
			case <-done:
				return false
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCallGoSDK(t *testing.T) {
	// 2026-07-28 asks under the MRTR key "approval"; the 2025-11-25 server
	// shim asks with a server request on the stream, answered by method.
	answer := json.RawMessage(`{"action":"accept","content":{"ok":true}}`)
	approve := client.MapInputs{"approval": answer, "elicitation/create": answer}
	tests := []struct {
		name      string
		stateless bool
		protocol  string
		tool      string
		fault     string
		inputs    client.InputProvider
		want      classify.Outcome
		action    retry.Action
		toolCalls int // tools/call POSTs the server saw
		exit      int
	}{
		{"2026 success", true, "2026-07-28", "echo", "", nil, classify.ToolSuccess, retry.Done, 1, 0},
		{"2026 tool error", true, "2026-07-28", "fail", "", nil, classify.ToolError, retry.SurfaceToModel, 1, 1},
		{"2026 MRTR answered", true, "2026-07-28", "confirm", "", approve, classify.ToolSuccess, retry.Done, 2, 0},
		{"2026 MRTR unanswered", true, "2026-07-28", "confirm", "", client.MapInputs{}, classify.InputRequired, retry.ContinueInput, 1, 5},
		{"2026 503 then 200, read-only retried", true, "2026-07-28", "echo", "503", nil, classify.ToolSuccess, retry.Done, 2, 0},
		{"2026 503, destructive not retried", true, "2026-07-28", "write", "503", nil, classify.HTTPError, retry.Fail, 1, 4},
		{"2026 429 Retry-After, destructive retried", true, "2026-07-28", "write", "429", nil, classify.ToolSuccess, retry.Done, 2, 0},
		{"2026 reset after read, read-only retried", true, "2026-07-28", "echo", "reset", nil, classify.ToolSuccess, retry.Done, 2, 0},
		{"2026 reset after read, destructive not retried", true, "2026-07-28", "write", "reset", nil, classify.NetworkError, retry.Fail, 1, 4},
		{"2026 SSE cut, read-only retried", true, "2026-07-28", "echo", "sse-cut", nil, classify.ToolSuccess, retry.Done, 2, 0},
		{"2026 SSE cut, destructive not retried", true, "2026-07-28", "write", "sse-cut", nil, classify.StreamIncomplete, retry.Fail, 1, 4},
		{"2025 success", false, "2025-11-25", "echo", "", nil, classify.ToolSuccess, retry.Done, 1, 0},
		{"2025 tool error", false, "2025-11-25", "fail", "", nil, classify.ToolError, retry.SurfaceToModel, 1, 1},
		{"2025 elicitation answered on the stream", false, "2025-11-25", "confirm", "", approve, classify.ToolSuccess, retry.Done, 1, 0},
		{"2025 503 then 200", false, "2025-11-25", "echo", "503", nil, classify.ToolSuccess, retry.Done, 2, 0},
		{"2025 SSE cut, destructive not retried", false, "2025-11-25", "write", "sse-cut", nil, classify.StreamIncomplete, retry.Fail, 1, 4},
		{"auto against stateful falls back", false, "auto", "echo", "", nil, classify.ToolSuccess, retry.Done, 1, 0},
		{"auto against stateless stays modern", true, "auto", "echo", "", nil, classify.ToolSuccess, retry.Done, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := serve(t, goSDKHandler(tt.stateless), tt.fault)
			c := newClient(t, url, tt.protocol, tt.inputs)
			call, err := c.CallTool(context.Background(), tt.tool, json.RawMessage(`{"text":"hi"}`))
			if err != nil {
				t.Fatal(err)
			}
			if call.Outcome != tt.want || call.Decision.Action != tt.action {
				t.Fatalf("outcome %s, decision %s (%s); want %s, %s", call.Outcome, call.Decision.Action, call.Decision.Reason, tt.want, tt.action)
			}
			if got := srv.count("tools/call"); got != tt.toolCalls {
				t.Errorf("server saw %d tools/call POSTs, want %d", got, tt.toolCalls)
			}
			if call.ExitCode() != tt.exit {
				t.Errorf("exit code %d, want %d", call.ExitCode(), tt.exit)
			}
			checkRounds(t, call, srv)
			if srv.posts != len(call.Exchanges) {
				t.Errorf("server saw %d POSTs, the call recorded %d exchanges", srv.posts, len(call.Exchanges))
			}
			wantEra := tt.protocol
			if wantEra == "auto" {
				wantEra = map[bool]string{true: "2026-07-28", false: "2025-11-25"}[tt.stateless]
			}
			if call.Protocol != wantEra || call.EraReason == "" {
				t.Errorf("era %q (%s), want %s", call.Protocol, call.EraReason, wantEra)
			}
			if tt.fault == "" && call.Retries != 0 {
				t.Errorf("%d retries without a fault", call.Retries)
			}
			for _, ex := range call.Exchanges {
				if strings.Contains(ex.Result.Reason, "s3cr3t") {
					t.Errorf("the bearer token leaked into a reason")
				}
			}
		})
	}
}

// checkRounds: a call's Rounds, its text report's "input round(s)" and its
// summary record's inputRounds all count the POSTs that answered the
// server's input requests as the server got them (MRTR rounds, answers to a
// 2025-11-25 elicitation on the stream). Before, Rounds counted only MRTR
// rounds: 0 after a 2025-11-25 answer that the record counted as 1.
func checkRounds(t *testing.T, call *client.Call, srv *flaky) {
	t.Helper()
	want := srv.wireRounds()
	_, sum := call.Records(record.Record{}, "http://127.0.0.1/mcp")
	var b strings.Builder
	_ = call.WriteReport(&b)
	text := fmt.Sprintf(", %d input round(s)\n", want)
	if call.Rounds != want || sum.InputRounds != want || !strings.Contains(b.String(), text) {
		t.Errorf("Rounds %d, record inputRounds %d, report %q; the server got %d answering POSTs", call.Rounds, sum.InputRounds, b.String(), want)
	}
}
