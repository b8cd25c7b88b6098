package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestResumeGETDroppedIsResumedAgain: a 2025-11-25 tools/call stream broke
// after an event id, and the GET that resumes it got no HTTP response (the
// server dropped the connection). Resuming again is safe (a GET with
// Last-Event-ID cannot run the tool again) and within the resumption budget,
// so the client resumes again and gets the rest of the stream. Before, the
// policy read the GET's NETWORK_ERROR as a failed tools/call POST: for a
// tool not known to be safe it ended the call ("not retried: … a retry could
// run it twice"), for a read-only one it sent the tools/call again.
func TestResumeGETDroppedIsResumedAgain(t *testing.T) {
	for _, safety := range []retry.Safety{"", retry.ReadOnly} {
		t.Run(fmt.Sprintf("safety %q", safety), func(t *testing.T) {
			var gets, calls atomic.Int32
			var id atomic.Value
			s := &legacyServer{t: t}
			s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
				calls.Add(1)
				id.Store(string(m.ID))
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "id: ev-1\ndata: \n\n")
			}
			s.get = func(w http.ResponseWriter, r *http.Request) {
				if r.ContentLength != 0 || len(r.TransferEncoding) != 0 || r.Header.Get("Content-Length") != "" {
					t.Errorf("the resume GET carried a body: length %d, transfer-encoding %q", r.ContentLength, r.TransferEncoding)
				}
				if gets.Add(1) == 1 {
					if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
						conn.Close()
					}
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", id.Load())
			}
			ts := httptest.NewServer(s)
			t.Cleanup(ts.Close)
			c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025, Safety: safety, Sleep: func(_ <-chan struct{}, _ time.Duration) bool { return true }})
			call, _ := c.CallTool(context.Background(), "t", nil)
			if call.Outcome != classify.ToolSuccess || calls.Load() != 1 {
				t.Fatalf("%s after %d tools/call POST(s) (%s: %s); want TOOL_SUCCESS after 1", call.Outcome, calls.Load(), call.Decision.Action, call.Decision.Reason)
			}
			if len(call.Recoveries) != 2 || !strings.HasPrefix(call.Recoveries[1], "resume: resume 2 of 2 ") {
				t.Errorf("recoveries %q", call.Recoveries)
			}
			if call.Retries != 0 {
				t.Errorf("%d retries: a resume is not a retry", call.Retries)
			}
			// Every GET the server got is an exchange of the call: Go's
			// transport used to replay the dropped GET by itself, so the
			// server saw 3 GETs where the records held 2.
			recorded := 0
			for _, ex := range call.Exchanges {
				if ex.HTTPMethod == http.MethodGet {
					recorded++
				}
			}
			if recorded != int(gets.Load()) || recorded != 2 {
				t.Errorf("the server got %d GET(s), the call recorded %d; want 2 and 2", gets.Load(), recorded)
			}
		})
	}
}
