package record

import (
	"bytes"
	"fmt"
	"sync"
	"time"
)

// QueuePolicy says what Async.Write does when its queue is full.
type QueuePolicy string

// The full-queue policies. Neither loses a record silently.
const (
	// QueueBlock makes Write wait for room (the default): no record is
	// lost, and a slow disk slows the producer down.
	QueueBlock QueuePolicy = "block"
	// QueueDrop makes Write drop the record and count it: the producer
	// (a proxy forwarding live traffic) never waits for the disk. The count
	// is exposed by Stats and written as a final "dropped" record by Close.
	QueueDrop QueuePolicy = "drop"
)

// ParseQueuePolicy reads the value of a queue-policy flag: "block" (or "")
// or "drop".
func ParseQueuePolicy(s string) (QueuePolicy, error) {
	switch QueuePolicy(s) {
	case "", QueueBlock:
		return QueueBlock, nil
	case QueueDrop:
		return QueueDrop, nil
	}
	return "", fmt.Errorf("record: queue policy %q: want block or drop", s)
}

// DefaultQueueSize is the number of records an Async holds by default.
const DefaultQueueSize = 1024

// AsyncOptions configure NewAsync.
type AsyncOptions struct {
	// QueueSize is the number of encoded records the queue holds;
	// DefaultQueueSize when 0 or negative.
	QueueSize int
	// Policy is the full-queue policy; QueueBlock when empty.
	Policy QueuePolicy
	// Encoder redacts and encodes the records (in the caller of Write).
	Encoder Encoder
	// OnLoss, when set, is called for every record lost where the caller
	// of Write cannot see it: a line the sink failed to write (called from
	// the writer goroutine) and a record dropped from a full queue (called
	// from Write). It must not block for long.
	OnLoss func(Loss)
	// Linger is how long the writer goroutine, woken by a record, waits
	// for more before it writes them all with one write(2) (group commit;
	// only for a sink that writes several lines at once, a FileWriter).
	// DefaultLinger when 0; negative: no wait, each record is written as
	// soon as the goroutine takes it, with those queued behind it. Close
	// ends the wait at once: every queued record is written before Close
	// returns. A record waits at most Linger longer for the disk; no
	// producer waits for it (unless the queue is full).
	Linger time.Duration
}

// DefaultLinger is the default of AsyncOptions.Linger: at the thousands of
// records a second a busy proxy writes, a few records per write(2) instead
// of one, and one wake-up of the writer goroutine per batch instead of one
// per record. 2 ms, not 1: at 8 clients a batch then holds ~1.4 times the
// records (write(2) calls per record 0.147 -> 0.102; at one client's event
// streams 0.65 -> 0.39, docs/benchmarks.md lowconc), each write costing
// ~27 us in the proxy, while a record reaching its file 1 ms later is
// below what anyone reading it can tell. Not 4 ms: that wrote 32% fewer
// times per record at 8 and 64 clients with no CPU per exchange gained
// that the rounds resolve (docs/benchmarks.md perf14, E1).
const DefaultLinger = 2 * time.Millisecond

// AsyncStats is the old name of [SinkStats].
type AsyncStats = SinkStats

