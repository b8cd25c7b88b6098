package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"sync"
	"unsafe"
)

// DefaultMaxEventSize bounds the bytes of one SSE event (all its lines) that
// an SSEReader holds in memory. Large tool results arrive as one event, and
// SDKs with 1 MiB line caps fail on them in the wild, so the default is
// generous; the point is a bound, not a small one.
const DefaultMaxEventSize = 16 << 20

// ErrEventTooLarge is the cause of a SkippedEventError for an event larger
// than the reader's bound.
var ErrEventTooLarge = errors.New("SSE event exceeds the size limit")

// SkippedEventError is returned by Next for a complete event that the
// reader read through without keeping: it was larger than the reader's
// bound (Cause ErrEventTooLarge) or its memory budget refused the bytes
// (Cause ErrBudgetExhausted). The event itself is intact on the wire; only
// its data is unknown. The reader stays usable: the next call to Next
// returns the event after it.
type SkippedEventError struct {
	// Cause is ErrEventTooLarge or ErrBudgetExhausted.
	Cause error
	// Offset and Length locate the event's raw bytes in the stream, as
	// Event's do.
	Offset, Length int64
	// Limit is the bound that was reached: the event bound, or the
	// budget's size.
	Limit int64
	// InUse is, for a budget, the bytes it had reserved (for every reader
	// sharing it) when it refused.
	InUse int64
	// Head is the first bytes of the event's data (at most 4 KiB, fewer
	// when the budget refused early), for a caller that needs to know what
	// kind of message it was.
	Head []byte
}

func (e *SkippedEventError) Error() string {
	if errors.Is(e.Cause, ErrBudgetExhausted) {
		return fmt.Sprintf("%v (%d of %d bytes in use): the %d-byte event at byte %d was read through, not kept", e.Cause, e.InUse, e.Limit, e.Length, e.Offset)
	}
	return fmt.Sprintf("%v (%d bytes): the %d-byte event at byte %d was read through, not kept", e.Cause, e.Limit, e.Length, e.Offset)
}

// Unwrap returns the cause, so that errors.Is(err, ErrEventTooLarge) holds.
func (e *SkippedEventError) Unwrap() error { return e.Cause }

// UnterminatedEventError is returned at the end of a stream whose last event
// has data but no terminating blank line. Per the WHATWG rules such an event is
// never dispatched; Data is what it would have carried (nil when Skipped).
type UnterminatedEventError struct {
	Data   []byte
	Offset int64
	// Skipped reports an event that was over the reader's bound or budget
	// and read through without keeping its data.
	Skipped bool
}

func (e *UnterminatedEventError) Error() string {
	return fmt.Sprintf("stream ended inside an event at byte %d (no terminating blank line; WHATWG: the event is not dispatched)", e.Offset)
}

// skippedHead bounds SkippedEventError.Head.
const skippedHead = 4 << 10

// keepHeld is what a reader keeps allocated between events; after a larger
// event its buffers are dropped (and their budget given back).
const keepHeld = 64 << 10

// Event is one dispatched Server-Sent Event.
type Event struct {
	// Type is the event field's value; "" means none was given (the type is
	// then "message").
	Type string
	// Data is the data lines joined with "\n". It is only valid until the next
	// call to Next.
	Data []byte
	// ID is the event's own id field, if HasID.
	ID    string
	HasID bool
	// Retry is the retry field in milliseconds, if HasRetry.
	Retry    int64
	HasRetry bool
	// Offset and Length locate the event's raw bytes in the stream, from its
	// first line to the end of its terminating blank line. (When that blank
	// line ends in CRLF and the LF has not arrived yet, Length stops at the CR.)
	Offset int64
	Length int64
}

