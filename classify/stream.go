package classify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mcpdiag/mcpdiag/wire"
)

// stream classifies a text/event-stream response event by event. Memory is
// bounded by the largest event, not by the stream.
//
// Its loop is small: the work of an event is streamEvent's, and the rare
// paths (a skipped event, the end of the stream, the stops at an error)
// are functions of their own, so that the frames under the fast path
// (stream, streamEvent, fastToolCall, fastScan) stay small: the recorder
// classifies on a goroutine that starts with a small stack, and a path
// deeper than it copies the stack on every exchange.
func (c *Classifier) stream(r *Result, ex *Exchange, body io.Reader) error {
	st := streamState{sse: &SSEDetails{}}
	r.moreRare().sse = st.sse
	// Nothing of an event is kept past its use (the result copies what it
	// keeps), so the reader's buffers can come from and go back to wire's
	// pools.
	rd := ex.Events
	own := rd == nil
	if own {
		rd = c.ownReader(body)
	}
	defer c.streamDone(r, rd, st.sse, own)
	for {
		data, typ, err := nextEvent(rd)
		if err != nil {
			if stop, serr := c.streamError(r, ex, rd, &st, err); stop {
				return serr
			}
			continue
		}
		if stop, serr := c.streamEvent(r, ex, &st, data, typ); stop {
			return serr
		}
	}
}

// ownReader is the event reader over body of a stream that was given none.
//
//go:noinline
func (c *Classifier) ownReader(body io.Reader) *wire.SSEReader {
	rd := wire.NewPooledSSEReader(body, c.maxSize())
	rd.SetBudget(c.Budget)
	return rd
}

// nextEvent is rd.Next's event data and type (the Event is this frame's,
// not stream's).
//
//go:noinline
func nextEvent(rd *wire.SSEReader) (data []byte, typ string, err error) {
	ev, err := rd.Next()
	return ev.Data, ev.Type, err
}

// streamState is what stream knows of the events so far.
type streamState struct {
	sse      *SSEDetails
	terminal bool
	otherID  string
	// unread is an event before the response that was read through
	// without being parsed and may have been the response: the verdict is
	// then unknown, whatever follows.
	unread                                                                         *NotClassifiedDetails
	warnedAfter, warnedEmpty, warnedType, warnedRequest, warnedOther, warnedUnread bool
	// namedAfter: a server request after the response has been named in
	// a message-after-terminal warning.
	namedAfter bool
	// warnedSecond: a second response with the response's id has been
	// named (second-response), once per stream.
	warnedSecond bool
}

// streamDone notes what the reader counted, and recycles a reader stream
// made itself.
//
//go:noinline
func (c *Classifier) streamDone(r *Result, rd *wire.SSEReader, sse *SSEDetails, own bool) {
	sse.Comments = rd.Comments
	r.BodyBytes = rd.Bytes
	if own {
		rd.Recycle()
	}
}

// streamError handles what Next returned instead of an event: an event
// read through (the stream goes on) or the end of the stream. stop reports
// that the classification is over (with err, stream's error).
//
//go:noinline
func (c *Classifier) streamError(r *Result, ex *Exchange, rd *wire.SSEReader, st *streamState, err error) (stop bool, _ error) {
	sse := st.sse
	if err == io.EOF {
		// The clean end of every stream: no errors.As, whose targets
		// (streamCut's) are two allocations.
		sse.End = "eof"
	} else if stop, done, serr := c.streamCut(r, ex, st, err); done {
		return stop, serr
	}
	if st.terminal {
		return true, nil
	}
	if st.unread != nil {
		return true, c.notClassified(r, st.unread)
	}
	if st.otherID != "" {
		r.Outcome = InvalidEnvelope
		r.Reason = fmt.Sprintf("the stream ended without a response for id %s; it carried a response for id %s instead", ex.ID.String(), st.otherID)
		if r.JSONRPC() == nil {
			// The other id as a fact (a record's responseId), as
			// for a JSON body answering with another id.
			r.SetJSONRPC(&JSONRPCDetails{ID: wire.IDFromRaw([]byte(st.otherID))})
		}
		return true, nil
	}
	r.Outcome = StreamIncomplete
	switch {
	case sse.End != "eof":
		r.Reason = "the stream broke before the response arrived: " + err.Error()
	case rd.Bytes == 0:
		r.Reason = "the event stream is empty: it ended before any event"
	case sse.Events == 0 && rd.Comments > 0:
		r.Reason = fmt.Sprintf("the stream carried only comments (%d keep-alives) and ended before the response", rd.Comments)
	default:
		r.Reason = fmt.Sprintf("the stream ended after %d event(s) without the response", sse.Events)
	}
	return true, nil
}

