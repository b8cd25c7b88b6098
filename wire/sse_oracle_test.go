package wire

// The SSE reader as it was before it was rebuilt on SSEScanner, kept as the
// oracle of FuzzSSEReaderOracle: the two must report the same events,
// skipped events, comments and end on any input, however it is cut.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

var (
	oracleOverLimit = errors.New("over the event bound")
	oracleNoBudget  = errors.New("over the budget")
)

// oracleReader parses an event stream by the WHATWG HTML rules: CR, LF and CRLF
// line ends (a CRLF split across reads is one line end), one leading BOM
// stripped, comments ignored, one space after the colon removed, data lines
// joined with "\n", events without data not dispatched, and a final event
// without its blank line discarded.
type oracleReader struct {
	r       io.Reader
	max     int
	buf     []byte
	start   int
	end     int
	pos     int64 // stream offset of buf[start]
	err     error
	started bool
	skipLF  bool // the previous line ended in CR: a following LF belongs to it

	line    []byte // assembled line when it spans buffer refills
	data    []byte
	evType  []byte
	evID    []byte
	hasID   bool
	retry   int64
	hasRet  bool
	hasData bool
	inEvent bool
	evStart int64
	evBytes int

	budget    *Budget
	held      int64 // bytes reserved from budget (counted even without one)
	lineStart int64 // stream offset of the line readLine returned

	// Comments counts comment lines seen so far (keep-alives included).
	Comments int
	// Bytes counts the bytes consumed so far.
	Bytes int64
	// BOM reports whether a leading byte-order mark was stripped.
	BOM bool
}

// newOracleReader returns a reader over r that holds at most maxEvent bytes of one
// event (DefaultMaxEventSize when maxEvent <= 0).
func newOracleReader(r io.Reader, maxEvent int) *oracleReader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	return &oracleReader{r: r, max: maxEvent, buf: make([]byte, readBufferSize(r))}
}

// SetBudget makes the reader reserve from b the bytes it holds for an
// event before it allocates them; an event the budget refuses is read
// through and reported as a *SkippedEventError. Call it before the first
// Next, and Release when done.
func (s *oracleReader) SetBudget(b *Budget) { s.budget = b }

// Release drops the reader's event buffers and gives their bytes back to
// its budget. The reader stays usable.
func (s *oracleReader) Release() {
	s.data, s.line, s.evType, s.evID = nil, nil, nil, nil
	s.budget.Release(s.held)
	s.held = 0
}

// Held returns the bytes the reader holds for events, as reserved from its
// budget.
func (s *oracleReader) Held() int64 { return s.held }

func (s *oracleReader) reserve(n int) bool {
	if n <= 0 {
		return true
	}
	if !s.budget.Reserve(int64(n)) {
		return false
	}
	s.held += int64(n)
	return true
}

// fill reads more bytes into the buffer, compacting it first.
func (s *oracleReader) fill() {
	if s.err != nil {
		return
	}
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.end = 0, n
	}
	if s.end == len(s.buf) {
		// The caller copies partial lines out before calling fill, so a full
		// buffer only happens with a tiny buffer; grow it.
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if err != nil {
		s.err = err
	}
}

