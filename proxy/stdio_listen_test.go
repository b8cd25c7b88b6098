package proxy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// listenLine is a 2026-07-28 subscriptions/listen request of id "listen:0".
const listenLine = `{"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"listener","version":"1.0"},"io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`

// TestStdioListenEnds: over stdio a 2026-07-28 subscription ends as over
// HTTP (40fae3a): its client ends it (notifications/cancelled for the
// listen request, or closing the server's stdin) and no response is due
// (SubscriptionsListenResult comes only when the server tears it down), so
// the listen request's record is HTTP_SUCCESS, transport layer, with its
// method and id and a reason that says how it ended; the stdio server ends
// it with notifications/cancelled of its own (the schema's
// CancelledNotification: "On stdio, the server also sends this
// notification, solely to terminate a subscriptions/listen stream"), or
// with the result (RESULT_SUCCESS). A tools/call the client leaves
// unanswered stays a failure.
func TestStdioListenEnds(t *testing.T) {
	t.Parallel()
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen:0","reason":"done"}}`
	for _, tc := range []struct {
		name    string
		lines   []string // after the listen request and its acknowledgement
		outcome classify.Outcome
		reason  string
		dc      bool
	}{
		{"client cancels", []string{cancel, scriptedCall("2", "echo")}, classify.HTTPSuccess, "the client ended its subscription (subscriptions/listen) with notifications/cancelled", false},
		{"client closes stdin", nil, classify.HTTPSuccess, "the client closed the server's stdin", true},
		{"server cancels", []string{scriptedCall("2", "end-listen")}, classify.HTTPSuccess, "the server ended the subscription (subscriptions/listen) with notifications/cancelled", false},
		{"server result", []string{scriptedCall("2", "listen-result")}, classify.ResultSuccess, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
			if _, err := run.in.Write([]byte(listenLine + "\n")); err != nil {
				t.Fatal(err)
			}
			if line, err := run.out.ReadString('\n'); err != nil || !strings.Contains(line, "acknowledged") {
				t.Fatalf("the client read %q, %v", line, err)
			}
			conversation(t, run.in, run.out, tc.lines)
			run.in.Close()
			run.wait(t)
			var listens []*record.Record
			for _, r := range run.sink.records(t) {
				if r.Method == "subscriptions/listen" {
					listens = append(listens, r)
				} else if r.Outcome != classify.ToolSuccess {
					t.Errorf("%s %s: %s (%s)", r.Method, r.Tool, r.Outcome, r.Reason)
				}
			}
			if len(listens) != 1 {
				t.Fatalf("%d records of the listen request, want 1", len(listens))
			}
			r := listens[0]
			dc := r.Flags.Has(record.FlagDC)
			if r.Outcome != tc.outcome || r.Layer != tc.outcome.Layer() || r.JSONRPC.ID.String() != `"listen:0"` || !strings.Contains(r.Reason, tc.reason) || dc != tc.dc || r.Flags.Has(record.FlagUX) {
				t.Errorf("recorded %s (%s layer), id %s, flags %v: %s; note %s\nwant %s, reason with %q, DC %v", r.Outcome, r.Layer, r.JSONRPC.ID.String(), r.Flags, r.Reason, r.Note, tc.outcome, tc.reason, tc.dc)
			}
		})
	}
}
