package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/execerr"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
	"github.com/mcpdiag/mcpdiag/wire"
)

// StdioNoise is the outcome of a line on the server's stdout that is not
// JSON at all: a stray print, a log line, a banner. Clients that read
// stdout as newline-delimited JSON-RPC fail on it ("Unexpected token … is not
// valid JSON") or drop the connection. It is a transport-layer outcome: the
// framing broke, whatever the server meant. (A line that starts like JSON but
// does not parse is MALFORMED_JSON, as over HTTP.) The record carries the
// offending line as its response body.
const StdioNoise = classify.StdioNoise

// maxNoiseRecords bounds the records written for noise lines: a server that
// logs to stdout would otherwise write one per log line. Past it, noise lines
// are counted and one summary record is written at the end.
const maxNoiseRecords = 1000

// maxOrphanRecords bounds, in the same way, the records of lines that are
// JSON but answer no pending request (a response for an unknown id, a JSON
// scalar, an oversized line matched to nothing): past it they are counted
// by outcome, and one summary record per outcome is written at the end.
const maxOrphanRecords = 1000

// StdioOptions configure RunStdio.
type StdioOptions struct {
	// Command and Args start the MCP server.
	Command string
	Args    []string
	// Env is the server's environment (the proxy's own when nil); Dir its
	// working directory.
	Env []string
	Dir string
	// Stdin is what the client writes (the proxy's stdin), Stdout where the
	// server's messages go (the proxy's stdout), Stderr where the server's
	// stderr goes, unchanged (the proxy's stderr).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Signals, when set, are forwarded to the server as they arrive.
	Signals <-chan os.Signal
	// Records receives one record per request/response pair; nil records
	// nothing.
	Records Sink
	// Bodies and BodyLimit say which bodies are recorded, as in Options.
	Bodies    BodyMode
	BodyLimit int
	// MaxLineSize bounds the part of one line held for inspection
	// (wire.DefaultMaxEventSize when 0). Longer lines are forwarded whole
	// all the same.
	MaxLineSize int
	// Scenario is noted in every record (a record the faults acted on
	// names what fired instead).
	Scenario string
	// Faults, when set, apply stdio scenarios of the fault catalogue
	// (faults.SelectStdio, or faults.ParseStdioAlias for the old
	// --stdio-fault syntax) to the server's traffic, with the same rules as
	// over HTTP: each request line of the client counts as a POST.
	// AllowHeader has no meaning here and is refused.
	Faults *FaultOptions
	// Observer sees every finished exchange.
	Observer Observer
	// Logger receives the proxy's own warnings; nil discards them.
	Logger *slog.Logger

	hooks *stdioHooks // tests only: nil outside them
}

// stdioHooks let a test of the package stop RunStdio's goroutines at the
// points where they meet.
type stdioHooks struct {
	// clientLine runs in clientToServer with each complete line it read,
	// before the line is registered.
	clientLine func(line []byte)
	// waitClient runs in RunStdio once it has decided to end and is about
	// to wait for clientToServer to be done with a line it holds.
	waitClient func()
}

// StdioResult is how the server ended.
type StdioResult struct {
	// ExitCode is the server's exit code; -1 when a signal killed it.
	ExitCode int
	// Signal is the signal that killed the server, if one did.
	Signal syscall.Signal
	// Exchanges counts the records of request/response pairs written.
	Exchanges int64
	// Noise counts non-JSON lines on the server's stdout.
	Noise int64
	// RecordErrors counts records the sink refused (Sink.Write failed).
	RecordErrors int64
}

// stdioPending is a request waiting for its response.
type stdioPending struct {
	start      time.Time
	line       []byte // the request line, capped
	complete   bool   // line is the whole request
	msg        wire.Message
	protocol   string
	client     string
	fromSrv    bool // a server-to-client request
	cancelled  time.Duration
	fault      *faults.LineDecision // the scenarios that fired on this request; nil when none did
	ended      bool                 // the server ended with the request unanswered (UX)
	cut        bool                 // ... in the middle of its response line (recordServerCut)
	stopped    bool                 // ... after the proxy passed on a signal it received (SD): the run's own stop
	left       bool                 // a server request the client never answered: it closed the server's stdin first (DC)
	subEnded   bool                 // a subscriptions/listen its client or server ended: no response was due
	unsent     bool                 // the request never reached the server (it had stopped reading its stdin, or the run ended)
	batch      *stdioBatch          // where the request sat in a batch line; nil: a line of its own
	injected   bool                 // a server request a fault wrote in the server's place (fault: its decision)
	superseded bool                 // a server request not answered when another of its id reached the client (noteServerRequest)
	refused    string               // an injected request not written to the client: why (noteInjected)
	shared     string               // a server request whose id an injected request still waiting had: what that means for its answer (noteServerRequest)
	answerNote string               // how the answer came, when it came in a batch line
}

// stdioProxy is one run of RunStdio.
type stdioProxy struct {
	ctx     context.Context
	opts    StdioOptions
	lines   *faults.LineEndpoint // nil without faults
	maxLine int
	limit   int
	name    string // the command's base name, for records
	conn    string // the client connection's id (the pipe: one per run), for records
	log     *slog.Logger

	mu            sync.Mutex
	pending       map[string]*stdioPending // client requests by id
	srvReqs       map[string]*stdioPending // server requests by id
	client        string
	protocol      string
	noise         int64
	noiseRec      int64
	orphanRec     int64
	orphanPast    map[classify.Outcome]int64 // lines past maxOrphanRecords
	clientBad     int64                      // client lines that are not JSON-RPC messages
	clientRec     int64                      // … of them recorded one by one
	clientOwed    int64                      // … of them no id-null error of the server answered yet
	clientNullIDs int64                      // requests of id null the client wrote (among clientBad)
	strayAnswers  int64                      // client responses that answer no pending server request
	strayRec      int64                      // … of them recorded one by one
	records       int64
	lost          int64     // records the sink refused
	killAfter     bool      // kill the server once the current request line reached it
	forwarded     os.Signal // the first signal the proxy received and passed on to the server (Signals)
	killed        bool      // a fault killed the server: its output is dropped
	clientEOF     bool      // the client closed its stdin (so the proxy closed the server's): it ended the session
	exited        chan struct{}
	cmd           *exec.Cmd

	// The client's side and the run's end (see endClient and clientReader).
	cond       *sync.Cond      // on mu: clientDone changed
	ending     bool            // RunStdio decided to end: clientToServer reads nothing more from the client
	endWhy     string          // how the server ended, once ending
	inRead     bool            // clientToServer is in a read from the client's stdin
	clientDone bool            // clientToServer returned
	stdinErr   error           // writing to the server's stdin failed: it stopped reading
	unsentN    int64           // requests of the client that never reached the server
	unsentRec  int64           // … of them recorded one by one
	sent       []*stdioPending // the requests the current client line registered (clientToServer's own)
	lastCut    bool            // the current client line is the stream's last and has no newline (clientToServer's own)
	// The client's line under way: the bytes read from its stdin since its
	// last newline (clientReader), the first cutHeadMax of them, and how
	// many of them were passed on already (the pieces of a long line).
	// What the run's end leaves of it is recorded (cutLine).
	heldN    int64
	heldHead []byte
	heldSent int64
	// The server's last line when its stdout ended before the line's
	// newline and the line does not parse (serverToClient's own, then
	// RunStdio's): its bytes (capped) and size. recordServerCut records it.
	srvCut   []byte
	srvCutN  int64
	srvCutDC bool // the client had stopped reading when the line came
}

