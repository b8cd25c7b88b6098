package recorder

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// run is the exchange's finishing goroutine: it classifies the response as
// the client received it (reading the pipe while the response streams),
// waits for the handler to end, and writes the one record of the exchange.
// It starts with the first response bytes, or when the handler ends.
func (rc *Recorder) run(ex *Exchange) {
	defer rc.wg.Done()
	defer rc.inFlight.Add(-1)
	if rc.opts.Sync {
		// begin made ex.rare for the channel: its pointer is not written
		// again. Anything else of ex.rare waits for the handler's end (a
		// finishing goroutine started early runs while the fault layer's
		// tap may still make ex.rare).
		defer close(ex.rare.done)
	}
	var capt *capture
	var res *classify.Result
	var cerr error
	var resume *record.Resume
	refused := false
	var inl *inlineClass
	if !ex.early {
		// (An exchange classified inline never starts its finisher early:
		// the handler ended, and with it the classification.)
		inl = ex.rw.inl
	}
	if inl == nil && rc.opts.Bodies != BodiesNone {
		capt = captures.Get().(*capture)
		*capt = capture{limit: rc.bodyLimit, pieces: capt.pieces[:0]}
	}
	if inl != nil {
		res, cerr = inl.sc.Result()
		capt = inl.capt
		if opensResume(ex) {
			// (The stream's reader ended with the handler: finish kept
			// its last event id and retry.)
			resume = rc.settleResumeAt(ex, res, inl.lastID, inl.hasLastID, inl.retryMs, inl.hasRetry)
		}
		ex.rw.inl = nil
		inl.release()
	} else if ex.status == 0 {
		// (Started by end: no response bytes, so none streamed.)
		res = rc.noResponse(ex)
	} else {
		res, refused, cerr, resume = rc.classifyResponse(ex, capt)
	}
	rc.finish(ex, res, refused, cerr, capt, resume)
	if capt != nil {
		if ex.pipe != nil {
			ex.pipe.keep(nil) // (the reader is done: nothing takes bytes any more)
		}
		capt.release()
		captures.Put(capt)
	}
	ex.releaseBody()
	if ex.pipe != nil {
		ex.releasePipe()
	}
}

// releasePipe gives the exchange's pipe back to the pool once its reader
// and the record are done with it (the handler ended: classifyResponse
// waited for it). The writer's lock orders the swap to donePipe with a
// write the handler would attempt after its end.
func (ex *Exchange) releasePipe() {
	ex.rw.mu.Lock()
	p := ex.pipe
	ex.pipe = donePipe
	ex.rw.mu.Unlock()
	releasePipe(p)
}

// captures holds the captures run made and released, with the array of
// their pieces (an exchange's capture and its growing pieces were garbage
// after every exchange: 80 bytes for a JSON response, about 240 for a
// 64 KiB event stream).
var captures = sync.Pool{New: func() any { return new(capture) }}

// classifyResponse classifies the response as the client receives it
// (reading the pipe while the response streams), then waits for the
// handler to end. It is not inlined into run: its frame (the classifier's
// exchange) is not under finish's, and run's is not under the
// classifier's; the finishing goroutine starts with a small stack, and a
// deeper path copies it on every exchange.
//
// refused reports a client's answer the server refused in a 2xx's body
// (classifyAnswerAck): res is the server's JSON-RPC error then. resume is
// the record's Resume (resume.go): a request's stream that ended
// resumable, a GET stream's event ids and responses.
//
//go:noinline
func (rc *Recorder) classifyResponse(ex *Exchange, capt *capture) (res *classify.Result, refused bool, cerr error, resume *record.Resume) {
	body := ex.bodyReader()
	// An event stream is read by chunks (the pipe's own copies, no
	// second copy) through an event reader whose scanner is the one
	// scan of the stream: it also times the events (eventEnded).
	var events *wire.SSEReader
	if ex.pipe != nil {
		if capt != nil {
			ex.pipe.keep(capt)
		}
		if isEventStream(ex.respHeader.Get("Content-Type")) {
			ex.pipe.timeEvents(ex.eventEnded)
			if ex.msg.IsRPC() {
				events = wire.NewPooledSSEChunkReader(ex.pipe, rc.opts.MaxEventSize)
			} else {
				events = wire.NewSSEChunkReader(ex.pipe, rc.opts.MaxEventSize)
			}
			events.SetBudget(rc.budget)
		}
	}
	if ex.msg.IsRPC() {
		res, refused, cerr = rc.classifyRPC(ex, body, events)
		if opensResume(ex) {
			// (The classifier read a stream without its response to
			// the end: the events' last id is the stream's.)
			resume = rc.settleResume(ex, res, events)
		}
	} else {
		res, resume = rc.plainHTTP(ex, body, events)
	}
	if ex.pipe != nil && (capt != nil && !capt.more || events != nil && ex.wantsEventTimes()) {
		// Keep capturing what the classifier did not read (it stops
		// at a malformed event, and reads 64 KiB of an error body),
		// and timing the events that follow.
		if ex.pipe.chunked {
			events.Drain()
		} else {
			_, _ = io.Copy(io.Discard, ex.pipe)
		}
	}
	if ex.pipe != nil {
		ex.pipe.stop()
	}
	if events != nil {
		events.Recycle()
	}
	if ex.early {
		ex.pipe.waitHandler()
	}
	return res, refused, cerr, resume
}

