package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/execerr"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

// StopTimeout bounds how long a stdio server has to exit after its stdin
// is closed at the end of a run before it is killed.
const StopTimeout = 2 * time.Second

// httpOnly are the probe kinds that test the Streamable HTTP layer
// (Origin, MCP-Protocol-Version header, Accept): stdio has no HTTP layer,
// so they are not sent there and their rules are n/a. The notification
// probe is sent (see stdioServer.notification).
var httpOnly = []Kind{ForeignOrigin, BadProtocolVersion, NoProtocolVersion, AcceptJSONOnly}

// stdioServer is the smallest stdio transport the probe needs: the
// process, newline-delimited JSON-RPC on its stdin and stdout, its stderr
// kept (bounded) for evidence.
type stdioServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte // stdout lines; closed at EOF
	stderr *tailBuffer
	next   int64
	// protocol is the era spoken: 2025-11-25 (initialize) or 2026-07-28
	// (server/discover, _meta on every request, no server requests).
	protocol string
	// early counts the stdout lines that are not JSON-RPC read before the
	// listing ended (no probe waited for them), and keeps the first few.
	early      int
	earlyLines [][]byte
	// unanswered holds the requests whose wait ended at the limit with no
	// answer (by id key, their method): a line that answers one later is
	// that request's late answer, not the answer of the request then
	// waited for.
	unanswered map[string]string
}

// StdoutNoise is the code of the listing warning for stdout lines that are
// not JSON-RPC, read over stdio before the listing ended.
const StdoutNoise = "stdout-noise"

// maxEarlyLines is how many of the early noise lines are quoted.
const maxEarlyLines = 3

// noteEarly counts the noise lines of an answer read before the listing
// ended.
func (s *stdioServer) noteEarly(a stdioAnswer) {
	for _, n := range a.noise {
		s.early++
		if len(s.earlyLines) < maxEarlyLines {
			s.earlyLines = append(s.earlyLines, n)
		}
	}
}

// earlyText says what the early noise lines were: `N line(s) that are not
// JSON-RPC: "a"; "b"`.
func (s *stdioServer) earlyText() string {
	q := make([]string, len(s.earlyLines))
	for i, l := range s.earlyLines {
		q[i] = strconv.Quote(trimTo(record.Scrub(string(l)), 120))
	}
	more := ""
	if s.early > len(s.earlyLines) {
		more = fmt.Sprintf(" and %d more", s.early-len(s.earlyLines))
	}
	return fmt.Sprintf("%d line(s) that are not JSON-RPC: %s%s", s.early, strings.Join(q, "; "), more)
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

func startStdio(argv []string) (*stdioServer, error) {
	s := &stdioServer{cmd: exec.Command(argv[0], argv[1:]...), lines: make(chan []byte, 64), stderr: &tailBuffer{}, protocol: wire.Protocol2025}
	s.cmd.Stderr = s.stderr
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], execerr.Explain(s.cmd.Path, s.cmd.Dir, err))
	}
	go func() {
		defer close(s.lines)
		r := bufio.NewReaderSize(out, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if l := bytes.TrimSpace(line); len(l) > 0 {
				s.lines <- bytes.Clone(l)
			}
			if err != nil {
				return
			}
		}
	}()
	return s, nil
}

// stop closes stdin, waits StopTimeout for the server to exit, then kills
// it; it says how it ended.
func (s *stdioServer) stop() string {
	s.in.Close()
	done := make(chan error, 1)
	go func() {
		// Wait only after stdout is read to its end (StdoutPipe's rule).
		for range s.lines {
		}
		done <- s.cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Sprintf("exited after stdin closed: %v", err)
		}
		return "exited after stdin closed"
	case <-time.After(StopTimeout):
		s.cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(StopTimeout):
			// A child of the server still holds its stdout.
		}
		return fmt.Sprintf("killed: still running %s after stdin closed", StopTimeout)
	}
}

// stdioAnswer is what came back for one request line.
type stdioAnswer struct {
	line    []byte   // the response line (nil: none)
	err     error    // why there is none
	noise   [][]byte // stdout lines that are not JSON-RPC, read while waiting
	asked   []string // methods of the server requests answered while waiting
	refused []string // methods of the server requests not answered (2026-07-28 forbids them on stdio)
	stray   [][]byte // responses read while waiting for another id (want)
	late    []string // earlier requests answered while waiting, after their own wait ended ("id 3 (tools/call)")
	elapsed time.Duration
}

