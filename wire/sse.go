package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// DefaultMaxEventSize bounds the bytes of one SSE event (all its lines) that
// an SSEReader holds in memory. Large tool results arrive as one event, and
// SDKs with 1 MiB line caps fail on them in the wild, so the default is
// generous; the point is a bound, not a small one.
const DefaultMaxEventSize = 16 << 20

// ErrEventTooLarge is returned when one event exceeds the reader's bound.
var ErrEventTooLarge = errors.New("SSE event exceeds the size limit")

// UnterminatedEventError is returned at the end of a stream whose last event
// has data but no terminating blank line. Per the WHATWG rules such an event is
// never dispatched; Data is what it would have carried.
type UnterminatedEventError struct {
	Data   []byte
	Offset int64
}

func (e *UnterminatedEventError) Error() string {
	return fmt.Sprintf("stream ended inside an event at byte %d (no terminating blank line; WHATWG: the event is not dispatched)", e.Offset)
}

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
// without its blank line discarded.
type SSEReader struct {
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

// fill reads more bytes into the buffer, compacting it first.
func (s *SSEReader) fill() {
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
func (s *SSEReader) readLine() (line []byte, eof bool, err error) {
	// A line that spans buffer refills is assembled in the spare capacity of
	// s.data (see appendLine): the value of a data line then moves down in
	// place when field appends it, instead of being copied a second time.
	s.line = s.data[len(s.data):len(s.data)]
	spanning := false
	for {
		if s.skipLF && s.start < s.end {
			if s.buf[s.start] == '\n' {
				s.consume(1)
			}
			s.skipLF = false
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
					return nil, false, ErrEventTooLarge
				}
				s.line = s.appendLine(chunk[:i])
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
				s.consume(len(rest))
				if spanning {
					s.line = s.appendLine(rest)
					rest = s.line
				}
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
				return nil, false, ErrEventTooLarge
			}
			s.line = s.appendLine(chunk)
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
// of its own.
func (s *SSEReader) appendLine(b []byte) []byte {
	if need := len(s.line) + len(b); need > cap(s.line) {
		want := min(max(2*cap(s.line), need), max(s.max, need))
		dl, ll := len(s.data), len(s.line)
		both := slices.Grow(s.data[:dl+ll], want-ll)
		s.data, s.line = both[:dl], both[dl:dl+ll]
	}
	return append(s.line, b...)
}

func (s *SSEReader) consume(n int) {
	s.start += n
	s.pos += int64(n)
	s.Bytes += int64(n)
}

func (s *SSEReader) resetEvent() {
	s.data = s.data[:0]
	s.evType = s.evType[:0]
	s.evID = s.evID[:0]
	s.hasID, s.hasRet, s.hasData, s.inEvent = false, false, false, false
	s.evBytes = 0
}

// Next returns the next dispatched event. At a clean end of stream it returns
// io.EOF; at the end of a stream cut inside an event with data it returns an
// *UnterminatedEventError; a read error is returned wrapped.
func (s *SSEReader) Next() (Event, error) {
	for {
		lineStart := s.pos
		if s.skipLF && s.start < s.end && s.buf[s.start] == '\n' {
			lineStart++
		}
		line, eof, err := s.readLine()
		if err == ErrEventTooLarge {
			return Event{}, fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, s.max)
		}
		if eof {
			if len(line) > 0 {
				// A last line with no terminator still counts as a field of
				// the pending event; it is never dispatched.
				if !s.inEvent {
					s.inEvent, s.evStart = true, lineStart
				}
				s.field(line)
			}
			pending := s.hasData
			data := append([]byte(nil), s.data...)
			off := s.evStart
			s.resetEvent()
			if err != nil {
				return Event{}, fmt.Errorf("reading event stream: %w", err)
			}
			if pending {
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
			return Event{}, fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, s.max)
		}
		s.field(line)
	}
}

func (s *SSEReader) field(line []byte) {
	if line[0] == ':' {
		s.Comments++
		return
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
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
		s.hasData = true
	case "event":
		s.evType = append(s.evType[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.evID = append(s.evID[:0], value...)
			s.hasID = true
		}
	case "retry":
		if len(value) > 0 && allDigits(value) {
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
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