// SSEReader parses an event stream by the WHATWG HTML rules: CR, LF and CRLF
// line ends (a CRLF split across reads is one line end), one leading BOM
// stripped, comments ignored, one space after the colon removed, data lines
// joined with "\n", events without data not dispatched, and a final event
// without its blank line discarded. It reads with an SSEScanner and keeps
// what the tokens say; it holds at most its bound of one event.
type SSEReader struct {
	r      io.Reader
	src    SSEChunkSource // instead of r (NewPooledSSEChunkReader)
	max    int
	buf    []byte
	err    error // how the reads ended (io.EOF included)
	sc     SSEScanner
	closed bool  // the scanner has been told the stream ended
	paused bool  // Next returned ErrSSEPaused inside an event: the next call goes on with it
	endErr error // what Next returns once the stream is done

	data  []byte // the data lines so far, joined with "\n"
	lines int    // the data lines begun so far
	// room is the capacity reserved for data: cap(data), or more while
	// the lines were lent and not copied (reserveData reserves, allocData
	// allocates what was reserved when a copy is needed), so that a
	// stream whose events are all lent holds no data buffer at all.
	room int
	// lent is the event's one data line, lent from the chunk it lies in
	// instead of copied into data (a chunk source's reader only; lending
	// tells it is in use): data was grown, and its growth reserved, as if
	// the line had been copied, so what the reader holds and reserves is
	// the same. keepLent copies it into data before the chunk may go (the
	// next fill) and before a second data line or a skip.
	lent    []byte
	lending bool
	evType  []byte
	evID    []byte
	idLine  []byte // the id field being read; it becomes evID at its end
	idNUL   bool   // it holds a NUL (the field is then ignored)
	hasID   bool
	retry   int64
	hasRet  bool
	retryN  int64 // the retry field being read
	retryOK bool  // it is all digits so far
	retryD  int   // its digits so far
	evBytes int   // the event's line bytes so far, one per line end

	// lastID is the stream's last event ID (WHATWG: the last event ID
	// buffer as of the last blank line), hasLastID whether an id field
	// set it; lastRetry the last retry field made of digits (see
	// LastEventID, Retry).
	lastID       []byte
	lastIDArr    [64]byte // lastID's storage while it fits: no allocation per stream for the usual ids
	hasLastID    bool
	lastRetry    int64
	hasLastRetry bool

	skip     *SkippedEventError // the event being read through, if any
	head     []byte             // its data's first bytes
	skipLine int64              // the offset of the line that began it

	// The whole data and type of the event read through, kept for onSkip
	// while they are small enough (KeepSkipped).
	onSkip   func(typ string, data []byte)
	keepSkip int    // the most data bytes kept
	skipData []byte // its data lines so far, joined with "\n"
	skipType []byte // its type so far
	skipSep  bool   // a data line of it ended: the next one begins with "\n"
	// skipOver: its data is over keepSkip; skipTypeOver: its type (the
	// last event line's) is over maxSkippedType. Nothing is handed on.
	skipOver, skipTypeOver bool

	budget *Budget
	held   int64 // bytes reserved from budget (counted even without one)
	pooled bool  // buffers come from and go back to the package's pools (Recycle)

	// Comments counts comment lines seen so far (keep-alives included).
	Comments int
	// Bytes counts the bytes consumed so far.
	Bytes int64
	// BOM reports whether a leading byte-order mark was stripped.
	BOM bool
}

// NewSSEReader returns a reader over r that holds at most maxEvent bytes of one
// event (DefaultMaxEventSize when maxEvent <= 0).
func NewSSEReader(r io.Reader, maxEvent int) *SSEReader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	return &SSEReader{r: r, max: maxEvent, buf: make([]byte, readBufferSize(r))}
}

// NewPooledSSEReader is NewSSEReader for a caller that keeps no event data
// past its use and calls Recycle when done: the read buffer and the data
// buffers (up to maxPooledData) come from pools shared by such readers
// instead of being allocated per stream. Its data buffers up to
// maxPooledData have power-of-two sizes, and it reserves from its budget
// what it really holds: up to twice an event's bytes. So what it reads and
// returns is NewSSEReader's (TestPooledSSEReaderMatches,
// FuzzPooledSSEReader) except at the edge of a budget, where it may read
// through (as a *SkippedEventError) an event whose rounded buffer the budget
// refuses and a plain reader's exact one would still fit.
func NewPooledSSEReader(r io.Reader, maxEvent int) *SSEReader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	s := getReader()
	s.r, s.max = r, maxEvent
	if n := readBufferSize(r); n == sseBufferSize {
		s.buf = getPooled(&readPool, n)
	} else {
		s.buf = make([]byte, n)
	}
	return s
}