// streamCut is streamError's handling of what is not the stream's clean
// end: a skipped event (done, not stop), an unterminated event (done), or
// a read error, whose End it notes, leaving the rest to streamError (not
// done). Its errors.As targets escape, so they are made only here.
func (c *Classifier) streamCut(r *Result, ex *Exchange, st *streamState, err error) (stop, done bool, _ error) {
	sse := st.sse
	// The targets of errors.As are this function's: it runs once per
	// skipped event and once at a cut end.
	var skipped *wire.SkippedEventError
	var unterminated *wire.UnterminatedEventError
	if errors.As(err, &skipped) {
		sse.Events++
		sse.Skipped++
		switch {
		case st.terminal:
			sse.AfterTerminal++
			if !st.warnedAfter {
				st.warnedAfter = true
				r.warn(WarnMessageAfterTerminal, "event %d arrived after the response", sse.Events)
			}
		case st.unread != nil:
		default:
			switch kind, id := c.skippedKind(ex, skipped.Head); kind {
			case skippedNotResponse:
				if !st.warnedUnread {
					st.warnedUnread = true
					r.warn(WarnEventNotRead, "event %d (%d bytes) was read through, not parsed: %s; it starts as a request or notification, not a response", sse.Events, skipped.Length, limitText(skippedDetails(skipped, sse.Events)))
				}
			case skippedOtherResponse:
				if st.otherID == "" {
					st.otherID = id
				}
				if !st.warnedOther {
					st.warnedOther = true
					r.warn(WarnResponseForOtherID, "event %d is a response for id %s, not %s; skipped", sse.Events, id, ex.ID.String())
				}
			default:
				st.unread = skippedDetails(skipped, sse.Events)
			}
		}
		return false, true, nil
	}
	switch {
	case errors.As(err, &unterminated):
		sse.Unterminated = true
		sse.End = "unterminated-event"
		if st.terminal {
			if !st.warnedAfter {
				r.warn(WarnMessageAfterTerminal, "the stream ends with an unterminated event after the response")
			}
			return true, true, nil
		}
		if st.unread != nil {
			return true, true, c.notClassified(r, st.unread)
		}
		r.Outcome = StreamIncomplete
		r.Reason = "the stream ended inside an event that lacks its terminating blank line (WHATWG: an unterminated event is not dispatched)"
		switch {
		case unterminated.Skipped:
			r.Reason += "; that event was over the classifier's limit, and it is not delivered whatever it held"
		case c.wouldBeResponse(ex, unterminated.Data):
			r.Reason += "; that event held the response, which a conformant client never sees"
		}
		return true, true, nil
	default:
		sse.End = "error: " + err.Error()
	}
	return false, false, nil
}