// RunStdio starts the server command, passes the client's stdin to it and
// its stdout back, byte for byte and line by line, and records every
// request/response pair. It returns when the server has exited and its
// stdout is drained; the error is non-nil only when the server could not be
// started or ctx ended the run (the server is then killed).
func RunStdio(ctx context.Context, opts StdioOptions) (*StdioResult, error) {
	if opts.Command == "" {
		return nil, errors.New("proxy: no command to run")
	}
	if opts.Bodies == "" {
		opts.Bodies = BodiesErrors
	}
	s := &stdioProxy{
		ctx: ctx, opts: opts, maxLine: opts.MaxLineSize, limit: opts.BodyLimit, name: filepath.Base(opts.Command), conn: recorder.NewConnID(),
		log: opts.Logger, pending: map[string]*stdioPending{}, srvReqs: map[string]*stdioPending{}, exited: make(chan struct{}),
	}
	s.cond = sync.NewCond(&s.mu)
	if s.maxLine <= 0 {
		s.maxLine = wire.DefaultMaxEventSize
	}
	s.limit = opts.Bodies.Limit(s.limit)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if f := opts.Faults; f != nil {
		if f.AllowHeader {
			return nil, errors.New("proxy: FaultOptions.AllowHeader is for HTTP mode: a stdio request has no headers")
		}
		if len(f.Selection) > 0 {
			le, err := faults.NewLineEndpoint(f.Selection, faults.EndpointOptions{Name: s.url(), Seed: f.Seed})
			if err != nil {
				return nil, fmt.Errorf("proxy: %w", err)
			}
			s.lines = le
		}
	}
	cmd := exec.Command(opts.Command, opts.Args...)
	cmd.Env, cmd.Dir = opts.Env, opts.Dir
	cmd.Stderr = opts.Stderr
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		// A script whose #! interpreter is missing fails with "no such
		// file" for the script: name the interpreter (execerr).
		return nil, &StartError{Command: opts.Command, Err: execerr.Explain(cmd.Path, cmd.Dir, err)}
	}
	s.cmd = cmd

	stopSignals := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.forwardSignals(stopSignals)
	}()
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			killGroup(cmd)
		case <-s.exited:
		}
	}()
	// The client's side runs on its own goroutine, waited for (endClient)
	// only while it holds a line it read: a read from the client's stdin
	// cannot be interrupted.
	go s.clientToServer(stdin)
	s.serverToClient(stdout)
	werr := cmd.Wait()
	close(s.exited)
	close(stopSignals)
	wg.Wait()

	res := &StdioResult{ExitCode: cmd.ProcessState.ExitCode()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
	}
	s.mu.Lock()
	fwd := s.forwarded
	s.mu.Unlock()
	why := describeExit(cmd.ProcessState, werr, fwd)
	s.endClient(why)
	s.cutLine(why)
	s.recordServerCut(why, ctx.Err() == nil)
	// The server's end closed the session (io.EOF, NetClosed) unless the
	// run was stopped, which killed it (NetOther).
	var ended error = io.EOF
	if ctx.Err() != nil {
		ended = nil
	}
	s.flushPending(why, ended)
	s.mu.Lock()
	res.Exchanges, res.Noise = s.records, s.noise
	suppressed := s.noise - s.noiseRec
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		res.RecordErrors = s.lost
		s.mu.Unlock()
	}()
	if suppressed > 0 {
		s.writeSummary(StdioNoise, classify.LayerTransport, suppressed,
			fmt.Sprintf("%d more non-JSON lines on the server's stdout were not recorded one by one", suppressed),
			fmt.Sprintf("noise lines past the first %d are counted, not recorded", maxNoiseRecords))
	}
	s.summarizeOrphans()
	s.mu.Lock()
	badPast, strayPast, unsentPast := s.clientBad-s.clientRec, s.strayAnswers-s.strayRec, s.unsentN-s.unsentRec
	s.mu.Unlock()
	if badPast > 0 {
		s.writeSummary(classify.MalformedJSON, classify.MalformedJSON.Layer(), badPast,
			fmt.Sprintf("%d more lines the client wrote to the server's stdin were not JSON-RPC messages (or were requests of id null) and were not recorded one by one", badPast),
			fmt.Sprintf("the client's lines that are not JSON-RPC messages or are requests of id null, past the first %d, are counted, not recorded (client → server)", maxNoiseRecords))
	}
	if strayPast > 0 {
		s.writeSummary(classify.InvalidEnvelope, classify.InvalidEnvelope.Layer(), strayPast,
			fmt.Sprintf("%d more responses the client wrote to the server's stdin answered no pending server request and were not recorded one by one", strayPast),
			fmt.Sprintf("the client's responses that answer no pending server request, past the first %d, are counted, not recorded (client → server)", maxNoiseRecords))
	}
	if unsentPast > 0 {
		s.writeSummary(classify.NetworkError, classify.NetworkError.Layer(), unsentPast,
			fmt.Sprintf("%d more requests the client wrote never reached the server (it had stopped reading its stdin, or the run ended) and were not recorded one by one", unsentPast),
			fmt.Sprintf("the client's requests not passed on to the server, past the first %d, are counted, not recorded (client → server)", maxNoiseRecords))
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// endClient decides the end of the run on the client's side: from now on
// clientToServer reads nothing more from the client (clientReader), and a
// line it already read is not passed on but recorded as a request that never
// reached the server. It waits until clientToServer has returned or is in a
// read from the client begun before the decision: that read cannot be
// interrupted, and what it brings is dropped, unprocessed (see
// clientReader). So every line clientToServer took has its record before
// flushPending runs, and none is written after RunStdio returns.
func (s *stdioProxy) endClient(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ending, s.endWhy = true, why
	if h := s.opts.hooks; h != nil && h.waitClient != nil && !s.clientDone && !s.inRead {
		s.mu.Unlock()
		h.waitClient()
		s.mu.Lock()
	}
	for !s.clientDone && !s.inRead {
		s.cond.Wait()
	}
}

// errRunEnded is what clientReader returns once RunStdio decided to end.
var errRunEnded = errors.New("proxy: the run ended")

// clientReader is the client's stdin as clientToServer reads it: no read
// begins once RunStdio decided to end (endClient), and a read under way
// then, which endClient does not wait for, returns nothing (its bytes
// arrived after the end: RunStdio may have returned, and no record may be
// written then).
type clientReader struct {
	s *stdioProxy
	r io.Reader
}

func (c *clientReader) Read(p []byte) (int, error) {
	s := c.s
	s.mu.Lock()
	if s.ending {
		s.mu.Unlock()
		return 0, errRunEnded
	}
	s.inRead = true
	s.mu.Unlock()
	n, err := c.r.Read(p)
	s.mu.Lock()
	s.inRead = false
	late := s.ending
	if !late {
		s.hold(p[:n])
	}
	s.mu.Unlock()
	if late {
		return 0, errRunEnded
	}
	return n, err
}

// cutHeadMax bounds the head of a cut line kept for its record.
const cutHeadMax = 4 << 10

// hold notes the bytes b read from the client: those after its last
// newline are the line under way. s.mu is held.
func (s *stdioProxy) hold(b []byte) {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
		s.heldN, s.heldHead, s.heldSent = 0, s.heldHead[:0], 0
	}
	s.heldN += int64(len(b))
	if room := cutHeadMax - len(s.heldHead); room > 0 {
		s.heldHead = append(s.heldHead, b[:min(room, len(b))]...)
	}
}

// cutLine records the client's line the run's end cut (why: how the server
// ended): bytes read from the client's stdin with no newline after them
// yet, which clientToServer can no longer take as a line. Nothing of the
// client is silently lost: NETWORK_ERROR, the message cut in the middle,
// with how much of it arrived and whether any was passed on. Called once
// endClient returned (no read of the client adds to it after that).
func (s *stdioProxy) cutLine(why string) {
	s.mu.Lock()
	n, sent, head := s.heldN, s.heldSent, bytes.Clone(s.heldHead)
	s.heldN, s.heldHead, s.heldSent = 0, nil, 0
	client, protocol := s.client, s.protocol
	s.mu.Unlock()
	if n == 0 {
		return
	}
	passed := "none of it was passed on to the server"
	if sent > 0 {
		passed = fmt.Sprintf("its first %d bytes had been passed on to the server, the rest was not", sent)
	}
	rec := &record.Record{
		Kind: record.KindExchange, Time: time.Now(), Client: client, ProtocolVersion: protocol, Scenario: s.opts.Scenario,
		URL: s.url(), HTTPStatuses: []int{}, Outcome: classify.NetworkError, Layer: classify.NetworkError.Layer(),
		Reason: fmt.Sprintf("the run ended (%s) while the client was writing a line: %d bytes of it had arrived, with no newline yet; %s (a message cut in the middle, not judged)", why, n, passed),
		Note:   "the client's line (client → server), cut by the run's end",
	}
	if s.opts.Bodies == BodiesAll || s.opts.Bodies == BodiesFull {
		k := min(len(head), s.limit)
		rec.RequestBody = &record.Body{Text: string(head[:k]), Truncated: int64(k) < n}
	}
	rec.RequestBytes = n
	s.log.Warn("the run ended in the middle of a line the client was writing: recorded as cut", slog.Int64("bytes", n))
	s.observe(rec, rec.Time, rec.Time, wire.Message{})
	s.write(rec)
}

func (s *stdioProxy) url() string { return "stdio:" + s.name }

// writeSummary writes the record that counts the n lines of one kind past
// the first maxNoiseRecords, which were not recorded one by one.
func (s *stdioProxy) writeSummary(outcome classify.Outcome, layer classify.Layer, n int64, reason, note string) {
	s.write(&record.Record{
		Kind: record.KindExchange, Time: time.Now(), Client: s.client, ProtocolVersion: s.protocol, Scenario: s.opts.Scenario,
		URL: s.url(), HTTPStatuses: []int{}, Outcome: outcome, Layer: layer, Summarized: n, Reason: reason, Note: note,
	})
}

// describeExit says how the server ended, for the records of the requests
// it left unanswered; fwd, when not nil, is the signal the proxy received
// and passed on to it (a Ctrl-C, a SIGTERM), named so that a server that
// ends on it, with status 0 as Node servers do on SIGINT, is not read as
// one that ended by itself.
func describeExit(ps *os.ProcessState, err error, fwd os.Signal) string {
	var why string
	if ps == nil {
		why = fmt.Sprintf("the server ended: %v", err)
	} else if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		why = fmt.Sprintf("the server process was killed by signal %s before responding", ws.Signal())
	} else {
		why = fmt.Sprintf("the server process exited (exit status %d) before responding", ps.ExitCode())
	}
	if fwd != nil {
		why += fmt.Sprintf(", after the proxy received the signal %s and passed it on to the server", fwd)
	}
	return why
}

func (s *stdioProxy) forwardSignals(stop <-chan struct{}) {
	if s.opts.Signals == nil {
		return
	}
	for {
		select {
		case sig := <-s.opts.Signals:
			s.mu.Lock()
			if s.forwarded == nil {
				s.forwarded = sig
			}
			s.mu.Unlock()
			_ = s.cmd.Process.Signal(sig)
		case <-stop:
			return
		}
	}
}

// lineReader yields a stream's lines piece by piece: every byte is handed
// on as soon as it is read (up to a line end), and the line is kept, up to
// max bytes, for inspection. Of a longer line it keeps the head (max bytes)
// and the last tailMax bytes, where a JSON-RPC response written with its id
// last (as the TypeScript SDK writes them) names its request.
type lineReader struct {
	br   *bufio.Reader
	max  int
	line []byte
	tail []byte // the last tailMax bytes, once the line nears max
	n    int64  // bytes of the current line so far
}

