package client_test

import (
	"bytes"
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
)

// TestNoHiddenResend: a tools/call with an Idempotency-Key (--idempotency-key,
// or the header given with --header) that the server reads and answers by
// closing the kept-alive connection. Go's transport re-sends such a request
// by itself (the header makes a POST "replayable"), so the server ran the
// call twice while the report said "4 POST(s), 0 retries" and the records
// held one tools/call. Now every tools/call on the wire is an exchange of
// the call: the first is NETWORK_ERROR (sent whole), the policy's retry (the
// key makes it safe) is the second, and the report counts both.
func TestNoHiddenResend(t *testing.T) {
	for _, how := range []string{"--idempotency-key", "--header X-Idempotency-Key"} {
		t.Run(how, func(t *testing.T) {
			var calls atomic.Int32
			s := &legacyServer{t: t}
			s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
				if calls.Add(1) == 1 {
					if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
						conn.Close()
					}
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID)
			}
			ts := httptest.NewServer(s)
			t.Cleanup(ts.Close)
			opts := client.Options{URL: ts.URL, Protocol: client.Protocol2025, Sleep: func(_ <-chan struct{}, _ time.Duration) bool { return true }}
			if how == "--idempotency-key" {
				opts.IdempotencyKey = "k-1"
			} else {
				opts.Header = http.Header{"X-Idempotency-Key": {"k-1"}}
				opts.Safety = "idempotent"
			}
			c, _ := client.New(opts)
			call, _ := c.CallTool(context.Background(), "t", nil)
			recorded := 0
			for _, ex := range call.Exchanges {
				if ex.Method == "tools/call" {
					recorded++
				}
			}
			if int(calls.Load()) != recorded || call.Outcome != classify.ToolSuccess || call.Retries != 1 {
				t.Errorf("the server got %d tools/call, the call recorded %d; %s after %d retries (want 2 and 2, TOOL_SUCCESS after 1 retry)",
					calls.Load(), recorded, call.Outcome, call.Retries)
			}
			var b bytes.Buffer
			_ = call.WriteReport(&b)
			if !strings.Contains(b.String(), "  exchanges: 5 POST attempt(s) (") || !strings.Contains(b.String(), ", 1 retry, ") {
				t.Errorf("the report does not count the two tools/call:\n%s", b.String())
			}
		})
	}
}