// classifyRPC is the classifier's verdict on the response to a JSON-RPC
// message, read from body (or events); refused as classifyResponse's.
//
//go:noinline
func (rc *Recorder) classifyRPC(ex *Exchange, body io.Reader, events *wire.SSEReader) (res *classify.Result, refused bool, err error) {
	cl := classify.Classifier{MaxEventSize: rc.opts.MaxEventSize, Budget: rc.budget}
	cl.KeepResponse = ex.msg.Method == "tools/list" || ex.msg.Method == "initialize"
	if events != nil || isEventStream(ex.respHeader.Get("Content-Type")) {
		// A server request on the response's stream: the writer noted
		// it before forwarding it (requestWatch), unless its event was
		// larger than it looks at.
		cl.OnServerRequest = func(msg []byte) {
			if len(msg) > maxWatchedEvent {
				rc.srvReqs.saw(ex.session, msg)
			}
		}
		// (After the response too, as the classification on the
		// forwarding goroutine notes them: inlineClass.)
		cl.OnLateServerRequest = cl.OnServerRequest
	}
	cx := &classify.Exchange{
		Method: ex.msg.Method, ID: idOrNil(&ex.msg), Notification: ex.msg.Kind != wire.MessageRequest,
		ProtocolVersion: ex.protocol, Extensions: ex.msg.Extensions,
		Status: ex.status, Header: ex.respHeader, Body: body, Events: events,
	}
	if ex.msg.Kind == wire.MessageResponse && events == nil && ex.pipe != nil && ex.status >= 200 && ex.status <= 299 && isJSON(ex.respHeader.Get("Content-Type")) {
		return rc.classifyAnswerAck(ex, &cl, cx)
	}
	if events == nil && ex.pipe != nil {
		if b, recycle, reserved, ok := rc.wholeJSON(ex); ok {
			// The bytes the pipe holds, not a copy of them (see wholeJSON).
			cx.Body, cx.BodyBytes = nil, b
			res, err := cl.Classify(cx)
			rc.budget.Release(reserved)
			if recycle != nil {
				putChunk(recycle)
			}
			return res, false, err
		}
	}
	res, err = cl.Classify(cx)
	return res, false, err
}

// classifyAnswerAck classifies the 2xx JSON body a server answered a
// client's answer to a server request with (cx, its body the pipe). The
// spec's acknowledgement is a 202 with no body: a body may be the
// server's refusal, a JSON-RPC error (an unknown id, say), which is read
// as the answer to the client's message would be, and returned with
// refused. Any other body is classified as before (the client's message
// expects no answer: NOTIFICATION_ACCEPTED, with the warning that it got
// a body), as is a body over maxAnswerAck or one whose read failed.
//
//go:noinline
func (rc *Recorder) classifyAnswerAck(ex *Exchange, cl *classify.Classifier, cx *classify.Exchange) (*classify.Result, bool, error) {
	var b []byte
	if w, recycle, reserved, ok := rc.wholeJSON(ex); ok {
		// The bytes the pipe holds, not a copy of them (see wholeJSON).
		b = w
		defer func() {
			rc.budget.Release(reserved)
			if recycle != nil {
				putChunk(recycle)
			}
		}()
	} else {
		r, err := io.ReadAll(io.LimitReader(cx.Body, maxAnswerAck+1))
		if err != nil || len(r) > maxAnswerAck {
			// Not held whole: classified as before, the rest (or the
			// error) read from the pipe after these bytes.
			cx.Body = io.MultiReader(bytes.NewReader(r), cx.Body)
			res, err := cl.Classify(cx)
			return res, false, err
		}
		b = r
	}
	if res, ok := cl.AnswerRefusal(cx, ex.msg.ID, b); ok {
		return res, true, nil
	}
	cx.Body, cx.BodyBytes = nil, b
	res, err := cl.Classify(cx)
	return res, false, err
}

// maxAnswerAck bounds the body of a server's 2xx answer to a client's
// answer that is read for a refusal.
const maxAnswerAck = classify.MaxAnswerAck