// tailMax is how much of the end of an oversized line is kept.
const tailMax = 4 << 10

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next piece; end reports that the piece ends a line (or
// the stream, with err).
func (l *lineReader) next() (piece []byte, end bool, err error) {
	piece, err = l.br.ReadSlice('\n')
	if room := l.max - len(l.line); room > 0 {
		l.line = append(l.line, piece[:min(len(piece), room)]...)
	}
	l.n += int64(len(piece))
	if l.n > int64(l.max-tailMax) {
		if len(piece) >= tailMax {
			l.tail = append(l.tail[:0], piece[len(piece)-tailMax:]...)
		} else {
			l.tail = append(l.tail, piece...)
			if len(l.tail) > tailMax {
				l.tail = append(l.tail[:0], l.tail[len(l.tail)-tailMax:]...)
			}
		}
	}
	switch {
	case err == bufio.ErrBufferFull:
		return piece, false, nil
	case err != nil:
		return piece, l.n > 0, err
	}
	return piece, true, nil
}

// take returns the kept line and starts the next one.
func (l *lineReader) take() (line []byte, whole bool) {
	line, whole = l.line, l.n <= int64(l.max)
	l.line, l.n = nil, 0
	return line, whole
}

// takeLong is take for a line that may be past max: it returns the kept
// head, the kept tail and the line's size too.
func (l *lineReader) takeLong() (head, tail []byte, size int64, whole bool) {
	size, tail = l.n, l.tail
	l.tail = nil
	head, whole = l.take()
	return head, tail, size, whole
}

// clientToServer passes the client's lines to the server, noting each
// request before the server can answer it.
func (s *stdioProxy) clientToServer(stdin io.WriteCloser) {
	defer func() {
		stdin.Close()
		s.mu.Lock()
		s.clientDone = true
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	lr := newLineReader(&clientReader{s: s, r: s.opts.Stdin}, s.maxLine)
	gone := false // the server stopped reading its stdin: nothing more is passed on
	for {
		piece, end, err := lr.next()
		if err == errRunEnded {
			// RunStdio decided to end: nothing more is read (what is
			// held of a line is no complete line: no request).
			return
		}
		kill, drop := false, false
		var unsent bool
		if end {
			line, tail, size, whole := lr.takeLong()
			if h := s.opts.hooks; h != nil && h.clientLine != nil {
				h.clientLine(line)
			}
			// Once the server stopped reading, or the run is ending, a
			// line is not passed on: its requests are recorded as never
			// having reached the server. Decided once, for the line's
			// registration and its write alike.
			unsent = gone || s.isEnding()
			s.sent = s.sent[:0]
			// A last line with no newline: the client closed its stdin
			// in the middle of it.
			s.lastCut = err == io.EOF && (len(piece) == 0 || piece[len(piece)-1] != '\n')
			// The client's answer to a request the fault injected is
			// not passed on: the server never sent that request.
			drop = s.onClientLine(line, tail, size, whole, unsent, len(piece) == len(line))
			// The exit fault kills the server right after this request
			// reached it; from now on its output is dropped, so that an
			// answer it writes before the kill lands never reaches the
			// client (as it would not from a server that crashed).
			kill = s.faultExit() && !unsent
		} else {
			unsent = gone || s.isEnding()
		}
		if end && err != nil {
			// The stream's last line, taken without its newline: it
			// has its record (onClientLine), nothing is held.
			s.mu.Lock()
			s.heldN, s.heldHead, s.heldSent = 0, s.heldHead[:0], 0
			s.mu.Unlock()
		}
		if len(piece) > 0 && !unsent && !drop {
			if !end {
				s.mu.Lock()
				s.heldSent += int64(len(piece))
				s.mu.Unlock()
			}
			if _, werr := stdin.Write(piece); werr != nil {
				// The server is gone (or stopped reading its stdin): the
				// requests of this line and of the lines that follow never
				// reach it, and are recorded so; the client's stdin is
				// still read to its end (or the run's), as it was drained
				// before.
				gone = true
				s.stdinGone(werr, end)
			}
		}
		if err != nil {
			if gone {
				return
			}
			if err != io.EOF {
				s.log.Warn("reading the client's stdin failed", slog.Any("error", err))
			} else {
				s.mu.Lock()
				s.clientEOF = true
				s.mu.Unlock()
			}
			return // EOF: close the server's stdin, as the client closed ours
		}
		if kill {
			s.log.Warn("fault exit: killing the server in the middle of a request")
			killGroup(s.cmd)
		}
	}
}

// isEnding reports whether RunStdio decided to end (endClient).
func (s *stdioProxy) isEnding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ending
}

// stdinGone notes that writing to the server's stdin failed; lineEnd says
// the piece that failed ended a line, whose requests (registered just
// before, in s.sent) then never reached the server whole: they are
// recorded so at once.
func (s *stdioProxy) stdinGone(err error, lineEnd bool) {
	var unsent []*stdioPending
	s.mu.Lock()
	s.stdinErr = err
	if lineEnd {
		for _, p := range s.sent {
			if s.pending[idKey(p.msg.ID)] == p {
				delete(s.pending, idKey(p.msg.ID))
				unsent = append(unsent, p)
			}
		}
	}
	s.mu.Unlock()
	for _, p := range unsent {
		s.unsentRequest(p)
	}
}

// unsentRequest records a request of the client that never reached the
// server, NETWORK_ERROR with the request not sent (UX, as flushPending
// records a request the server left unanswered): the server had stopped
// reading its stdin, or the run ended with the line read from the client
// but not passed on. Past maxNoiseRecords such requests are counted, and
// RunStdio writes one summary record at the end.
func (s *stdioProxy) unsentRequest(p *stdioPending) {
	s.mu.Lock()
	s.unsentN++
	if s.unsentRec >= maxNoiseRecords {
		s.mu.Unlock()
		return
	}
	s.unsentRec++
	var reason string
	var cause error // NetOther when the run ended
	switch {
	case s.stdinErr != nil && (!s.ending || !errors.Is(s.stdinErr, os.ErrClosed)):
		reason = fmt.Sprintf("the server had stopped reading its stdin (writing to it failed: %v)", s.stdinErr)
		cause = s.stdinErr
	default:
		// The run ended; a write that failed then failed on the pipe
		// cmd.Wait closed.
		reason = "the proxy had read the line from the client when the run ended, and did not pass it on: " + s.endWhy
	}
	s.mu.Unlock()
	p.unsent, p.ended = true, true
	s.finish(p, nil, time.Now(), &classify.WordedError{Text: reason, Err: cause}, false)
}

// onClientLine registers a request (or answers a server request). A batch
// line (a JSON array, 2025-03-26 batching) is taken apart: each of its
// messages counts as if it had come on a line of its own, and the record of
// each request in it says so (record.Record.Batch). unsent says the line is
// not passed on to the server (see clientToServer): its requests are
// recorded at once as never having reached it. single says the line came
// in one piece (nothing of it was passed on yet); drop reports that it is
// a client's answer to a request a fault injected, which the server never
// sent: the caller does not pass it on. A line longer than the proxy
// inspects (not whole: line is its head, tail its last bytes) is a request
// when its head or the top-level members its tail ends with (tailMembers:
// a request written with its params first) show a method and no result,
// and its id shows in its head or tail: it is waited for as any request,
// its record's body (when kept) the line's head. One that shows a result
// or an error member and no method, its id shown so, is the client's
// answer to the server request of that id (onLongClientAnswer). One that
// shows neither is paired with nothing: an id alone does not say whether
// the line answers a server request or asks the server. size is the line's.
func (s *stdioProxy) onClientLine(line, tail []byte, size int64, whole, unsent, single bool) (drop bool) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return false
	}
	if !whole {
		hm, tm := scanHead(trimmed), tailMembers(tail)
		idRaw := hm.id
		if idRaw == nil {
			idRaw = tm.id
		}
		if idRaw == nil {
			idRaw = tailID(tail)
		}
		if !hm.method && tm.method {
			hm.method, hm.methodName = true, tm.methodName
		}
		hm.response = hm.response || tm.response
		id := wire.IDFromRaw(bytes.Clone(idRaw))
		switch {
		case !id.IsString() && !id.IsNumber():
		case hm.method && !hm.response:
			m := wire.Message{Kind: wire.MessageRequest, ID: id, Method: hm.methodName}
			return s.onClientMessage(m, bytes.Clone(trimmed), false, nil, unsent, false)
		case hm.response && !hm.method && !unsent:
			s.onLongClientAnswer(id, size)
		}
		return false
	}
	m := wire.Message{Kind: wire.MessageInvalid}
	if whole {
		// Parsed from its own copy: a pending request keeps the message
		// (and its record reads it) after the reader reuses its buffer.
		trimmed = bytes.Clone(trimmed)
		m = wire.ParseMessage(trimmed)
	}
	if m.Kind == wire.MessageBatch {
		elems := batchElements(trimmed)
		if len(elems) == 0 {
			s.onClientNoise(trimmed, nil, nil, unsent)
			return false
		}
		for i, e := range elems {
			b := &stdioBatch{size: len(elems), index: i}
			if em := wire.ParseMessage(e); em.Kind == wire.MessageInvalid || em.Kind == wire.MessageBatch {
				// A member that is not a JSON-RPC message: the server
				// answers it with an error of id null, as a line.
				s.onClientNoise(e, nil, b, unsent)
			} else {
				if em.IsNullIDRequest() {
					s.onClientNoise(e, &em, b, unsent)
				}
				s.onClientMessage(em, e, true, b, unsent, false)
			}
		}
		return false
	}
	if whole && m.Kind == wire.MessageInvalid {
		s.onClientNoise(trimmed, nil, nil, unsent)
		return false
	}
	if m.IsNullIDRequest() {
		s.onClientNoise(trimmed, &m, nil, unsent)
	}
	return s.onClientMessage(m, trimmed, whole, nil, unsent, whole && single)
}

// onLongClientAnswer pairs the client's answer on a line longer than the
// proxy inspects (id shown by its head or tail, size its length) with the
// server request of its id: that request's record, NOT_CLASSIFIED with the
// size and the limit, as a server's long response is its request's
// (onLongServerLine). The line was passed on whole (it could not be kept
// back, even when it answers a request a fault injected). An answer to no
// pending server request is not recorded.
func (s *stdioProxy) onLongClientAnswer(id wire.ID, size int64) {
	s.mu.Lock()
	k, ok := answeredKey(s.srvReqs, id)
	p := s.srvReqs[k]
	if ok {
		delete(s.srvReqs, k)
	}
	s.mu.Unlock()
	if p == nil {
		return
	}
	res := &classify.Result{
		Outcome:   classify.NotClassified,
		Reason:    fmt.Sprintf("not classified: the client's answer line is %d bytes, more than the %d bytes the proxy holds for inspection (--max-event-size); it was passed on whole", size, s.maxLine),
		BodyBytes: size,
	}
	res.SetMethod(p.msg.Method)
	res.SetProtocol(p.protocol)
	res.SetNotClassified(&classify.NotClassifiedDetails{Cause: classify.CauseBodyTooLarge, Size: size, Limit: int64(s.maxLine)})
	note := fmt.Sprintf("the client's answer (%d bytes) was passed on to the server untouched; only its classification was given up", size)
	if p.injected {
		note += "; it was passed on to the server, which never sent this request (it came in pieces and could not be kept back)"
	}
	s.finishResult(p, res, nil, nil, time.Now(), false, note)
}

// onClientNoise records a line of the client that is not a JSON-RPC
// message (not JSON, or JSON of another shape): the server reads stdin as
// JSON-RPC, so it answers a parse or invalid-request error (id null) or
// ends, and without this record what follows would have no cause in the
// records. The line is the record's request body when bodies are
// recorded whole (--record-bodies all or full). Past maxNoiseRecords such
// lines are counted, and RunStdio writes one summary record at the end.
// A line that is a message after a UTF-8 byte order mark is MALFORMED_JSON,
// with the message's method, tool and id (the server cannot read it).
// A member of a batch line that is not a JSON-RPC message (batch says where
// it sat) and an empty batch line ([]) are recorded the same way, and so is
// a request of id null (nullID: its message), whose record names its method
// and tool. unsent says the line is not passed on to the server (see
// clientToServer): the record says so, and no answer of the server is owed.
func (s *stdioProxy) onClientNoise(line []byte, nullID *wire.Message, batch *stdioBatch, unsent bool) {
	outcome, why := classify.InvalidEnvelope, "a line the client wrote to the server's stdin is JSON but not a JSON-RPC message"
	var bom *wire.Message // the message after a byte order mark: its method, tool and id are the record's
	switch {
	case nullID != nil:
		why = fmt.Sprintf("the client wrote a %s request of id null to the server's stdin: MCP forbids a null id (a request's id is a string or an integer), and JSON-RPC 2.0 §4 makes it a request, not a notification, that no answer can be paired with", nullID.Method)
		if batch != nil {
			why = fmt.Sprintf("message %d of a batch line: %s", batch.index+1, why)
		}
	case batch == nil && jsonAfterBOM(line):
		outcome, why = classify.MalformedJSON, "a line the client wrote to the server's stdin is JSON after a UTF-8 byte order mark (EF BB BF), which JSON sent over a network must not start with (RFC 8259 §8.1): JSON.parse (the TypeScript SDK's reader) and Go's encoding/json refuse it"
		if bm := wire.ParseMessage(line[len(utf8BOM):]); bm.Kind != wire.MessageInvalid {
			bom = &bm
		}
	case !wire.Valid(line) && s.lastCut && batch == nil:
		outcome, why = classify.MalformedJSON, fmt.Sprintf("a line the client wrote to the server's stdin is not JSON: it is cut, the client closed its stdin %d bytes into it, before its newline", len(line))
	case !wire.Valid(line):
		outcome, why = classify.MalformedJSON, "a line the client wrote to the server's stdin is not JSON"
	case batch != nil:
		why = fmt.Sprintf("message %d of a batch line the client wrote to the server's stdin is JSON but not a JSON-RPC message", batch.index+1)
	case line[0] == '[':
		why = "a line the client wrote to the server's stdin is an empty JSON array: a batch must hold at least one message"
	}
	var method, tool string
	answers := ": a server answers it with an error of id null (JSON-RPC 2.0 §5) or ends"
	if nullID != nil {
		answers = ": a server answers it under id null (a result or an error) or ends"
	}
	s.mu.Lock()
	if nullID != nil {
		method, tool = nullID.Method, nullID.Tool
		s.clientNullIDs++
	}
	s.clientBad++
	if !unsent {
		s.clientOwed++
	}
	if s.clientRec >= maxNoiseRecords {
		s.mu.Unlock()
		return
	}
	s.clientRec++
	ids := s.pendingIDs()
	client, protocol := s.client, s.protocol
	s.mu.Unlock()
	rec := &record.Record{
		Kind: record.KindExchange, Time: time.Now(), Client: client, ProtocolVersion: protocol, Scenario: s.opts.Scenario,
		URL: s.url(), HTTPStatuses: []int{}, Outcome: outcome, Layer: outcome.Layer(),
		Reason: why + answers,
		Method: method, Tool: tool,
		Note: "the client's line (client → server), passed on as it is",
	}
	if bom != nil {
		rec.Method, rec.Tool = bom.Method, bom.Tool
		if !bom.ID.IsZero() {
			rec.JSONRPC.ID = wire.IDFromRaw(bytes.Clone(bom.ID.Raw()))
		}
	}
	if unsent {
		rec.Note = "the client's line (client → server), not passed on: the server had stopped reading its stdin, or the run ended"
	}
	s.writeClientLine(rec, line, batch, ids)
}

