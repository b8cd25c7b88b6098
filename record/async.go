package record

import (
	"fmt"
	"sync"
	"sync/atomic"
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
}

// AsyncStats count what an Async did with the records it was given.
type AsyncStats struct {
	// Written counts records the sink accepted.
	Written int64 `json:"written"`
	// Dropped counts records dropped because the queue was full.
	Dropped int64 `json:"dropped"`
	// Failed counts records the sink refused (its first error is returned
	// by Write and Close).
	Failed int64 `json:"failed"`
}

// Async writes records through one goroutine and a bounded queue, so that
// producers do not wait for the disk. Write encodes and redacts the record
// in the caller's goroutine (the caller may reuse the record as soon as
// Write returns) and queues the line; the goroutine writes lines to the
// sink in order. An Async is safe for concurrent use.
type Async struct {
	enc    Encoder
	policy QueuePolicy
	sink   LineWriter
	queue  chan []byte
	done   chan struct{}

	mu     sync.RWMutex // held for reading while queueing, for writing by Close
	closed bool

	written, dropped, failed atomic.Int64

	errMu    sync.Mutex
	firstErr error

	closeOnce sync.Once
	closeErr  error
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
	a := &Async{
		enc: opts.Encoder, policy: policy, sink: sink,
		queue: make(chan []byte, size), done: make(chan struct{}),
	}
	go a.run()
	return a
}

func (a *Async) run() {
	defer close(a.done)
	for line := range a.queue {
		a.writeLine(line)
	}
}

func (a *Async) writeLine(line []byte) {
	if err := a.sink.WriteLine(line); err != nil {
		a.failed.Add(1)
		a.setErr(err)
		return
	}
	a.written.Add(1)
}

func (a *Async) setErr(err error) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	if a.firstErr == nil {
		a.firstErr = err
	}
}

func (a *Async) err() error {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	return a.firstErr
}

// Write encodes rec and queues it. With QueueBlock it waits while the queue
// is full; with QueueDrop it drops the record and counts it instead. It
// returns an encoding error, ErrClosed after Close, or the sink's first
// write error once one has happened (the record is queued all the same).
func (a *Async) Write(rec *Record) error {
	line, err := a.enc.Encode(rec)
	if err != nil {
		return err
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return ErrClosed
	}
	if a.policy == QueueDrop {
		select {
		case a.queue <- line:
		default:
			a.dropped.Add(1)
		}
	} else {
		a.queue <- line
	}
	if err := a.err(); err != nil {
		return fmt.Errorf("record: earlier write failed: %w", err)
	}
	return nil
}

// Dropped returns how many records were dropped because the queue was full.
func (a *Async) Dropped() int64 { return a.dropped.Load() }

// Stats returns the counts so far.
func (a *Async) Stats() AsyncStats {
	return AsyncStats{Written: a.written.Load(), Dropped: a.dropped.Load(), Failed: a.failed.Load()}
}

// Close stops accepting records, waits until every queued record is
// written, writes a "dropped" record when records were dropped, and closes
// the sink. It returns the first error of the sink, if any. Calling Close
// again returns the same result.
func (a *Async) Close() error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		close(a.queue)
		a.mu.Unlock()
		<-a.done
		if n := a.dropped.Load(); n > 0 {
			rec := &Record{
				Kind:    KindDropped,
				Dropped: n,
				Note:    fmt.Sprintf("dropped %d records: the record queue (%d) was full", n, cap(a.queue)),
			}
			line, err := a.enc.Encode(rec)
			if err == nil {
				err = a.sink.WriteLine(line)
			}
			if err != nil {
				a.setErr(err)
			}
		}
		err := a.err()
		if cerr := a.sink.Close(); err == nil && cerr != nil {
			err = cerr
		}
		a.closeErr = err
	})
	return a.closeErr
}