// Async writes records through one goroutine and a bounded queue, so that
// producers do not wait for the disk. Write encodes and redacts the record
// in the caller's goroutine (the caller may reuse the record as soon as
// Write returns) and queues the line; the goroutine writes lines to the
// sink in order. An Async is safe for concurrent use.
//
// No record is lost silently: every record given to Write is either
// written or counted in Stats under the reason it was lost, and the losses
// the caller of Write cannot see (a failed write in the goroutine, a drop)
// are reported one by one to AsyncOptions.OnLoss. A failed write does not
// stop the writer: the next line is tried in turn (a disk may have room
// again, a line too long for a pipe's reader may be followed by short ones).
type Async struct {
	enc    Encoder
	policy QueuePolicy
	sink   LineWriter
	queue  chan *queued
	done   chan struct{}
	stop   chan struct{} // closed by Close: the writer stops lingering
	linger time.Duration // 0: none
	tally  *Tally

	mu     sync.RWMutex // held for reading while queueing, for writing by Close
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// queued is a line waiting for the sink, with the name of its record.
// The queue holds pointers to them, 8 bytes a slot: a queue of queued
// values (128 bytes each) was 128 KB at DefaultQueueSize, allocated by
// NewAsync, live as long as the Async and scanned by every garbage
// collection cycle, most of it empty (docs/benchmarks.md, liveheap). They
// are pooled, each with its line's buffer (queuedPool).
type queued struct {
	line []byte
	ref  Ref
}

// NewAsync starts the writer goroutine in front of sink. Close must be
// called to drain the queue and close the sink. An unknown policy is
// treated as QueueBlock, which loses nothing.
func NewAsync(sink LineWriter, opts AsyncOptions) *Async {
	size := opts.QueueSize
	if size <= 0 {
		size = DefaultQueueSize
	}
	policy, err := ParseQueuePolicy(string(opts.Policy))
	if err != nil {
		policy = QueueBlock
	}
	linger := opts.Linger
	switch {
	case linger == 0:
		linger = DefaultLinger
	case linger < 0:
		linger = 0
	}
	a := &Async{
		enc: opts.Encoder, policy: policy, sink: sink, tally: &Tally{onLoss: opts.OnLoss, red: opts.Encoder.Redactor},
		queue: make(chan *queued, size), done: make(chan struct{}), stop: make(chan struct{}), linger: linger,
	}
	go a.run()
	return a
}

func (a *Async) run() {
	defer close(a.done)
	batcher, _ := a.sink.(lineBatcher)
	var batch []*queued
	var lines [][]byte
	var linger *time.Timer
	for q := range a.queue {
		if batcher == nil {
			a.writeOne(q)
			continue
		}
		if a.linger > 0 && len(a.queue) < maxBatchLines-1 {
			// Group commit: let the records of the next moments join
			// this one. The goroutine sleeps on a timer, not on the
			// queue, so that their Writes do not wake it one by one.
			if linger == nil {
				linger = time.NewTimer(a.linger)
			} else {
				linger.Reset(a.linger)
			}
			select {
			case <-linger.C:
			case <-a.stop:
				linger.Stop()
			}
		}
		// The records queued behind this one go out with it, in one write.
		batch = append(batch[:0], q)
		size := len(q.line)
	drain:
		for len(batch) < maxBatchLines && size < maxBatchBytes {
			select {
			case next, ok := <-a.queue:
				if !ok {
					break drain
				}
				batch, size = append(batch, next), size+len(next.line)
			default:
				break drain
			}
		}
		if len(batch) == 1 {
			a.writeOne(q)
			continue
		}
		lines = lines[:0]
		for _, b := range batch {
			lines = append(lines, b.line)
		}
		n, err := batcher.writeLines(lines)
		for _, b := range batch[:n] {
			putQueued(b)
			a.tally.Wrote()
		}
		if err != nil {
			// The record the error cut is lost; each one after it is tried
			// on its own, as without batching (a disk may have room again).
			loss := Loss{Ref: batch[n].ref, Reason: reasonOf(err, false), Err: err}
			putQueued(batch[n])
			a.tally.Lose(loss)
			for _, b := range batch[n+1:] {
				a.writeOne(b)
			}
		}
		clear(batch)
		clear(lines)
	}
}

// Batches of the writer goroutine: at most this many lines, and lines are
// added while the batch is shorter than maxBatchBytes.
const (
	maxBatchLines = 64
	maxBatchBytes = 256 << 10
)

// lineBatcher is a sink that writes several lines with one write(2).
type lineBatcher interface {
	writeLines(lines [][]byte) (int, error)
}

// writeOne writes q alone. q goes back to the pool before it is counted,
// so that once Stats counts a record its queued value is there for the
// next Write (TestAsyncWriteAllocs).
func (a *Async) writeOne(q *queued) {
	if err := a.sink.WriteLine(q.line); err != nil {
		loss := Loss{Ref: q.ref, Reason: reasonOf(err, false), Err: err}
		putQueued(q)
		a.tally.Lose(loss)
		return
	}
	putQueued(q)
	a.tally.Wrote()
}

// The lines queued are the Async's own (Write encodes into them, WriteLine
// copies into one), and a sink must not keep a line after WriteLine
// returns (LineWriter): once written, or lost, a line's buffer is reused by
// a later Write. A busy proxy encodes thousands of records a second, each
// line about 1 KiB. queuedPool holds the queued values given back, each
// with its line's buffer (one pooled object per record, where a pool of
// line buffers alone allocated a slice header on every Put); buffers past
// maxPooledLine are left to the collector.
var queuedPool sync.Pool

const maxPooledLine = 64 << 10

// getQueued returns a queued value with an empty line (whose buffer is nil
// when the pool had none: the encoder allocates one of the size it needs).
func getQueued() *queued {
	if v := queuedPool.Get(); v != nil {
		return v.(*queued)
	}
	return new(queued)
}

// putQueued gives q back with its line's buffer; nothing may use either
// afterwards.
func putQueued(q *queued) {
	b := q.line
	if cap(b) > maxPooledLine {
		b = nil
	}
	if poisonLines {
		full := b[:cap(b)]
		for i := range full {
			full[i] = 0xff
		}
	}
	*q = queued{line: b[:0]}
	queuedPool.Put(q)
}

// poisonLines makes putLine overwrite what it takes back, so that a test
// sees any use of a line after it was given back (the package's tests set
// it).
var poisonLines bool

// KeepsNoRecord says that Write keeps nothing of the record it is given
// once it returns: it encodes the record there, and a loss names it by its
// Ref. The caller may reuse the record afterwards (the recorder does).
func (a *Async) KeepsNoRecord() {}

// Write encodes rec and queues it. With QueueBlock it waits while the queue
// is full; with QueueDrop it drops the record, counts it and reports it to
// OnLoss instead. It returns an error only for a record it did not take:
// one the encoder refused, or one given after Close (ErrClosed). Both are
// counted in Stats; neither is reported to OnLoss, since the caller has the
// error. A queued record that the sink then fails to write is counted and
// reported to OnLoss, and makes Close return an error.
func (a *Async) Write(rec *Record) error {
	// Write's own frame holds nothing but the queued value and its line:
	// the encoder's frames are the deepest of a finishing goroutine's, and
	// what Write keeps around them (a Ref, a Loss) would be under them.
	q := getQueued()
	line, err := a.enc.encodeInto(q.line, rec)
	if err != nil {
		a.refuse(q, rec, err)
		return err
	}
	q.line = line
	return a.enqueueRecord(q, rec)
}

// refuse counts rec, which the encoder refused, and gives back q.
//
//go:noinline
func (a *Async) refuse(q *queued, rec *Record, err error) {
	putQueued(q)
	a.tally.count(Loss{Ref: RefOf(rec), Reason: LostUnencodable, Err: err})
}

// enqueueRecord queues q, the line of rec.
//
//go:noinline
func (a *Async) enqueueRecord(q *queued, rec *Record) error {
	q.ref = RefOf(rec)
	if q.ref.ID == "" {
		q.ref.ID = lineID(q.line)
	}
	return a.enqueue(q)
}

// WriteLine queues a line already encoded (a copy of it), as Write queues
// a record.
func (a *Async) WriteLine(line []byte) error {
	if err := checkOneLine(line); err != nil {
		return err
	}
	q := getQueued()
	q.line, q.ref = append(q.line, line...), RefOfLine(line)
	return a.enqueue(q)
}

// enqueue queues q per the policy; q is the queue's (or given back) once
// it returns.
func (a *Async) enqueue(q *queued) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		a.tally.count(Loss{Ref: q.ref, Reason: LostClosed, Err: ErrClosed})
		putQueued(q)
		return ErrClosed
	}
	if a.policy == QueueDrop {
		select {
		case a.queue <- q:
		default:
			a.tally.Lose(Loss{Ref: q.ref, Reason: LostDropped})
			putQueued(q)
		}
	} else {
		a.queue <- q
	}
	return nil
}

