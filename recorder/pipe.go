package recorder

import (
	"io"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/wire"
)

// pipeBudget bounds the memory a pipe holds that its reader has not taken
// yet: the chunks' buffers and their entries in the queue (chunkCost), not
// only their bytes, so that a response in tiny flushes is bounded as well.
// The forwarding path only waits for the classifier when it lags this far
// behind, which on a working machine does not happen: classifying is far
// faster than any network.
const pipeBudget = 256 << 10

// pipe hands the bytes the client received to the classifier's goroutine.
// Unlike io.Pipe, a write does not wait for the reader unless the reader is
// pipeBudget bytes behind, and once the reader is done (the classifier
// returned) further writes are discarded, so the forwarding path never
// blocks on a reader that stopped.
//
// The reader takes the bytes either by copy (Read, for JSON and the other
// bodies) or, for an event stream, as the chunks themselves
// (wire.SSEChunkSource: NextChunk), so that the event reader's scanner runs
// on the recorder's copies, and that one scan also times the events: each
// chunk carries when it had been flushed to the client.
type pipe struct {
	mu     sync.Mutex
	cond   sync.Cond
	chunks []pipeChunk // the queue is chunks[head:]: taking the head keeps the array's room
	head   int
	queued int   // bytes queued and not read yet
	cost   int   // the memory of the chunks queued (chunkCost each), for pipeBudget
	err    error // set by closeWithError; io.EOF for a clean end
	done   bool  // the reader stopped reading
	asleep bool  // the reader waits for bytes (see wakeAt)
	eager  bool  // every write wakes the reader: a 2024-11-05 HTTP+SSE stream, whose answers are paired as they pass (Options.StreamMessage); set before the reader starts, never changed
	wakes  int   // times the reader woke up with bytes to read (tests)

	handlerEnded bool // the handler returned (endHandler), for a finishing goroutine started early

	capt *capture // keeps the first bytes read, for the record (nil: none)
	off  int      // bytes of the head chunk read already
	held bool     // the capture holds the head chunk: it recycles it

	// The reader's side (its goroutine only, after timeEvents).
	lent    []byte        // the chunk NextChunk handed out last, recycled at the next call
	at      time.Duration // when the bytes being read had been flushed
	chunked bool          // NextChunk was called: the reader's scanner times the events
	onEvent func(end int64, at time.Duration)
	scan    *wire.SSEScanner // times the events in the bytes Read takes (event streams only)
}

// pipeChunk is a copy of flushed bytes, with when they had been flushed
// (since the exchange began; zero unless the response is an event stream).
type pipeChunk struct {
	b  []byte
	at time.Duration
}

// chunkCost is the memory a queued chunk holds: its buffer and its entry
// in the queue (a pipeChunk, 32 bytes). A 1-byte flush costs 40 bytes
// (an 8-byte allocation), so that counting bytes alone let 1-byte flushes
// queue 40 times pipeBudget while the reader lagged (TestPipeMemoryBound).
func chunkCost(b []byte) int { return cap(b) + 32 }

func newPipe() *pipe {
	p := pipes.Get().(*pipe)
	p.cond.L = &p.mu
	return p
}

// pipes holds the pipes releasePipe gave back, with their queue's array: a
// pipe and its queue's growth (1, 2, then 4 entries for a stream of 16 KiB
// events) were garbage after every exchange, four allocations and about
// 450 bytes of a 64 KiB event stream (docs/benchmarks.md, ssealloc).
var pipes = sync.Pool{New: func() any { return new(pipe) }}

// releasePipe gives p, which nothing may use afterwards, back to pipes. Its
// reader is done and stopped it (classifyResponse), and its writer is gone:
// the handler ended, and ex.pipe points to donePipe (see Recorder.run).
func releasePipe(p *pipe) {
	clear(p.chunks[:cap(p.chunks)])
	*p = pipe{chunks: p.chunks[:0]}
	pipes.Put(p)
}

// donePipe is what an exchange's pipe field points to once its pipe went
// back to the pool: a pipe nobody reads, so that a write after the
// handler's end (which net/http forbids, but a handler may still attempt)
// is dropped as a write after the reader stopped is, and never reaches a
// pipe another exchange took from the pool.
var donePipe = func() *pipe {
	p := &pipe{done: true, err: io.EOF}
	p.cond.L = &p.mu
	return p
}()

// write queues b, which the pipe then owns (and recycles, see putChunk),
// flushed at at.
func (p *pipe) write(b []byte, at time.Duration) {
	if len(b) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.full() && !p.done && p.err == nil {
		p.cond.Wait()
	}
	if p.done || p.err != nil {
		putChunk(b)
		return
	}
	if p.head > 0 && len(p.chunks) == cap(p.chunks) {
		// Move the queue to the array's start rather than grow it.
		n := copy(p.chunks, p.chunks[p.head:])
		clear(p.chunks[n:])
		p.chunks, p.head = p.chunks[:n], 0
	}
	p.chunks = append(p.chunks, pipeChunk{b: b, at: at})
	p.queued += len(b)
	p.cost += chunkCost(b)
	if p.asleep && (p.queued >= wakeAt || p.full() || p.eager) {
		p.wake()
	}
}