// roundTrip writes one request (or notification) line and, for a request,
// reads stdout until a response, the timeout, or the end of stdout. Server
// requests are answered as the HTTP probe answers them (declining);
// notifications are skipped; a line that is not JSON-RPC is kept as noise.
// The first response is the answer whatever its id (a wrong id is the
// classifier's finding), unless want is set: then only a response with
// that id ends the wait, and the others are kept as stray. A response to
// an earlier request whose wait ended unanswered (own is this one's id) is
// that request's late answer: it is noted in late, and the wait goes on.
func (s *stdioServer) roundTrip(ctx context.Context, line []byte, notification bool, timeout time.Duration, own, want wire.ID) stdioAnswer {
	start := time.Now()
	var a stdioAnswer
	if _, err := s.in.Write(append(bytes.Clone(line), '\n')); err != nil {
		a.err = fmt.Errorf("writing to the server's stdin: %w", err)
		return a
	}
	if notification {
		return a
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			a.err = ctx.Err()
			a.elapsed = time.Since(start)
			return a
		case <-t.C:
			if len(a.noise) > 0 {
				a.err = fmt.Errorf("no JSON-RPC answer line within %s (%d line(s) came that are not JSON-RPC): %w", timeout, len(a.noise), context.DeadlineExceeded)
			} else {
				a.err = fmt.Errorf("no answer line within %s: %w", timeout, context.DeadlineExceeded)
			}
			a.elapsed = time.Since(start)
			return a
		case l, ok := <-s.lines:
			if !ok {
				if len(a.noise) > 0 {
					a.err = fmt.Errorf("the server's stdout ended after %d line(s) that are not JSON-RPC (stderr: %q)", len(a.noise), record.Scrub(s.stderr.String()))
				} else {
					a.err = fmt.Errorf("the server's stdout ended (stderr: %q)", record.Scrub(s.stderr.String()))
				}
				a.elapsed = time.Since(start)
				return a
			}
			m := wire.ParseMessage(l)
			switch m.Kind {
			case wire.MessageResponse:
				if method, ok := s.unanswered[m.ID.Key()]; ok && !m.ID.Equal(own) && !m.ID.Equal(want) {
					delete(s.unanswered, m.ID.Key())
					a.late = append(a.late, fmt.Sprintf("id %s (%s)", record.Scrub(m.ID.String()), method))
					continue
				}
				if !want.IsZero() && !m.ID.Equal(want) {
					a.stray = append(a.stray, l)
					continue
				}
				a.line, a.elapsed = l, time.Since(start)
				return a
			case wire.MessageNotification:
			case wire.MessageRequest:
				if s.protocol == wire.Protocol2026 {
					// "The server MUST NOT write JSON-RPC requests to
					// stdout", and the client MUST NOT write responses.
					a.refused = append(a.refused, m.Method)
					continue
				}
				a.asked = append(a.asked, m.Method)
				res, err := declining{}.Answer(ctx, client.InputRequest{Method: m.Method})
				var ans []byte
				if err != nil {
					ans, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.ID.Raw()), "error": map[string]any{"code": -32601, "message": "mcpdiag probe: method not supported"}})
				} else {
					ans, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.ID.Raw()), "result": res})
				}
				s.in.Write(append(ans, '\n'))
			default:
				a.noise = append(a.noise, l)
			}
		}
	}
}

// request returns the line of r, with the next integer id when r has none.
func (s *stdioServer) request(r client.Request) ([]byte, wire.ID) {
	msg := map[string]any{"jsonrpc": "2.0", "method": r.Method}
	id := r.ID
	if !r.Notification {
		if id.IsZero() {
			s.next++
			id = wire.IntID(s.next)
		}
		msg["id"] = json.RawMessage(id.Raw())
	}
	params := r.Params
	if s.protocol == wire.Protocol2026 && !r.Notification {
		// Every 2026-07-28 request carries the era's _meta (stdio has no
		// header layer: basic/transports/stdio §Request Metadata).
		params = maps.Clone(params)
		if params == nil {
			params = map[string]json.RawMessage{}
		}
		params["_meta"] = mustJSON(map[string]any{
			wire.MetaProtocolVersion:    wire.Protocol2026,
			wire.MetaClientCapabilities: json.RawMessage(`{}`),
			wire.MetaClientInfo:         client.DefaultClientInfo,
		})
	}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	return b, id
}