// readLine returns the next line without its terminator. eof is true when
// the stream ended before a line terminator; the returned bytes are then the
// unterminated remainder (possibly empty).
func (s *oracleReader) readLine() (line []byte, eof bool, err error) {
	// A line that spans buffer refills is assembled in the spare capacity of
	// s.data (see appendLine): the value of a data line then moves down in
	// place when field appends it, instead of being copied a second time.
	s.line = s.data[len(s.data):len(s.data)]
	spanning := false
	s.lineStart = s.pos
	for {
		if s.skipLF && s.start < s.end {
			if s.buf[s.start] == '\n' {
				s.consume(1)
			}
			s.skipLF = false
			// The LF of the previous line's CRLF is not part of this line,
			// however the two bytes arrived.
			s.lineStart = s.pos
		}
		if !s.started && s.end-s.start >= 3 {
			s.started = true
			if s.buf[s.start] == 0xEF && s.buf[s.start+1] == 0xBB && s.buf[s.start+2] == 0xBF {
				s.BOM = true
				s.consume(3)
			}
		}
		chunk := s.buf[s.start:s.end]
		i := bytes.IndexByte(chunk, '\n')
		lim := chunk
		if i >= 0 {
			lim = chunk[:i]
		}
		if j := bytes.IndexByte(lim, '\r'); j >= 0 {
			i = j
		}
		if i >= 0 && (s.started || s.err != nil) {
			term := chunk[i]
			var out []byte
			if spanning {
				if s.evBytes+len(s.line)+i > s.max {
					return nil, false, oracleOverLimit
				}
				if !s.appendLine(chunk[:i]) {
					return nil, false, oracleNoBudget
				}
				out = s.line
			} else {
				out = chunk[:i]
			}
			s.consume(i + 1)
			if term == '\r' {
				s.skipLF = true
			}
			return out, false, nil
		}
		if s.err != nil {
			if s.start < s.end {
				s.started = true
				rest := chunk
				if spanning {
					if !s.appendLine(rest) {
						return nil, false, oracleNoBudget
					}
					rest = s.line
				}
				s.consume(len(chunk))
				return rest, true, nil
			}
			if s.err == io.EOF {
				return s.line, true, nil
			}
			return s.line, true, s.err
		}
		if s.started && len(chunk) > 0 {
			// Move the partial line out so the buffer can refill.
			if s.evBytes+len(s.line)+len(chunk) > s.max {
				return nil, false, oracleOverLimit
			}
			if !s.appendLine(chunk) {
				return nil, false, oracleNoBudget
			}
			spanning = true
			s.consume(len(chunk))
		}
		s.fill()
	}
}

// appendLine appends part of a line that spans buffer refills to s.line,
// which lies in the spare capacity of s.data. It grows that array by
// doubling (up to the event bound) rather than by a quarter at a time, so a
// 4 MiB line is copied about twice, not five times, and never into a buffer
// of its own. It reports false when the budget refused the growth.
func (s *oracleReader) appendLine(b []byte) bool {
	dl, ll := len(s.data), len(s.line)
	if !s.growData(dl+ll+len(b), dl+ll) {
		return false
	}
	s.line = append(s.data[dl:dl+ll], b...)
	return true
}

// growData makes the capacity of s.data at least need, keeping its first
// keep bytes (which may reach into the spare capacity, where a spanning
// line is assembled). The growth is reserved from the budget first; false
// means it refused.
func (s *oracleReader) growData(need, keep int) bool {
	if need <= cap(s.data) {
		return true
	}
	want := min(max(2*cap(s.data), need, 512), max(s.max+1, need))
	if !s.reserve(want - cap(s.data)) {
		return false
	}
	nb := make([]byte, len(s.data), want)
	copy(nb[:keep], s.data[:keep])
	s.data = nb
	return true
}

// setField copies value into *dst (an event type or id buffer), reserving
// any growth from the budget.
func (s *oracleReader) setField(dst *[]byte, value []byte) bool {
	if len(value) > cap(*dst) {
		if !s.reserve(len(value) - cap(*dst)) {
			return false
		}
		*dst = make([]byte, 0, len(value))
	}
	*dst = append((*dst)[:0], value...)
	return true
}

func (s *oracleReader) consume(n int) {
	s.start += n
	s.pos += int64(n)
	s.Bytes += int64(n)
}

func (s *oracleReader) resetEvent() {
	s.data = s.data[:0]
	s.evType = s.evType[:0]
	s.evID = s.evID[:0]
	s.hasID, s.hasRet, s.hasData, s.inEvent = false, false, false, false
	s.evBytes = 0
}