// SSEChunkSource hands an SSEReader the bytes of a stream without a copy
// into a read buffer of its own (NewPooledSSEChunkReader): the recorder's
// copies of what a client received, which it already holds.
type SSEChunkSource interface {
	// NextChunk returns the next bytes of the stream; the reader's scanner
	// refers to them until the next call, so they must stay unchanged
	// until then. At the end it returns no bytes and the error that ended
	// the stream (io.EOF for a clean end). A source that hands at most
	// SSEReadSize bytes per call gives the reader the pieces a plain
	// reader's reads would, so that everything it returns (budget edges
	// included) is the same.
	NextChunk() ([]byte, error)
	// EventEnd is told, in order and as the reader's scanner finds it, the
	// stream offset just past the blank line that ends each event with data
	// (dispatched or read through), as SSEToken.End: the one scan of the
	// stream also times its events.
	EventEnd(end int64)
}

// ErrSSEPaused is what a chunk source's NextChunk returns when it has no
// bytes yet and the reader is to return rather than wait: Next (and Drain)
// then return it at once, keeping the event in progress, and the next call
// asks the source again (the recorder's classifier fed on the forwarding
// goroutine, which holds no frame of it while the stream waits). A reader
// that paused between events can be parked (Park).
var ErrSSEPaused = errors.New("wire: event stream paused: no bytes yet")

// SSEReadSize is how many bytes an SSEReader reads at a time.
const SSEReadSize = sseBufferSize

// NewPooledSSEChunkReader is NewPooledSSEReader over the chunks src hands
// it: it has no read buffer and copies nothing into one; the scanner runs
// on src's bytes, and src is told where each event ends. Drain reads the
// rest of the stream for src after the caller stopped reading events.
func NewPooledSSEChunkReader(src SSEChunkSource, maxEvent int) *SSEReader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	s := getReader()
	s.src, s.max = src, maxEvent
	return s
}

// SSEParked is what a reader over a chunk source keeps of a stream while
// it waits between events (Park): a stream that idles holds these few
// bytes instead of a reader.
type SSEParked struct {
	off, bytes int64 // the scanner's offset, Bytes
	retry      int64 // the last retry field's value (Event.Retry)
	comments   int
	bomSeen    int8
	started    bool // the scanner is past the point where a BOM may be
	cr         bool // the last line ended in CR: an LF next is part of it
	scBOM, bom bool
	// The stream's last event id and retry (LastEventID, Retry): lastID
	// is storage of the parked state's own, reused by ParkInto.
	lastID       []byte
	hasLastID    bool
	lastRetry    int64
	hasLastRetry bool
}

// Park recycles s (as Recycle) and returns what ResumeSSEChunkReader needs
// to go on with the stream, when s, a pooled reader over a chunk source,
// paused between events: no event and no line in progress, no bytes of its
// source unscanned, the stream not ended. Otherwise ok is false and s is
// left as it was.
func (s *SSEReader) Park() (p SSEParked, ok bool) {
	ok = s.ParkInto(&p)
	return p, ok
}

// ParkInto is Park into *p, whose storage for the last event id it reuses
// (a stream parked between every event allocates once for its id): false
// leaves s and *p as they were.
func (s *SSEReader) ParkInto(p *SSEParked) bool {
	sc := &s.sc
	if s.src == nil || !s.pooled || s.err != nil || s.endErr != nil || s.closed || s.paused ||
		s.skip != nil || len(s.data) > 0 || s.lending || s.evBytes != 0 ||
		sc.closed || sc.done || sc.inBlock || sc.phase != phaseStart || len(sc.p) > 0 {
		return false
	}
	*p = SSEParked{off: sc.off, bytes: s.Bytes, retry: s.retry, comments: s.Comments, bomSeen: int8(sc.bomSeen),
		started: sc.started, cr: sc.cr, scBOM: sc.BOM, bom: s.BOM,
		lastID: append(p.lastID[:0], s.lastID...), hasLastID: s.hasLastID,
		lastRetry: s.lastRetry, hasLastRetry: s.hasLastRetry}
	s.Recycle()
	return true
}

// ResumeSSEChunkReader returns a pooled reader over src (as
// NewPooledSSEChunkReader) that goes on with the stream where Park left
// it: what it returns is what the parked reader would have returned.
func ResumeSSEChunkReader(src SSEChunkSource, maxEvent int, p SSEParked) *SSEReader {
	s := NewPooledSSEChunkReader(src, maxEvent)
	s.sc.off, s.sc.bomSeen, s.sc.started, s.sc.cr, s.sc.BOM = p.off, int(p.bomSeen), p.started, p.cr, p.scBOM
	s.Bytes, s.Comments, s.BOM, s.retry = p.bytes, p.comments, p.bom, p.retry
	if p.hasLastID {
		s.lastID, s.hasLastID = append(s.lastIDArr[:0], p.lastID...), true
	}
	s.lastRetry, s.hasLastRetry = p.lastRetry, p.hasLastRetry
	return s
}