// wholeJSON takes the response body from the pipe without a copy, when the
// classifier would read it whole into a buffer of its own and judge that:
// a 2xx application/json response whose Content-Length is the one chunk
// the pipe holds, which ended cleanly, within the classifier's bounds. The
// classifier copied each such body (about 1 KiB per tools/call) that the
// pipe already held. The bytes are taken as Read would take them (the
// capture notes them, and then holds the chunk), and the classifier's
// memory budget is charged what its own read would have reserved, so that
// the verdict, NOT_CLASSIFIED at the budget's edge included, is the one
// the copy gave: when the budget is short, the pipe is left to be read as
// before (whose reservation counts a refusal; this one does not). recycle
// is the chunk to give back once the classification is done (nil when the
// capture holds it); reserved is to be released then.
func (rc *Recorder) wholeJSON(ex *Exchange) (b, recycle []byte, reserved int64, ok bool) {
	if ex.early {
		// The finishing goroutine started while the handler was still
		// writing (startEarly): ex.wrote is the handler's to change until
		// it returns, and a body that filled the pipe past lazyStart is
		// read by the classifier as it arrives.
		return nil, nil, 0, false
	}
	if ex.status < 200 || ex.status > 299 || !isJSON(ex.respHeader.Get("Content-Type")) {
		return nil, nil, 0, false
	}
	n, err := strconv.ParseInt(ex.respHeader.Get("Content-Length"), 10, 64)
	max := rc.opts.MaxEventSize
	if max <= 0 {
		max = wire.DefaultMaxEventSize
	}
	if err != nil || n != ex.wrote || n <= 0 || n > int64(max) {
		return nil, nil, 0, false
	}
	p := ex.pipe
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != io.EOF || len(p.chunks)-p.head != 1 || p.off != 0 || int64(len(p.chunks[p.head].b)) != n || p.onEvent != nil || p.chunked {
		return nil, nil, 0, false
	}
	if !rc.budget.TryReserve(n + 1) {
		return nil, nil, 0, false
	}
	b = p.chunks[p.head].b
	return b, p.take(b, len(b)), n + 1, true
}

// isJSON reports whether a Content-Type is application/json, as the
// classifier reads it.
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true
	}
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "application/json")
}

// eventEnded notes that an event of the response stream ended at stream
// offset end, in bytes flushed to the client at at: the record's time to
// the first event and, with full bodies, the events' arrivals. It runs on
// the exchange's finishing goroutine, which reads the response.
func (ex *Exchange) eventEnded(end int64, at time.Duration) {
	if ex.firstEvent == 0 {
		ex.firstEvent = at
	}
	if ex.rc.opts.Bodies == BodiesFull && len(ex.arrivals) < maxArrivals {
		ex.arrivals = append(ex.arrivals, arrival{off: end, at: at})
	}
}

// wantsEventTimes reports whether the events after those the classifier
// read still give the record a time: the first event's, or full bodies'
// arrivals.
func (ex *Exchange) wantsEventTimes() bool {
	return ex.firstEvent == 0 || ex.rc.opts.Bodies == BodiesFull && len(ex.arrivals) < maxArrivals
}

// noResponse classifies an exchange in which no response headers reached
// the client.
func (rc *Recorder) noResponse(ex *Exchange) *classify.Result {
	var err error
	switch {
	case ex.hijacked:
		err = errHijacked
	case ex.Up.Mirrored:
		err = &classify.WordedError{Text: urlFree(ex.Up.Err), Err: ex.Up.Err}
	case ex.shutdown:
		err = rc.shutErr
	case ex.clientGone:
		err = errClientGone
	case ex.aborted:
		err = errAborted
	default:
		// The handler wrote nothing: net/http answers 200 with no body.
		ex.status = http.StatusOK
		res, _ := (&classify.Classifier{}).Classify(&classify.Exchange{
			Method: ex.msg.Method, ID: idOrNil(&ex.msg), Notification: ex.msg.Kind != wire.MessageRequest,
			ProtocolVersion: ex.protocol, Status: http.StatusOK, Header: http.Header{},
		})
		return res
	}
	// The request was sent on when the upstream leg says so; with no
	// upstream, the handler behind the recorder had it whole.
	sent := ex.Up.Sent.Load() || rc.opts.Upstream == "" && !ex.malformed
	res, _ := (&classify.Classifier{}).Classify(&classify.Exchange{
		Method: ex.msg.Method, ID: idOrNil(&ex.msg), Notification: ex.msg.Kind != wire.MessageRequest,
		ProtocolVersion: ex.protocol, Err: err, RequestSent: sent,
	})
	return res
}