// onStrayAnswer records a response the client wrote that answers no server
// request pending: the proxy reads every line of the server's stdout, so no
// server request of that id is open (never sent, answered already, or sent
// with another id, as a client that turns the number 1 into the string "1"
// does). Over HTTP such a POST has its record (the server's status says
// what it did with it); over stdio it had none, and an answer the server
// could not pair left no trace. The record is the client's answer
// (clientAnswer, no method: it answers no request the proxy saw) and
// INVALID_ENVELOPE, as a server's response for an id no request has. An
// error of id null is the client's answer to a message it could not read
// (JSON-RPC 2.0 §5): JSONRPC_ERROR, no fault of the envelope.
func (s *stdioProxy) onStrayAnswer(m wire.Message, line []byte, batch *stdioBatch) {
	_, isErr := wire.Field(line, "error")
	s.mu.Lock()
	s.strayAnswers++
	if s.strayRec >= maxNoiseRecords {
		s.mu.Unlock()
		return
	}
	s.strayRec++
	var open []string
	for _, p := range s.srvReqs {
		open = append(open, p.msg.ID.String()+" ("+p.msg.Method+")")
	}
	ids := s.pendingIDs()
	client, protocol := s.client, s.protocol
	s.mu.Unlock()
	sort.Strings(open)
	outcome := classify.InvalidEnvelope
	why := fmt.Sprintf("the client wrote a response for id %s (%s) to the server's stdin, and no server request of that id is pending: it answers no request the server sent (one never sent, one answered already, or one sent with another id or id type)", m.ID.String(), idType(m.ID))
	switch {
	case m.ID.IsZero():
		why = "the client wrote a response without an id to the server's stdin: no server request can be paired with it"
	case m.ID.IsNull() && isErr:
		outcome = classify.JSONRPCError
		why = "the client wrote an error response of id null to the server's stdin: its answer (JSON-RPC 2.0 §5) to a message of the server it could not read; it answers no server request"
	}
	if len(open) > 0 {
		why += "; server requests pending then: " + strings.Join(open, ", ")
	} else {
		why += "; no server request was pending then"
	}
	if batch != nil {
		why = fmt.Sprintf("message %d of a batch line: %s", batch.index+1, why)
	}
	rec := &record.Record{
		Kind: record.KindExchange, Time: time.Now(), Client: client, ProtocolVersion: protocol, Scenario: s.opts.Scenario,
		URL: s.url(), HTTPStatuses: []int{}, Outcome: outcome, Layer: outcome.Layer(), Reason: why,
		ClientAnswer: true,
		Note:         "the client's response (client → server), passed on as it is; it answers no pending server request",
	}
	rec.JSONRPC.ID = wire.IDFromRaw(bytes.Clone(m.ID.Raw()))
	warnOnID(rec, "response", rec.JSONRPC.ID)
	if e, ok := wire.Field(line, "error"); ok {
		if c, ok := wire.Field(e, "code"); ok {
			if n, err := strconv.ParseInt(string(c), 10, 64); err == nil {
				rec.JSONRPC.ErrorCode, rec.JSONRPC.ErrorName = &n, classify.CodeName(n)
			}
		}
	}
	s.writeClientLine(rec, line, batch, ids)
}

// writeClientLine completes and writes rec, the record of a client's line
// that pairs with no request (onClientNoise, onStrayAnswer): the batch it
// came in, the requests pending then (ids), its body as the body mode
// keeps it, and its size.
func (s *stdioProxy) writeClientLine(rec *record.Record, line []byte, batch *stdioBatch, ids []string) {
	if batch != nil {
		rec.Note += "; " + batchNote(batch, "it was", "", false)
		rec.Batch = int64(batch.size)
	}
	if len(ids) > 0 {
		rec.Note += "; requests pending when it was sent: " + strings.Join(ids, ", ")
	}
	if s.opts.Bodies == BodiesAll || s.opts.Bodies == BodiesFull {
		n := min(len(line), s.limit)
		rec.RequestBody = &record.Body{Text: string(line[:n]), Truncated: n < len(line)}
	}
	rec.RequestBytes = int64(len(line))
	s.observe(rec, rec.Time, rec.Time, wire.Message{})
	s.write(rec)
}

// warnOnID adds to rec the warning the classifier gives for an id MCP
// does not allow or not every peer can read (classify.IDWarning), which
// naming whose id it is, unless rec has an id warning already.
func warnOnID(rec *record.Record, which string, id wire.ID) {
	w, ok := classify.IDWarning(which, id)
	if !ok {
		return
	}
	for _, have := range rec.Warnings {
		if have.Code == classify.WarnIDNotMCP || have.Code == classify.WarnIDBeyondSafeInteger {
			return
		}
	}
	rec.Warnings = append(rec.Warnings, record.Warning{Code: w.Code, Message: w.Message})
}

// idType names the JSON type of an id, for a reason that says why an
// answer was not paired.
func idType(id wire.ID) string {
	switch {
	case id.IsNull():
		return "null"
	case id.IsNumber():
		return "a number"
	case id.IsString():
		return "a string"
	}
	return "neither a string nor a number"
}

// StartError is RunStdio's error when the server command cannot be started
// (not found, not executable, a directory, a script whose #! interpreter is
// missing, named by an *execerr.InterpreterError in Err): the command given
// is wrong, nothing ran and nothing was recorded.
type StartError struct {
	Command string // the command as given
	Err     error  // why it could not start (os/exec's error)
}

// Error names the command and why it could not start.
func (e *StartError) Error() string { return fmt.Sprintf("proxy: starting %s: %v", e.Command, e.Err) }

// Unwrap returns why the command could not start.
func (e *StartError) Unwrap() error { return e.Err }

// stdioBatch is where a message sat in a batch line.
type stdioBatch struct{ size, index int }

// batchElements returns the elements of a JSON array (a valid one: the
// caller parsed it as a batch).
func batchElements(arr []byte) [][]byte {
	var elems [][]byte
	_ = wire.EachElement(arr, func(_ int, v []byte) bool {
		elems = append(elems, v)
		return true
	})
	return elems
}

// batchNote says, in a record's note, that a message came in a batch and,
// with era, what the protocol in force says of batches.
func batchNote(b *stdioBatch, who, protocol string, era bool) string {
	note := fmt.Sprintf("%s message %d of a JSON-RPC batch of %d (a JSON array on one line)", who, b.index+1, b.size)
	if era && protocol != batchProtocol {
		p := protocol
		if p == "" {
			p = "the protocol in force (not yet known)"
		}
		note += fmt.Sprintf("; batches exist in %s only, not in %s", batchProtocol, p)
	}
	return note
}

// batchProtocol is the one protocol version that has JSON-RPC batches
// (2025-03-26 added them, 2025-06-18 removed them).
const batchProtocol = "2025-03-26"

// onClientMessage registers one message of the client: a line's, or one of
// a batch line's (batch says where it sat; nil for a line of its own).
// unsent says it is not passed on to the server: a request is recorded at
// once as never having reached it (unsentRequest), and a notification or an
// answer, which the server never sees, is not looked at. droppable says
// the message is a line of its own that nothing of was passed on yet; drop
// reports that it answers a request a fault injected (noteInjected), which
// the server never sent, so the caller keeps it from the server. An
// injected request's answer that cannot be kept back (in a batch line, or
// a line passed on in pieces) is passed on, and its record says so.
func (s *stdioProxy) onClientMessage(m wire.Message, trimmed []byte, whole bool, batch *stdioBatch, unsent, droppable bool) (drop bool) {
	if unsent {
		if m.Kind == wire.MessageRequest {
			s.mu.Lock()
			p := &stdioPending{start: time.Now(), line: trimmed, complete: whole, msg: m, protocol: s.protocolFor(m), client: s.clientFor(m), batch: batch}
			s.mu.Unlock()
			s.unsentRequest(p)
		}
		return false
	}
	// Pairs this line completes are recorded after the lock is released,
	// and the faults decide then too (a fault may act on the server).
	var stale, answered, decide *stdioPending
	stray := false
	s.mu.Lock()
	if m.Client != "" {
		s.client = m.Client
	}
	if m.Protocol != "" && (m.Method == "initialize" || s.protocol == "") {
		s.protocol = m.Protocol
	}
	switch m.Kind {
	case wire.MessageRequest:
		p := &stdioPending{start: time.Now(), line: trimmed, complete: whole, msg: m, protocol: s.protocolFor(m), client: s.clientFor(m), batch: batch}
		// A reused id that is still pending: the server cannot tell the two
		// apart. The older request gets its record now.
		stale = s.pending[idKey(m.ID)]
		s.pending[idKey(m.ID)] = p
		s.sent = append(s.sent, p)
		if batch == nil {
			// The faults act on lines: a batched request's answer may
			// come in a batch line, which they do not take apart.
			decide = p
		}
	case wire.MessageNotification:
		if m.Method == "notifications/cancelled" && !m.Cancelled.IsZero() {
			if p := s.pending[idKey(m.Cancelled)]; p != nil {
				p.cancelled = time.Since(p.start)
			}
		}
	case wire.MessageResponse:
		if k, ok := answeredKey(s.srvReqs, m.ID); ok {
			p := s.srvReqs[k]
			delete(s.srvReqs, k)
			answered = p
			if batch != nil {
				answered.answerNote = batchNote(batch, "the client's answer was", answered.protocol, answered.batch == nil)
			}
			if answered.injected {
				drop = droppable
				how := "the client's answer was not passed on to the server, which never sent this request"
				if !drop {
					how = "the client's answer was passed on to the server, which never sent this request (it came in a batch line, or in pieces, and could not be kept back)"
				}
				answered.answerNote = strings.TrimPrefix(answered.answerNote+"; "+how, "; ")
			}
		} else {
			stray = true
		}
	}
	s.mu.Unlock()
	if stray {
		s.onStrayAnswer(m, trimmed, batch)
	}
	if decide != nil && s.lines != nil {
		// Before the line reaches the server, which cannot answer it yet:
		// the response finds the decision in place.
		d := s.lines.Request(s.ctx, faults.LineRequest{Line: trimmed, Protocol: decide.protocol, Message: &m}, stdioServer{s})
		if d.Fired() != "" {
			s.mu.Lock()
			decide.fault = d
			s.mu.Unlock()
		}
	}
	if stale != nil {
		s.finish(stale, nil, time.Now(), fmt.Errorf("the client sent another request with the same id %s before this one was answered", m.ID.String()), false)
	}
	if answered != nil {
		s.finish(answered, trimmed, time.Now(), nil, false)
	}
	return drop
}

