package recorder

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// The classifier on the forwarding goroutine (fwd21, after fwd20's
// prototype). An event stream that answers a JSON-RPC request through the
// proxy's forwarding loop (ForwardChunk) is classified as it is forwarded:
// each piece is written and flushed first, then the part written is fed to
// the classifier (classify.StreamClassification), which notes each server
// request the piece completes in place of the request watch's scan; the
// piece is kept for the record's capture and its events are timed at the
// flush. No pipe, no finishing goroutine while the response streams, no
// second scan, and no client waits for the classifier. The classifier
// returns after each piece (its reader pauses, wire.ErrSSEPaused), so an
// idle stream holds no frame of it (the forwarding loop waits in idle18's
// empty read); between events its reader is parked and its work given back
// (an idle stream holds the verdict so far, the capture and a few words).
// A client may read a server request before the classifier noted it: the
// record of its answer waits for the pieces in flight (pieceWatch). At the
// handler's end the classifier is given how the response ended and the
// record is made on a finishing goroutine as before.

// inlineClass is an event stream's classification on the forwarding
// goroutine.
type inlineClass struct {
	ex     *Exchange
	w      *inlineWork // the classifier and its reader, nil while parked between events
	sc     classify.StreamClassification
	endErr error // how the stream ended (ended)
	ended  bool
	done   bool // the classification is over: the rest is read for its server requests and event ends
	// parked is the reader's state while it is parked between events (w
	// nil): an idle stream holds neither a reader nor the classifier's
	// exchange (wire.SSEReader.Park).
	parked wire.SSEParked
	capt   *capture
	lastAt time.Duration
	// The stream's last event id and retry as its reader ended (finish),
	// for the record's resume (settleResume): the reader is recycled
	// before the finishing goroutine makes the record.
	lastID    string
	hasLastID bool
	retryMs   int64
	hasRetry  bool
	onReq     func([]byte)
	onSkip    func(typ string, data []byte) // sawSkipped, made once per pooled inlineClass

	// slot is the stream's piece in flight, as pieceWatch reads it from
	// an answer's finishing goroutine; pieces counts the stream's pieces;
	// session is its registration's.
	slot    *pieceSlot
	pieces  uint64
	session string
}

// pieceSlot is what an answer's finishing goroutine reads of a stream
// (pieceWatch.wait): the number of its piece in flight, while it is written
// and until the classifier read it (0 otherwise), and its registration's
// generation (under pieceWatch.mu). It belongs to a pooled inlineClass for
// good and is never reset with it: a waiter may still read it after the
// stream ended and its inlineClass went back to the pool or to another
// stream, and tells that by the generation.
type pieceSlot struct {
	flight atomic.Uint64
	gen    uint64
}

// inlineWork is what an inlineClass holds only while it reads: the
// classifier, its exchange, the event reader, the piece it is fed and the
// event ends it found, from inlineWorks.
type inlineWork struct {
	cl     classify.Classifier
	cx     classify.Exchange
	events *wire.SSEReader
	b      []byte // handed to the reader at its next NextChunk
	ends   []int64
}

var inlineWorks = sync.Pool{New: func() any { return new(inlineWork) }}

// work gives ic its classifier and exchange, made from its Exchange, with
// events as the exchange's event reader.
func (ic *inlineClass) work(events *wire.SSEReader) *inlineWork {
	ex, rc := ic.ex, ic.ex.rc
	w := inlineWorks.Get().(*inlineWork)
	w.events = events
	w.cl = classify.Classifier{MaxEventSize: rc.opts.MaxEventSize, Budget: rc.budget,
		KeepResponse: ex.msg.Method == "tools/list" || ex.msg.Method == "initialize", OnServerRequest: ic.onReq,
		// A request after the response is noted too, as the request
		// watch noted every one.
		OnLateServerRequest: ic.onReq}
	w.cx = classify.Exchange{
		Method: ex.msg.Method, ID: idOrNil(&ex.msg), Notification: ex.msg.Kind != wire.MessageRequest,
		ProtocolVersion: ex.protocol, Extensions: ex.msg.Extensions,
		Status: ex.status, Header: ex.respHeader, Body: noBody{}, Events: events,
	}
	// An event the classifier reads through (over MaxEventSize or the
	// budget) is looked at for a server request as the request watch
	// looked at it: up to maxWatchedEvent.
	events.KeepSkipped(maxWatchedEvent, ic.onSkip)
	ic.w = w
	return w
}