// plainHTTP judges an exchange that is not a JSON-RPC message (GET and
// DELETE on the MCP endpoint, OAuth metadata, a body that is not JSON-RPC)
// at the HTTP layer only. A GET event stream's event ids and the JSON-RPC
// responses it carried are its record's Resume, resume (resume.go).
func (rc *Recorder) plainHTTP(ex *Exchange, body io.Reader, events *wire.SSEReader) (res *classify.Result, resume *record.Resume) {
	if ex.status < 200 || ex.status > 299 {
		res, _ := (&classify.Classifier{}).Classify(&classify.Exchange{
			Method: ex.msg.Method, Status: ex.status, Header: ex.respHeader, Body: body,
		})
		_, _ = io.Copy(io.Discard, body)
		return res, nil
	}
	res = &classify.Result{Status: ex.status}
	res.SetContentType(ex.respHeader.Get("Content-Type"))
	what := fmt.Sprintf("HTTP %d to %s", ex.status, ex.in.Method)
	var err error
	if isEventStream(res.ContentType()) {
		sse := &classify.SSEDetails{}
		rd := events
		if rd == nil {
			rd = wire.NewSSEReader(body, rc.opts.MaxEventSize)
			rd.SetBudget(rc.budget)
			defer rd.Release()
		}
		for {
			ev, rerr := rd.Next()
			if sk := (*wire.SkippedEventError)(nil); errors.As(rerr, &sk) {
				// Only counted here: over the limit or the budget, it is
				// read through and not parsed.
				sse.Events++
				sse.Skipped++
				if ex.pipe != nil && ex.pipe.eager && rc.opts.StreamSkipped != nil {
					rc.opts.StreamSkipped(ex, sk, sse.Events)
				}
				continue
			}
			if rerr != nil {
				if rerr != io.EOF && !errors.As(rerr, new(*wire.UnterminatedEventError)) {
					err = rerr
				}
				break
			}
			sse.Events++
			if wire.IsServerRequest(ev.Type, ev.Data) {
				// The classifier's rule (an event of another type, or a
				// request without jsonrpc "2.0", is none).
				sse.Requests++
				if len(ev.Data) > maxWatchedEvent {
					// (A smaller one the writer noted: requestWatch.)
					rc.srvReqs.saw(ex.session, ev.Data)
				}
			} else if m := wire.ParseMessage(ev.Data); m.Kind == wire.MessageNotification {
				sse.Notifications++
			} else if m.Kind == wire.MessageResponse && ex.pipe != nil && ex.pipe.eager {
				rc.opts.StreamMessage(ex, ev.Data, &m)
			} else if m.Kind == wire.MessageResponse && ex.in.Method == http.MethodGet {
				// A 2025-11-25 GET stream's response: the rest of a
				// request's stream the GET resumed (resume.go).
				resume = rc.streamResponse(ex, resume, ev.Data, &m, rd)
			}
		}
		if ex.in.Method == http.MethodGet && (ex.pipe == nil || !ex.pipe.eager) {
			resume = rc.endGETStream(ex, resume, rd)
		}
		sse.Comments = rd.Comments
		_, _ = io.Copy(io.Discard, body)
		sse.End = "eof"
		if err != nil {
			sse.End = "error: " + err.Error()
		}
		res.SetSSE(sse)
		res.BodyBytes = rd.Bytes
		what += fmt.Sprintf(", an event stream of %d event(s)", sse.Events)
	} else {
		n, rerr := io.Copy(io.Discard, body)
		res.BodyBytes, err = n, rerr
	}
	if err != nil && !errors.Is(err, errClientGone) && !errors.Is(err, rc.shutErr) {
		res.Outcome = classify.NetworkError
		res.SetNetwork(&classify.NetworkDetails{Error: err.Error(), Phase: "body", RequestSent: true, Cause: classify.NetCauseOf(err)})
		res.Reason = what + ", cut: " + err.Error()
	} else {
		// HTTP_SUCCESS, not RESULT_SUCCESS: no method returned a
		// result (a GET stream carries no response), and no layer above
		// the HTTP exchange was read.
		res.Outcome = classify.HTTPSuccess
		res.Reason = what + "; not a JSON-RPC exchange, judged at the HTTP layer only"
		if resume != nil && len(resume.Responses) > 0 {
			res.Reason += fmt.Sprintf("; it carried %d JSON-RPC response(s), each judged in resume.responses", len(resume.Responses)+resume.MoreResponses)
		}
	}
	return res, resume
}

// capture keeps the first limit bytes the classifier reads from the pipe,
// for the record. It copies little while the response streams: the pipe's
// chunks are the recorder's own copies of what the client received and are
// never changed, so it keeps references to them (pieces), and the one copy
// is the record's text, made only when the body mode records it. Only the
// chunk that crosses the limit is copied (own, at most limit bytes), so that
// a large chunk is not held for a few of its bytes, and so are the chunks
// under minPooledChunk after the first piece (into pieces of its own,
// tail): a response that
// trickles in small flushes (keep-alives, a slow upstream) held by
// reference would keep an allocation and a slice header alive per chunk,
// up to 32 times its bytes for 1-byte flushes. What it keeps alive is thus
// at most about twice limit (a pooled chunk's buffer is at most twice its
// bytes; TestCaptureMemoryBound).
type capture struct {
	pieces [][]byte
	own    []byte // the part of the chunk that crosses the limit
	n      int    // bytes kept
	limit  int
	more   bool // bytes past the limit were read
	tail   bool // the last piece is the capture's own copy of small chunks
}

// smallCopy is the size of the capture's copies of small chunks, each
// filled before the next is made.
const smallCopy = 512