// readers holds the SSEReaders Recycle gave back, zeroed: a reader is about
// 500 bytes, which NewPooledSSEChunkReader allocated for every event stream
// the recorder classified.
var readers sync.Pool

// getReader returns a zeroed reader whose buffers come from the pools.
func getReader() *SSEReader {
	if v := readers.Get(); v != nil {
		s := v.(*SSEReader)
		s.pooled = true
		return s
	}
	return &SSEReader{pooled: true}
}

// NewSSEChunkReader is NewSSEReader over the chunks src hands it, as
// NewPooledSSEChunkReader is NewPooledSSEReader's (its buffers are its own).
func NewSSEChunkReader(src SSEChunkSource, maxEvent int) *SSEReader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	return &SSEReader{src: src, max: maxEvent}
}

// Drain scans the rest of the stream and keeps nothing of it, so that a
// chunk source sees every event end and the stream to its end. Bytes,
// Comments and what Next returns are left as they were; call it last, then
// Recycle.
func (s *SSEReader) Drain() {
	for {
		t := s.sc.Next()
		if t == nil {
			if s.closed || s.fill() {
				return
			}
			continue
		}
		if t.Kind == SSEEnd && t.HasData && s.src != nil {
			s.src.EventEnd(t.End)
		}
	}
}

// Recycle releases the reader's buffers (as Release does) into the pools
// of NewPooledSSEReader. The reader, and every Event.Data and error it
// returned, must not be used after it.
func (s *SSEReader) Recycle() {
	if !s.pooled {
		s.Release()
		return
	}
	s.Release()
	if len(s.buf) == sseBufferSize {
		putPooled(&readPool, s.buf)
	}
	*s = SSEReader{}
	readers.Put(s)
}

// maxPooledData is the largest data buffer the pools keep (the default
// event bound): larger events allocate theirs, as a NewSSEReader does. A
// pooled buffer is one a reader held, and had reserved from its budget,
// a moment before; sync.Pool lets the garbage collector free the ones that
// stay unused for two cycles.
const maxPooledData = 16 << 20

var (
	readPool sync.Pool
	// dataPools[k] holds data buffers of capacity 512<<k, the sizes
	// growData asks for as it doubles from 512.
	dataPools [16]sync.Pool
)

func dataPool(size int) *sync.Pool {
	if size < 512 || size > maxPooledData || size&(size-1) != 0 {
		return nil
	}
	return &dataPools[bits.TrailingZeros(uint(size))-9]
}

// getPooled returns a buffer of size bytes from p, one of the pools of
// buffers of that one size (readPool, dataPools), or a new one.
func getPooled(p *sync.Pool, size int) []byte {
	if b, ok := p.Get().(*byte); ok {
		return unsafe.Slice(b, size)
	}
	return make([]byte, size)
}

// putPooled gives b, whose capacity is at least p's size, to p. The pool
// holds its first byte (a *byte, which an interface holds without an
// allocation: a *[]byte cost one per buffer given back, one per stream).
func putPooled(p *sync.Pool, b []byte) {
	p.Put(unsafe.SliceData(b[:cap(b)]))
}

// SetBudget makes the reader reserve from b the bytes it holds for an
// event before it allocates them; an event the budget refuses is read
// through and reported as a *SkippedEventError. Call it before the first
// Next, and Release when done.
func (s *SSEReader) SetBudget(b *Budget) { s.budget = b }

// Release drops the reader's event buffers and gives their bytes back to
// its budget. The reader stays usable.
func (s *SSEReader) Release() {
	if s.pooled {
		if p := dataPool(cap(s.data)); p != nil {
			putPooled(p, s.data)
		}
	}
	s.data, s.room, s.evType, s.evID, s.idLine = nil, 0, nil, nil, nil
	s.lent, s.lending = nil, false
	s.budget.Release(s.held)
	s.held = 0
}

// Held returns the bytes the reader holds for events, as reserved from its
// budget.
func (s *SSEReader) Held() int64 { return s.held }

func (s *SSEReader) reserve(n int) bool {
	if n <= 0 {
		return true
	}
	if !s.budget.Reserve(int64(n)) {
		return false
	}
	s.held += int64(n)
	return true
}

