package classify

import (
	"net/http"

	"github.com/mcpdiag/mcpdiag/wire"
)

// StreamClassification is the classification of an event-stream response
// fed as it arrives (the recorder's forwarding goroutine): its event reader (Exchange.Events)
// is over a chunk source that returns wire.ErrSSEPaused when it has no
// bytes yet, and Step reads the events of what it has, then returns, so
// that the caller (the recorder, on the goroutine that forwards the
// stream) holds no frame of the classifier while the stream waits. The
// verdict is the one Classify gives for the same exchange.
type StreamClassification struct {
	c    *Classifier
	ex   *Exchange
	r    *Result
	st   streamState
	done bool
	err  error
}

// BeginStream starts the classification of ex, whose Events are read as
// above, when Classify would take it to its event-stream path: a 2xx
// response of Content-Type text/event-stream to a request with an id, no
// transport error. ok is false otherwise (the caller classifies ex as
// before).
func (c *Classifier) BeginStream(ex *Exchange, into *StreamClassification) (ok bool) {
	if ex.Err != nil || ex.Notification || ex.ID.IsZero() || ex.Events == nil ||
		ex.Status < 200 || ex.Status > 299 || ex.Header == nil {
		return false
	}
	v := ex.Header["Content-Type"]
	if len(v) == 0 || mediaType(v[0]) != "text/event-stream" {
		return false
	}
	r := new(Result)
	r.start(ex)
	r.setContentType(v[0])
	*into = StreamClassification{c: c, ex: ex, r: r, st: streamState{sse: &SSEDetails{}}}
	r.moreRare().sse = into.st.sse
	return true
}

// Step reads the events the reader has, and reports whether the
// classification is over (Result then has the verdict). Events after that
// are the caller's to read (Drain).
func (s *StreamClassification) Step() (done bool) {
	c, r, ex, rd := s.c, s.r, s.ex, s.ex.Events
	for !s.done {
		data, typ, err := nextEvent(rd)
		if err == wire.ErrSSEPaused {
			return false
		}
		var stop bool
		var serr error
		if err != nil {
			stop, serr = c.streamError(r, ex, rd, &s.st, err)
		} else {
			stop, serr = c.streamEvent(r, ex, &s.st, data, typ)
		}
		if stop {
			s.finish(serr)
		}
	}
	return true
}

// finish ends the classification as stream's return and classify's end do.
//
//go:noinline
func (s *StreamClassification) finish(err error) {
	s.done, s.err = true, err
	c, r, ex := s.c, s.r, s.ex
	c.streamDone(r, ex.Events, s.st.sse, false)
	if ex.Status == http.StatusAccepted && err == nil && r.Outcome != EmptyResponse {
		r.warn(WarnRequestAnswered202, "the response to a request came with HTTP 202, which clients read as \"accepted, no body\": the TypeScript SDK discards the body, so its caller never gets this answer (%s)", r.Outcome)
	}
	r.end(ex)
}

// Rebind makes c and ex the classifier and exchange Step reads with: the
// same settings and the same exchange as BeginStream's, held elsewhere
// (a caller that gives them back while the stream waits between events).
func (s *StreamClassification) Rebind(c *Classifier, ex *Exchange) { s.c, s.ex = c, ex }

// Result returns the verdict and Classify's error, once Step reported the
// end.
func (s *StreamClassification) Result() (*Result, error) { return s.r, s.err }
