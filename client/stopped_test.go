package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestStoppedCallRetriesNothing: a read-only call whose tools/call is left
// unanswered until the call's context ends (its timeout, the user's
// interrupt: mcpdiag call under Ctrl-C, or another stop) sends no retry,
// and both the exchange and the call say so: fail, naming what stopped the
// call. Before, the exchange's decision (and so its record, report's and
// the page's retry decision) was "retry 1 of 2 after …" for a retry never
// sent, and an interrupted call said "the call's time ran out before the
// retry" (found by running mcpdiag call against serve's
// timeout.uncooperative_hang and pressing Ctrl-C). Then a stop said "the
// call was stopped (interrupt signal received) before the retry: retry 1 of
// 2 after …: the connection failed (the client cancelled the request)": the
// stop's own cut given as the failure a retry was for. Now a stop that cut
// the request says so, and that no retry was made; the user's interrupt
// (client.ErrInterrupted) is named as such.
func TestStoppedCallRetriesNothing(t *testing.T) {
	stopWith := func(cause error) func(got <-chan struct{}) (context.Context, time.Duration, func()) {
		return func(got <-chan struct{}) (context.Context, time.Duration, func()) {
			ctx, cancel := context.WithCancelCause(context.Background())
			go func() {
				// The stop comes once the server holds the tools/call
				// (its answer held until the test ends).
				<-got
				cancel(cause)
			}()
			return ctx, 30 * time.Second, func() { cancel(nil) }
		}
	}
	tests := []struct {
		name string
		stop func(got <-chan struct{}) (context.Context, time.Duration, func())
		want string
	}{
		{"user interrupt", stopWith(fmt.Errorf("%w (SIGINT)", client.ErrInterrupted)),
			"the user interrupted the call while it waited for the answer to tools/call; no retry was made (the interrupt cut the request, not the server)"},
		{"another stop", stopWith(errors.New("interrupt signal received")),
			"the call was stopped (interrupt signal received) while it waited for the answer to tools/call; no retry was made (the stop cut the request, not the server)"},
		{"timeout", func(<-chan struct{}) (context.Context, time.Duration, func()) {
			return context.Background(), 300 * time.Millisecond, func() {}
		}, "the call's time ran out before the retry, so no retry was made (it was to be: retry 1 of 2 after "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan struct{}, 4)
			release := make(chan struct{})
			s := &modernServer{tools: `[{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]`}
			s.reject = func(n int, m rpc, w http.ResponseWriter) bool {
				if m.Method != "tools/call" {
					return false
				}
				got <- struct{}{}
				<-release // the test's end
				return true
			}
			url := startModern(t, s)
			t.Cleanup(func() { close(release) })
			ctx, timeout, done := tt.stop(got)
			defer done()
			c, _ := client.New(client.Options{URL: url, Protocol: client.Protocol2026, Timeout: timeout})
			call, _ := c.CallTool(ctx, "t", nil)
			if call.Outcome != classify.NetworkError {
				t.Fatalf("outcome %s (%s), want NETWORK_ERROR", call.Outcome, call.Final.Reason)
			}
			s.mu.Lock()
			sent := s.calls["t"]
			s.mu.Unlock()
			if call.Retries != 0 || sent != 1 {
				t.Errorf("retries %d, tools/call sent %d times; want 0 and 1", call.Retries, sent)
			}
			if call.Decision.Action != retry.Fail || !strings.HasPrefix(call.Decision.Reason, tt.want) {
				t.Errorf("call decision %s: %s\nwant fail: %s…", call.Decision.Action, call.Decision.Reason, tt.want)
			}
			last := call.Exchanges[len(call.Exchanges)-1]
			if last.Decision == nil || *last.Decision != call.Decision {
				t.Errorf("the tools/call exchange's decision is %+v, want the call's %+v", last.Decision, call.Decision)
			}
			var report bytes.Buffer
			_ = call.WriteReport(&report)
			if !strings.Contains(report.String(), "  decision:  fail — "+tt.want) {
				t.Errorf("report:\n%s", report.String())
			}
		})
	}
}

// TestStoppedDuringBackoffRetriesNothing: a read-only call whose tools/call
// is answered 503 with Retry-After, stopped while it waits to retry, sends
// no retry, and the tools/call exchange carries the call's decision (fail,
// "… before the retry"), as the setup's exchanges do. Before, the exchange
// kept "retry 1 of 2 after 2s", so its record announced a retry that was
// never sent (Ctrl-C during a backoff). The user's interrupt
// (client.ErrInterrupted) says that no retry was made, and what it was to
// be.
func TestStoppedDuringBackoffRetriesNothing(t *testing.T) {
	for _, tt := range []struct {
		cause error
		want  string
	}{
		{errors.New("interrupt signal received"), "the call was stopped (interrupt signal received) before the retry, so no retry was made (it was to be: retry 1 of 2 after 2s"},
		{fmt.Errorf("%w (SIGINT)", client.ErrInterrupted), "the user interrupted the call before the retry, so no retry was made (it was to be: retry 1 of 2 after 2s"},
	} {
		t.Run(tt.cause.Error(), func(t *testing.T) {
			s := &modernServer{tools: `[{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]`}
			s.reject = func(n int, m rpc, w http.ResponseWriter) bool {
				if m.Method != "tools/call" {
					return false
				}
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
			url := startModern(t, s)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			c, _ := client.New(client.Options{URL: url, Protocol: client.Protocol2026, Timeout: 30 * time.Second,
				Sleep: func(done <-chan struct{}, d time.Duration) bool {
					// The stop comes while the call waits to retry.
					cancel(tt.cause)
					testwait.Recv(t, done, "the backoff's done channel to close after the stop")
					return false
				}})
			call, _ := c.CallTool(ctx, "t", nil)
			s.mu.Lock()
			sent := s.calls["t"]
			s.mu.Unlock()
			if call.Retries != 0 || sent != 1 {
				t.Errorf("retries %d, tools/call sent %d times; want 0 and 1", call.Retries, sent)
			}
			if call.Decision.Action != retry.Fail || !strings.HasPrefix(call.Decision.Reason, tt.want) {
				t.Errorf("call decision %s: %s\nwant fail: %s…", call.Decision.Action, call.Decision.Reason, tt.want)
			}
			last := call.Exchanges[len(call.Exchanges)-1]
			if last.Method != "tools/call" || last.Decision == nil || *last.Decision != call.Decision {
				t.Errorf("the %s exchange's decision is %+v, want the call's %+v", last.Method, last.Decision, call.Decision)
			}
		})
	}
}