// add notes b, the next bytes the classifier read: the start of what is
// left of the pipe's head chunk, rest bytes before this read. same reports
// that the head chunk's earlier bytes were the previous add's; small that
// the chunk is under minPooledChunk, so that its bytes are copied. It
// reports whether the capture now holds the head chunk (which release
// recycles).
func (c *capture) add(b []byte, rest int, same, small bool) (held bool) {
	room := c.limit - c.n
	if len(b) > room {
		c.more = true
		b = b[:max(room, 0)]
	}
	if len(b) == 0 {
		return false
	}
	c.n += len(b)
	switch {
	case c.own != nil || rest > room:
		// Every later byte kept is this chunk's: it is the last piece.
		if c.own == nil {
			c.own = make([]byte, 0, room)
		}
		c.own = append(c.own, b...)
		return false
	case same && len(c.pieces) > 0 && !c.tail:
		// The bytes right after the last piece, in the same chunk.
		last := c.pieces[len(c.pieces)-1]
		c.pieces[len(c.pieces)-1] = last[:len(last)+len(b)]
	case small && len(c.pieces) > 0:
		// A small chunk after the first piece (a body of one small chunk
		// costs no copy) is copied after the bytes before it, also in
		// parts when it is read in parts.
		if k := len(c.pieces) - 1; c.tail && len(c.pieces[k])+len(b) <= cap(c.pieces[k]) {
			c.pieces[k] = append(c.pieces[k], b...)
		} else {
			c.pieces = append(c.pieces, append(make([]byte, 0, min(room, max(len(b), smallCopy))), b...))
			c.tail = true
		}
		return false
	default:
		// A chunk's first bytes (the capture is given the pipe before its
		// first read): the piece starts where the chunk's buffer does.
		c.pieces = append(c.pieces, b)
		c.tail = false
	}
	return true
}

// release recycles the chunks the capture holds; call it once the record
// was made (text copied them), and use the capture no more.
func (c *capture) release() {
	for i, p := range c.pieces {
		putChunk(p[:0:cap(p)])
		c.pieces[i] = nil
	}
	c.pieces, c.own, c.n = c.pieces[:0], nil, 0
}

// text returns the bytes kept.
func (c *capture) text() string {
	var sb strings.Builder
	sb.Grow(c.n)
	for _, p := range c.pieces {
		sb.Write(p)
	}
	sb.Write(c.own)
	return sb.String()
}

// cancelled says what a disconnect cancelled, in notes.
func (rc *Recorder) cancelled() string {
	if rc.opts.Upstream != "" {
		return "the " + rc.opts.Upstream + " request was cancelled"
	}
	return "the request was cancelled"
}

