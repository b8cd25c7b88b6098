package proxy_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// A line the client is in the middle of when the run ends (the server
// crashed; the client's next message has arrived up to no newline yet) has
// a record: NETWORK_ERROR, the message cut, how many bytes arrived, none
// passed on, its head as the body. Before, it was dropped without a record
// or a word (the run's end discards what clientToServer holds).
func TestStdioLineCutByTheRunsEnd(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Bodies: proxy.BodiesAll})
	conversation(t, run.in, run.out, []string{initLine, readyLine})
	partial := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ec`
	// One write: the crash request reaches the server, which exits in it,
	// while the proxy holds the partial line behind it.
	go func() { _, _ = io.WriteString(run.in, toolLine(2, "crash")+"\n"+partial) }()
	_, _ = io.Copy(io.Discard, run.out)
	run.wait(t)
	recs := run.sink.records(t)
	var cut int
	for _, r := range recs {
		if r.Note != "the client's line (client → server), cut by the run's end" {
			continue
		}
		cut++
		want := "the run ended (the server process exited (exit status 3) before responding) while the client was writing a line: 66 bytes of it had arrived, with no newline yet; none of it was passed on to the server (a message cut in the middle, not judged)"
		if r.Outcome != classify.NetworkError || r.Reason != want || r.RequestBytes != int64(len(partial)) {
			t.Errorf("cut line's record: %s %q %d bytes\nwant %s %q %d", r.Outcome, r.Reason, r.RequestBytes, classify.NetworkError, want, len(partial))
		}
		if r.RequestBody == nil || r.RequestBody.Text != partial || r.RequestBody.Truncated {
			t.Errorf("cut line's body %+v, want %q whole", r.RequestBody, partial)
		}
	}
	if cut != 1 {
		t.Errorf("%d records of the cut line, want 1; records:\n%s", cut, dumpRecords(recs))
	}
	if run.res.Exchanges != 2 {
		// initialize and the crash request; the cut line is no exchange.
		t.Errorf("%d exchanges, want 2", run.res.Exchanges)
	}
}

// A client that closes its stdin in the middle of a line: its record says
// the line was cut there, not only that it is not JSON.
func TestStdioLineCutByTheClientsEOF(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{})
	conversation(t, run.in, run.out, []string{initLine, readyLine})
	partial := `{"jsonrpc":"2.0","id":3,"method":"tools/li`
	if _, err := io.WriteString(run.in, partial); err != nil {
		t.Fatal(err)
	}
	run.in.Close()
	_, _ = io.Copy(io.Discard, run.out)
	run.wait(t)
	recs := run.sink.records(t)
	want := "a line the client wrote to the server's stdin is not JSON: it is cut, the client closed its stdin 42 bytes into it, before its newline: a server answers it with an error of id null (JSON-RPC 2.0 §5) or ends"
	n := 0
	for _, r := range recs {
		if r.Outcome == classify.MalformedJSON {
			n++
			if r.Reason != want || r.RequestBytes != int64(len(partial)) {
				t.Errorf("record %q %d bytes, want %q %d", r.Reason, r.RequestBytes, want, len(partial))
			}
		}
	}
	if n != 1 {
		t.Errorf("%d MALFORMED_JSON records, want 1:\n%s", n, dumpRecords(recs))
	}
}

// dumpRecords lists records a line each: outcome, method, reason.
func dumpRecords(recs []*record.Record) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%s %s %q\n", r.Outcome, r.Method, r.Reason)
	}
	return b.String()
}