// Next returns the next dispatched event. At a clean end of stream it returns
// io.EOF; at the end of a stream cut inside an event with data it returns an
// *UnterminatedEventError; a read error is returned wrapped. An event over
// the reader's bound or budget is read through to its end and returned as a
// *SkippedEventError, after which Next goes on with the next event.
func (s *oracleReader) Next() (Event, error) {
	if s.held > keepHeld {
		// The last event was large: do not hold its buffer while the
		// stream idles or sends small events.
		s.Release()
	}
	for {
		line, eof, err := s.readLine()
		lineStart := s.lineStart
		if err == oracleOverLimit || err == oracleNoBudget {
			if !s.inEvent {
				s.inEvent, s.evStart = true, lineStart
			}
			if err := s.skipEvent(true, err); err != nil {
				return Event{}, err
			}
			continue
		}
		if eof {
			skipped := false
			if len(line) > 0 {
				// A last line with no terminator still counts as a field of
				// the pending event; it is never dispatched.
				if !s.inEvent {
					s.inEvent, s.evStart = true, lineStart
				}
				if s.evBytes+len(line) > s.max || !s.field(line) {
					// Over the bound or the budget: the data is not kept
					// (the event is not dispatched either way).
					s.hasData = s.hasData || oracleIsDataLine(line)
					skipped = true
				}
			}
			pending := s.hasData
			// The reader is done: the error takes the data buffer instead
			// of a copy (its bytes stay reserved until Release).
			data := s.data
			s.data = nil
			off := s.evStart
			s.resetEvent()
			if err != nil {
				return Event{}, fmt.Errorf("reading event stream: %w", err)
			}
			if pending {
				if skipped {
					return Event{}, &UnterminatedEventError{Offset: off, Skipped: true}
				}
				if len(data) > 0 && data[len(data)-1] == '\n' {
					data = data[:len(data)-1]
				}
				return Event{}, &UnterminatedEventError{Data: data, Offset: off}
			}
			return Event{}, io.EOF
		}
		if len(line) == 0 {
			if !s.inEvent {
				continue
			}
			if s.skipLF && s.start < s.end && s.buf[s.start] == '\n' {
				// Take the LF of a CRLF blank line now, so Length covers it.
				s.consume(1)
				s.skipLF = false
			}
			ev := Event{Offset: s.evStart, Length: s.pos - s.evStart}
			if !s.hasData {
				s.resetEvent()
				continue
			}
			d := s.data
			if len(d) > 0 && d[len(d)-1] == '\n' {
				d = d[:len(d)-1]
			}
			ev.Data = d
			ev.Type = string(s.evType)
			if s.hasID {
				ev.ID, ev.HasID = string(s.evID), true
			}
			ev.Retry, ev.HasRetry = s.retry, s.hasRet
			// Keep the data bytes alive for the caller: reset clears only
			// lengths, and the next event overwrites them after Next returns.
			s.data, s.evType, s.evID = s.data[:0], s.evType[:0], s.evID[:0]
			s.hasID, s.hasRet, s.hasData, s.inEvent, s.evBytes = false, false, false, false, 0
			return ev, nil
		}
		if !s.inEvent {
			s.inEvent, s.evStart = true, lineStart
		}
		s.evBytes += len(line) + 1
		if s.evBytes > s.max {
			if err := s.skipEvent(false, oracleOverLimit, line); err != nil {
				return Event{}, err
			}
			continue
		}
		if !s.field(line) {
			if err := s.skipEvent(false, oracleNoBudget, line); err != nil {
				return Event{}, err
			}
			continue
		}
	}
}

// skipEvent reads the rest of an event over the bound or the budget
// without keeping it. midLine says the reader stopped inside a line (whose
// start is in s.line, and the rest in the buffer); otherwise last is the
// line just read, which was not applied. It returns the *SkippedEventError
// that reports the event, nil when the block turns out to carry no data (a
// huge comment is not an event), or how the stream ended inside it.
func (s *oracleReader) skipEvent(midLine bool, cause error, last ...[]byte) error {
	e := &SkippedEventError{Cause: ErrEventTooLarge, Offset: s.evStart, Limit: int64(s.max)}
	if cause == oracleNoBudget {
		e.Cause, e.Limit, e.InUse = ErrBudgetExhausted, s.budget.Limit(), s.budget.InUse()
	}
	// Head is the start of the event's data, collected as the lines go by
	// so that it is the same however the bytes arrive.
	k := &oracleSkipper{head: make([]byte, 0, skippedHead), hasData: s.hasData}
	k.head = append(k.head, s.data[:min(len(s.data), skippedHead)]...)
	if midLine {
		k.feed(s.line)
	} else if len(last) > 0 {
		k.feed(last[0])
		s.endSkippedLine(k)
	}
	// Nothing of the event is kept from here on.
	s.Release()
	if midLine {
		if eof, err := s.discardLine(k); eof {
			return s.endInSkipped(k, err)
		}
		s.endSkippedLine(k)
	}
	for {
		eof, err := s.discardLine(k)
		if eof {
			s.endSkippedLine(k)
			return s.endInSkipped(k, err)
		}
		if k.n == 0 {
			if s.skipLF && s.start < s.end && s.buf[s.start] == '\n' {
				s.consume(1)
				s.skipLF = false
			}
			e.Length = s.pos - s.evStart
			s.resetEvent()
			if !k.hasData {
				return nil
			}
			if n := len(k.head); n > 0 && n < skippedHead && k.head[n-1] == '\n' {
				k.head = k.head[:n-1]
			}
			e.Head = k.head
			return e
		}
		s.endSkippedLine(k)
	}
}

