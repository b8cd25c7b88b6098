package recorder

import (
	"sync"
	"sync/atomic"
	"time"
)

// answerWaitLimit bounds how long the record of a client's answer waits
// for the stream pieces in flight of its session (pieceWatch.wait): a
// piece's write blocks while its client reads nothing, and an answer's
// record must not wait as long as such a client may stall. Past it the
// record names no method and says why (finish). A variable for the tests.
var answerWaitLimit = 5 * time.Second

// pieceWatch keeps an answer from outrunning its request's record for an
// event stream classified on the forwarding goroutine (inlineClass): such
// a stream's piece is written and flushed first and read by the
// classifier after, so a client may read a server request in it and POST
// its answer before the classifier noted the request (srvReqs). The piece
// is marked in flight before its write (begin) and cleared once the
// classifier read the part written (landed); the record of an answer whose
// request is not noted waits, on its finishing goroutine, for the pieces
// of its session that were in flight when it looked (wait), then looks
// again. Each stream is registered under its session once (add, remove);
// a piece costs two atomic stores and one load.
type pieceWatch struct {
	mu      sync.Mutex
	cond    sync.Cond
	waiters atomic.Int32
	gen     uint64
	streams map[string][]*inlineClass
}

// add registers ic, a stream of session classified on the forwarding
// goroutine.
func (p *pieceWatch) add(ic *inlineClass, session string) {
	p.mu.Lock()
	if p.streams == nil {
		p.streams = make(map[string][]*inlineClass)
		p.cond.L = &p.mu
	}
	p.gen++
	ic.slot.gen, ic.session = p.gen, session
	p.streams[session] = append(p.streams[session], ic)
	p.mu.Unlock()
}

// remove forgets ic at its stream's end; a waiter for its piece in flight
// (a write that panicked) goes on.
func (p *pieceWatch) remove(ic *inlineClass) {
	p.mu.Lock()
	s := p.streams[ic.session]
	for i, o := range s {
		if o == ic {
			s[i] = s[len(s)-1]
			s[len(s)-1] = nil
			s = s[:len(s)-1]
			break
		}
	}
	if len(s) == 0 {
		delete(p.streams, ic.session)
	} else {
		p.streams[ic.session] = s
	}
	ic.slot.gen = 0
	ic.slot.flight.Store(0)
	if p.waiters.Load() > 0 {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

// begin marks ic's next piece in flight: its bytes may reach the client
// from now on.
func (ic *inlineClass) begin() {
	ic.pieces++
	ic.slot.flight.Store(ic.pieces)
}

// landed clears ic's piece in flight once the classifier read the part of
// it written, and wakes the answers waiting for it.
func (p *pieceWatch) landed(ic *inlineClass) {
	ic.slot.flight.Store(0)
	if p.waiters.Load() > 0 {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

// inFlight is a piece a waiter waits for: its stream's slot (the
// registration gen tells a pooled inlineClass used again apart) and its
// number. The waiter reads the slot only, never the inlineClass, which its
// owner resets without the watch's lock.
type inFlight struct {
	slot   *pieceSlot
	gen    uint64
	ticket uint64
}

// wait waits until every piece of session's streams that is in flight now
// was read by its classifier (or its stream ended), or answerWaitLimit
// passed: expired reports the latter. Called by the finishing goroutine of
// a client's answer whose request was not noted, which then looks again.
func (p *pieceWatch) wait(session string) (expired bool) {
	p.waiters.Add(1)
	defer p.waiters.Add(-1)
	p.mu.Lock()
	defer p.mu.Unlock()
	var buf [4]inFlight
	snap := buf[:0]
	for _, ic := range p.streams[session] {
		if t := ic.slot.flight.Load(); t != 0 {
			snap = append(snap, inFlight{ic.slot, ic.slot.gen, t})
		}
	}
	if len(snap) == 0 {
		return false
	}
	timedOut := false
	t := time.AfterFunc(answerWaitLimit, func() {
		p.mu.Lock()
		timedOut = true
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer t.Stop()
	for !timedOut {
		pending := false
		for _, f := range snap {
			if f.slot.gen == f.gen && f.slot.flight.Load() == f.ticket {
				pending = true
				break
			}
		}
		if !pending {
			return false
		}
		p.cond.Wait()
	}
	return true
}
