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

// PROTOTYPE (fwd20, not for main): the classifier on the forwarding
// goroutine. An event stream that answers a JSON-RPC request through the
// proxy's forwarding loop (ForwardChunk) is classified as it is forwarded:
// each piece is fed to the classifier (classify.StreamClassification)
// before it is written, in place of the request watch's scan (the
// classifier notes each server request the piece completes), and after the
// write the piece is kept for the record's capture and its events are
// timed. No pipe, no finishing goroutine while the response streams, no
// second scan. The classifier returns after each piece (its reader
// pauses, wire.ErrSSEPaused), so an idle stream holds no frame of it: the
// forwarding loop waits in idle18's empty read as before. At the handler's
// end the classifier is given how the response ended (the error the pipe's
// reader got) and the record is made on a finishing goroutine as before.
//
// Departures from the product (docs/benchmarks.md, fwd20): the client gets
// a piece after the classification of the events it completes (the watch's
// scan before); the bytes of a write that failed part way are classified
// whole (the pipe took the part written).

// inlineClass is an event stream's classification on the forwarding
// goroutine.
type inlineClass struct {
	ex     *Exchange
	cl     classify.Classifier
	cx     classify.Exchange
	sc     classify.StreamClassification
	events *wire.SSEReader
	b      []byte // handed to the reader at its next NextChunk
	endErr error  // how the stream ended (ended)
	ended  bool
	done   bool // the classification is over: the rest is read for its server requests and event ends
	ends   []int64
	endA   [8]int64
	capt   *capture
	lastAt time.Duration
	onReq  func([]byte)

	// The piece in flight (pieceWatch): its number while it is written
	// and until the classifier read it, 0 otherwise; pieces counts the
	// stream's pieces; gen and session are its registration's.
	flight  atomic.Uint64
	pieces  uint64
	gen     uint64
	session string
}

var inlineClasses = sync.Pool{New: func() any {
	ic := new(inlineClass)
	ic.onReq = ic.sawRequest
	return ic
}}

func (ic *inlineClass) sawRequest(msg []byte) { ic.ex.rc.srvReqs.saw(ic.ex.session, msg) }

// startInline begins the classification of the stream on the forwarding
// goroutine when the exchange is in the prototype's scope; false leaves
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
	onReq := ic.onReq
	*ic = inlineClass{ex: ex, onReq: onReq}
	ic.ends = ic.endA[:0]
	ic.events = wire.NewPooledSSEChunkReader(ic, rc.opts.MaxEventSize)
	ic.events.SetBudget(rc.budget)
	ic.cl = classify.Classifier{MaxEventSize: rc.opts.MaxEventSize, Budget: rc.budget}
	ic.cl.KeepResponse = ex.msg.Method == "tools/list" || ex.msg.Method == "initialize"
	ic.cl.OnServerRequest = ic.onReq
	ic.cx = classify.Exchange{
		Method: ex.msg.Method, ID: idOrNil(&ex.msg), Notification: ex.msg.Kind != wire.MessageRequest,
		ProtocolVersion: ex.protocol, Extensions: ex.msg.Extensions,
		Status: ex.status, Header: ex.respHeader, Body: noBody{}, Events: ic.events,
	}
	if !ic.cl.BeginStream(&ic.cx, &ic.sc) {
		ic.events.Recycle()
		*ic = inlineClass{onReq: onReq}
		inlineClasses.Put(ic)
		return false
	}
	if rc.opts.Bodies != BodiesNone {
		ic.capt = captures.Get().(*capture)
		*ic.capt = capture{limit: rc.bodyLimit, pieces: ic.capt.pieces[:0]}
	}
	ex.rareFields().inline = ic
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
	if b := ic.b; b != nil {
		ic.b = nil
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
	ic.ends = append(ic.ends, end)
}

// feed classifies b, the next bytes of the stream, once they were written
// and flushed.
func (ic *inlineClass) feed(b []byte) {
	ic.b = b
	if !ic.done && ic.sc.Step() {
		ic.done = true
	}
	if ic.done {
		ic.drain()
	}
	ic.b = nil
}

// drain reads the events after the classification's end for their server
// requests (the watch's duty) and their ends (the record's times).
func (ic *inlineClass) drain() {
	for {
		ev, err := ic.events.Next()
		if err != nil {
			if err == wire.ErrSSEPaused {
				return
			}
			if errors.As(err, new(*wire.SkippedEventError)) {
				continue
			}
			ic.events.Drain()
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
	for _, e := range ic.ends {
		ic.ex.eventEnded(e, at)
	}
	ic.ends = ic.ends[:0]
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
	if !ic.done {
		for !ic.sc.Step() {
		}
		ic.done = true
	}
	ic.drain()
	ic.events.Drain()
	ic.events.Recycle()
	ic.events = nil
	ic.ex.rc.pieces.remove(ic)
}

// release gives ic back to its pool once the finishing goroutine took its
// verdict and capture.
func (ic *inlineClass) release() {
	onReq := ic.onReq
	*ic = inlineClass{onReq: onReq}
	inlineClasses.Put(ic)
}

// inline returns the stream's classification on the forwarding goroutine,
// nil when it has none. Called with mu held.
func (rw *responseWriter) inline() *inlineClass {
	if rare := rw.ex.rare; rare != nil {
		return rare.inline
	}
	return nil
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