// oracleSkipper follows the lines of an event that is read through: whether it
// has data, and the first skippedHead bytes of that data.
type oracleSkipper struct {
	head    []byte
	hasData bool
	n       int     // bytes of the current line so far
	name    [5]byte // its first bytes
	data    bool    // it is a data field with a colon
	atValue bool    // the next byte is the first of its value
}

// feed takes the next bytes of the current line.
func (k *oracleSkipper) feed(p []byte) {
	for len(p) > 0 {
		switch {
		case k.n < len(k.name):
			k.name[k.n] = p[0]
			k.n++
			p = p[1:]
			if k.n == len(k.name) && string(k.name[:]) == "data:" {
				k.data, k.hasData, k.atValue = true, true, true
			}
			continue
		case !k.data:
			k.n += len(p)
			return
		case k.atValue:
			k.atValue = false
			if p[0] == ' ' {
				k.n++
				p = p[1:]
				continue
			}
		}
		k.head = append(k.head, p[:min(len(p), cap(k.head)-len(k.head))]...)
		k.n += len(p)
		return
	}
}

// endSkippedLine ends the current line of a skipped event.
func (s *oracleReader) endSkippedLine(k *oracleSkipper) {
	switch {
	case k.n == 4 && string(k.name[:4]) == "data":
		k.hasData, k.data = true, true
	case k.n > 0 && k.name[0] == ':':
		s.Comments++
	}
	if k.data && len(k.head) < cap(k.head) {
		k.head = append(k.head, '\n')
	}
	k.n, k.data, k.atValue = 0, false, false
}

// endInSkipped is the end of the stream inside a skipped event.
func (s *oracleReader) endInSkipped(k *oracleSkipper, err error) error {
	off := s.evStart
	s.resetEvent()
	switch {
	case err != nil:
		return fmt.Errorf("reading event stream: %w", err)
	case k.hasData:
		return &UnterminatedEventError{Offset: off, Skipped: true}
	}
	return io.EOF
}

// discardLine consumes the rest of the current line, feeding it to k.
// eof is true when the stream ended before a line terminator; err is then
// a read error, if any.
func (s *oracleReader) discardLine(k *oracleSkipper) (eof bool, err error) {
	for {
		if s.skipLF {
			if s.start == s.end && s.err == nil {
				s.fill()
				continue
			}
			if s.start < s.end && s.buf[s.start] == '\n' {
				s.consume(1)
			}
			s.skipLF = false
		}
		chunk := s.buf[s.start:s.end]
		if i := bytes.IndexAny(chunk, "\r\n"); i >= 0 {
			k.feed(chunk[:i])
			s.skipLF = chunk[i] == '\r'
			s.consume(i + 1)
			return false, nil
		}
		k.feed(chunk)
		s.consume(len(chunk))
		if s.err != nil {
			if s.err == io.EOF {
				return true, nil
			}
			return true, s.err
		}
		s.fill()
	}
}

// oracleIsDataLine reports whether line is a data field ("data" alone or
// followed by a colon).
func oracleIsDataLine(line []byte) bool {
	return len(line) >= 4 && string(line[:4]) == "data" && (len(line) == 4 || line[4] == ':')
}

// field applies one line to the pending event. It reports false when the
// budget refused the bytes the line needs.
func (s *oracleReader) field(line []byte) bool {
	if line[0] == ':' {
		s.Comments++
		return true
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if !s.growData(len(s.data)+len(value)+1, len(s.data)) {
			return false
		}
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
		s.hasData = true
	case "event":
		return s.setField(&s.evType, value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			if !s.setField(&s.evID, value) {
				return false
			}
			s.hasID = true
		}
	case "retry":
		if len(value) > 0 && oracleAllDigits(value) {
			var n int64
			for _, c := range value {
				if n > (1<<62)/10 {
					break
				}
				n = n*10 + int64(c-'0')
			}
			s.retry, s.hasRet = n, true
		}
	}
	return true
}

func oracleAllDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