// finish builds the exchange's record, updates the session state, calls
// the Finish hook, and writes the record.
//
// refused marks a client's answer the server refused in a 2xx's body: res
// is the server's JSON-RPC error (classifyAnswerAck).
func (rc *Recorder) finish(ex *Exchange, res *classify.Result, refused bool, cerr error, capt *capture, resume *record.Resume) {
	in := ex.in
	rec := records.Get().(*record.Record)
	*rec = record.Record{
		Kind:            record.KindExchange,
		Time:            ex.start,
		Client:          ex.client,
		ProtocolVersion: ex.protocol,
		Scenario:        ex.scenario,
		HTTPMethod:      in.Method,
		URL:             ex.url,
		RequestHeaders:  in.Header,
		ResponseHeaders: ex.respHeader,
		Session:         ex.session,
		Conn:            connOf(ex.in),
		Status:          ex.status,
		HTTPStatuses:    []int{ex.status},
	}
	if in.Method == http.MethodPost {
		rec.PostCount = 1
	}
	// A request mcpdiag probe sent on purpose says so in its header.
	rec.Probe = record.ProbeFromHeader(in.Header)
	if rc.opts.FaultScenario {
		// With fault injection, the scenario is what fired on this request.
		rec.Scenario = ex.faultOf().FiredString()
	}
	if ex.rare != nil {
		rec.Fault, rec.Params = ex.rare.fault, ex.rare.params
	}
	if rec.Session == "" && ex.respHeader != nil {
		rec.Session = ex.respHeader.Get("Mcp-Session-Id")
	}
	if ex.reqComplete && ex.msg.Kind != wire.MessageEmpty {
		rec.SetMessage(&ex.msg)
	} else if ex.parsedHead() {
		rec.SetMessageHead(&ex.msg)
	}
	method, protocol := rec.Method, rec.ProtocolVersion
	if ex.msg.Kind == wire.MessageResponse || ex.msg.Kind == wire.MessageInvalid && !ex.parsedHead() || ex.msg.Kind == wire.MessageBatch || ex.msg.Kind == wire.MessageEmpty {
		method = ""
	}
	answered := false // a client's answer the server accepted, judged as an answer
	waitExpired := false
	if ex.msg.Kind == wire.MessageResponse {
		// A client's answer to a server request: its record names the
		// method it answers (when a stream of the session carried the
		// request) and, once the server accepted it, is judged as the
		// answer, as the stdio proxy judges the answer line.
		rec.ClientAnswer = true
		var noted bool
		method, noted = rc.srvReqs.answeredOK(ex.session, ex.msg.ID)
		if !noted {
			// The request may be in a piece of a stream of the session
			// that the client got before its classifier read it
			// (pieceWatch): wait for the pieces in flight, then look
			// again.
			waitExpired = rc.pieces.wait(ex.session)
			method, _ = rc.srvReqs.answeredOK(ex.session, ex.msg.ID)
		}
		// Judged as mcpdiag call judges its own answers
		// (classify.JudgeClientAnswer): accepted (a 202, or another 2xx
		// with no body), as the answer it is; refused in a 2xx's body, as
		// the server's refusal (AnswerRefused), the id the answer's.
		a := classify.ClientAnswer{Method: method, ID: ex.msg.ID, Protocol: protocol, Status: ex.status, ResponseBytes: ex.wrote}
		if ex.reqComplete {
			a.Answer = ex.reqBody
		}
		res, answered = classify.JudgeClientAnswer(&a, res, refused)
		rec.AnswerRefused = refused
	}
	rec.SetResult(res)
	rec.Method, rec.ProtocolVersion = method, protocol
	if answered {
		rec.Status = ex.status
	}
	if n := ex.reqBytes.Load(); n > 0 {
		rec.RequestBytes = n
	} else if ex.reqComplete {
		rec.RequestBytes = int64(len(ex.reqBody))
	}
	rec.ResponseBytes = ex.wrote
	rec.Timings = record.Timings{
		Headers:    record.Duration(ex.headersAt),
		FirstEvent: record.Duration(ex.firstEvent),
		Total:      record.Duration(ex.endAt),
	}

	var notes []string
	if ex.parsedHead() {
		notes = append(notes, headNote(&ex.msg, len(ex.reqBody), rc.passedOn()))
	}
	if waitExpired && method == "" {
		notes = append(notes, fmt.Sprintf("the method this answer answers is not known: a stream of its session was still writing a piece to a client that read nothing for %s, and its request may be in that piece", answerWaitLimit))
	}
	switch ex.msg.Kind {
	case wire.MessageResponse:
		notes = append(notes, "the client's response to a server request")
	case wire.MessageBatch:
		notes = append(notes, "a JSON-RPC batch; judged at the HTTP layer only")
	case wire.MessageInvalid:
		if ex.malformed {
			notes = append(notes, fmt.Sprintf("%s-generated: the request body is malformed (%s); mcpdiag %s answered 400 itself, as a server would, and did not pass the request on", rc.noun, ex.reqErr, rc.noun))
		} else if ex.parsedHead() {
			// headNote said what its head holds.
		} else if in.Method == http.MethodPost {
			notes = append(notes, "the request body is not a JSON-RPC message")
		}
	}
	up := &ex.Up
	if up.ProxyError != "" {
		rc.stats.upstreamErrors.Add(1)
		cause, word := up.Err, classify.NetCauseOf(up.Err)
		if cause == nil {
			cause, word = errors.New("unknown"), classify.NetOther
		}
		rec.Flags.Add(up.Flag)
		notes = append(notes, fmt.Sprintf("%s-generated: mcpdiag %s answered %d itself because the %s failed before responding (%s, Proxy-Status error=%s)", rc.noun, rc.noun, ex.status, rc.opts.Upstream, up.Flag, up.ProxyError))
		rec.Network = &record.Network{Error: urlFree(cause), Phase: "before-response", RequestSent: up.Sent.Load(), Timeout: ex.status == http.StatusGatewayTimeout, Cause: word}
	}
	if ex.rare != nil && ex.rare.refused != "" {
		notes = append(notes, ex.rare.refused)
	}
	if up.Mirrored {
		rc.stats.upstreamErrors.Add(1)
		rec.Flags.Add(up.Flag)
		notes = append(notes, fmt.Sprintf("the %s closed the connection before any response (%s, connection_terminated); the %s dropped the client's connection the same way", rc.opts.Upstream, up.Flag, rc.noun))
	}
	if ex.upReset {
		rc.stats.upstreamResets.Add(1)
		rec.Flags.Add(record.FlagUR)
		notes = append(notes, fmt.Sprintf("%s reset after the response started (UR): %s; the client received the cut response (%d bytes)", rc.opts.Upstream, urlFree(up.BodyErr), ex.wrote))
	}
	// A client that stops reading once the response arrived (as the
	// diagnostic client does) is not a failure; nor is an exchange whose
	// response arrived whole before the shutdown closed the stream the
	// server left open a cut one (SD): its record is the response's, and
	// report judges it (a JSON-RPC error there is the server's failure).
	// What the handler wrote after the client was seen gone (responseWriter.gone) is
	// not in res: a response written into the closed connection was not
	// received, and the exchange reads as the cut one it was.
	afterResponse := ex.clientGone && res != nil && res.SSE() != nil && res.SSE().Terminal
	if ex.clientGone {
		switch {
		case ex.shutdown && afterResponse:
			notes = append(notes, fmt.Sprintf("the %s shut down after the response arrived whole (%d bytes): it closed the stream the %s had left open", rc.noun, ex.wrote, orWord(rc.opts.Upstream, "handler")))
		case ex.shutdown:
			// Counted when written (Write), by what report makes of the
			// record: cut, or closed with its verdict.
			rec.Flags.Add(record.FlagSD)
			notes = append(notes, fmt.Sprintf("the %s shut down after %d response bytes; %s", rc.noun, ex.wrote, rc.cancelled()))
		case ex.status == 0:
			rc.stats.clientGone.Add(1)
			rec.Flags.Add(record.FlagDC)
			notes = append(notes, "client disconnected (DC) before the response; "+rc.cancelled())
		case afterResponse:
			notes = append(notes, fmt.Sprintf("the client closed the stream after receiving the response (%d bytes); the %s stream was cancelled", ex.wrote, orWord(rc.opts.Upstream, "response")))
		default:
			rc.stats.clientGone.Add(1)
			rec.Flags.Add(record.FlagDC)
			notes = append(notes, fmt.Sprintf("client disconnected (DC) after %d response bytes; %s", ex.wrote, rc.cancelled()))
		}
		if ex.protocol == classify.Protocol2026 {
			notes[len(notes)-1] += " (in 2026-07-28 a disconnect cancels the request)"
		}
		if ex.rare != nil && ex.rare.late > 0 {
			// (ex.wrote counts only the bytes written before: the
			// classifier judged the response as the client got it.)
			notes = append(notes, fmt.Sprintf("the handler wrote %d more bytes after the client left; they were not delivered", ex.rare.late))
		}
		if listenClosed(ex, res) {
			// The subscription's normal end, not a cut response.
			rec.Outcome, rec.Layer, rec.Network = classify.HTTPSuccess, classify.HTTPSuccess.Layer(), nil
			events := 0
			if res.SSE() != nil {
				events = res.SSE().Events
			}
			rec.Reason = fmt.Sprintf("the client closed its subscriptions/listen stream after %d event(s), which is how a subscription ends: MCP 2026-07-28 sends no response then (SubscriptionsListenResult only when the server tears the subscription down)", events)
		}
	}
	if ex.hijacked {
		rec.Flags.Add(record.FlagHJ)
		notes = append(notes, "a handler took over (hijacked) the connection; its raw bytes were not recorded")
	}
	if ex.aborted {
		rec.Flags.Add(record.FlagAB)
		notes = append(notes, fmt.Sprintf("the handler aborted the response after %d bytes", ex.wrote))
	}
	if ex.respCopy != nil && len(ex.respCopy.invalid) > 0 {
		invalid := ex.respCopy.invalid
		sort.Strings(invalid)
		notes = append(notes, fmt.Sprintf("the response has header fields with invalid names (%s): net/http does not send them, so the client did not receive them", strings.Join(quoteAll(invalid), ", ")))
	}
	if f := ex.faultOf().FiredString(); f != "" {
		rec.Flags.Add(record.FlagFI)
		notes = append(notes, fmt.Sprintf("fault injected (FI): %s (seed %d)", f, ex.rare.fault.Seed))
	}
	if res != nil && res.Outcome == classify.NotClassified {
		rc.stats.notClassified.Add(1)
		notes = append(notes, fmt.Sprintf("the response was %s to the client untouched (%d bytes); only its classification was given up", rc.passedOn(), ex.wrote))
	} else if cerr != nil {
		// Classify reports its limits as NOT_CLASSIFIED; anything else is
		// named as it is.
		notes = append(notes, "the classifier failed: "+cerr.Error())
	}

	rec.Resume = resume
	rc.bodies(ex, rec, capt)
	rc.rememberSession(ex, rec, res)
	if len(ex.arrivals) > 0 {
		rec.SSEArrivals = make([]record.Arrival, len(ex.arrivals))
		for i, a := range ex.arrivals {
			rec.SSEArrivals[i] = record.Arrival{End: a.off, At: a.at}
		}
	}
	rec.Note = strings.Join(notes, "; ")

	var after []*record.Record
	release, hold := true, false
	if rc.opts.Finish != nil {
		f := &Finished{Exchange: ex, Record: rec, Result: res,
			ClientGone: ex.clientGone && !afterResponse && !ex.shutdown, UpstreamReset: ex.upReset}
		after = rc.opts.Finish(f)
		release, hold = f.ReleaseRecord && !f.Hold, f.Hold
	}
	rc.stats.exchanges.Add(1)
	if !hold {
		rc.Write(rec)
	}
	for _, r := range after {
		rc.Write(r)
	}
	if _, ok := rc.opts.Records.(recordFreeSink); ok && release {
		putRecord(rec)
		ex.releaseHeader()
	}
}

