package report

import (
	"net/http"
	"slices"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// ResumeWindow is how long after a resumable stream ended (the request's
// start plus its total time, plus the stream's retry field) the GET that
// resumes it may start for its response to count as the request's (see
// Accumulator.linkResumes): a client waits the retry field and reconnects
// at once, or after a few backoffs; a GET minutes later is another matter.
const ResumeWindow = 5 * time.Minute

// maxHeldResumes bounds the resumable requests held while the GET that
// resumes them is awaited; past it the oldest is counted as what it is, a
// failure. maxLoose bounds the GET streams' responses held while the
// request they answer may still be read (its record written after the
// GET's).
const (
	maxHeldResumes = 1024
	maxLoose       = 256
)

// ResumeLink names a request whose event stream the server closed before
// its response (record.Resume.Resumable) and the GET whose stream, which
// resumed it, carried the response (linked by mcpdiag report when it reads
// the records; see Section.ResumeLinks).
type ResumeLink struct {
	// ID is the request's exchange record.
	ID string `json:"id"`
	// ResumedBy is the GET's exchange record.
	ResumedBy string `json:"resumedBy"`
	// Method and Tool are the request's.
	Method string `json:"method"`
	// Tool is the request's tool (or prompt) name, when it has one.
	Tool string `json:"tool,omitempty"`
	// Outcome is the response's, by which the request is counted.
	Outcome string `json:"outcome"`
}

// heldResume is a resumable request awaiting the GET that resumes it.
type heldResume struct {
	o            obs
	run, session string
	id           wire.ID
	method, tool string
	start, end   time.Time // end: the stream's, plus its retry field
	// last is the event id the GET that resumes the stream carries as
	// Last-Event-ID: the stream's, then that of a GET that resumed it and
	// was cut again.
	last string
	// ambiguous: a GET's response of its id could not be told from
	// another request's of the same id.
	ambiguous bool
}

// looseResponse is a response on a GET stream that answered no request
// held when it was read.
type looseResponse struct {
	get          string // the GET's record
	run, session string
	after        string // the GET's Last-Event-ID
	start        time.Time
	r            record.StreamResponse
}

// resumable reports whether r is a recorder's record (it names its
// connection) of a JSON-RPC request POSTed in a session whose stream
// ended without its response after an event with an id
// (record.Resume.Resumable), that can fail (o).
func resumable(r *record.Record, o obs) bool {
	return r.Kind == record.KindExchange && r.Conn != "" && r.HTTPMethod == http.MethodPost && r.Method != "" && r.Session != "" &&
		r.Resume != nil && r.Resume.Resumable && r.Outcome == classify.StreamIncomplete && !r.JSONRPC.ID.IsZero() && o.apart() == notApart
}

// resumingGET reports whether r is a recorder's record of a GET in a
// session that resumed a stream or carried responses.
func resumingGET(r *record.Record) bool {
	return r.Kind == record.KindExchange && r.Conn != "" && r.HTTPMethod == http.MethodGet && r.Session != "" && r.Resume != nil
}

// holdResume holds r, a resumable request (resumable), until the GET that
// resumes it is read, or counts it at once when that GET's response was
// read before it (a record written after the GET's).
func (a *Accumulator) holdResume(r *record.Record, o obs) {
	h := heldResume{o: o, run: record.ConnRun(r.Conn), session: r.Session, id: r.JSONRPC.ID, method: r.Method, tool: r.Tool,
		start: r.Time, last: r.Resume.LastEventID}
	if !r.Time.IsZero() {
		h.end = r.Time.Add(time.Duration(r.Timings.Total))
		if r.Resume.RetryMs != nil {
			h.end = h.end.Add(time.Duration(*r.Resume.RetryMs) * time.Millisecond)
		}
	}
	// A response read before: the loose ones of its id that came after
	// it (a GET that resumed its stream first).
	best, n := -1, 0
	for i := range a.loose {
		l := &a.loose[i]
		if !h.fits(l.run, l.session, l.start) || !l.r.ID.Equal(h.id) || l.r.Method != h.method {
			continue
		}
		if best < 0 || l.after == h.last && a.loose[best].after != h.last {
			best = i
		}
		n++
	}
	if best >= 0 && (n == 1 || a.loose[best].after == h.last) {
		l := a.loose[best]
		a.loose = slices.Delete(a.loose, best, best+1)
		a.resumeLinked(h, l.get, l.start, l.r)
		return
	}
	if len(a.resumes) >= maxHeldResumes {
		a.failResume(a.resumes[0])
		a.resumes = slices.Delete(a.resumes, 0, 1)
	}
	a.resumes = append(a.resumes, h)
}

// fits reports whether a GET of run and session that started at start can
// resume h's stream: the same recording process and session, started
// after the request did, within ResumeWindow of the stream's end (times
// unknown: by order alone).
func (h *heldResume) fits(run, session string, start time.Time) bool {
	if run != h.run || session != h.session {
		return false
	}
	if start.IsZero() || h.start.IsZero() {
		return true
	}
	return start.After(h.start) && start.Sub(h.end) <= ResumeWindow
}

// linkResumes settles the held requests that g, a GET's record
// (resumingGET), resumed: each response its stream carried is the
// response of the held request of its id (with its JSON type) and method
// in the same recording process and session, of those the GET may resume
// (heldResume.fits): the one whose stream the GET resumed (its
// Last-Event-ID is the request's last event id) when one is, else the
// only one; two or more of which the GET resumed none are ambiguous, and
// the response answers neither. A held request the GET resumed and did
// not answer is resumed after the GET's own last event id next. A
// response that answers none is held (maxLoose) for a request recorded
// later, then counted as answering no request (Section.UnlinkedResponses).
func (a *Accumulator) linkResumes(g *record.Record) {
	run, rs := record.ConnRun(g.Conn), g.Resume
	for _, resp := range rs.Responses {
		best, n := -1, 0
		var cands []int
		for i := range a.resumes {
			h := &a.resumes[i]
			if !h.fits(run, g.Session, g.Time) || !resp.ID.Equal(h.id) || resp.Method != h.method {
				continue
			}
			cands = append(cands, i)
			if best < 0 || rs.After != "" && h.last == rs.After && a.resumes[best].last != rs.After {
				best = i
			}
			n++
		}
		switch {
		case best >= 0 && (n == 1 || rs.After != "" && a.resumes[best].last == rs.After):
			h := a.resumes[best]
			a.resumes = slices.Delete(a.resumes, best, best+1)
			a.resumeLinked(h, g.ID, g.Time, resp)
		case n > 1:
			for _, i := range cands {
				a.resumes[i].ambiguous = true
			}
			a.exchanges.ambiguousResponses++
		default:
			a.holdLoose(looseResponse{get: g.ID, run: run, session: g.Session, after: rs.After, start: g.Time, r: resp})
		}
	}
	if rs.After == "" || rs.LastEventID == "" || rs.LastEventID == rs.After {
		return
	}
	for i := range a.resumes {
		h := &a.resumes[i]
		if h.last == rs.After && h.fits(run, g.Session, g.Time) {
			h.last = rs.LastEventID
			// The next GET may come a window after this one.
			if !g.Time.IsZero() {
				h.end = g.Time.Add(time.Duration(g.Timings.Total))
			}
		}
	}
}

// resumeLinked counts h by resp, its response on the GET get that started
// at start: the response's outcome and layer, the time from the request's
// start to the response's event.
func (a *Accumulator) resumeLinked(h heldResume, get string, start time.Time, resp record.StreamResponse) {
	o := h.o
	o.outcome, o.layer, o.resumed = resp.Outcome, resp.Layer, true
	if !h.start.IsZero() && !start.IsZero() && start.After(h.start) {
		o.ms = durationMs(record.Duration(start.Sub(h.start))) + durationMs(resp.After)
	}
	l := ResumeLink{ID: h.o.id, ResumedBy: get, Method: h.method, Tool: h.tool, Outcome: string(resp.Outcome)}
	a.exchanges.resumeLink(l)
	if l.ID != "" && a.opts.KeepLinks {
		a.resumeLinks = append(a.resumeLinks, l)
	}
	a.exchanges.add(o)
}

// failResume counts h as what it is: its stream's cut, a failure, never
// resumed (or resumed with a response that could not be told apart).
func (a *Accumulator) failResume(h heldResume) {
	h.o.notResumed, h.o.resumeAmbiguous = true, h.ambiguous
	a.exchanges.add(h.o)
}

// holdLoose keeps l for a request recorded after its GET; past maxLoose
// the oldest is counted as answering no request.
func (a *Accumulator) holdLoose(l looseResponse) {
	if len(a.loose) >= maxLoose {
		a.exchanges.unlinked++
		a.loose = slices.Delete(a.loose, 0, 1)
	}
	a.loose = append(a.loose, l)
}

// expireResumes counts as failures the held requests whose window ended
// before start, a record's start: no GET resumed them in time.
func (a *Accumulator) expireResumes(start time.Time) {
	if start.IsZero() || len(a.resumes) == 0 {
		return
	}
	kept := a.resumes[:0]
	for _, h := range a.resumes {
		if !h.end.IsZero() && start.Sub(h.end) > ResumeWindow {
			a.failResume(h)
			continue
		}
		kept = append(kept, h)
	}
	clear(a.resumes[len(kept):])
	a.resumes = kept
}

// flushResumes counts every held request as a failure never resumed, and
// every loose response as one that answered no request.
func (a *Accumulator) flushResumes() {
	for _, h := range a.resumes {
		a.failResume(h)
	}
	clear(a.resumes)
	a.resumes = a.resumes[:0]
	a.exchanges.unlinked += int64(len(a.loose))
	clear(a.loose)
	a.loose = a.loose[:0]
}

// TakeResumeLinks returns the requests counted by the response a GET that
// resumed their stream carried since the last call (none without
// Options.KeepLinks), in the order they were settled, and forgets them. A
// page over the same records shows each such row with the response's
// verdict, as the Summary counts it (package ui).
func (a *Accumulator) TakeResumeLinks() []ResumeLink {
	ls := a.resumeLinks
	a.resumeLinks = nil
	return ls
}

// resumeLink notes a request linked to the GET that resumed its stream
// (Section.Resumed, Section.ResumeLinks); add counts it.
func (s *section) resumeLink(l ResumeLink) {
	s.resumed++
	if len(s.resumeLinks) < s.opts.Top {
		s.resumeLinks = append(s.resumeLinks, l)
	}
}