// streamEvent classifies the next dispatched event (its data and type);
// stop reports that the classification is over (with err, stream's
// error).
//
//go:noinline
func (c *Classifier) streamEvent(r *Result, ex *Exchange, st *streamState, data []byte, typ string) (stop bool, err error) {
	sse := st.sse
	sse.Events++
	if st.terminal {
		sse.AfterTerminal++
		first := !st.warnedAfter
		st.warnedAfter = true
		if (!st.namedAfter || c.OnLateServerRequest != nil) && wire.IsServerRequest(typ, data) {
			if c.OnLateServerRequest != nil {
				c.OnLateServerRequest(data)
			}
			if !st.namedAfter {
				// Named, not counted in Requests (those came before
				// the answer, as part of the exchange): a reader learns
				// that a request came, and that it was no part of this
				// answer.
				st.namedAfter = true
				afterRequest(r, data, sse.Events, first)
				return false, nil
			}
		}
		if first {
			warnEvent(r, WarnMessageAfterTerminal, "event %d arrived after the response", sse.Events)
		}
		if !st.warnedSecond && secondResponse(r, data) {
			// Once per stream: a hostile server must not grow the
			// result with every event.
			st.warnedSecond = true
			r.warnText(WarnSecondResponse, fmt.Sprintf("event %d is a second response for id %s (the response was event %d): the server answered the request twice; the verdict is the first answer's",
				sse.Events, r.JSONRPC().ID.String(), sse.TerminalEvent))
		}
		return false, nil
	}
	if st.unread != nil {
		// No verdict can come from here on; server requests are still
		// handed on (a client must answer them), and the stream is
		// read to its end, or to the response for a client.
		if c.afterUnread(ex, typ, data, sse) {
			sse.End = "stopped-at-terminal"
			return true, c.notClassified(r, st.unread)
		}
		return false, nil
	}
	if !wire.EventCarriesMessage(typ) {
		if !st.warnedType {
			st.warnedType = true
			r.warnText(WarnUnknownEventType, fmt.Sprintf("event %d has type %q and was ignored", sse.Events, typ))
		}
		return false, nil
	}
	if len(data) == 0 {
		if r.Protocol() == Protocol2026 && !st.warnedEmpty {
			st.warnedEmpty = true
			warnEvent(r, WarnEmptyEvent, "event %d has empty data", sse.Events)
		}
		return false, nil
	}
	if !c.noFastPath && c.fastToolCall(r, ex, data, true) {
		// The response, judged in one pass as the general path below
		// would judge it.
		st.terminal = true
		sse.Terminal = true
		sse.TerminalEvent = sse.Events
		if c.StopAtTerminal {
			sse.End = "stopped-at-terminal"
			return true, nil
		}
		return false, nil
	}
	if i := wire.SkipSpace(data, 0); i < len(data) && data[i] == '{' {
		return c.streamMessage(r, ex, st, data, i)
	}
	if !wire.Valid(data) {
		return true, stopEvent(r, MalformedJSON, "the data of event %d is not valid JSON", sse)
	}
	if wire.Kind(data) == '[' {
		return true, stopEvent(r, InvalidEnvelope, "event %d holds a JSON array (a batch); MCP messages are single objects", sse)
	}
	return true, stopEvent(r, InvalidEnvelope, "event %d holds JSON that is not an object", sse)
}

// streamMessage classifies an event whose data is an object at data[open]:
// it validates the data and reads its envelope in one pass
// (validEnvelope).
//
//go:noinline
func (c *Classifier) streamMessage(r *Result, ex *Exchange, st *streamState, data []byte, open int) (stop bool, err error) {
	sse := st.sse
	env, valid := validEnvelope(data, open)
	if !valid {
		return true, stopEvent(r, MalformedJSON, "the data of event %d is not valid JSON", sse)
	}
	switch {
	case env.hasMethod && !env.hasResult && !env.hasError:
		if !env.hasJSONRPC || !wire.StringIs(env.jsonrpc, "2.0") {
			return true, stopEvent(r, InvalidEnvelope, "event %d carries a message without jsonrpc \"2.0\"", sse)
		}
		if wire.IsRequestMembers(env.method, env.result, env.err, env.jsonrpc, env.id) {
			sse.Requests++
			if c.OnServerRequest != nil {
				c.OnServerRequest(data)
			}
			if r.Protocol() == Protocol2026 && !st.warnedRequest {
				st.warnedRequest = true
				m, _ := wire.StringValue(env.method)
				r.warnText(WarnServerRequestOnStream, fmt.Sprintf("event %d is a server request (%s)", sse.Events, m))
			}
			return false, nil
		}
		sse.Notifications++
		switch {
		case wire.StringIs(env.method, "notifications/progress"):
			sse.Progress++
		case wire.StringIs(env.method, "notifications/message"):
			sse.Messages++
		}
		return false, nil
	case env.hasResult || env.hasError:
		if !answers(ex, &env) {
			if st.otherID == "" {
				st.otherID = string(env.id)
				if !env.hasID {
					st.otherID = "null"
				}
			}
			// Once per stream: a hostile server must not grow the
			// result with every event.
			if !st.warnedOther {
				st.warnedOther = true
				r.warnText(WarnResponseForOtherID, fmt.Sprintf("event %d is a response for id %s, not %s; skipped", sse.Events, st.otherID, ex.ID.String()))
			}
			return false, nil
		}
		st.terminal = true
		sse.Terminal = true
		sse.TerminalEvent = sse.Events
		c.response(r, ex, &env)
		if c.KeepResponse {
			r.moreRare().response = append([]byte(nil), data...)
		}
		if c.StopAtTerminal {
			sse.End = "stopped-at-terminal"
			return true, nil
		}
		return false, nil
	}
	return true, stopEvent(r, InvalidEnvelope, "event %d is JSON but not a JSON-RPC message (no method, result or error)", sse)
}