// exchange sends r and returns its records: one per noise line read while
// waiting (MALFORMED_JSON or INVALID_ENVELOPE, the line as its body), then
// the request's own, classified as the JSON body of an HTTP answer would be.
// Records have no HTTP status (stdio has none). When member is not nil (r
// is a probe), every record gets a copy of it with its Answer: a line read
// back is ProbeAnswerResponse, none ProbeAnswerNone.
func (s *stdioServer) exchange(ctx context.Context, url string, r client.Request, timeout time.Duration, member *record.Probe) ([]*record.Record, stdioAnswer) {
	if r.Notification && member != nil {
		return s.notification(ctx, url, r, timeout, member)
	}
	line, id := s.request(r)
	start := time.Now()
	a := s.roundTrip(ctx, line, r.Notification, timeout, id, wire.ID{})
	s.noteUnanswered(r, id, a)
	return s.records(url, start, r, line, id, a, member), a
}

// noteUnanswered keeps request r (its id) when its wait ended at the limit
// with no answer, so that a later line answering it is read as its late
// answer (roundTrip).
func (s *stdioServer) noteUnanswered(r client.Request, id wire.ID, a stdioAnswer) {
	if r.Notification || a.line != nil || !errors.Is(a.err, context.DeadlineExceeded) {
		return
	}
	if s.unanswered == nil {
		s.unanswered = map[string]string{}
	}
	s.unanswered[id.Key()] = r.Method
}

// base is a record of this transport, without its request or answer.
func (s *stdioServer) base(url string, start time.Time) *record.Record {
	return &record.Record{Kind: record.KindExchange, Time: start, Client: client.DefaultClientInfo.Name + "@" + client.DefaultClientInfo.Version,
		ProtocolVersion: s.protocol, URL: url, HTTPStatuses: []int{}}
}

// records returns the records of request r (its line, its id) answered a:
// one per noise line, then r's own (see exchange).
func (s *stdioServer) records(url string, start time.Time, r client.Request, line []byte, id wire.ID, a stdioAnswer, member *record.Probe) []*record.Record {
	base := func() *record.Record { return s.base(url, start) }
	var recs []*record.Record
	for _, n := range a.noise {
		rec := base()
		rec.SetRequest(line)
		outcome, why := classify.InvalidEnvelope, "a line of the server's stdout is JSON but not a JSON-RPC message"
		if !json.Valid(n) {
			outcome, why = classify.MalformedJSON, "a line of the server's stdout is not JSON"
		}
		rec.Outcome, rec.Layer, rec.Reason = outcome, outcome.Layer(), why+": "+excerpt(n)
		rec.ResponseBody, rec.ResponseBytes = &record.Body{Text: excerpt(n)}, int64(len(n))
		rec.Note = "stdout noise read while waiting for the answer to this request"
		rec.Probe = withAnswer(member, record.ProbeAnswerResponse)
		recs = append(recs, rec)
	}
	cex := &classify.Exchange{Method: r.Method, ID: id, ProtocolVersion: s.protocol, Stdio: true}
	switch {
	case a.err != nil:
		cex.Err, cex.RequestSent = a.err, true
	case r.Notification:
		cex.Status, cex.Header = http.StatusAccepted, http.Header{}
	default:
		cex.Status, cex.Header, cex.BodyBytes = http.StatusOK, http.Header{"Content-Type": {"application/json"}}, a.line
	}
	res, cerr := (&classify.Classifier{}).Classify(cex)
	rec := base()
	rec.SetRequest(line)
	rec.SetResult(res)
	pipeReason(rec)
	rec.Status, rec.ContentType, rec.HTTPStatuses = 0, "", []int{}
	rec.Method, rec.ProtocolVersion = r.Method, s.protocol
	rec.Timings.Total = record.Duration(a.elapsed)
	rec.ResponseBytes = int64(len(a.line))
	if a.line != nil {
		rec.ResponseBody = &record.Body{Text: excerpt(a.line)}
	}
	var notes []string
	if len(a.late) > 0 {
		notes = append(notes, fmt.Sprintf("a late answer to %s came first while waiting for this one's: that request's answer after its wait ended, not this one's", strings.Join(a.late, ", ")))
	}
	if len(a.asked) > 0 {
		notes = append(notes, fmt.Sprintf("the server asked %d question(s) first (%s), answered the least committal way", len(a.asked), strings.Join(a.asked, ", ")))
	}
	if len(a.refused) > 0 {
		msg := fmt.Sprintf("the server wrote %d JSON-RPC request(s) on stdout (%s), which 2026-07-28 forbids (basic/transports/stdio: the server MUST NOT write requests; server-to-client questions are input_required results); not answered", len(a.refused), strings.Join(a.refused, ", "))
		rec.Warnings = append(rec.Warnings, record.Warning{Code: classify.WarnServerRequestOnStream, Message: msg})
	}
	if cerr != nil {
		notes = append(notes, "the classifier stopped at its limit: "+cerr.Error())
	}
	if a.err != nil {
		// The classifier's words are HTTP's; say it the stdio way.
		rec.Reason = "no answer line on the server's stdout: " + a.err.Error()
		if len(a.noise) > 0 {
			rec.Reason = "no JSON-RPC answer line on the server's stdout: " + a.err.Error()
		}
	}
	rec.Note = strings.Join(notes, "; ")
	rec.Probe = withAnswer(member, record.ProbeAnswerNone)
	if a.line != nil {
		rec.Probe = withAnswer(member, record.ProbeAnswerResponse)
	}
	if rec.Probe != nil {
		rec.Probe.Asked = len(a.asked) + len(a.refused)
	}
	return append(recs, rec)
}

