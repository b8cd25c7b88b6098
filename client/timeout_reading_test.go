package client_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestTimeoutWhileStreamOpen: a server still working when the call's
// --timeout runs out (its response stream open, an event id sent, as
// server-everything's trigger-long-running-operation with --timeout 2s)
// is not a stream that broke. Before, the reason said "the stream broke
// before the response arrived" and the decision "the call's time ran out
// before the resume: resume 1 of 2 …: the response stream broke after
// event …": nothing broke and no resume was due. Now both say that the
// call's time limit ran out while the server was still answering, with
// no cancel sent; the outcome stays STREAM_INCOMPLETE (JSON body or
// stream alike).
func TestTimeoutWhileStreamOpen(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			done := make(chan struct{})
			s := &legacyServer{t: t}
			s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
				if stream {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, "id: ev-1\ndata: \n\n")
				} else {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, `{"jsonrpc":"2.0",`)
				}
				w.(http.Flusher).Flush()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
				}
			}
			ts := httptest.NewServer(s)
			t.Cleanup(ts.Close)
			t.Cleanup(func() { close(done) })
			c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025, Timeout: 500 * time.Millisecond})
			call, _ := c.CallTool(context.Background(), "t", nil)
			wantOutcome := classify.StreamIncomplete
			if !stream {
				wantOutcome = classify.NetworkError
			}
			if call.Outcome != wantOutcome {
				t.Fatalf("outcome %s (%s), want %s", call.Outcome, call.Final.Reason, wantOutcome)
			}
			const why = "the call's time limit (--timeout 500ms) ran out while the server was still answering"
			if !strings.HasPrefix(call.Final.Reason, why) || strings.Contains(call.Final.Reason, "stream broke") || strings.Contains(call.Final.Reason, "was cut") {
				t.Errorf("reason %q, want it to start %q and say nothing broke", call.Final.Reason, why)
			}
			if call.Decision.Action != retry.Fail || !strings.HasPrefix(call.Decision.Reason, why) || strings.Contains(call.Decision.Reason, "stream broke") {
				t.Errorf("decision %s: %q, want fail: %q…", call.Decision.Action, call.Decision.Reason, why)
			}
			var report bytes.Buffer
			_ = call.WriteReport(&report)
			if strings.Contains(report.String(), "stream broke") {
				t.Errorf("report says the stream broke:\n%s", report.String())
			}
		})
	}
}
