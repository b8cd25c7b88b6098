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
	r.SSE = sse
	rd := wire.NewSSEReader(body, c.maxSize())
	defer func() {
		sse.Comments = rd.Comments
		r.BodyBytes = rd.Bytes
	}()
	var terminal bool
	var otherID string
	warnedAfter, warnedEmpty, warnedType, warnedRequest, warnedOther := false, false, false, false, false
	for {
		ev, err := rd.Next()
		if err != nil {
			var unterminated *wire.UnterminatedEventError
			switch {
			case errors.Is(err, wire.ErrEventTooLarge):
				if !terminal {
					r.Outcome = StreamIncomplete
					r.Reason = "the classifier stopped: " + err.Error()
				}
				sse.End = "error: " + err.Error()
				return fmt.Errorf("%w (event %d)", err, sse.Events+1)
			case errors.As(err, &unterminated):
				sse.Unterminated = true
				sse.End = "unterminated-event"
				if terminal {
					if !warnedAfter {
						r.warn(WarnMessageAfterTerminal, "the stream ends with an unterminated event after the response")
					}
					return nil
				}
				r.Outcome = StreamIncomplete
				r.Reason = "the stream ended inside an event that lacks its terminating blank line (WHATWG: an unterminated event is not dispatched)"
				if c.wouldBeResponse(ex, unterminated.Data) {
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
			if otherID != "" {
				r.Outcome = InvalidEnvelope
				r.Reason = fmt.Sprintf("the stream ended without a response for id %s; it carried a response for id %s instead", ex.ID.String(), otherID)
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
				r.Response = append([]byte(nil), ev.Data...)
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