// putWork gives ic's work back to inlineWorks (its reader recycled or
// parked before).
func (ic *inlineClass) putWork() {
	w := ic.w
	ic.w = nil
	*w = inlineWork{ends: w.ends[:0]}
	inlineWorks.Put(w)
}

var inlineClasses = sync.Pool{New: func() any {
	ic := &inlineClass{slot: new(pieceSlot)}
	ic.onReq, ic.onSkip = ic.sawRequest, ic.sawSkipped
	return ic
}}

// reset makes ic a new stream's (ex; nil for the pool), keeping what a
// pooled inlineClass keeps across its uses: its two callbacks and its
// piece slot, which is pieceWatch's (never written here: an answer's
// finishing goroutine may read it without ic's owner).
func (ic *inlineClass) reset(ex *Exchange) {
	*ic = inlineClass{ex: ex, onReq: ic.onReq, onSkip: ic.onSkip, slot: ic.slot}
}

func (ic *inlineClass) sawRequest(msg []byte) { ic.ex.rc.srvReqs.saw(ic.ex.session, msg) }

// sawSkipped notes the server request in an event the classifier read
// through without holding it (wire.SSEReader.KeepSkipped): the watch's
// duty for an event under maxWatchedEvent, done before the piece that
// completed it lands (pieceWatch), so that its answer names its method.
func (ic *inlineClass) sawSkipped(typ string, data []byte) {
	if wire.IsServerRequest(typ, data) {
		ic.sawRequest(data)
	}
}

// startInline begins the classification of the stream on the forwarding
// goroutine when the exchange is in its scope (a 2xx event stream, through
// ForwardChunk, answering a request, not Sync, not a live stream); false leaves
// the exchange to the request watch and the pipe. Called with mu held, by
// the first forward's beginWrite.
//
//go:noinline
func (rw *responseWriter) startInline() bool {
	ex := rw.ex
	rc := ex.rc
	if rw.sniff || rw.pending != nil || ex.pipe != nil || ex.started || rc.opts.Sync || ex.hijacked ||
		ex.rare != nil && ex.rare.live || !ex.msg.IsRPC() || ex.msg.Kind != wire.MessageRequest || ex.wrote != 0 {
		return false
	}
	ic := inlineClasses.Get().(*inlineClass)
	ic.reset(ex)
	w := ic.work(wire.NewPooledSSEChunkReader(ic, rc.opts.MaxEventSize))
	w.events.SetBudget(rc.budget)
	if !w.cl.BeginStream(&w.cx, &ic.sc) {
		w.events.Recycle()
		ic.putWork()
		ic.reset(nil)
		inlineClasses.Put(ic)
		return false
	}
	if rc.opts.Bodies != BodiesNone {
		ic.capt = captures.Get().(*capture)
		*ic.capt = capture{limit: rc.bodyLimit, pieces: ic.capt.pieces[:0]}
	}
	rw.inl = ic
	rc.pieces.add(ic, ex.session)
	return true
}

// testPieceWritten, when set (tests only), is called after a forwarded
// piece was written and flushed and before the classifier reads it.
var testPieceWritten func(ex *Exchange)

type noBody struct{}

func (noBody) Read([]byte) (int, error) { return 0, io.EOF }

// NextChunk implements wire.SSEChunkSource: the piece fed last, once; then
// the end, or a pause.
func (ic *inlineClass) NextChunk() ([]byte, error) {
	if b := ic.w.b; b != nil {
		ic.w.b = nil
		return b, nil
	}
	if ic.ended {
		return nil, ic.endErr
	}
	return nil, wire.ErrSSEPaused
}

// EventEnd implements wire.SSEChunkSource: timed when the piece is flushed.
func (ic *inlineClass) EventEnd(end int64) {
	if ic.ended {
		ic.ex.eventEnded(end, ic.lastAt)
		return
	}
	ic.w.ends = append(ic.w.ends, end)
}

// feed classifies b, the next bytes of the stream, once they were written
// and flushed.
func (ic *inlineClass) feed(b []byte) {
	ic.unpark()
	w := ic.w
	w.b = b
	if !ic.done && ic.sc.Step() {
		ic.done = true
	}
	if ic.done {
		ic.drain()
	}
	w.b = nil
}

// park parks ic's reader and gives its work back when the reader waits
// between events and no event end waits for its time: an idle stream
// holds neither.
func (ic *inlineClass) park() {
	if w := ic.w; w != nil && len(w.ends) == 0 {
		if w.events.ParkInto(&ic.parked) {
			ic.putWork()
		}
	}
}