func (s *stdioProxy) protocolFor(m wire.Message) string {
	if m.Protocol != "" {
		return m.Protocol
	}
	return s.protocol
}

func (s *stdioProxy) clientFor(m wire.Message) string {
	if m.Client != "" {
		return m.Client
	}
	return s.client
}

// serverToClient passes the server's lines to the client and classifies
// each response.
func (s *stdioProxy) serverToClient(stdout io.Reader) {
	lr := newLineReader(stdout, s.maxLine)
	out := s.opts.Stdout
	clientGone := false
	for {
		piece, end, err := lr.next()
		var line, tail []byte
		var size int64
		var whole bool
		if end {
			line, tail, size, whole = lr.takeLong()
		}
		forward := !s.isKilled()
		var faulted []faults.LineOut // what the faults forward in place of the line
		var decision *faults.LineDecision
		var parsed *wire.Message // the line's one parse, when the faults needed it first
		if forward && end && s.lines != nil && whole {
			m := wire.ParseMessage(bytes.TrimSpace(line))
			parsed = &m
			faulted, decision, forward = s.applyFault(&m)
		}
		write := func(b []byte) {
			if clientGone {
				return
			}
			if _, werr := out.Write(b); werr != nil {
				clientGone = true
				s.log.Warn("writing to the client failed; the server's output is discarded from now on", slog.Any("error", werr))
			}
		}
		// A server request is noted before the client can read it: a
		// client that answers at once finds it pending (as the HTTP
		// recorder notes one before it forwards the event). Noted after
		// the write, a fast answer matched nothing, and the request's
		// record said the client never answered.
		// A batch line's requests are noted the same way, one by one,
		// before the line is written; its other messages (answers to the
		// client's requests) after, as a line of their own is.
		early := false
		var batch *serverBatch // a batch line, taken apart before the write
		if forward && end && whole {
			if t := bytes.TrimSpace(line); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
				if parsed == nil {
					m := wire.ParseMessage(t)
					parsed = &m
				}
				switch parsed.Kind {
				case wire.MessageRequest:
					s.onServerLine(line, whole, clientGone, parsed, nil, serverAll)
					early = true
				case wire.MessageBatch:
					batch = splitServerBatch(t)
					s.onServerLine(line, whole, clientGone, parsed, batch, serverRequests)
				}
			}
		}
		if forward && faulted != nil {
			for _, o := range faulted {
				switch {
				case o.Injected:
					// A request-shaped line is noted before the client
					// reads it, as the server's own requests are.
					req, refused := s.noteInjected(o.Line, decision)
					if refused != nil {
						// Its id is a pending server request's: the
						// client's answers could not be told apart.
						s.finish(refused, nil, time.Now(), errors.New(refused.refused), false)
						continue
					}
					write(append(bytes.Clone(o.Line), '\n'))
					if !req {
						s.onInjectedLine(o.Line, decision.Fired())
					}
				case bytes.Equal(o.Line, bytes.TrimSpace(line)):
					write(piece) // the server's own line, byte for byte
				default:
					write(append(bytes.Clone(o.Line), '\n'))
				}
			}
		} else if forward && len(piece) > 0 {
			write(piece)
		}
		if end && forward && !early {
			switch {
			case whole && err != nil && s.heldServerCut(line, size, clientGone):
				// held: recorded once the server's exit is known
			case whole && batch != nil:
				s.onServerLine(line, whole, clientGone, parsed, batch, serverButRequests)
			case whole:
				s.onServerLine(line, whole, clientGone, parsed, nil, serverAll)
			default:
				s.onLongServerLine(line, tail, size, clientGone)
			}
		}
		if err != nil {
			return
		}
	}
}

// heldServerCut holds the server's last line, which its stdout ended in
// the middle of (no newline before the end), when it starts like JSON and
// does not parse: the server exited while writing it, so it is a message
// cut, not one of invalid JSON; recordServerCut records it once the exit is
// known. It reports whether it held the line. (A cut line that parses is
// judged as a line: some clients take it, the Go SDK's decoder does.)
func (s *stdioProxy) heldServerCut(line []byte, size int64, clientGone bool) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' && t[0] != '[' || wire.Valid(t) {
		return false
	}
	s.srvCut, s.srvCutN, s.srvCutDC = bytes.Clone(t), size, clientGone
	return true
}

// recordServerCut records the server's line its stdout ended in the middle
// of (heldServerCut), why saying how the server ended: as the answer of the
// pending request whose id shows before the cut, NETWORK_ERROR with the
// response cut (phase body), or, when no pending request's id shows, in a
// record of its own with the same words. closed is false when the run was
// stopped (the server killed), as for flushPending's ended.
func (s *stdioProxy) recordServerCut(why string, closed bool) {
	cut, n := s.srvCut, s.srvCutN
	if cut == nil {
		return
	}
	s.srvCut = nil
	exit := strings.Replace(why, " before responding", "", 1)
	id, _, response := wire.ScanHead(cut)
	var p *stdioPending
	if id != nil && response {
		s.mu.Lock()
		if k, ok := answeredKey(s.pending, wire.IDFromRaw(id)); ok {
			p = s.pending[k]
			delete(s.pending, k)
		}
		stopped := s.forwarded != nil
		s.mu.Unlock()
		if p != nil {
			p.ended, p.stopped, p.cut = true, stopped, true
		}
	}
	if p == nil {
		rec := s.orphanRecord(cut, classify.NetworkError, fmt.Sprintf("a line of the server's stdout was cut: %s %d bytes into it, before its newline: the client never got a whole message (a message cut in the middle, not judged; no request's id shows before the cut)", exit, n))
		if rec != nil {
			rec.ResponseBytes = n
			s.writeOrphan(rec)
		}
		return
	}
	var cause error
	if closed {
		cause = io.ErrUnexpectedEOF
	}
	text := fmt.Sprintf("%s %d bytes into its response line, before the line's newline: the client never got a whole message (a message cut in the middle, not judged; the server may have processed the request)", exit, n)
	cex := &classify.Exchange{Method: p.msg.Method, ID: p.msg.ID, ProtocolVersion: p.protocol, Extensions: p.msg.Extensions, Stdio: true}
	cex.Carries(cut)
	cex.Body = io.MultiReader(bytes.NewReader(cut), errReader{&classify.WordedError{Text: text, Err: cause}})
	res, cerr := (&classify.Classifier{}).Classify(cex)
	s.finishResult(p, res, cerr, cut, time.Now(), s.srvCutDC, "")
}

// errReader is a reader that fails with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// serverPart says which messages of a server's batch line onServerLine
// handles: serverRequests before the line is written to the client (its
// requests, so that a fast answer finds them pending), serverButRequests
// after it (the rest), serverAll every one (a line of one message, or a
// batch line handled at once).
type serverPart int

const (
	serverAll serverPart = iota
	serverRequests
	serverButRequests
)

// serverBatch is a server's batch line taken apart: its messages, each
// parsed once (the byte slices alias the line).
type serverBatch struct {
	elems [][]byte
	msgs  []wire.Message
}

func splitServerBatch(trimmed []byte) *serverBatch {
	b := &serverBatch{elems: batchElements(trimmed)}
	b.msgs = make([]wire.Message, len(b.elems))
	for i, e := range b.elems {
		b.msgs[i] = wire.ParseMessage(e)
	}
	return b
}

// onServerLine classifies a line of the server. parsed is the line's
// message when the caller has parsed it already (nil: parsed here), batch
// the batch line taken apart (nil: taken apart here). part says which
// messages of a batch line to handle (a line of one message is handled
// whole whatever part says).
func (s *stdioProxy) onServerLine(line []byte, whole, clientGone bool, parsed *wire.Message, batch *serverBatch, part serverPart) {
	trimmed := bytes.TrimSpace(line)
	now := time.Now()
	if whole && s.answerAfterBOM(trimmed, now, clientGone) {
		return
	}
	if !whole || len(trimmed) == 0 || trimmed[0] != '{' && trimmed[0] != '[' {
		if whole && len(trimmed) > 0 && wire.Valid(trimmed) {
			// A JSON scalar on its own line: JSON, but not a message.
			s.orphan(line, classify.InvalidEnvelope, "a line of the server's stdout is JSON but not a JSON-RPC message")
			return
		}
		if !whole {
			return // a line too long to inspect: forwarded, not judged
		}
		s.onNoise(line, 0, "")
		return
	}
	var m wire.Message
	if parsed != nil {
		m = *parsed
	} else {
		m = wire.ParseMessage(trimmed) // validates: only a line it finds invalid is looked at again
	}
	if m.Kind == wire.MessageInvalid && !wire.Valid(trimmed) {
		s.orphan(line, classify.MalformedJSON, "a line of the server's stdout starts like JSON but is not valid JSON")
		return
	}
	if m.Kind == wire.MessageBatch {
		if batch == nil {
			batch = splitServerBatch(trimmed)
		}
		elems := batch.elems
		if len(elems) == 0 {
			if part != serverRequests {
				s.orphan(line, classify.InvalidEnvelope, "a line of the server's stdout is an empty JSON array: a batch must hold at least one message")
			}
			return
		}
		for i, e := range elems {
			em := batch.msgs[i]
			if isReq := em.Kind == wire.MessageRequest; part == serverRequests && !isReq || part == serverButRequests && isReq {
				continue
			}
			s.onServerMessage(e, em, now, clientGone, &stdioBatch{size: len(elems), index: i})
		}
		return
	}
	s.onServerMessage(line, m, now, clientGone, nil)
}

// utf8BOM is the UTF-8 byte order mark, U+FEFF.
const utf8BOM = "\xef\xbb\xbf"

// jsonAfterBOM reports a line that is JSON after a UTF-8 byte order mark.
func jsonAfterBOM(trimmed []byte) bool {
	return bytes.HasPrefix(trimmed, []byte(utf8BOM)) && wire.Valid(trimmed[len(utf8BOM):])
}