// sseBufferSize is the read buffer of an SSEReader.
const sseBufferSize = 32 << 10

// readBufferSize is sseBufferSize, or less for an in-memory body that is
// shorter: one byte more than the body reads it whole and then meets EOF, in
// the same reads a full-size buffer makes, without allocating (and clearing)
// 32 KiB for a 1 KiB response.
func readBufferSize(r io.Reader) int {
	n := sseBufferSize
	switch b := r.(type) {
	case *bytes.Reader:
		n = b.Len()
	case *bytes.Buffer:
		n = b.Len()
	case *strings.Reader:
		n = b.Len()
	}
	return min(n+1, sseBufferSize)
}

// fill feeds the scanner the next read, or tells it the stream ended. It
// reports that the chunk source paused (ErrSSEPaused).
func (s *SSEReader) fill() (paused bool) {
	if s.lending {
		// The next chunk may release the one the line lies in.
		s.keepLent()
	}
	if s.err != nil {
		s.sc.Close()
		s.closed = true
		return false
	}
	if s.src != nil {
		b, err := s.src.NextChunk()
		if err == ErrSSEPaused {
			return true
		}
		if err != nil {
			s.err = err
		}
		if len(b) > 0 {
			s.sc.Feed(b)
		}
		return false
	}
	n, err := s.r.Read(s.buf)
	if err != nil {
		s.err = err
	}
	if n > 0 {
		s.sc.Feed(s.buf[:n])
	}
	return false
}

// growData makes the capacity of s.data at least need, reserving the
// growth from the budget first; false means it refused. It grows by
// doubling (up to the event bound), so a 4 MiB data line is copied about
// twice, not five times.
func (s *SSEReader) growData(need int) bool {
	if !s.reserveData(need) {
		return false
	}
	s.allocData()
	return true
}

// reserveData makes room at least need, reserving the growth from the
// budget; false means it refused. What it reserves is what growData
// allocated when it did both at once: the buffer allocData makes.
func (s *SSEReader) reserveData(need int) bool {
	if need <= s.room {
		return true
	}
	want := min(max(2*s.room, need, 512), max(s.max+1, need))
	if s.pooled && want <= maxPooledData {
		// A pooled reader's buffers have the pools' sizes (what it holds,
		// and reserves, is then up to twice the bytes asked for).
		if p := 1 << bits.Len(uint(want-1)); p <= max(s.max+1, need) {
			want = p
		}
	}
	if !s.reserve(want - s.room) {
		return false
	}
	s.room = want
	return true
}

// allocData makes the capacity of s.data room (reserved already), keeping
// its bytes.
func (s *SSEReader) allocData() {
	if cap(s.data) == s.room {
		return
	}
	var nb []byte
	p := dataPool(s.room)
	if s.pooled && p != nil {
		nb = getPooled(p, s.room)[:len(s.data)]
	} else {
		nb = make([]byte, len(s.data), s.room)
	}
	copy(nb, s.data)
	if s.pooled {
		if old := dataPool(cap(s.data)); old != nil {
			putPooled(old, s.data)
		}
	}
	s.data = nb
}

// keepLent copies the lent data line into data, which growData made room
// for when the line was lent.
func (s *SSEReader) keepLent() {
	s.allocData()
	s.data = append(s.data, s.lent...)
	s.lent, s.lending = nil, false
}

// appendField appends v to *dst (an event type or id buffer), reserving
// any growth from the budget.
func (s *SSEReader) appendField(dst *[]byte, v []byte) bool {
	if need := len(*dst) + len(v); need > cap(*dst) {
		want := max(need, 2*cap(*dst))
		if !s.reserve(want - cap(*dst)) {
			return false
		}
		nb := make([]byte, len(*dst), want)
		copy(nb, *dst)
		*dst = nb
	}
	*dst = append(*dst, v...)
	return true
}

func (s *SSEReader) resetEvent() {
	s.data, s.lines = s.data[:0], 0
	s.lent, s.lending = nil, false
	s.evType = s.evType[:0]
	s.evID = s.evID[:0]
	s.hasID, s.hasRet = false, false
	s.evBytes = 0
}