// notification sends the notification probe r and shows whether a line
// answers it: MCP says the receiver of a notification MUST NOT send a
// response, and stdio has no 202 to say "accepted". A notification has no
// id to wait for, so a request follows it (followUp) and stdout is read
// until that request's response: a response before it answers the
// notification. The records: one per noise line read meanwhile (the
// probe's), the follow-up's (no probe member: no probe rule judges it),
// then the probe's own, whose Answer is ProbeAnswerSilent when no line
// answered it, ProbeAnswerResponse when one did (the first such line is
// its body), ProbeAnswerNone when the follow-up got no answer either (the
// server did not read on, or is gone).
func (s *stdioServer) notification(ctx context.Context, url string, r client.Request, timeout time.Duration, member *record.Probe) ([]*record.Record, stdioAnswer) {
	line, _ := s.request(r)
	start := time.Now()
	follow := s.followUp()
	fline, fid := s.request(follow)
	var a stdioAnswer
	var recs []*record.Record
	_, werr := s.in.Write(append(bytes.Clone(line), '\n'))
	if werr == nil {
		fstart := time.Now()
		a = s.roundTrip(ctx, fline, false, timeout, fid, fid)
		s.noteUnanswered(follow, fid, a)
		recs = s.records(url, fstart, follow, fline, fid, a, nil)
		for _, rec := range recs[:len(recs)-1] {
			// Noise read while the probe waited is the probe's finding.
			rec.Probe = withAnswer(member, record.ProbeAnswerResponse)
		}
		if f := recs[len(recs)-1]; a.line != nil {
			note := fmt.Sprintf("sent after the notification probe %d to show the server read past it", member.Index)
			if f.Note != "" {
				note = f.Note + "; " + note
			}
			f.Note = note
		}
	}
	cex := &classify.Exchange{Method: r.Method, ProtocolVersion: s.protocol, Stdio: true}
	answer, reason := record.ProbeAnswerSilent, ""
	switch {
	case werr != nil:
		// Not sent, so no follow-up either (and no record of one).
		answer = record.ProbeAnswerNone
		cex.Err = fmt.Errorf("writing the notification to the server's stdin: %w", werr)
	case len(a.stray) > 0:
		answer = record.ProbeAnswerResponse
		cex.Status, cex.Header, cex.BodyBytes = http.StatusOK, http.Header{"Content-Type": {"application/json"}}, a.stray[0]
	case a.line == nil:
		answer = record.ProbeAnswerNone
		cex.Err, cex.RequestSent = fmt.Errorf("no line answered the notification, but the %s sent after it got no answer either (the server may not have read on): %w", follow.Method, a.err), true
	default:
		// Accepted: read as an HTTP notification answered 202 (Notification
		// set, or the classifier reads a request answered with no body).
		cex.Status, cex.Header, cex.Notification = http.StatusAccepted, http.Header{}, true
		reason = fmt.Sprintf("no line answered the notification: the %s sent after it (id %s) was answered first, as MCP wants (a notification gets no response)", follow.Method, fid)
	}
	res, _ := (&classify.Classifier{}).Classify(cex)
	rec := s.base(url, start)
	rec.SetRequest(line)
	rec.SetResult(res)
	pipeReason(rec)
	rec.Status, rec.ContentType, rec.HTTPStatuses = 0, "", []int{}
	rec.Method, rec.ProtocolVersion = r.Method, s.protocol
	rec.Timings.Total = record.Duration(time.Since(start))
	if reason != "" {
		rec.Reason = reason
	}
	if len(a.stray) > 0 {
		rec.Reason = "a line answered the notification, which gets no response: " + rec.Reason
		rec.ResponseBody, rec.ResponseBytes = &record.Body{Text: excerpt(a.stray[0])}, int64(len(a.stray[0]))
		if len(a.stray) > 1 {
			rec.Note = fmt.Sprintf("%d lines answered it before the %s's answer", len(a.stray), follow.Method)
		}
	}
	rec.Probe = withAnswer(member, answer)
	rec.Probe.Asked = len(a.asked) + len(a.refused)
	return append(recs, rec), a
}