// lineID returns the id the encoder gave a record, read back from its line
// (the encoder writes "v", "kind" and "id" first).
func lineID(line []byte) string {
	const key = `"id":"`
	i := bytes.Index(line[:min(len(line), 128)], []byte(key))
	if i < 0 {
		return ""
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest[:min(len(rest), 64)], '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// Name returns the name of the sink behind the queue (a FileWriter's path),
// or "" when it has none.
func (a *Async) Name() string {
	if n, ok := a.sink.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

// Dropped returns how many records were dropped because the queue was full.
func (a *Async) Dropped() int64 { return a.tally.Stats().Dropped }

// Stats returns the counts so far. Once Close returned, Written is the
// number of record lines in the sink.
func (a *Async) Stats() SinkStats { return a.tally.Stats() }

// Close stops accepting records, waits until every queued record is
// written, writes a "dropped" record when records were dropped, and closes
// the sink. It returns a *LostError when any record was lost (for whatever
// reason), otherwise the sink's Close error. Calling Close again returns the
// same result.
func (a *Async) Close() error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		close(a.stop)
		close(a.queue)
		a.mu.Unlock()
		<-a.done
		if n := a.Stats().Dropped; n > 0 {
			rec := &Record{
				Kind:    KindDropped,
				Dropped: n,
				Note:    fmt.Sprintf("dropped %d records: the record queue (%d) was full", n, cap(a.queue)),
			}
			line, err := a.enc.Encode(rec)
			if err == nil {
				err = a.sink.WriteLine(line)
			}
			if err != nil && a.tally.onLoss != nil {
				// The report of the drops is not a record of its own:
				// reported, not counted.
				a.tally.onLoss(Loss{Ref: RefOf(rec).Redacted(a.tally.red), Reason: reasonOf(err, false), Err: err})
			}
		}
		err := a.tally.Err()
		if cerr := a.sink.Close(); err == nil && cerr != nil {
			err = cerr
		}
		a.closeErr = err
	})
	return a.closeErr
}
