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
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestResumeWaitPastDeadline: a 2025-11-25 stream that breaks after an
// event id and asks, with its retry field, for a wait longer than the
// call has left is not resumed: the decision says so (fail, "not resumed",
// the wait and the time left), no GET is sent, and the call does not sit
// until its deadline. Before, the policy judged the deadline on its own
// backoff (a few ms), the client then stretched the wait to the retry field
// and slept into the deadline, and the call ended with the decision
// "resume after 1m0s" though nothing was resumed.
func TestResumeWaitPastDeadline(t *testing.T) {
	var gets atomic.Int32
	s := &legacyServer{t: t}
	s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: ev-1\nretry: 60000\ndata: \n\n")
	}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	call, _ := c.CallTool(ctx, "t", nil)
	if call.Outcome != classify.StreamIncomplete {
		t.Fatalf("outcome %s, want STREAM_INCOMPLETE", call.Outcome)
	}
	if call.Decision.Action != retry.Fail || !strings.HasPrefix(call.Decision.Reason, "not resumed: ") ||
		!strings.Contains(call.Decision.Reason, "waiting 1m0s (the stream's retry field) would pass the deadline") {
		t.Errorf("decision %s: %s; want fail: not resumed, waiting 1m0s (the stream's retry field) would pass the deadline", call.Decision.Action, call.Decision.Reason)
	}
	if ctx.Err() != nil {
		t.Errorf("the call waited until its deadline")
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("%d GET(s) sent", n)
	}
	last := call.Exchanges[len(call.Exchanges)-1]
	if last.Decision == nil || last.Decision.Action != retry.Fail {
		t.Errorf("the last exchange's decision is %v, want fail", last.Decision)
	}
	var report bytes.Buffer
	_ = call.WriteReport(&report)
	if !strings.Contains(report.String(), "  decision:  fail — not resumed: ") {
		t.Errorf("report:\n%s", report.String())
	}
}

// TestResumeWaitInterrupted: when the call's context ends during the wait
// before a resume, the call ends with a fail decision that says the resume
// did not happen, as a retry's wait does ("the call's time ran out before
// the retry"); it used to keep the decision "resume" of a GET never sent.
func TestResumeWaitInterrupted(t *testing.T) {
	var gets atomic.Int32
	s := &legacyServer{t: t}
	s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: ev-1\nretry: 300\ndata: \n\n")
	}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	var waits []time.Duration
	c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025, Sleep: func(_ <-chan struct{}, d time.Duration) bool {
		waits = append(waits, d)
		return false // interrupted
	}})
	call, _ := c.CallTool(context.Background(), "t", nil)
	if len(waits) != 1 || waits[0] < 300*time.Millisecond {
		t.Fatalf("waits %v, want one of at least the retry field's 300ms", waits)
	}
	if call.Decision.Action != retry.Fail || !strings.HasPrefix(call.Decision.Reason, "the call's time ran out before the resume, so no resume was made (it was to be: ") {
		t.Errorf("decision %s: %s", call.Decision.Action, call.Decision.Reason)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("%d GET(s) sent", n)
	}
}

// TestResumeReasonNamesTheWait: the reason of a resume names the wait the
// client makes: the stream's retry field when it is longer than the
// backoff, not the backoff it replaced ("resume 1 of 2 after 199.9ms …
// (waiting 700ms …)").
func TestResumeReasonNamesTheWait(t *testing.T) {
	s := &legacyServer{t: t}
	var id atomic.Value
	s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
		id.Store(string(m.ID))
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: ev-1\nretry: 700\ndata: \n\n")
	}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", id.Load())
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	var waits []time.Duration
	pol := retry.DefaultPolicy()
	pol.Backoff = 10 * time.Millisecond
	c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025, Policy: &pol, Sleep: func(_ <-chan struct{}, d time.Duration) bool {
		waits = append(waits, d)
		return true
	}})
	call, _ := c.CallTool(context.Background(), "t", nil)
	if call.Outcome != classify.ToolSuccess || len(waits) != 1 || waits[0] != 700*time.Millisecond {
		t.Fatalf("outcome %s, waits %v", call.Outcome, waits)
	}
	if len(call.Recoveries) != 1 || !strings.HasPrefix(call.Recoveries[0], "resume: resume 1 of 2 after 700ms (the stream's retry field): ") {
		t.Errorf("recoveries %q", call.Recoveries)
	}
}
