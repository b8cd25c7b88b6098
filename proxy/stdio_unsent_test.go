package proxy_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// A server that stops reading its stdin and lives on: the requests the
// client writes next (on lines of their own and in a batch line) never
// reach it, and each is recorded so, NETWORK_ERROR with the request not
// sent, as the proxy reads it; a line that is not JSON-RPC is recorded as
// not passed on. Before, the proxy drained the client's stdin into
// io.Discard and these requests had no record at all.
func TestStdioServerStopsReadingStdin(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := startStdioContext(t, ctx, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1"), Bodies: proxy.BodiesAll})
	if got := conversation(t, run.in, run.out, []string{scriptedCall("2", "close-stdin")}); len(got) != 1 {
		t.Fatalf("the answer to close-stdin: %q", got)
	}
	go func() { _, _ = io.Copy(io.Discard, run.out) }()
	// Each write returns once the proxy has read the line (io.Pipe).
	for _, l := range []string{
		scriptedCall("3", "echo"),
		scriptedCall("4", "echo"),
		"[" + scriptedCall("5", "echo") + "," + scriptedCall("6", "echo") + "]",
		"not json",
	} {
		if _, err := io.WriteString(run.in, l+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	// The records of lines the proxy read are written as it reads them.
	waitRecord(t, run.sink, "of the line that is not JSON", func(r *record.Record) bool { return r.Outcome == classify.MalformedJSON })
	cancel()
	run.waitStopped(t)
	if !errors.Is(run.err, context.Canceled) {
		t.Errorf("RunStdio: %v, want context.Canceled", run.err)
	}
	unsent := map[string]*record.Record{}
	for _, r := range run.sink.exchanges(t) {
		switch {
		case r.JSONRPC.ID.String() == "2":
			if r.Outcome != classify.ToolSuccess {
				t.Errorf("close-stdin: %s %q", r.Outcome, r.Reason)
			}
		case r.Outcome == classify.MalformedJSON:
			if !strings.Contains(r.Note, "not passed on") {
				t.Errorf("the line that is not JSON: note %q", r.Note)
			}
		case !r.JSONRPC.ID.IsZero():
			unsent[r.JSONRPC.ID.String()] = r
		default:
			t.Errorf("unexpected record %s %q", r.Outcome, r.Reason)
		}
	}
	for _, id := range []string{"3", "4", "5", "6"} {
		r := unsent[id]
		if r == nil {
			t.Errorf("no record of request %s", id)
			continue
		}
		if r.Outcome != classify.NetworkError || r.Network == nil || r.Network.RequestSent || r.Network.Cause != classify.NetClosed || !r.Flags.Has(record.FlagUX) ||
			!strings.HasPrefix(r.Reason, "the request never reached the server: the server had stopped reading its stdin (writing to it failed:") ||
			r.RequestBody == nil || !strings.Contains(r.RequestBody.Text, `"id":`+id) {
			t.Errorf("request %s: %s %+v flags %v %q", id, r.Outcome, r.Network, r.Flags, r.Reason)
		}
		if (id == "5" || id == "6") != (r.Batch == 2) {
			t.Errorf("request %s: batch %d", id, r.Batch)
		}
	}
	if len(unsent) != 4 {
		t.Errorf("%d records of requests not sent, want 4", len(unsent))
	}
}

// The records of requests that never reached the server are capped as the
// noise records are: past the first 1,000, one summary record counts them.
func TestStdioUnsentRequestsCapped(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := startStdioContext(t, ctx, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
	if got := conversation(t, run.in, run.out, []string{scriptedCall("1", "close-stdin")}); len(got) != 1 {
		t.Fatalf("the answer to close-stdin: %q", got)
	}
	go func() { _, _ = io.Copy(io.Discard, run.out) }()
	var b strings.Builder
	for i := range 1003 {
		b.WriteString(scriptedCall(strconv.Itoa(100+i), "echo") + "\n")
	}
	b.WriteString("not json\n")
	if _, err := io.WriteString(run.in, b.String()); err != nil {
		t.Fatalf("write: %v", err)
	}
	waitRecord(t, run.sink, "of the line that is not JSON", func(r *record.Record) bool { return r.Outcome == classify.MalformedJSON })
	cancel()
	run.waitStopped(t)
	var one, summaries int
	for _, r := range run.sink.exchanges(t) {
		switch {
		case r.Outcome != classify.NetworkError:
		case r.Summarized > 0:
			summaries++
			if r.Summarized != 3 || !strings.Contains(r.Reason, "3 more requests the client wrote never reached the server") {
				t.Errorf("summary: %d %q", r.Summarized, r.Reason)
			}
		case r.Network != nil && !r.Network.RequestSent:
			one++
		}
	}
	if one != 1000 || summaries != 1 {
		t.Errorf("%d records of requests not sent and %d summaries, want 1000 and 1", one, summaries)
	}
}
