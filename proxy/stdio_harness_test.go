package proxy_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// scriptedRun is one run of the stdio proxy in front of the scripted
// server (runScriptedStdio), with the client's side held by the test: in
// is the proxy's stdin, out what the proxy writes to the client, sink its
// records, done RunStdio's error once it returned.
type scriptedRun struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	sink *memSink
	done chan error
}

// startScripted starts RunStdio in front of the scripted server. opts
// gives what the test sets (Faults, MaxLineSize, Env: the proxy's own
// environment when nil…); the command, the scripted server's variable, the
// pipes, stderr (discarded) and the sink are set here.
// at, when not nil, is the client that answers a server request the moment
// it reads it: its trigger and answer are the test's, the rest is filled
// in here. The run ends with end (the client closes its stdin).
func startScripted(t *testing.T, opts proxy.StdioOptions, at *answerAtOnce) *scriptedRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	run := &scriptedRun{in: inW, out: bufio.NewReader(outR), sink: &memSink{}, done: make(chan error, 1)}
	opts.Command, opts.Args = stdioCommand()
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	opts.Env = append(opts.Env, stdioScriptEnv+"=1")
	opts.Stdin, opts.Stdout, opts.Stderr, opts.Records = inR, outW, io.Discard, run.sink
	if at != nil {
		at.t, at.out, at.in, at.sink = t, outW, inW, run.sink
		opts.Stdout = at
	}
	go func() {
		_, err := proxy.RunStdio(context.Background(), opts)
		outW.Close()
		inR.Close()
		run.done <- err
	}()
	return run
}

// talk writes the client's lines one at a time, reading after each
// request up to the server's response of its id (conversation), and
// returns everything the client received, joined.
func (r *scriptedRun) talk(t *testing.T, lines ...string) string {
	t.Helper()
	return strings.Join(conversation(t, r.in, r.out, lines), "")
}

// send writes one line of the client (a newline is added) and reads
// nothing.
func (r *scriptedRun) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// end closes the client's stdin and waits, bounded, for the run to end
// with no error (endClient).
func (r *scriptedRun) end(t *testing.T) {
	t.Helper()
	endClient(t, r.in, r.out, r.done)
}

// garbageFaults is stdio.garbage writing line before the answer of each
// echo call.
func garbageFaults(t *testing.T, line string) *proxy.FaultOptions {
	t.Helper()
	sel, err := faults.SelectStdio("stdio.garbage", []byte(`{"line":`+mustJSON(line)+`,"match":{"tool":"echo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return &proxy.FaultOptions{Selection: sel}
}
