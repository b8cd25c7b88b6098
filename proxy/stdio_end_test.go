package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// endSink keeps the records it is given and counts those written after it
// was closed (after RunStdio returned).
type endSink struct {
	mu     sync.Mutex
	recs   []*record.Record
	closed bool
	late   int
}

func (e *endSink) Write(rec *record.Record) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		e.late++
		return errors.New("sink closed")
	}
	e.recs = append(e.recs, rec)
	return nil
}

func (e *endSink) close() (recs []*record.Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return e.recs
}

func (e *endSink) lateWrites() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.late
}

// A request line the proxy has read from the client when the run's
// context ends, held between its read and its registration (the test
// hook): it gets a record before RunStdio returns, NETWORK_ERROR with the
// request not sent and UX, and nothing is written after RunStdio returned.
// Before endClient, RunStdio did not wait for clientToServer: flushPending
// ran before the line was registered, and its request had no record at all
// (the hook here waits for RunStdio's return, as it then could).
func TestStdioLineTakenAsTheRunEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	held, waiting, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	sink := &endSink{}
	opts := StdioOptions{
		Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: append(os.Environ(), "MCPDIAG_TEST_STDIO_SERVER=1"),
		Stdin: inR, Stdout: outW, Stderr: io.Discard, Records: sink,
		hooks: &stdioHooks{
			clientLine: func(line []byte) {
				if !bytes.Contains(line, []byte(`"id":2,`)) {
					return
				}
				close(held)
				select {
				case <-waiting: // RunStdio waits for this line
				case <-done: // RunStdio returned without it
				}
			},
			waitClient: func() { close(waiting) },
		},
	}
	var runErr error
	var recs []*record.Record
	go func() {
		defer close(done)
		_, runErr = RunStdio(ctx, opts)
		recs = sink.close()
		outW.Close()
		inR.Close()
	}()
	defer inW.Close()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"end-client","version":"1.0"}}}`
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	go func() { _, _ = io.WriteString(inW, init+"\n"+call+"\n") }()
	select {
	case <-held:
	case <-time.After(testwait.Bound):
		t.Fatalf("the call line did not reach the proxy within %s", testwait.Bound)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(testwait.Bound):
		t.Fatalf("RunStdio did not return within %s of its context's end", testwait.Bound)
	}
	if !errors.Is(runErr, context.Canceled) {
		t.Errorf("RunStdio: %v, want context.Canceled", runErr)
	}
	time.Sleep(10 * time.Millisecond) // a late write would come now (the hook returned at done)
	if n := sink.lateWrites(); n != 0 {
		t.Errorf("%d records written after RunStdio returned", n)
	}
	var call2 *record.Record
	for _, r := range recs {
		if r.Tool == "echo" {
			call2 = r
		}
	}
	if call2 == nil {
		for _, r := range recs {
			t.Logf("%s %s %s %q", r.Method, r.Tool, r.Outcome, r.Reason)
		}
		t.Fatal("no record of the call the proxy read from the client as the run ended")
	}
	if call2.Outcome != classify.NetworkError || call2.Network == nil || call2.Network.RequestSent || call2.Network.Cause != classify.NetOther || !call2.Flags.Has(record.FlagUX) ||
		!strings.Contains(call2.Reason, "the request never reached the server: the proxy had read the line from the client when the run ended") ||
		!strings.Contains(call2.Note, "not passed on to the server") {
		t.Errorf("the call's record: %s %+v flags %v reason %q note %q", call2.Outcome, call2.Network, call2.Flags, call2.Reason, call2.Note)
	}
}
