package recorder

import (
	"bytes"
	"container/list"
	"net/http"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// The resumption of a 2025-11-25 Streamable HTTP request's stream
// ("Resumability and Redelivery"; SEP-1699's polling): a server may close
// a request's event stream after an event with an id, before the
// response, and the client resumes it with a GET carrying Last-Event-ID,
// on which the rest of the stream, the response too, arrives. The
// request's record is written when its stream ends, before the GET: it
// says the stream is resumable and after which event (record.Resume), and
// the GET's record says which responses its stream carried, each judged as
// the response of the request of its id the recorder knew in the session.
// report links the two (docs/report.md, Resumed streams).

// maxResumes bounds the requests the recorder keeps for the responses a
// GET may carry: past it the oldest is forgotten (a response of its id on
// a GET is then judged with no method).
const maxResumes = 1024

// resumeTable holds, by session, the requests whose response is an event
// stream, from the handler's end (before the client can see the stream
// end, so however fast it resumes) until their record is made, and those
// whose stream ended resumable until a GET's stream carries a response of
// their id, their session is deleted, or maxResumes newer ones push them
// out.
type resumeTable struct {
	mu        sync.Mutex
	bySession map[string][]*resumeEntry
	byEx      map[*Exchange]*resumeEntry // the entries not settled yet, by exchange
	order     list.List                  // *resumeEntry, oldest first
}

// resumeEntry is one request of a session whose stream may be resumed.
type resumeEntry struct {
	session                string
	id                     wire.ID
	method, tool, protocol string
	// last is the stream's last event id once the request's record found
	// the stream resumable (resumable), or the last event id of a GET that
	// resumed it and was cut again: what the next GET resumes after.
	last      string
	resumable bool
	elem      *list.Element
	ex        *Exchange // until settled
}

// open notes ex, a request of a session answered with an event stream, as
// its handler ends (opensResume). Called on the handler's goroutine; the
// exchange's finishing goroutine settles it.
func (t *resumeTable) open(ex *Exchange) {
	e := &resumeEntry{session: ex.session, id: cloneID(ex.msg.ID), method: ex.msg.Method, tool: ex.msg.Tool, protocol: ex.protocol, ex: ex}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bySession == nil {
		t.bySession, t.byEx = map[string][]*resumeEntry{}, map[*Exchange]*resumeEntry{}
	}
	t.byEx[ex] = e
	if t.order.Len() >= maxResumes {
		t.removeLocked(t.order.Front().Value.(*resumeEntry))
	}
	e.elem = t.order.PushBack(e)
	t.bySession[e.session] = append(t.bySession[e.session], e)
}

// settle keeps ex's entry as resumable after last (its stream ended
// without its response after an event with that id), or forgets it.
func (t *resumeTable) settle(ex *Exchange, resumable bool, last string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.byEx[ex]
	if e == nil {
		return // pushed out, or answered, already
	}
	delete(t.byEx, ex)
	e.ex = nil
	if e.elem == nil {
		return
	}
	if !resumable {
		t.removeLocked(e)
		return
	}
	e.resumable, e.last = true, last
}

// answer returns the request a response of id on a GET stream of session
// answers, and forgets it: of the requests of the session of that id (and
// JSON type), the one whose stream the GET resumed (after, its
// Last-Event-ID, is its last event id) when one is, else the only one.
// Two or more that differ in method, tool or protocol, none of which the
// GET resumed, are ambiguous: ok false, as for none.
func (t *resumeTable) answer(session string, id wire.ID, after string) (e resumeEntry, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var pick *resumeEntry
	n := 0
	same := true
	for _, c := range t.bySession[session] {
		if !c.id.Equal(id) { // (ids of two JSON types are never equal)
			continue
		}
		if after != "" && c.resumable && c.last == after && (pick == nil || pick.last != after) {
			pick = c
		}
		if pick == nil {
			pick = c
		} else if pick.method != c.method || pick.tool != c.tool || pick.protocol != c.protocol {
			same = false
		}
		n++
	}
	if pick == nil || n > 1 && !same && !(after != "" && pick.resumable && pick.last == after) {
		return resumeEntry{}, false
	}
	e = *pick
	t.removeLocked(pick)
	return e, true
}

// resumedAgain moves the requests of session whose stream a GET resumed
// after after, and which its stream did not answer, on to last, the
// GET's own last event id: the next GET resumes after it.
func (t *resumeTable) resumedAgain(session, after, last string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.bySession[session] {
		if c.resumable && c.last == after {
			c.last = last
		}
	}
}

// dropSession forgets the requests of a deleted session.
func (t *resumeTable) dropSession(session string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range append([]*resumeEntry(nil), t.bySession[session]...) {
		t.removeLocked(c)
	}
}

// removeLocked forgets e. Called with mu held.
func (t *resumeTable) removeLocked(e *resumeEntry) {
	if e.ex != nil {
		delete(t.byEx, e.ex)
		e.ex = nil
	}
	if e.elem == nil {
		return
	}
	t.order.Remove(e.elem)
	e.elem = nil
	list := t.bySession[e.session]
	for i, c := range list {
		if c == e {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(t.bySession, e.session)
	} else {
		t.bySession[e.session] = list
	}
}

// opensResume reports whether ex, as its handler ends, is a request whose
// stream may be resumed: a JSON-RPC request with an id, POSTed in a
// 2025-11-25 session (resumption is gone in 2026-07-28, which has no
// sessions), answered 2xx with an event stream. Called with the writer's
// mu held.
func opensResume(ex *Exchange) bool {
	return ex.session != "" && ex.msg.Kind == wire.MessageRequest && (ex.pipe != nil || ex.rw.inl != nil) && ex.status >= 200 && ex.status <= 299 &&
		ex.in.Method == http.MethodPost && isEventStream(ex.respHeader.Get("Content-Type"))
}

// settleResume decides, once the request's stream was read, whether it is
// resumable: it ended without the request's response (STREAM_INCOMPLETE)
// after an event with an id, and the owner's shutdown did not cut it. It
// returns the record's Resume then, nil otherwise.
func (rc *Recorder) settleResume(ex *Exchange, res *classify.Result, events *wire.SSEReader) *record.Resume {
	if events == nil {
		return rc.settleResumeAt(ex, res, "", false, 0, false)
	}
	last, ok := events.LastEventID()
	ms, rok := events.Retry()
	return rc.settleResumeAt(ex, res, last, ok, ms, rok)
}

// settleResumeAt is settleResume with the stream reader's last event id
// (ok: an event set one) and retry (rok: a retry field set it), as a
// stream classified on the forwarding goroutine kept them (inlineClass).
func (rc *Recorder) settleResumeAt(ex *Exchange, res *classify.Result, last string, ok bool, ms int64, rok bool) *record.Resume {
	resumable := ok && last != "" && res != nil && res.Outcome == classify.StreamIncomplete && !ex.shutdown
	rc.resumes.settle(ex, resumable, last)
	if !resumable {
		return nil
	}
	r := &record.Resume{LastEventID: last, Resumable: true}
	if rok {
		r.RetryMs = &ms
	}
	return r
}

// streamResponse judges data, a JSON-RPC response (m its parse) on the GET
// event stream of ex, as the response of the request of its id the
// recorder knew in the session (see resumeTable.answer), and notes it on
// the GET's record (r, made when nil, returned). rd is the stream's
// reader, which has just returned the response's event.
func (rc *Recorder) streamResponse(ex *Exchange, r *record.Resume, data []byte, m *wire.Message, rd *wire.SSEReader) *record.Resume {
	if r == nil {
		r = &record.Resume{}
	}
	if len(r.Responses) >= record.MaxStreamResponses {
		r.MoreResponses++
		return r
	}
	resp := record.StreamResponse{ID: cloneID(m.ID), After: record.Duration(time.Since(ex.start))}
	resp.EventID, _ = rd.LastEventID()
	protocol := ex.protocol
	if e, ok := rc.resumes.answer(ex.session, m.ID, ex.in.Header.Get("Last-Event-ID")); ok {
		resp.Method, resp.Tool, protocol = e.method, e.tool, e.protocol
	}
	cex := &classify.Exchange{Method: resp.Method, ID: resp.ID, ProtocolVersion: protocol}
	cex.Carries(bytes.Clone(data))
	res, err := (&classify.Classifier{MaxEventSize: rc.opts.MaxEventSize}).Classify(cex)
	if res == nil {
		resp.Outcome, resp.Layer = classify.NotClassified, classify.NotClassified.Layer()
		if err != nil {
			resp.Reason = "the classifier failed: " + err.Error()
		}
	} else {
		resp.Outcome, resp.Layer, resp.Reason = res.Outcome, res.Outcome.Layer(), res.Reason
		if v, ok := res.IsError(); ok {
			resp.IsError = &v
		}
		if j := res.JSONRPC(); j != nil {
			if code, ok := j.ErrorCode(); ok {
				resp.ErrorCode = &code
			}
		}
	}
	r.Responses = append(r.Responses, resp)
	return r
}

// endGETStream notes, as ex's GET event stream ended (rd its reader), the
// Last-Event-ID it resumed after and its own last event id in r (made when
// nil, returned; nil when there is nothing to say); a stream it resumed and
// did not answer is resumed after this one's next.
func (rc *Recorder) endGETStream(ex *Exchange, r *record.Resume, rd *wire.SSEReader) *record.Resume {
	after := ex.in.Header.Get("Last-Event-ID")
	last, _ := rd.LastEventID()
	if after == "" && last == "" && r == nil {
		return nil
	}
	if r == nil {
		r = &record.Resume{}
	}
	r.After, r.LastEventID = after, last
	if ms, ok := rd.Retry(); ok {
		r.RetryMs = &ms
	}
	if after != "" && last != "" && last != after && ex.session != "" {
		rc.resumes.resumedAgain(ex.session, after, last)
	}
	return r
}

// cloneID returns id over bytes of its own (a message's id aliases the
// body it was parsed from).
func cloneID(id wire.ID) wire.ID {
	if id.IsZero() {
		return id
	}
	return wire.IDFromRaw(bytes.Clone(id.Raw()))
}