// Next returns the next dispatched event. At a clean end of stream it returns
// io.EOF; at the end of a stream cut inside an event with data it returns an
// *UnterminatedEventError; a read error is returned wrapped. An event over
// the reader's bound or budget is read through to its end and returned as a
// *SkippedEventError, after which Next goes on with the next event.
func (s *SSEReader) Next() (Event, error) {
	if s.endErr != nil {
		return Event{}, s.endErr
	}
	if s.paused {
		// (The event in progress when the source paused goes on.)
		s.paused = false
	} else if s.held > keepHeld {
		// The last event was large: do not hold its buffer while the
		// stream idles or sends small events.
		s.Release()
	}
	for {
		t := s.sc.Next()
		if t == nil {
			if s.closed {
				s.Bytes, s.BOM = s.sc.Offset(), s.sc.BOM
				return Event{}, s.end()
			}
			if s.fill() {
				if s.sc.InBlock() || s.skip != nil || len(s.data) > 0 || s.lending {
					s.paused = true
				} else {
					// Between events: a stream that waits holds no data
					// buffer.
					s.Release()
				}
				return Event{}, ErrSSEPaused
			}
			continue
		}
		if t.Kind != SSEEnd {
			s.line(t)
			continue
		}
		s.Bytes, s.BOM = s.sc.Offset(), s.sc.BOM
		if s.src != nil && t.HasData {
			s.src.EventEnd(t.End)
		}
		if s.hasID {
			if s.lastID == nil {
				s.lastID = s.lastIDArr[:0]
			}
			s.lastID, s.hasLastID = append(s.lastID[:0], s.evID...), true
		}
		if s.skip != nil {
			e := s.skip
			s.skip = nil
			e.Length = t.End - e.Offset
			s.resetEvent()
			if !t.HasData {
				continue // a huge comment or id is not an event
			}
			if n := len(s.head); n > 0 && n < skippedHead && s.head[n-1] == '\n' {
				s.head = s.head[:n-1]
			}
			e.Head, s.head = s.head, nil
			if s.onSkip != nil {
				s.skipped()
			}
			return Event{}, e
		}
		if !t.HasData {
			s.resetEvent()
			continue
		}
		off := s.eventStart()
		ev := Event{Offset: off, Length: t.End - off}
		ev.Data = s.data
		if s.lending {
			ev.Data = s.lent
		}
		ev.Type = string(s.evType)
		if s.hasID {
			ev.ID, ev.HasID = string(s.evID), true
		}
		ev.Retry, ev.HasRetry = s.retry, s.hasRet
		// The data bytes stay alive for the caller: reset clears only
		// lengths, and the next event overwrites them after Next returns.
		s.resetEvent()
		return ev, nil
	}
}

// LastEventID returns the stream's last event ID as the events read so far
// set it (WHATWG HTML, "Server-sent events": the id field of an event
// sets the last event ID buffer, and every blank line that ends an event,
// dispatched or not, one with no data included, makes it the last event
// ID; an id field with no value resets it to ""): what a client resumes
// the stream after, with Last-Event-ID. ok is false when no event that
// ended carried an id field. Of an event read through as a
// *SkippedEventError, an id field counts when it came before the event
// went over the bound.
func (s *SSEReader) LastEventID() (id string, ok bool) {
	return string(s.lastID), s.hasLastID
}

// Retry returns the last retry field of the stream read so far, in
// milliseconds (WHATWG: a value of ASCII digits only sets the reconnection
// time, as soon as it is read); ok is false when none did.
func (s *SSEReader) Retry() (ms int64, ok bool) {
	return s.lastRetry, s.hasLastRetry
}

// eventStart is the stream offset of the pending event: its first line,
// or 0 for the first line of the stream after a BOM (the BOM is part of
// the first event's bytes).
func (s *SSEReader) eventStart() int64 {
	off := s.sc.BlockStart()
	if s.sc.BOM && off == int64(len(bom)) {
		return 0
	}
	return off
}