// records holds the exchange records finish made and put back: an
// exchange's record (about 900 bytes) went to the collector after every
// exchange, when the Finish hook and the Sink keep nothing of it.
var records = sync.Pool{New: func() any { return new(record.Record) }}

// putRecord gives rec back to records; nothing may use it afterwards.
func putRecord(rec *record.Record) {
	if poisonRecycled {
		*rec = poisonedRecord
	}
	if countReused != nil {
		countReused.Add(1)
	}
	records.Put(rec)
}

// countReused counts the records given back, when a test sets it.
var countReused *atomic.Int64

// poisonedRecord is what a record given back holds when the tests poison
// what is recycled: a use of it after putRecord shows.
var poisonedRecord = record.Record{Kind: "poisoned", ID: "poisoned", Method: "poisoned", Tool: "poisoned", URL: "poisoned",
	Client: "poisoned", Session: "poisoned", Reason: "poisoned", Status: 999, HTTPStatuses: []int{999}}

// listenClosed reports a subscriptions/listen request whose event stream
// its client closed (not the owner's shutdown) before any response: for a
// long-lived subscription that is how it ends, and no response is due.
func listenClosed(ex *Exchange, res *classify.Result) bool {
	return ex.clientGone && !ex.shutdown && ex.msg.Kind == wire.MessageRequest && ex.msg.Method == "subscriptions/listen" &&
		ex.status >= 200 && ex.status <= 299 && res != nil && res.Outcome == classify.StreamIncomplete
}