// unpark gives ic its reader and work back when they were parked.
func (ic *inlineClass) unpark() {
	if ic.w == nil {
		rc := ic.ex.rc
		events := wire.ResumeSSEChunkReader(ic, rc.opts.MaxEventSize, ic.parked)
		events.SetBudget(rc.budget)
		w := ic.work(events)
		ic.sc.Rebind(&w.cl, &w.cx)
	}
}

// drain reads the events after the classification's end for their server
// requests (the watch's duty) and their ends (the record's times).
func (ic *inlineClass) drain() {
	for {
		ev, err := ic.w.events.Next()
		if err != nil {
			if err == wire.ErrSSEPaused {
				return
			}
			if errors.As(err, new(*wire.SkippedEventError)) {
				continue
			}
			ic.w.events.Drain()
			return
		}
		if wire.IsServerRequest(ev.Type, ev.Data) {
			ic.sawRequest(ev.Data)
		}
	}
}

// written notes the m bytes of c a forward wrote and flushed (delivered:
// the client had not left): the capture keeps them, and the events they
// completed are timed. It returns c when it is still the caller's.
func (ic *inlineClass) written(c []byte, m int, delivered bool, at time.Duration) []byte {
	ic.lastAt = at
	if w := ic.w; w != nil {
		for _, e := range w.ends {
			ic.ex.eventEnded(e, at)
		}
		w.ends = w.ends[:0]
		defer ic.park()
	}
	if delivered && m > 0 && ic.capt != nil && ic.capt.n < ic.capt.limit {
		if 2*m <= cap(c) {
			// A piece under half its chunk is copied, as the pipe's
			// writer copied it: an idle stream's priming event does not
			// hold the 16 KiB chunk it was read into.
			cp := append(getChunk(m), c[:m]...)
			if !ic.capt.add(cp, m, false, cap(cp) < minPooledChunk) {
				putChunk(cp)
			}
			return c
		}
		if ic.capt.add(c[:m], m, false, cap(c) < minPooledChunk) {
			return nil // (the capture holds it)
		}
	} else if delivered && m > 0 && ic.capt != nil {
		ic.capt.add(c[:m], m, false, false) // (past the limit: counted, not kept)
	}
	return c
}

// finish ends the classification with how the response ended (err, nil
// for a clean end) and leaves the verdict for the finishing goroutine.
func (ic *inlineClass) finish(err error) {
	if err == nil {
		err = io.EOF
	}
	ic.ended, ic.endErr = true, err
	ic.unpark()
	if !ic.done {
		for !ic.sc.Step() {
		}
		ic.done = true
	}
	ic.drain()
	ic.w.events.Drain()
	ic.lastID, ic.hasLastID = ic.w.events.LastEventID()
	ic.retryMs, ic.hasRetry = ic.w.events.Retry()
	ic.w.events.Recycle()
	ic.putWork()
	ic.ex.rc.pieces.remove(ic)
}

// release gives ic back to its pool once the finishing goroutine took its
// verdict and capture.
func (ic *inlineClass) release() {
	ic.reset(nil)
	inlineClasses.Put(ic)
}

// inline returns the stream's classification on the forwarding goroutine,
// nil when it has none. Called with mu held.
func (rw *responseWriter) inline() *inlineClass {
	if rw.ex.ended {
		return nil
	}
	return rw.inl
}

// forwardedInline is forwarded for a stream classified inline: the m bytes
// of c written (werr, ferr: how the write and the flush failed) are noted
// as delivered or not, kept by the capture, and their events timed. Called
// with mu held.
//
//go:noinline
func (rw *responseWriter) forwardedInline(c []byte, m int, werr, ferr error) ([]byte, error) {
	ex := rw.ex
	at := time.Since(ex.start)
	ic := rw.inline()
	delivered := !rw.gone
	if m > 0 {
		if delivered {
			ex.wrote += int64(m)
			if testPieceWritten != nil {
				testPieceWritten(ex)
			}
			// The part written, exactly, once the client may have it.
			ic.feed(c[:m])
		} else {
			ex.rareFields().late += int64(m)
		}
	}
	c = ic.written(c, m, delivered, at)
	ex.rc.pieces.landed(ic)
	for _, err := range [2]error{werr, ferr} {
		if err != nil {
			if ex.downErr == nil {
				ex.downErr = err
			}
			rw.gone = true
		}
	}
	return c, werr
}