// answerAfterBOM records a server line that is a response after a UTF-8
// byte order mark (a runtime that writes one at the start of its stdout)
// as the answer of the pending request of its id: the classifier's
// MALFORMED_JSON with the words it has for a body after a BOM (RFC 8259
// §8.1), as over HTTP; JSON.parse, the TypeScript SDK's reader, and Go's
// encoding/json refuse the line, so the client never reads the answer. It
// reports whether it recorded the line (no pending request of its id: it
// did not, and the line is noise with those words, onNoise).
func (s *stdioProxy) answerAfterBOM(trimmed []byte, now time.Time, clientGone bool) bool {
	if !jsonAfterBOM(trimmed) {
		return false
	}
	m := wire.ParseMessage(trimmed[len(utf8BOM):])
	if m.Kind != wire.MessageResponse {
		return false
	}
	s.mu.Lock()
	k, ok := answeredKey(s.pending, m.ID)
	p := s.pending[k]
	if ok {
		delete(s.pending, k)
	}
	s.mu.Unlock()
	if p == nil {
		return false
	}
	s.finish(p, bytes.Clone(trimmed), now, nil, clientGone)
	return true
}

// onServerMessage handles one message of the server: a line's (line is the
// line), or one of a batch line's (line is the element; batch says where
// it sat).
func (s *stdioProxy) onServerMessage(line []byte, m wire.Message, now time.Time, clientGone bool, batch *stdioBatch) {
	trimmed := bytes.TrimSpace(line)
	switch m.Kind {
	case wire.MessageResponse:
		s.mu.Lock()
		k, _ := answeredKey(s.pending, m.ID)
		p := s.pending[k]
		delete(s.pending, k)
		if p != nil && p.msg.Method == "initialize" {
			if r, ok := wire.Field(trimmed, "result"); ok {
				if v, ok := wire.Field(r, "protocolVersion"); ok {
					if v, ok := wire.StringValue(v); ok {
						s.protocol = v
					}
				}
			}
		}
		owed := false
		if _, isErr := wire.Field(trimmed, "error"); p == nil && isErr && m.ID.IsNull() && s.clientOwed > 0 {
			// One error of id null per such line of the client.
			s.clientOwed--
			owed = true
		}
		nullIDs := s.clientNullIDs
		s.mu.Unlock()
		if p == nil {
			outcome, reason := classify.InvalidEnvelope, fmt.Sprintf("a response for id %s, which no pending request has", m.ID.String())
			if owed {
				// The answer JSON-RPC 2.0 §5 asks for to a message the
				// server could not read: the client's line has its record
				// (onClientNoise); the server did right.
				outcome, reason = classify.JSONRPCError, "an error response of id null, the server's answer (JSON-RPC 2.0 §5) to a line the client wrote that is not a JSON-RPC message or is a request of id null (recorded before it, or past 1,000 such lines counted in the summary record)"
			} else if m.ID.IsNull() && nullIDs > 0 {
				reason = "a response of id null, the server's answer to a request of id null the client wrote (recorded before it): MCP forbids a null id, and no request can be paired with an answer by it"
			}
			if batch != nil {
				reason = fmt.Sprintf("message %d of a batch line of the server's stdout: %s", batch.index+1, reason)
			}
			if rec := s.orphanRecord(line, outcome, reason); rec != nil {
				// The response's own id (null is null, not absent) and
				// its error code, as any answer's record has them.
				rec.JSONRPC.ID = wire.IDFromRaw(bytes.Clone(m.ID.Raw()))
				warnOnID(rec, "response", rec.JSONRPC.ID)
				if e, ok := wire.Field(trimmed, "error"); ok {
					if c, ok := wire.Field(e, "code"); ok {
						if n, err := strconv.ParseInt(string(c), 10, 64); err == nil {
							rec.JSONRPC.ErrorCode, rec.JSONRPC.ErrorName = &n, classify.CodeName(n)
						}
					}
					if msg, ok := wire.Field(e, "message"); ok {
						if v, ok := wire.StringValue(msg); ok {
							rec.ErrorMessage = v
						}
					}
				}
				s.writeOrphan(rec)
			}
			return
		}
		if batch != nil {
			p.answerNote = batchNote(batch, "the server's answer was", p.protocol, p.batch == nil)
		}
		s.finish(p, trimmed, now, nil, clientGone)
	case wire.MessageRequest:
		s.noteServerRequest(&stdioPending{start: now, line: bytes.Clone(trimmed), complete: true, msg: keep(m), fromSrv: true, batch: batch})
	case wire.MessageNotification:
		if m.Method != "notifications/cancelled" || m.Cancelled.IsZero() {
			return
		}
		s.mu.Lock()
		p := s.pending[idKey(m.Cancelled)]
		if p == nil || !isListen(p) {
			s.mu.Unlock()
			return
		}
		delete(s.pending, idKey(m.Cancelled))
		s.mu.Unlock()
		s.listenEnded(p, now, "the server ended the subscription (subscriptions/listen) with notifications/cancelled, as MCP 2026-07-28 has a stdio server end one (CancelledNotification: on stdio the server sends it solely to terminate a subscriptions/listen stream); no response is due then")
	default:
		reason := "a line of the server's stdout is JSON but not a JSON-RPC message"
		if batch != nil {
			reason = fmt.Sprintf("message %d of a batch line of the server's stdout is JSON but not a JSON-RPC message", batch.index+1)
		}
		s.orphan(line, classify.InvalidEnvelope, reason)
	}
}

// finish classifies one response line (nil when there is none, with
// failure saying why) and writes the pair's record.
func (s *stdioProxy) finish(p *stdioPending, resp []byte, end time.Time, failure error, clientGone bool) {
	cex := &classify.Exchange{Method: p.msg.Method, ID: p.msg.ID, ProtocolVersion: p.protocol, Extensions: p.msg.Extensions, Stdio: true}
	if failure != nil {
		cex.Err, cex.RequestSent = failure, !p.unsent
	} else {
		cex.Carries(resp)
	}
	res, cerr := (&classify.Classifier{}).Classify(cex)
	s.finishResult(p, res, cerr, resp, end, clientGone, "")
}

// finishResult writes the record of a pair with its verdict; note, when
// set, is added to the record's note.
func (s *stdioProxy) finishResult(p *stdioPending, res *classify.Result, cerr error, resp []byte, end time.Time, clientGone bool, note string) {
	rec := s.base(p)
	switch {
	case p.complete && p.msg.Body != nil:
		rec.SetMessage(&p.msg) // the request line's one parse
	case p.complete:
		rec.SetRequest(p.line)
	}
	if rec.JSONRPC.ID.IsZero() {
		// A request line longer than the proxy inspects: its id as its
		// head or tail showed it (onLongServerLine).
		rec.JSONRPC.ID = p.msg.ID
	}
	rec.SetResult(res)
	// A verdict made here (a subscription ended, a server request left
	// unanswered, a line over the limit) has not had the classifier's look
	// at the id: the same word as a classified record's.
	warnOnID(rec, "request", p.msg.ID)
	rec.Status, rec.ContentType, rec.HTTPStatuses = 0, "", []int{}
	rec.Method, rec.ProtocolVersion = p.msg.Method, p.protocol
	rec.Timings.Total = record.Duration(end.Sub(p.start))
	var notes []string
	switch {
	case p.fromSrv && p.refused != "":
		notes = append(notes, "a request the fault was to inject (server → client), not written to the client: "+p.refused)
	case p.fromSrv && p.left:
		notes = append(notes, "a server request (server → client), not answered: the client closed the server's stdin")
	case p.fromSrv && p.ended:
		notes = append(notes, "a server request (server → client), not answered")
	case p.fromSrv && p.superseded:
		notes = append(notes, "a server request (server → client), not answered before a later server request of the same id reached the client: an answer of that id is paired with the later one")
	case p.fromSrv:
		notes = append(notes, "a server request (server → client), answered by the client")
		rec.ClientAnswer = true
	case p.left && p.subEnded:
		notes = append(notes, "the client closed the server's stdin with the subscription open")
	case p.left:
		notes = append(notes, "not answered: the client closed the server's stdin before the answer")
	case p.unsent:
		notes = append(notes, "the client's request (client → server), not passed on to the server")
	}
	if p.ended || p.left || p.superseded || p.refused != "" {
		// The classifier's words are HTTP's ("no HTTP response"); on a
		// pipe there is no response line.
		words := "no response line from the server after the request was sent (the server may have processed it): "
		switch {
		case p.cut:
			words = "the server's response line was cut: "
		case p.refused != "":
			words = "not written to the client: "
		case p.fromSrv:
			words = "no answer line from the client after the server sent its request: "
		case p.unsent:
			words = "the request never reached the server: "
		}
		if rec.Network != nil {
			rec.Reason = words + rec.Network.Error
		}
	}
	if p.batch != nil {
		who := "the request was"
		if p.fromSrv {
			who = "the server's request was"
		}
		rec.Batch = int64(p.batch.size)
		notes = append(notes, batchNote(p.batch, who, p.protocol, true))
	}
	if p.answerNote != "" {
		notes = append(notes, p.answerNote)
	}
	if p.shared != "" {
		notes = append(notes, p.shared)
	}
	if p.injected && p.refused == "" {
		notes = append(notes, "injected by the fault (FI): the server never wrote this request, the proxy wrote it to the client in the server's place")
	}
	if p.cancelled > 0 {
		notes = append(notes, fmt.Sprintf("the client cancelled the request (notifications/cancelled) after %s", p.cancelled.Round(time.Millisecond)))
	}
	if clientGone {
		rec.Flags.Add(record.FlagDC)
		notes = append(notes, "the client had stopped reading (its stdout was closed)")
	}
	if p.ended {
		rec.Flags.Add(record.FlagUX)
	}
	if p.stopped {
		rec.Flags.Add(record.FlagSD)
	}
	if p.left {
		rec.Flags.Add(record.FlagDC)
	}
	if cerr != nil {
		notes = append(notes, "the classifier stopped at its limit: "+cerr.Error())
	}
	if note != "" {
		notes = append(notes, note)
	}
	rec.Note = strings.Join(notes, "; ")
	if p.fault != nil {
		rec.Scenario = p.fault.Fired()
		rec.Fault = faults.Decision(s.lines.Selection().String(), s.url(), s.lines.Seed(), p.fault.Firings())
		if rec.Scenario != "" {
			rec.Flags.Add(record.FlagFI)
		}
	}
	s.addBodies(rec, p.line, resp, res.Outcome)
	if !p.complete && rec.RequestBody != nil {
		// The head of a line longer than the proxy inspects.
		rec.RequestBody.Truncated = true
	}
	s.observe(rec, p.start, end, p.msg)
	s.mu.Lock()
	s.records++
	s.mu.Unlock()
	s.write(rec)
}