// passedOn says what the recorder's owner did with a request and its
// response, in notes: "forwarded" in front of an upstream, else "passed on".
func (rc *Recorder) passedOn() string {
	if rc.opts.Upstream != "" {
		return "forwarded"
	}
	return "passed on"
}

// orWord returns a, or b when a is empty.
func orWord(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// bodies puts the request and response bodies into rec, per the body mode.
func (rc *Recorder) bodies(ex *Exchange, rec *record.Record, capt *capture) {
	mode := rc.opts.Bodies
	if mode == BodiesNone || capt == nil {
		return
	}
	if mode == BodiesAll || mode == BodiesFull {
		if len(ex.reqBody) > 0 {
			b := ex.reqBody[:min(len(ex.reqBody), rc.bodyLimit)]
			rec.RequestBody = &record.Body{Text: string(b), Truncated: len(b) < len(ex.reqBody) || !ex.reqComplete}
		}
	}
	if mode == BodiesErrors && rec.Outcome.Success() {
		return
	}
	if capt.n > 0 || capt.more {
		rec.ResponseBody = &record.Body{Text: capt.text(), Truncated: capt.more}
	}
}

// rememberSession keeps the client and negotiated version of a 2025-11-25
// session for its later requests, and forgets a deleted session.
func (rc *Recorder) rememberSession(ex *Exchange, rec *record.Record, res *classify.Result) {
	if ex.status < 200 || ex.status > 299 {
		return
	}
	switch {
	case ex.msg.Method == "initialize" && rec.Session != "":
		info := sessionInfo{client: ex.client, protocol: ex.protocol}
		if res != nil && len(res.Response()) > 0 {
			if r, ok := wire.Field(res.Response(), "result"); ok {
				if v, ok := wire.Field(r, "protocolVersion"); ok {
					if s, ok := wire.StringValue(v); ok {
						info.protocol = s
					}
				}
			}
		}
		rc.sessions.put(rec.Session, info)
	case ex.in.Method == http.MethodDelete && ex.session != "":
		rc.sessions.del(ex.session)
		rc.resumes.dropSession(ex.session)
	}
}

// urlFree is an error's text without the URL a *url.Error adds (it may
// carry credentials, and the record has the URL already).
func urlFree(err error) string {
	if err == nil {
		return ""
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// headNote says of a request body over the parse limit (begin read limit
// bytes of it and found more) that it was passed on whole, and what its
// head (ParseMessageHead) said: the method, the tool and the id read from
// it, or that the id, or everything, lies past it, so that the answer is
// judged at the HTTP layer only.
func headNote(m *wire.Message, limit int, passed string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the request body is larger than %d bytes; it was %s whole and parsed only as far as that", limit, passed)
	switch {
	case m.Method == "":
		b.WriteString(" (no method in it), so the answer is judged at the HTTP layer only")
		return b.String()
	case m.Kind == wire.MessageRequest:
		fmt.Fprintf(&b, ": method %s", m.Method)
		if m.Tool != "" {
			fmt.Fprintf(&b, ", tool %s", m.Tool)
		}
		b.WriteString(" and id read from its head (its arguments unread)")
	default:
		fmt.Fprintf(&b, ": method %s", m.Method)
		if m.Tool != "" {
			fmt.Fprintf(&b, " and tool %s", m.Tool)
		}
		b.WriteString(" read from its head; its id, if any, lies past it, so the answer is judged at the HTTP layer only")
	}
	return b.String()
}
