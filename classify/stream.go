package classify

import (
	"errors"
	"fmt"
	"io"

	"github.com/mcpdiag/mcpdiag/wire"
)

// stream classifies a text/event-stream response event by event. Memory is
// bounded by the largest event, not by the stream.
func (c *Classifier) stream(r *Result, ex *Exchange, body io.Reader) error {
	sse := &SSEDetails{}
	r.more().sse = sse
	// Nothing of an event is kept past its use (the result copies what it
	// keeps), so the reader's buffers can come from and go back to wire's
	// pools.
	rd := ex.Events
	own := rd == nil
	if own {
		rd = wire.NewPooledSSEReader(body, c.maxSize())
		rd.SetBudget(c.Budget)
	}
	defer func() {
		sse.Comments = rd.Comments
		r.BodyBytes = rd.Bytes
		if own {
			rd.Recycle()
		}
	}()
	var terminal bool
	var otherID string
	// unread is an event before the response that was read through
	// without being parsed and may have been the response: the verdict is
	// then unknown, whatever follows.
	var unread *NotClassifiedDetails
	warnedAfter, warnedEmpty, warnedType, warnedRequest, warnedOther, warnedUnread := false, false, false, false, false, false
	// The targets of errors.As live outside the loop: declared in it, they
	// would be moved to the heap once per event.
	var skipped *wire.SkippedEventError
	var unterminated *wire.UnterminatedEventError
	for {
		ev, err := rd.Next()
		skipped, unterminated = nil, nil
		if errors.As(err, &skipped) {
			sse.Events++
			sse.Skipped++
			switch {
			case terminal:
				sse.AfterTerminal++
				if !warnedAfter {
					warnedAfter = true
					r.warn(WarnMessageAfterTerminal, "event %d arrived after the response", sse.Events)
				}
			case unread != nil:
			default:
				switch kind, id := c.skippedKind(ex, skipped.Head); kind {
				case skippedNotResponse:
					if !warnedUnread {
						warnedUnread = true
						r.warn(WarnEventNotRead, "event %d (%d bytes) was read through, not parsed: %s; it starts as a request or notification, not a response", sse.Events, skipped.Length, limitText(skippedDetails(skipped, sse.Events)))
					}
				case skippedOtherResponse:
					if otherID == "" {
						otherID = id
					}
					if !warnedOther {
						warnedOther = true
						r.warn(WarnResponseForOtherID, "event %d is a response for id %s, not %s; skipped", sse.Events, id, ex.ID.String())
					}
				default:
					unread = skippedDetails(skipped, sse.Events)
				}
			}
			continue
		}
		if err != nil {
			switch {
			case errors.As(err, &unterminated):
				sse.Unterminated = true
				sse.End = "unterminated-event"
				if terminal {
					if !warnedAfter {
						r.warn(WarnMessageAfterTerminal, "the stream ends with an unterminated event after the response")
					}
					return nil
				}
				if unread != nil {
					return c.notClassified(r, unread)
				}
				r.Outcome = StreamIncomplete
				r.Reason = "the stream ended inside an event that lacks its terminating blank line (WHATWG: an unterminated event is not dispatched)"
				switch {
				case unterminated.Skipped:
					r.Reason += "; that event was over the classifier's limit, and it is not delivered whatever it held"
				case c.wouldBeResponse(ex, unterminated.Data):
					r.Reason += "; that event held the response, which a conformant client never sees"
				}
				return nil
			case err == io.EOF:
				sse.End = "eof"
			default:
				sse.End = "error: " + err.Error()
			}
			if terminal {
				return nil
			}
			if unread != nil {
				return c.notClassified(r, unread)
			}
			if otherID != "" {
				r.Outcome = InvalidEnvelope
				r.Reason = fmt.Sprintf("the stream ended without a response for id %s; it carried a response for id %s instead", ex.ID.String(), otherID)
				if r.JSONRPC == nil {
					// The other id as a fact (a record's responseId), as
					// for a JSON body answering with another id.
					r.JSONRPC = &JSONRPCDetails{ID: wire.IDFromRaw([]byte(otherID))}
				}
				return nil
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
			return nil
		}
		sse.Events++
		if terminal {
			sse.AfterTerminal++
			if !warnedAfter {
				warnedAfter = true
				r.warn(WarnMessageAfterTerminal, "event %d arrived after the response", sse.Events)
			}
			continue
		}
		if unread != nil {
			// No verdict can come from here on; server requests are still
			// handed on (a client must answer them), and the stream is
			// read to its end, or to the response for a client.
			if c.afterUnread(ex, ev.Data, sse) {
				sse.End = "stopped-at-terminal"
				return c.notClassified(r, unread)
			}
			continue
		}
		if ev.Type != "" && ev.Type != "message" {
			if !warnedType {
				warnedType = true
				r.warn(WarnUnknownEventType, "event %d has type %q and was ignored", sse.Events, ev.Type)
			}
			continue
		}
		if len(ev.Data) == 0 {
			if r.Protocol == Protocol2026 && !warnedEmpty {
				warnedEmpty = true
				r.warn(WarnEmptyEvent, "event %d has empty data", sse.Events)
			}
			continue
		}
		if !c.noFastPath && c.fastToolCall(r, ex, ev.Data, true) {
			// The response, judged in one pass as the general path below
			// would judge it.
			terminal = true
			sse.Terminal = true
			sse.TerminalEvent = sse.Events
			if c.StopAtTerminal {
				sse.End = "stopped-at-terminal"
				return nil
			}
			continue
		}
		if !wire.Valid(ev.Data) {
			r.Outcome = MalformedJSON
			r.Reason = fmt.Sprintf("the data of event %d is not valid JSON", sse.Events)
			sse.End = "stopped-at-error"
			return nil
		}
		if wire.Kind(ev.Data) != '{' {
			r.Outcome = InvalidEnvelope
			if wire.Kind(ev.Data) == '[' {
				r.Reason = fmt.Sprintf("event %d holds a JSON array (a batch); MCP messages are single objects", sse.Events)
			} else {
				r.Reason = fmt.Sprintf("event %d holds JSON that is not an object", sse.Events)
			}
			sse.End = "stopped-at-error"
			return nil
		}
		env := scanEnvelope(ev.Data)
		switch {
		case env.hasMethod && !env.hasResult && !env.hasError:
			if !env.hasJSONRPC || !wire.StringIs(env.jsonrpc, "2.0") {
				r.Outcome = InvalidEnvelope
				r.Reason = fmt.Sprintf("event %d carries a message without jsonrpc \"2.0\"", sse.Events)
				sse.End = "stopped-at-error"
				return nil
			}
			if env.hasID && !wire.IDFromRaw(env.id).IsNull() {
				sse.Requests++
				if c.OnServerRequest != nil {
					c.OnServerRequest(ev.Data)
				}
				if r.Protocol == Protocol2026 && !warnedRequest {
					warnedRequest = true
					m, _ := wire.StringValue(env.method)
					r.warn(WarnServerRequestOnStream, "event %d is a server request (%s)", sse.Events, m)
				}
				continue
			}
			sse.Notifications++
			switch {
			case wire.StringIs(env.method, "notifications/progress"):
				sse.Progress++
			case wire.StringIs(env.method, "notifications/message"):
				sse.Messages++
			}
			continue
		case env.hasResult || env.hasError:
			id := wire.IDFromRaw(env.id)
			idAbsent := !env.hasID || id.IsNull()
			matches := ex.ID.IsZero() || (!idAbsent && id.Equal(ex.ID)) || (idAbsent && env.hasError)
			if !matches {
				if otherID == "" {
					otherID = string(env.id)
					if idAbsent {
						otherID = "null"
					}
				}
				// Once per stream: a hostile server must not grow the
				// result with every event.
				if !warnedOther {
					warnedOther = true
					r.warn(WarnResponseForOtherID, "event %d is a response for id %s, not %s; skipped", sse.Events, otherID, ex.ID.String())
				}
				continue
			}
			terminal = true
			sse.Terminal = true
			sse.TerminalEvent = sse.Events
			c.response(r, ex, env)
			if c.KeepResponse {
				r.more().response = append([]byte(nil), ev.Data...)
			}
			if c.StopAtTerminal {
				sse.End = "stopped-at-terminal"
				return nil
			}
		default:
			r.Outcome = InvalidEnvelope
			r.Reason = fmt.Sprintf("event %d is JSON but not a JSON-RPC message (no method, result or error)", sse.Events)
			sse.End = "stopped-at-error"
			return nil
		}
	}
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
	i := wire.SkipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return skippedMaybeResponse, ""
	}
	i = wire.SkipSpace(head, i+1)
	var method, response bool
	var id []byte
	for i < len(head) && head[i] == '"' {
		end, _ := wire.ScanString(head, i)
		if end < 0 {
			break
		}
		key := wire.Key(head[i:end])
		i = wire.SkipSpace(head, end)
		if i >= len(head) || head[i] != ':' {
			break
		}
		i = wire.SkipSpace(head, i+1)
		switch string(key) {
		case "method":
			method = true
		case "result", "error":
			response = true
		}
		vend := wire.ScanValue(head, i)
		if vend < 0 {
			break
		}
		if string(key) == "id" {
			id = head[i:vend]
		}
		i = wire.SkipSpace(head, vend)
		if i >= len(head) || head[i] != ',' {
			break
		}
		i = wire.SkipSpace(head, i+1)
	}
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

// afterUnread handles an event after an unread one: a server request is
// handed on, and it reports whether the event is the response that a
// client stops at.
func (c *Classifier) afterUnread(ex *Exchange, data []byte, sse *SSEDetails) (stop bool) {
	if !wire.Valid(data) || wire.Kind(data) != '{' {
		return false
	}
	env := scanEnvelope(data)
	switch {
	case env.hasMethod && !env.hasResult && !env.hasError:
		if env.hasID && !wire.IDFromRaw(env.id).IsNull() {
			sse.Requests++
			if c.OnServerRequest != nil {
				c.OnServerRequest(data)
			}
			return false
		}
		sse.Notifications++
		return false
	case env.hasResult || env.hasError:
		return c.StopAtTerminal && (ex.ID.IsZero() || wire.IDFromRaw(env.id).Equal(ex.ID))
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
	return ex.ID.IsZero() || wire.IDFromRaw(env.id).Equal(ex.ID)
}