// base is the record of a pair before classification.
func (s *stdioProxy) base(p *stdioPending) *record.Record {
	return &record.Record{
		Kind: record.KindExchange, Time: p.start, Client: p.client, ProtocolVersion: p.protocol,
		Scenario: s.opts.Scenario, Method: p.msg.Method, URL: s.url(), HTTPStatuses: []int{},
	}
}

// onNoise records a non-JSON line of the server's stdout. size is the
// line's length when it is longer than line (0 otherwise); fired, when set,
// names the faults that injected the line.
func (s *stdioProxy) onNoise(line []byte, size int64, fired string) {
	s.mu.Lock()
	s.noise++
	if s.noiseRec >= maxNoiseRecords {
		s.mu.Unlock()
		return
	}
	s.noiseRec++
	ids := s.pendingIDs()
	client, protocol := s.client, s.protocol
	s.mu.Unlock()
	rec := &record.Record{
		Kind: record.KindExchange, Time: time.Now(), Client: client, ProtocolVersion: protocol, Scenario: s.opts.Scenario,
		URL: s.url(), HTTPStatuses: []int{}, Outcome: StdioNoise, Layer: classify.LayerTransport,
		Reason:       "a line on the server's stdout is not JSON: clients that read stdout as JSON-RPC fail on it",
		ResponseBody: s.noiseBody(line),
	}
	if size > 0 {
		rec.Reason = fmt.Sprintf("a line of %d bytes on the server's stdout is not JSON: clients that read stdout as JSON-RPC fail on it", size)
		rec.ResponseBytes = size
	} else if jsonAfterBOM(bytes.TrimSpace(line)) {
		rec.Reason = "a line on the server's stdout is JSON after a UTF-8 byte order mark (EF BB BF), which JSON sent over a network must not start with (RFC 8259 §8.1): JSON.parse (the TypeScript SDK's reader) and Go's encoding/json refuse it, so clients that read stdout as JSON-RPC fail on it"
	}
	if len(ids) > 0 {
		rec.Note = "requests pending when it arrived: " + strings.Join(ids, ", ")
	}
	if fired != "" {
		rec.Note = strings.TrimPrefix(rec.Note+"; injected by the fault (FI)", "; ")
		rec.Scenario = fired
		rec.Flags.Add(record.FlagFI)
	}
	s.observe(rec, rec.Time, rec.Time, wire.Message{})
	s.write(rec)
}

// onInjectedLine records a line a fault wrote to the client in the
// server's place that is no request (noteInjected takes those), as what
// the client reads it as: not JSON, STDIO_NOISE (a stray print); a line that
// starts like JSON and does not parse, MALFORMED_JSON; a notification, its
// method (HTTP_SUCCESS in the transport layer: delivered, not answered, as
// any notification); a response, its id with its type, and either the
// client's pending request of that id, which takes it as its answer (the
// classifier's verdict on it as that request's answer; the server's own
// answer then follows it), or none (INVALID_ENVELOPE, as a server's response
// for an id no request has); a batch line (not taken apart) and any other
// JSON, their own words. Each with the scenario that fired, FI and the note
// that the server never wrote it. Before, every such line was STDIO_NOISE,
// "not JSON", of a line that is JSON.
func (s *stdioProxy) onInjectedLine(line []byte, fired string) {
	t := bytes.TrimSpace(line)
	if !wire.Valid(t) {
		if len(t) == 0 || t[0] != '{' && t[0] != '[' {
			s.onNoise(line, 0, fired)
			return
		}
		s.injectedRecord(line, classify.MalformedJSON, "the fault wrote a line to the client in the server's place that starts like JSON but is not valid JSON", fired, nil)
		return
	}
	m := wire.ParseMessage(t)
	switch m.Kind {
	case wire.MessageNotification:
		s.injectedRecord(line, classify.HTTPSuccess, fmt.Sprintf("the fault wrote a %s notification to the client in the server's place: a JSON-RPC message, not noise, which no one answers", m.Method), fired, func(rec *record.Record) {
			rec.Method = m.Method
		})
	case wire.MessageResponse:
		s.mu.Lock()
		k, _ := answeredKey(s.pending, m.ID)
		p := s.pending[k]
		var method, protocol string
		var reqID wire.ID
		var ext []string
		if p != nil {
			method, protocol, reqID, ext = p.msg.Method, p.protocol, p.msg.ID, p.msg.Extensions
			p.answerNote = strings.TrimPrefix(p.answerNote+"; "+fmt.Sprintf("the fault wrote a response of id %s to the client before the server's answer (FI): the client takes that one as this request's answer, and this record's answer, the server's, came after it", m.ID.String()), "; ")
		}
		s.mu.Unlock()
		if p == nil {
			s.injectedRecord(line, classify.InvalidEnvelope, fmt.Sprintf("the fault wrote a response for id %s (%s) to the client in the server's place, which no pending request has", m.ID.String(), idType(m.ID)), fired, func(rec *record.Record) {
				rec.JSONRPC.ID = wire.IDFromRaw(bytes.Clone(m.ID.Raw()))
				warnOnID(rec, "response", rec.JSONRPC.ID)
			})
			return
		}
		cex := &classify.Exchange{Method: method, ID: reqID, ProtocolVersion: protocol, Extensions: ext, Stdio: true}
		cex.Carries(t)
		res, _ := (&classify.Classifier{}).Classify(cex)
		s.injectedRecord(line, classify.InvalidEnvelope, "", fired, func(rec *record.Record) {
			rec.Method = method
			rec.JSONRPC.ID = wire.IDFromRaw(bytes.Clone(reqID.Raw()))
			rec.SetResult(res)
			rec.Reason = "an answer the fault wrote in the server's place: " + rec.Reason
			rec.Note = strings.TrimPrefix(fmt.Sprintf("the client takes it as the answer to its pending %s (id %s); the server's own answer of that id follows it", method, reqID.String())+"; "+rec.Note, "; ")
		})
	case wire.MessageBatch:
		s.injectedRecord(line, classify.HTTPSuccess, "the fault wrote a JSON array (a batch line) to the client in the server's place; the proxy does not take an injected batch apart: a request in it is not waited for, and the client's answer to it is recorded as answering no server request", fired, nil)
	default:
		s.injectedRecord(line, classify.InvalidEnvelope, "the fault wrote a line to the client in the server's place that is JSON but not a JSON-RPC message", fired, nil)
	}
}

// injectedRecord writes the record of a line a fault injected (see
// onInjectedLine): outcome and reason (reason "" leaves the one set
// sets), the scenario that fired, FI, and then set, when not nil, adds
// what the line is.
func (s *stdioProxy) injectedRecord(line []byte, outcome classify.Outcome, reason, fired string, set func(*record.Record)) {
	rec := s.orphanRecord(line, outcome, reason)
	if rec == nil {
		return
	}
	rec.Note = strings.TrimPrefix(rec.Note+"; injected by the fault (FI): the server never wrote this line, the proxy wrote it to the client in the server's place", "; ")
	rec.Scenario = fired
	rec.Flags.Add(record.FlagFI)
	if set != nil {
		set(rec)
	}
	s.writeOrphan(rec)
}

// orphan records a server line that answers no request.
func (s *stdioProxy) orphan(line []byte, outcome classify.Outcome, reason string) {
	if rec := s.orphanRecord(line, outcome, reason); rec != nil {
		s.writeOrphan(rec)
	}
}

// orphanRecord returns the record of a server line that answers no
// request, or nil past maxOrphanRecords: such lines are then counted by
// outcome, and RunStdio writes one summary record per outcome at the end.
func (s *stdioProxy) orphanRecord(line []byte, outcome classify.Outcome, reason string) *record.Record {
	s.mu.Lock()
	if s.orphanRec >= maxOrphanRecords {
		if s.orphanPast == nil {
			s.orphanPast = map[classify.Outcome]int64{}
		}
		s.orphanPast[outcome]++
		s.mu.Unlock()
		return nil
	}
	s.orphanRec++
	ids := s.pendingIDs()
	client, protocol := s.client, s.protocol
	s.mu.Unlock()
	rec := &record.Record{
		Kind: record.KindExchange, Time: time.Now(), Client: client, ProtocolVersion: protocol, Scenario: s.opts.Scenario,
		URL: s.url(), HTTPStatuses: []int{}, Outcome: outcome, Layer: outcome.Layer(), Reason: reason,
		ResponseBody: s.noiseBody(line),
	}
	if len(ids) > 0 {
		rec.Note = "requests pending when it arrived: " + strings.Join(ids, ", ")
	}
	return rec
}

func (s *stdioProxy) writeOrphan(rec *record.Record) {
	s.observe(rec, rec.Time, rec.Time, wire.Message{})
	s.write(rec)
}

// summarizeOrphans writes, for each outcome, one record counting the lines
// answering no request that were past maxOrphanRecords.
func (s *stdioProxy) summarizeOrphans() {
	s.mu.Lock()
	past := s.orphanPast
	s.orphanPast = nil
	client, protocol := s.client, s.protocol
	s.mu.Unlock()
	outcomes := make([]classify.Outcome, 0, len(past))
	for o := range past {
		outcomes = append(outcomes, o)
	}
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i] < outcomes[j] })
	for _, o := range outcomes {
		s.write(&record.Record{
			Kind: record.KindExchange, Time: time.Now(), Client: client, ProtocolVersion: protocol, Scenario: s.opts.Scenario,
			URL: s.url(), HTTPStatuses: []int{}, Outcome: o, Layer: o.Layer(), Summarized: past[o],
			Reason: fmt.Sprintf("%d more lines on the server's stdout (%s) answered no pending request and were not recorded one by one", past[o], o),
			Note:   fmt.Sprintf("lines answering no request past the first %d are counted, not recorded", maxOrphanRecords),
		})
	}
}

// noiseBody is the offending line as a record body, unless --record-bodies
// none keeps every body out of the records (a stray print can hold a
// connection string).
func (s *stdioProxy) noiseBody(line []byte) *record.Body {
	if s.opts.Bodies == BodiesNone {
		return nil
	}
	line = bytes.TrimRight(line, "\r\n")
	n := min(len(line), s.limit, 4096)
	return &record.Body{Text: string(line[:n]), Truncated: n < len(line)}
}

// pendingIDs lists the ids of the pending requests; mu must be held.
func (s *stdioProxy) pendingIDs() []string {
	var ids []string
	for _, p := range s.pending {
		ids = append(ids, p.msg.ID.String())
	}
	return ids
}