// wakeAt is how many bytes wait in the pipe before a write wakes a reader
// that is waiting for them: a stream flushed in pieces (the reverse proxy
// flushes every read from the upstream) woke the classifier's goroutine,
// parked, once per piece, and at one client each wake-up was a thread's
// (a futex wake, a context switch: docs/benchmarks.md, lowconc). Nothing
// waits for the reader to have read a piece: the events' times are taken
// as the bytes are flushed (pipeChunk.at), the record is written once the
// handler ended (which closes the pipe and wakes the reader), and the
// bytes waiting are bounded as before the reader started (lazyStart).
const wakeAt = lazyStart

// wake wakes the reader (and a writer waiting for room). Called with mu
// held.
func (p *pipe) wake() {
	p.asleep = false
	p.cond.Broadcast()
}

// wait waits, as the reader, for bytes or the end. Called with mu held.
func (p *pipe) wait() {
	for p.empty() && p.err == nil {
		p.asleep = true
		p.cond.Wait()
		p.wakes++
	}
	p.asleep = false
}

// empty reports that no chunk is queued. Called with mu held.
func (p *pipe) empty() bool { return p.head == len(p.chunks) }

// full reports that the chunks queued hold pipeBudget of memory: write
// waits for the reader. Called with mu held.
func (p *pipe) full() bool { return p.cost >= pipeBudget }

// buffered returns the bytes queued and not read yet.
func (p *pipe) buffered() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}

// closeWithError ends the stream: the reader gets err (io.EOF when nil)
// after the queued bytes.
func (p *pipe) closeWithError(err error) {
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
	p.wake()
}

// stop tells writers that nobody reads any more and drops what is queued.
func (p *pipe) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	for i, c := range p.chunks[p.head:] {
		if i > 0 || !p.held {
			putChunk(c.b)
		}
	}
	if p.lent != nil {
		putChunk(p.lent)
	}
	clear(p.chunks)
	p.chunks, p.head, p.queued, p.cost, p.off, p.held, p.lent = p.chunks[:0], 0, 0, 0, 0, false, nil
	p.wake()
}

// endHandler tells a finishing goroutine started while the handler ran
// (Exchange.startEarly) that the handler returned: the exchange's end state
// is set (end sets it before, under the writer's lock).
func (p *pipe) endHandler() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handlerEnded = true
	p.cond.Broadcast()
}

// waitHandler waits for endHandler.
func (p *pipe) waitHandler() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.handlerEnded {
		p.cond.Wait()
	}
}

// keep makes the pipe note the bytes it hands to the reader in c (before
// the first Read).
func (p *pipe) keep(c *capture) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.capt = c
}

// timeEvents makes the pipe tell fn where each event of the stream ends
// and when those bytes had been flushed (before the first read; for an
// event stream).
func (p *pipe) timeEvents(fn func(end int64, at time.Duration)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onEvent = fn
}

// take notes that the reader took n bytes of the head chunk (head is what
// was left of it) and drops the chunk from the queue when it is used up.
// It returns the chunk when the pipe may recycle it once the reader is done
// with those bytes (nil: the chunk is not used up, or the capture holds it).
func (p *pipe) take(head []byte, n int) (recycle []byte) {
	first := &p.chunks[p.head]
	if p.capt != nil && p.capt.add(head[:n], len(head), p.off > 0, cap(first.b) < minPooledChunk) {
		p.held = true
	}
	p.at = first.at
	if n == len(head) {
		if !p.held {
			recycle = first.b
		}
		p.cost -= chunkCost(first.b)
		*first = pipeChunk{}
		if p.head++; p.empty() {
			p.chunks, p.head = p.chunks[:0], 0
		}
		p.off, p.held = 0, false
	} else {
		p.off += n
	}
	p.queued -= n
	p.cond.Broadcast()
	return recycle
}

// Read implements io.Reader for the classifier.
func (p *pipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wait()
	if p.empty() {
		return 0, p.err
	}
	head := p.chunks[p.head].b[p.off:]
	n := copy(b, head)
	if p.onEvent != nil && !p.chunked {
		// An event stream read by copy (an HTTP error's body, say): the
		// only scan of these bytes, for the events' times.
		if p.scan == nil {
			p.scan = &wire.SSEScanner{}
		}
		p.scan.Feed(head[:n])
		for t := p.scan.Next(); t != nil; t = p.scan.Next() {
			if t.Kind == wire.SSEEnd && t.HasData {
				p.onEvent(t.End, p.chunks[p.head].at)
			}
		}
	}
	if c := p.take(head, n); c != nil {
		putChunk(c)
	}
	return n, nil
}

// NextChunk implements wire.SSEChunkSource: the next bytes, at most
// wire.SSEReadSize of them (the pieces a Read of the event reader's size
// would take, so that the reader returns what it would over Read), without
// a copy. They stay the reader's until its next call.
func (p *pipe) NextChunk() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chunked = true
	if p.lent != nil {
		putChunk(p.lent)
		p.lent = nil
	}
	p.wait()
	if p.empty() {
		return nil, p.err
	}
	head := p.chunks[p.head].b[p.off:]
	n := min(len(head), wire.SSEReadSize)
	p.lent = p.take(head, n)
	return head[:n], nil
}

// EventEnd implements wire.SSEChunkSource: an event ended at end, in the
// bytes the last NextChunk handed out.
func (p *pipe) EventEnd(end int64) {
	if p.onEvent != nil {
		p.onEvent(end, p.at)
	}
}