// validEnvelope reads the top-level members of the object at data[open]
// as scanEnvelope does, and validates data as it goes: valid is
// wire.Valid(data), and when it holds, env is scanEnvelope(data). It reads
// each byte once, where wire.Valid then scanEnvelope read every value twice
// (a 16 KiB notification's params, say).
func validEnvelope(data []byte, open int) (env envelope, valid bool) {
	i := wire.SkipSpace(data, open+1)
	if i < len(data) && data[i] == '}' {
		return env, wire.SkipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return env, false
		}
		kend, _ := wire.ScanString(data, i)
		if kend < 0 {
			return env, false
		}
		key := data[i:kend]
		i = wire.SkipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return env, false
		}
		vstart := wire.SkipSpace(data, i+1)
		vend := wire.ValidValue(data, vstart, 1)
		if vend < 0 {
			return env, false
		}
		v := data[vstart:vend]
		switch string(wire.Key(key)) {
		case "jsonrpc":
			env.jsonrpc, env.hasJSONRPC = v, true
		case "id":
			env.id, env.hasID = v, true
		case "result":
			env.result, env.hasResult = v, true
		case "error":
			env.err, env.hasError = v, true
		case "method":
			env.method, env.hasMethod = v, true
		}
		i = wire.SkipSpace(data, vend)
		if i >= len(data) {
			return env, false
		}
		switch data[i] {
		case '}':
			return env, wire.SkipSpace(data, i+1) == len(data)
		case ',':
			i = wire.SkipSpace(data, i+1)
		default:
			return env, false
		}
	}
}

// stopEvent ends the classification at an event that makes the response
// fail: the outcome, and the reason (format takes the event's number).
//
//go:noinline
func stopEvent(r *Result, o Outcome, format string, sse *SSEDetails) error {
	r.Outcome = o
	r.Reason = fmt.Sprintf(format, sse.Events)
	sse.End = "stopped-at-error"
	return nil
}

// secondResponse reports whether data, an event's data after the
// response, is another JSON-RPC response (a result or an error, no method)
// with the response's id. A response that had no id (an error without
// one) has none to repeat.
//
//go:noinline
func secondResponse(r *Result, data []byte) bool {
	d := r.JSONRPC()
	if d == nil || d.ID.IsZero() || d.ID.IsNull() {
		return false
	}
	i := wire.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	env, valid := validEnvelope(data, i)
	if !valid || env.hasMethod || !env.hasResult && !env.hasError || !env.hasID {
		return false
	}
	return wire.IDFromRaw(env.id).Equal(d.ID)
}

// afterRequest warns of a server request in event n, after the response
// (first: the first event after it): no part of the exchange's answer,
// and one that a client reading the stream on may answer (the recorder's
// request watch noted it, so such an answer is recorded as its answer).
//
//go:noinline
func afterRequest(r *Result, data []byte, n int, first bool) {
	// Read with the navigator, not wire.ParseMessage (which counts the
	// parses of requests).
	method, _ := wire.Field(data, "method")
	name, _ := wire.StringValue(method)
	id, _ := wire.Field(data, "id")
	what := fmt.Sprintf("a server request (%s, id %s), which is no part of this answer; a client reading on may still answer it", strconv.Quote(name), bytes.TrimSpace(id))
	if first {
		r.warnText(WarnMessageAfterTerminal, fmt.Sprintf("event %d arrived after the response: %s", n, what))
		return
	}
	r.warnText(WarnMessageAfterTerminal, fmt.Sprintf("event %d, after the response, is %s", n, what))
}