// flushPending records every request the server never answered; ended is
// the cause of the server's end (see classify.WordedError).
func (s *stdioProxy) flushPending(why string, ended error) {
	s.mu.Lock()
	var left []*stdioPending
	for k, p := range s.pending {
		left = append(left, p)
		delete(s.pending, k)
	}
	for k, p := range s.srvReqs {
		left = append(left, p)
		delete(s.srvReqs, k)
	}
	clientEOF, stopped := s.clientEOF, s.forwarded != nil
	s.mu.Unlock()
	end := time.Now()
	for _, p := range left {
		if isListen(p) && (p.cancelled > 0 || clientEOF) {
			// The subscription's normal end, not a request the server
			// left unanswered.
			if p.cancelled > 0 {
				s.listenEnded(p, p.start.Add(p.cancelled), fmt.Sprintf("the client ended its subscription (subscriptions/listen) with notifications/cancelled after %s, which is how a subscription ends: MCP 2026-07-28 sends no response then (SubscriptionsListenResult only when the server tears the subscription down)", p.cancelled.Round(time.Millisecond)))
				continue
			}
			p.left = true
			s.listenEnded(p, end, "the client closed the server's stdin (it ended the session) with its subscription (subscriptions/listen) open, which is how a subscription ends: MCP 2026-07-28 sends no response then (SubscriptionsListenResult only when the server tears the subscription down)")
			continue
		}
		reason, cause := why, error(nil)
		switch {
		case p.fromSrv && clientEOF:
			// The client ended the session (a stdio client shuts the
			// server down by closing its stdin) with the server's
			// request unanswered: it left, as an HTTP client that
			// disconnects does; the request is not one still waiting.
			// Nothing failed: the session's end ends its requests, and
			// there is nothing to retry (docs/decisions.md).
			p.left = true
			s.serverRequestLeft(p, end)
			continue
		case p.fromSrv:
			reason = "the client had not answered this server request when the server ended"
			p.ended, p.stopped = true, stopped
			cause = ended
		case clientEOF:
			// The client's own request, outstanding when it ended the
			// session: it left before the answer (DC), as for a server
			// request; the server did not leave a request unanswered
			// while its client waited.
			reason = "the client closed the server's stdin (it ended the session) before the server answered: " + why
			p.left = true
			cause = context.Canceled
		default:
			// A server that ended on the signal the proxy passed on (the
			// user's Ctrl-C, a host's SIGTERM) was stopped with the run:
			// SD as well, counted apart by report as the HTTP proxy's
			// shutdown cuts are, not as the server's failure.
			p.ended, p.stopped = true, stopped
			cause = ended
		}
		s.finish(p, nil, end, &classify.WordedError{Text: reason, Err: cause}, false)
	}
}

// isListen reports a client's subscriptions/listen request: a 2026-07-28
// subscription, which ends without a response when its client cancels it or
// leaves, or its stdio server cancels it.
func isListen(p *stdioPending) bool {
	return !p.fromSrv && p.msg.Kind == wire.MessageRequest && p.msg.Method == "subscriptions/listen"
}

// listenEnded records a subscriptions/listen request whose subscription
// ended at end without a response, as one is due none (reason says how):
// HTTP_SUCCESS in the transport layer, as the recorder records a listen
// stream its HTTP client closed (a success, no claim above the transport).
func (s *stdioProxy) listenEnded(p *stdioPending, end time.Time, reason string) {
	p.subEnded = true
	res := &classify.Result{Outcome: classify.HTTPSuccess, Reason: reason}
	res.SetMethod(p.msg.Method)
	res.SetProtocol(p.protocol)
	s.finishResult(p, res, nil, nil, end, false, "")
}

// serverRequestLeft records a server request the client left unanswered
// when it ended the session (closed the server's stdin): HTTP_SUCCESS in
// the transport layer, as a subscription its client left (listenEnded).
// The pipe carried the request and the session ended normally; MCP's
// shutdown ends every request outstanding in the session, so neither peer
// failed (no NETWORK_ERROR: no transport failed) and nothing is to be
// retried. The note and the DC flag say the client left without answering.
func (s *stdioProxy) serverRequestLeft(p *stdioPending, end time.Time) {
	res := &classify.Result{Outcome: classify.HTTPSuccess,
		Reason: "the client ended the session (it closed the server's stdin) without answering this server request: the session's end ends the requests outstanding in it (MCP Lifecycle › Shutdown), so no answer is due; no transport failed and nothing is to be retried"}
	res.SetMethod(p.msg.Method)
	res.SetProtocol(p.protocol)
	s.finishResult(p, res, nil, nil, end, false, "")
}

func (s *stdioProxy) addBodies(rec *record.Record, req, resp []byte, outcome classify.Outcome) {
	mode := s.opts.Bodies
	if mode == BodiesNone {
		return
	}
	if (mode == BodiesAll || mode == BodiesFull) && len(req) > 0 {
		n := min(len(req), s.limit)
		rec.RequestBody = &record.Body{Text: string(req[:n]), Truncated: n < len(req)}
	}
	if mode == BodiesErrors && outcome.Success() || len(resp) == 0 {
		return
	}
	n := min(len(resp), s.limit)
	rec.ResponseBody = &record.Body{Text: string(resp[:n]), Truncated: n < len(resp)}
}

func (s *stdioProxy) observe(rec *record.Record, start, end time.Time, m wire.Message) {
	if rec.Conn == "" {
		rec.Conn = s.conn
	}
	if s.opts.Observer == nil {
		return
	}
	o := &Observation{Record: rec, Start: start, End: end, Transport: TransportPipe, ServerAddr: s.name, TraceParent: m.Traceparent, TraceState: m.Tracestate}
	s.opts.Observer.Observe(o)
}

// maxLoggedLosses is how many refused records the stdio proxy names one by
// one in its log; past it they are counted, not logged (as the recorder
// does for HTTP).
const maxLoggedLosses = 20

func (s *stdioProxy) write(rec *record.Record) {
	if rec.Conn == "" {
		rec.Conn = s.conn // one client per run: its records are one connection's
	}
	if s.opts.Records == nil {
		return
	}
	if err := s.opts.Records.Write(rec); err != nil {
		s.mu.Lock()
		s.lost++
		n := s.lost
		s.mu.Unlock()
		switch {
		case n <= maxLoggedLosses:
			// Redacted: the method, tool and id are the client's, and a
			// credential in them must not reach the log (as in the
			// recorder's loss log).
			s.log.Error("record lost: "+record.RefOf(rec).Redacted(nil).String(), slog.Any("error", err))
		case n == maxLoggedLosses+1:
			s.log.Error(fmt.Sprintf("more than %d records lost; later losses are counted, not logged", maxLoggedLosses))
		}
	}
}

// stdioServer is the server as the faults see it (faults.LineServer).
type stdioServer struct{ s *stdioProxy }

// Kill implements faults.LineServer: the server is killed once the current
// request line has reached it, and from now on its output is dropped, so
// that an answer it writes before the kill lands never reaches the client
// (as it would not from a server that crashed).
func (v stdioServer) Kill() {
	v.s.mu.Lock()
	v.s.killAfter, v.s.killed = true, true
	v.s.mu.Unlock()
}

// faultExit reports (once) that the server must be killed now.
func (s *stdioProxy) faultExit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.killAfter
	s.killAfter = false
	return k
}

// isKilled reports whether a fault killed the server.
func (s *stdioProxy) isKilled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killed
}

// applyFault hands a server line (its message m, parsed once for this and
// onServerLine) that answers a request the faults fired
// on to their decision. It returns the lines to forward in its place (nil:
// the line as it is), the faults that fired, and whether to forward at all:
// a dropped response is recorded here, with the reason, and not forwarded.
func (s *stdioProxy) applyFault(m *wire.Message) (out []faults.LineOut, d *faults.LineDecision, forward bool) {
	trimmed := m.Body
	if m.Kind != wire.MessageResponse {
		return nil, nil, true
	}
	s.mu.Lock()
	k, _ := answeredKey(s.pending, m.ID)
	p := s.pending[k]
	if p != nil {
		d = p.fault
	}
	s.mu.Unlock()
	if d == nil {
		return nil, nil, true
	}
	out, err := d.Response(s.ctx, trimmed)
	if err != nil {
		s.mu.Lock()
		if s.pending[k] == p {
			delete(s.pending, k)
		}
		s.mu.Unlock()
		s.finish(p, nil, time.Now(), err, false)
		return nil, nil, false
	}
	return out, d, true
}

// noteInjected notes a line a fault writes to the client in the server's
// place (d: the decision that wrote it) as a server request when it is
// one, before the client can read it: the client's answer is then paired
// with it, as with a request of the server's own, and its record says the
// fault injected it. It reports whether the line was a request; any other
// line the caller records as noise. A request whose id is that of a server
// request still waiting for the client's answer (the server's own, or one
// injected before) is not noted: refused is it, for the caller to record
// and not to write. The client would answer both with that id, and no
// answer could be told to be the one or the other's (real servers number
// their requests 0, 1, 2…, as an injected line may).
func (s *stdioProxy) noteInjected(line []byte, d *faults.LineDecision) (req bool, refused *stdioPending) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' {
		return false, nil
	}
	m := wire.ParseMessage(t)
	if m.Kind != wire.MessageRequest {
		return false, nil
	}
	sp := &stdioPending{start: time.Now(), line: bytes.Clone(t), complete: true, msg: keep(m), fromSrv: true, fault: d, injected: true}
	s.mu.Lock()
	if k, ok := answeredKey(s.srvReqs, m.ID); ok {
		held := s.srvReqs[k]
		sp.protocol, sp.client = s.protocol, s.client
		s.mu.Unlock()
		who := "the server's own " + held.msg.Method
		if held.injected {
			who = "the " + held.msg.Method + " the fault injected before"
		}
		sp.unsent = true
		sp.refused = fmt.Sprintf("its id %s is the id of %s (id %s), still waiting for the client's answer: the client's answers of that id could not be told apart", m.ID.String(), who, held.msg.ID.String())
		return true, sp
	}
	s.mu.Unlock()
	s.noteServerRequest(sp)
	return true, nil
}

// noteServerRequest notes sp, a server request the client is about to
// read (the server's own, or one a fault writes in its place), under its
// id. A request of the same id still waiting for its answer is recorded
// then, not answered: an answer of that id is the later one's from now on
// (JSON-RPC: an id is unique among a sender's requests in flight). Before,
// the later one took its place in the table and the earlier one had no
// record at all.
func (s *stdioProxy) noteServerRequest(sp *stdioPending) {
	k := idKey(sp.msg.ID)
	s.mu.Lock()
	sp.protocol, sp.client = s.protocol, s.client
	stale := s.srvReqs[k]
	if stale != nil && stale.injected && !sp.injected {
		// The server's own request of an id the fault's request still
		// waiting has: recorded on both sides (noteInjected refuses the
		// other order).
		sp.shared = fmt.Sprintf("its id %s was also the id of the %s the fault injected, which the client had not answered when this request reached it: the proxy cannot tell their answers apart; the answer paired here is the client's first of that id after this request, and may be its answer to the injected %s", sp.msg.ID.String(), stale.msg.Method, stale.msg.Method)
	}
	s.srvReqs[k] = sp
	s.mu.Unlock()
	if stale != nil {
		stale.superseded = true
		why := fmt.Errorf("another server request with the same id %s reached the client before this one was answered", sp.msg.ID.String())
		if sp.shared != "" {
			why = fmt.Errorf("the server's own %s of the same id %s reached the client before this injected request was answered: the client's answers of that id cannot be told apart, and none is paired with this one", sp.msg.Method, sp.msg.ID.String())
		}
		s.finish(stale, nil, time.Now(), why, false)
	}
}