// line applies a piece of a field or comment line to the pending event.
func (s *SSEReader) line(t *SSEToken) {
	if s.skip != nil {
		s.skipPiece(t)
		return
	}
	n := int(t.End - t.Line)
	if t.Last && !t.Unterminated {
		n++ // the line end counts
	}
	if s.evBytes+n > s.max {
		s.startSkip(ErrEventTooLarge, t)
		return
	}
	if t.Last {
		s.evBytes += n
	}
	if t.Kind == SSEComment {
		if t.Last {
			s.Comments++
		}
		return
	}
	v := t.Value
	switch t.Field {
	case FieldData:
		// The lines are joined as they come: the "\n" goes before a line
		// after the first, so that a value of exactly a power of two bytes
		// fits the buffer that doubled up to it.
		if s.lending {
			s.keepLent()
		}
		sep := t.First && s.lines > 0
		need := len(s.data) + len(v)
		if sep {
			need++
		}
		if !s.reserveData(need) {
			s.startSkip(ErrBudgetExhausted, t)
			return
		}
		if s.src != nil && t.First && t.Last && len(s.data) == 0 && !sep {
			// The whole first data line is in the chunk the scanner
			// holds: lend it (room for it reserved, allocated only if
			// it has to be copied after all) rather than copy it,
			// unless another data line follows or the chunk goes first.
			s.lines++
			s.lent, s.lending = v[:len(v):len(v)], true
			return
		}
		s.allocData()
		if sep {
			s.data = append(s.data, '\n')
		}
		if t.First {
			s.lines++
		}
		s.data = append(s.data, v...)
	case FieldEvent:
		if t.First {
			s.evType = s.evType[:0]
		}
		if !s.appendField(&s.evType, v) {
			s.startSkip(ErrBudgetExhausted, t)
		}
	case FieldID:
		if t.First && t.Last {
			// The whole line in one piece (the usual case): no need to
			// assemble it apart.
			if bytes.IndexByte(v, 0) >= 0 {
				return
			}
			s.evID = s.evID[:0]
			if !s.appendField(&s.evID, v) {
				s.startSkip(ErrBudgetExhausted, t)
				return
			}
			s.hasID = true
			return
		}
		if t.First {
			s.idLine, s.idNUL = s.idLine[:0], false
		}
		if bytes.IndexByte(v, 0) >= 0 {
			s.idNUL = true
		}
		if !s.idNUL && !s.appendField(&s.idLine, v) {
			s.startSkip(ErrBudgetExhausted, t)
			return
		}
		if t.Last && !s.idNUL {
			s.evID, s.idLine = s.idLine, s.evID
			s.hasID = true
		}
	case FieldRetry:
		if t.First {
			s.retryN, s.retryOK, s.retryD = 0, true, 0
		}
		for _, c := range v {
			if c < '0' || c > '9' {
				s.retryOK = false
				break
			}
			s.retryD++
			if s.retryN <= (1<<62)/10 {
				s.retryN = s.retryN*10 + int64(c-'0')
			}
		}
		if t.Last && s.retryOK && s.retryD > 0 {
			s.retry, s.hasRet = s.retryN, true
			s.lastRetry, s.hasLastRetry = s.retryN, true
		}
	}
}

// startSkip begins reading the pending event through without keeping it:
// it is over the bound (ErrEventTooLarge) or the budget refused its bytes
// (ErrBudgetExhausted) at t, which is not applied.
func (s *SSEReader) startSkip(cause error, t *SSEToken) {
	if s.lending {
		s.keepLent()
	}
	e := &SkippedEventError{Cause: cause, Offset: s.eventStart(), Limit: int64(s.max)}
	if cause == ErrBudgetExhausted {
		e.Limit, e.InUse = s.budget.Limit(), s.budget.InUse()
	}
	// Head is the start of the event's data, collected as the pieces go by
	// so that it is the same however the bytes arrive.
	s.head = append(make([]byte, 0, skippedHead), s.data[:min(len(s.data), skippedHead)]...)
	if s.lines > 0 && len(s.head) < skippedHead && !(t.Field == FieldData && t.Kind == SSEField && !t.First) {
		// The head follows each data line with "\n" (and drops the last
		// one at the end), as if the lines were read through from the
		// start; s.data has none after its last complete line.
		s.head = append(s.head, '\n')
	}
	s.skip, s.skipLine = e, t.Line
	if s.onSkip != nil {
		s.startKeep(t)
	}
	// Nothing of the event is kept from here on (but what KeepSkipped
	// asked for).
	s.Release()
	s.skipPiece(t)
}

// maxSkippedType bounds the type of an event read through that
// KeepSkipped hands on: a longer one is neither "" nor "message".
const maxSkippedType = 64

// KeepSkipped makes the reader hand f the type and data of each event it
// reads through (over its bound or budget: Next returns a
// *SkippedEventError for it) whose data is at most n bytes (joined as
// Event.Data is) and whose type at most 64, before Next returns the error:
// a caller that must know what such an event was (the recorder notes the
// server requests in the events its classifier does not hold). The bytes
// are kept while the event is read through, outside the reader's budget
// and bound (at most n of them, and only then); f must not keep data.
// Call it before the first Next (and again after ResumeSSEChunkReader).
func (s *SSEReader) KeepSkipped(n int, f func(typ string, data []byte)) {
	s.onSkip, s.keepSkip = f, n
}