// followUp is the request sent after a notification probe: the era's
// cheapest request a server must answer (ping on 2025-11-25; 2026-07-28
// removed ping, and every server MUST implement server/discover).
func (s *stdioServer) followUp() client.Request {
	if s.protocol == wire.Protocol2026 {
		return client.Request{Method: "server/discover", Params: map[string]json.RawMessage{}}
	}
	return client.Request{Method: "ping", Params: map[string]json.RawMessage{}}
}

// withAnswer returns a copy of member with its Answer (nil for nil).
func withAnswer(member *record.Probe, answer string) *record.Probe {
	if member == nil {
		return nil
	}
	p := *member
	p.Answer = answer
	return &p
}

func excerpt(b []byte) string {
	if len(b) > 2048 {
		return string(b[:2048]) + "…"
	}
	return string(b)
}

// runStdio is Run over stdio: start opts.Command, decide the era (see
// stdioEra), list every tool page, send the probes that are not HTTP-only,
// stop the process.
func runStdio(ctx context.Context, opts Options) (rep *Report, err error) {
	switch opts.Protocol {
	case "", client.ProtocolAuto, wire.Protocol2025, wire.Protocol2026:
	default:
		return nil, fmt.Errorf("%w: --protocol %s: must be auto, 2026-07-28 or 2025-11-25", ErrUsage, opts.Protocol)
	}
	name := "stdio:" + filepath.Base(opts.Command[0])
	rep = &Report{URL: name, Seed: opts.Seed, Command: opts.Command}
	s, err := startStdio(opts.Command)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	defer func() { rep.Stopped = s.stop() }()
	emit := func(recs []*record.Record) {
		for _, r := range recs {
			// The rules judge (and quote) the record as it is written.
			r = opts.Redactor.Record(r)
			rep.Records = append(rep.Records, r)
			if opts.OnRecord != nil {
				opts.OnRecord(r)
			}
		}
	}
	// The command line as errors show it: a credential given as a flag's
	// value ("--api-key KEY") masked.
	cmdline := strings.Join(record.Default.Args(opts.Command), " ")
	fail := func(what string, recs []*record.Record, a stdioAnswer) error {
		last := recs[len(recs)-1]
		why := fmt.Sprintf("%s: %s", last.Outcome, last.Reason)
		if s.early > 0 {
			why += "; the server's stdout so far held " + s.earlyText()
		}
		if tail := s.stderr.String(); tail != "" && a.line == nil {
			why += fmt.Sprintf(" (stderr: %q)", record.Scrub(tail))
		}
		return fmt.Errorf("%s of %s: %s", what, cmdline, record.Scrub(why))
	}
	if opts.Protocol != wire.Protocol2025 {
		s.protocol = wire.Protocol2026
		recs, a := s.exchange(ctx, name, client.Request{Method: "server/discover", Params: map[string]json.RawMessage{}}, opts.Timeout, nil)
		era, why := stdioEra(recs[len(recs)-1], a)
		if era == wire.Protocol2025 && opts.Protocol != wire.Protocol2026 {
			// The era probe a legacy server refused, and the probe falls
			// back to initialize: a negotiation step, which report counts
			// apart (record.EraFallback), as the HTTP client's.
			last := recs[len(recs)-1]
			last.EraFallback = true
			last.Decision = &record.Decision{Action: string(retry.Renegotiate), Reason: why + "; initialize on 2025-11-25"}
		}
		emit(recs)
		s.noteEarly(a)
		switch {
		case era == wire.Protocol2026:
			rep.Protocol, rep.EraReason = wire.Protocol2026, "stdio: "+why
		case opts.Protocol == wire.Protocol2026:
			return rep, fmt.Errorf("server/discover of %s on 2026-07-28 (--protocol 2026-07-28: no fallback to initialize): %s", cmdline, why)
		case era == "":
			return rep, fmt.Errorf("server/discover of %s on 2026-07-28: %s", cmdline, why)
		default:
			s.protocol, rep.EraReason = wire.Protocol2025, "stdio: "+why+"; initialize on 2025-11-25"
		}
	}
	if s.protocol == wire.Protocol2025 {
		initParams := map[string]json.RawMessage{
			"protocolVersion": json.RawMessage(`"` + wire.Protocol2025 + `"`),
			"capabilities":    json.RawMessage(`{}`),
			"clientInfo":      mustJSON(client.DefaultClientInfo),
		}
		recs, a := s.exchange(ctx, name, client.Request{Method: "initialize", Params: initParams}, opts.Timeout, nil)
		emit(recs)
		s.noteEarly(a)
		if last := recs[len(recs)-1]; last.Outcome != classify.ResultSuccess {
			return rep, fail("initialize", recs, a)
		}
		var init struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		_ = json.Unmarshal(a.line, &init)
		answered := "stdio: initialize on 2025-11-25, the server answered " + init.Result.ProtocolVersion
		if rep.EraReason != "" {
			answered = rep.EraReason + ", the server answered " + init.Result.ProtocolVersion
		}
		rep.Protocol, rep.EraReason = wire.Protocol2025, answered
		s.exchange(ctx, name, client.Request{Method: "notifications/initialized", Notification: true}, opts.Timeout, nil)
	}
	var tools []client.Tool
	cursor := ""
	for page := 0; ; page++ {
		params := map[string]json.RawMessage{}
		if cursor != "" {
			params["cursor"] = mustJSON(cursor)
		}
		recs, a := s.exchange(ctx, name, client.Request{Method: "tools/list", Params: params}, opts.Timeout, nil)
		emit(recs)
		s.noteEarly(a)
		if last := recs[len(recs)-1]; last.Outcome != classify.ResultSuccess {
			return rep, fail("listing the tools", recs, a)
		}
		var l struct {
			Result struct {
				Tools      []client.Tool `json:"tools"`
				NextCursor string        `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(a.line, &l); err != nil {
			return rep, fmt.Errorf("listing the tools of %s: page %d: %v", name, page, err)
		}
		tools = append(tools, l.Result.Tools...)
		if l.Result.NextCursor == "" || l.Result.NextCursor == cursor || page >= 100 {
			break
		}
		cursor = l.Result.NextCursor
	}
	if s.early > 0 {
		// No probe waited for these lines, so no rule judges them; the
		// report says them all the same (a client that reads stdout as
		// JSON-RPC fails on them).
		rep.ListingWarnings = append(rep.ListingWarnings, StdoutNoise+": before the listing ended, the server's stdout held "+s.earlyText()+" (clients that read stdout as JSON-RPC fail on them)")
	}
	probes, plans := Plan(tools, opts)
	probes = slices.DeleteFunc(probes, func(p Probe) bool { return slices.Contains(httpOnly, p.Kind) })
	rep.Tools, rep.Probes = plans, probes
	rep.UnknownAllow = unknownAllow(tools, opts.Allow)
	var stopped error
	var noise []string // stdout lines that are not JSON-RPC, with the probe waiting
	for i, p := range probes {
		if !wait(ctx, i, opts.Interval) {
			stopped = fmt.Errorf("stopped after %d of %d probes: %w", i, len(probes), ctx.Err())
			rep.Probes, rep.Interrupted = probes[:i], stopped.Error()
			break
		}
		member := &record.Probe{Kind: string(p.Kind), Seed: fmt.Sprint(opts.Seed), Index: p.Index, Property: p.Property, Detail: p.Detail}
		recs, a := s.exchange(ctx, name, p.Request(opts.Seed), opts.Timeout, member)
		judged := len(rep.Records)
		emit(recs)
		if ctx.Err() != nil {
			// Interrupted in flight: written, not judged (as over HTTP).
			stopped = interruptedDuring(i, len(probes), ctx.Err())
			rep.Probes, rep.Interrupted, rep.Records = probes[:i], stopped.Error(), rep.Records[:judged]
			break
		}
		for _, n := range a.noise {
			// Scrubbed before it is quoted: %q's \" hides a quoted value
			// (token="…") from the text patterns.
			noise = append(noise, fmt.Sprintf("probe %d: %q", p.Index, trimTo(opts.Redactor.Scrub(string(n)), 120)))
		}
	}
	tr := judge.NewTrace(name, rep.Records, nil)
	tr.Probe = true
	rep.Checks = judge.Judge(tr)
	for i, c := range rep.Checks {
		switch {
		case c.Verdict == judge.NotApplicable && slices.Contains(httpOnlyRules, c.Rule):
			rep.Checks[i].Evidence = "not applicable on stdio: it has no HTTP layer (no Origin, no MCP-Protocol-Version header, no Accept)"
		case c.Rule == "probe.answer-shape" && c.Verdict == judge.Fail && len(noise) > 0:
			// The line is the evidence (the rule names only the outcome).
			more := ""
			if len(noise) > 3 {
				more = fmt.Sprintf(" and %d more", len(noise)-3)
			}
			rep.Checks[i].Evidence += fmt.Sprintf("; not JSON-RPC on stdout: %s%s", strings.Join(noise[:min(3, len(noise))], "; "), more)
		}
	}
	rep.Grades = Grades(rep.Checks)
	rep.fillTools(opts.FailOn)
	return rep, stopped
}

// httpOnlyRules judge the httpOnly probes.
var httpOnlyRules = []string{"probe.origin", "probe.protocol-version", "probe.protocol-version-missing", "probe.accept"}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func trimTo(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// stdioEra reads the answer to a 2026-07-28 server/discover as
// basic/transports/stdio §Backward Compatibility says, and returns the era
// to speak: a DiscoverResult listing 2026-07-28 is a modern server
// (2026-07-28); one that does not list it gets initialize (2025-11-25). An
// UnsupportedProtocolVersion error is a modern server that does not speak
// 2026-07-28, and the client must not fall back to initialize: the probe,
// which speaks no other modern revision, uses 2025-11-25 only when the
// error lists it, else none (""). Any other error, or no answer, is a
// legacy server (2025-11-25), whatever the error code. why says which.
func stdioEra(last *record.Record, a stdioAnswer) (era, why string) {
	var msg struct {
		Result *struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
		Error *struct {
			Code int64 `json:"code"`
			Data struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		} `json:"error"`
	}
	if a.line == nil || json.Unmarshal(a.line, &msg) != nil {
		return wire.Protocol2025, fmt.Sprintf("server/discover got no answer (%s: %s): a legacy server", last.Outcome, last.Reason)
	}
	switch {
	case msg.Result != nil && slices.Contains(msg.Result.SupportedVersions, wire.Protocol2026):
		return wire.Protocol2026, fmt.Sprintf("server/discover lists %s", strings.Join(msg.Result.SupportedVersions, ", "))
	case msg.Result != nil:
		return wire.Protocol2025, fmt.Sprintf("server/discover lists %s, not 2026-07-28", strings.Join(msg.Result.SupportedVersions, ", "))
	case msg.Error != nil && msg.Error.Code == -32022:
		why := fmt.Sprintf("UnsupportedProtocolVersion, supported %s", strings.Join(msg.Error.Data.Supported, ", "))
		if slices.Contains(msg.Error.Data.Supported, wire.Protocol2025) {
			return wire.Protocol2025, "server/discover: " + why
		}
		return "", why + ": a modern server that speaks no revision the probe does (the spec forbids falling back to initialize)"
	case msg.Error != nil:
		return wire.Protocol2025, fmt.Sprintf("server/discover answered the JSON-RPC error %d: a legacy server", msg.Error.Code)
	}
	return wire.Protocol2025, fmt.Sprintf("server/discover answered %s: a legacy server", last.Outcome)
}

// pipeReason words a stdio record's network failure for a pipe: the
// classifier's reason speaks of an HTTP response, which stdio has none of.
func pipeReason(rec *record.Record) {
	if rec.Network == nil {
		return
	}
	for _, w := range [][2]string{
		{"no HTTP response after the request was sent", "no answer line after the request was written"},
		{"no HTTP response; the request was not fully sent", "the request was not fully written to the server's stdin"},
	} {
		if strings.Contains(rec.Reason, w[0]) {
			rec.Reason = strings.Replace(rec.Reason, w[0], w[1], 1)
			return
		}
	}
}