// warnEvent adds a warning whose message names an event by its number.
//
//go:noinline
func warnEvent(r *Result, code, format string, event int) {
	r.warnText(code, fmt.Sprintf(format, event))
}

// What a skipped event's first bytes show it was.
const (
	skippedMaybeResponse = iota // it may be the response to the request
	skippedNotResponse          // a request or notification
	skippedOtherResponse        // a response for another id
)

// skippedKind reads the top-level members at the start of a skipped
// event's data (its head): a message whose first members name a method and
// no result or error is not the response; one whose id shows before the
// cut and differs from the request's is another request's response. Any
// other head (a result first, as the TypeScript SDK writes it, or bytes
// that are not JSON) may be the response.
func (c *Classifier) skippedKind(ex *Exchange, head []byte) (kind int, otherID string) {
	id, method, response := wire.ScanHead(head)
	switch {
	case method && !response:
		return skippedNotResponse, ""
	case id != nil && !ex.ID.IsZero():
		rid := wire.IDFromRaw(id)
		if (rid.IsString() || rid.IsNumber()) && !rid.Equal(ex.ID) {
			return skippedOtherResponse, string(id)
		}
	}
	return skippedMaybeResponse, ""
}

// skippedDetails is the NOT_CLASSIFIED cause of a skipped event.
func skippedDetails(sk *wire.SkippedEventError, event int) *NotClassifiedDetails {
	d := &NotClassifiedDetails{Cause: CauseEventTooLarge, Size: sk.Length, Limit: sk.Limit, Event: event}
	if errors.Is(sk, wire.ErrBudgetExhausted) {
		d.Cause, d.InUse = CauseMemoryBudget, sk.InUse
	}
	return d
}

// afterUnread handles an event (of type typ) after an unread one: a
// server request is handed on, as before the unread event (an event of
// another type, or a request without jsonrpc "2.0", is none), and it
// reports whether the event is the response that a client stops at.
func (c *Classifier) afterUnread(ex *Exchange, typ string, data []byte, sse *SSEDetails) (stop bool) {
	if !wire.EventCarriesMessage(typ) || !wire.Valid(data) || wire.Kind(data) != '{' {
		return false
	}
	env := scanEnvelope(data)
	switch {
	case env.hasMethod && !env.hasResult && !env.hasError:
		if wire.IsRequestMembers(env.method, env.result, env.err, env.jsonrpc, env.id) {
			sse.Requests++
			if c.OnServerRequest != nil {
				c.OnServerRequest(data)
			}
			return false
		}
		if wire.StringIs(env.jsonrpc, "2.0") {
			// (Without it, no message: before the unread event, the
			// classification would have stopped there.)
			sse.Notifications++
		}
		return false
	case env.hasResult || env.hasError:
		return c.StopAtTerminal && answers(ex, &env)
	}
	return false
}

// wouldBeResponse reports whether data (an undispatched event) holds the
// response the exchange waits for.
func (c *Classifier) wouldBeResponse(ex *Exchange, data []byte) bool {
	if !wire.Valid(data) || wire.Kind(data) != '{' {
		return false
	}
	env := scanEnvelope(data)
	if !env.hasResult && !env.hasError {
		return false
	}
	return answers(ex, &env)
}

// answers reports whether env, a response (a result or an error), is the
// answer to ex's request, in every path of an event stream alike: any
// response when the request's id is unknown; one under the request's id;
// an error under id null or none (the server could not read the id); and,
// for a request of id null (see nullIDRequest), a result under id null or
// none too (the JSON body's verdict judges it, not "a response for another
// id").
func answers(ex *Exchange, env *envelope) bool {
	if ex.ID.IsZero() {
		return true
	}
	id := wire.IDFromRaw(env.id)
	if env.hasID && !id.IsNull() {
		return id.Equal(ex.ID)
	}
	return env.hasError || ex.ID.IsNull()
}