// startKeep begins keeping the event read through from t (not applied
// yet) for onSkip: its data and type so far, and whether a data line of it
// ended.
func (s *SSEReader) startKeep(t *SSEToken) {
	s.skipOver = len(s.data) > s.keepSkip
	s.skipData = s.skipData[:0]
	if !s.skipOver {
		s.skipData = append(s.skipData, s.data...)
	}
	// A piece that goes on a data line begun before has no "\n" before it.
	s.skipSep = s.lines > 0 && !(t.Kind == SSEField && t.Field == FieldData && !t.First)
	s.skipTypeOver = len(s.evType) > maxSkippedType
	s.skipType = s.skipType[:0]
	if !s.skipTypeOver {
		s.skipType = append(s.skipType, s.evType...)
	}
}

// keepPiece follows a piece of a line of the event read through for
// onSkip.
func (s *SSEReader) keepPiece(t *SSEToken) {
	switch t.Field {
	case FieldData:
		if s.skipOver {
			return
		}
		sep := t.First && s.skipSep
		if n := len(s.skipData) + len(t.Value); n > s.keepSkip || sep && n+1 > s.keepSkip {
			s.skipOver, s.skipData = true, s.skipData[:0]
			return
		}
		if sep {
			s.skipData = append(s.skipData, '\n')
		}
		s.skipData = append(s.skipData, t.Value...)
		if t.Last {
			s.skipSep = true
		}
	case FieldEvent:
		if t.First {
			s.skipType, s.skipTypeOver = s.skipType[:0], false
		}
		if s.skipTypeOver || len(s.skipType)+len(t.Value) > maxSkippedType {
			s.skipType, s.skipTypeOver = s.skipType[:0], true
			return
		}
		s.skipType = append(s.skipType, t.Value...)
	}
}

// skipped hands onSkip the event read through that just ended, when it
// kept it, and drops a large buffer.
func (s *SSEReader) skipped() {
	if !s.skipOver && !s.skipTypeOver {
		s.onSkip(string(s.skipType), s.skipData)
	}
	if cap(s.skipData) > skippedHead {
		s.skipData = nil
	}
	s.skipData, s.skipType = s.skipData[:0], s.skipType[:0]
}

// skipPiece follows a piece of a line of an event that is read through.
func (s *SSEReader) skipPiece(t *SSEToken) {
	if s.onSkip != nil && t.Kind == SSEField {
		s.keepPiece(t)
	}
	switch {
	case t.Kind == SSEComment:
		// A comment that was itself over the bound and is cut by the end
		// of the stream is not counted.
		if t.Last && !(t.Unterminated && t.Line == s.skipLine) {
			s.Comments++
		}
	case t.Field == FieldData:
		s.head = append(s.head, t.Value[:min(len(t.Value), cap(s.head)-len(s.head))]...)
		if t.Last && len(s.head) < cap(s.head) {
			s.head = append(s.head, '\n')
		}
	}
}

// end is what Next returns at the end of the stream (and every time
// after).
func (s *SSEReader) end() error {
	if s.lending {
		s.keepLent()
	}
	var err error
	switch {
	case s.err != io.EOF:
		err = fmt.Errorf("reading event stream: %w", s.err)
	case s.skip != nil:
		if s.sc.InBlock() && s.sc.HasData() {
			err = &UnterminatedEventError{Offset: s.skip.Offset, Skipped: true}
		}
	case s.sc.InBlock() && s.sc.HasData():
		// The reader is done: the error takes the data buffer instead of
		// a copy (its bytes stay reserved until Release).
		err = &UnterminatedEventError{Data: s.data, Offset: s.eventStart()}
		s.data, s.room = nil, 0
	}
	// Otherwise the reader keeps its data buffer, empty, for Release (and
	// Recycle, which gives it back to the pool: dropping it here made every
	// pooled stream read to its end allocate a new one).
	s.skip = nil
	s.resetEvent()
	s.endErr = io.EOF
	if err != nil && s.err != io.EOF {
		s.endErr = err
	}
	if err == nil {
		return io.EOF
	}
	return err
}
