package wire

import "bytes"

// SSEKind is the kind of an SSEToken.
type SSEKind uint8

// The kinds of SSE tokens.
const (
	// SSEField is a piece of a field line: its name is known, Value holds
	// the next bytes of its value.
	SSEField SSEKind = iota + 1
	// SSEComment is a piece of a comment line (one that starts with a
	// colon); Value holds the next bytes after the colon.
	SSEComment
	// SSEEnd is a blank line that ends a block of lines: an event when the
	// block had a data field (HasData), otherwise a block the WHATWG rules
	// do not dispatch (a keep-alive comment, a bare id). Blank lines that
	// follow no line (before the first block, or after another blank line)
	// end nothing and are not reported.
	SSEEnd
)

// SSEFieldName names the field of an SSEField token.
type SSEFieldName uint8

// The field names the WHATWG rules give a meaning to; every other name is
// FieldOther.
const (
	FieldOther SSEFieldName = iota
	FieldData
	FieldEvent
	FieldID
	FieldRetry
)

// SSEToken is one thing an SSEScanner found in the bytes fed to it.
//
// A field or comment line arrives as one or more pieces, in order: a line
// within one Feed is one token, a line that spans Feeds is a token for
// each part of its value that arrived (and a last one, possibly with an
// empty Value, when its terminator does). Value points into the bytes
// given to Feed and is only valid until the next call to Next.
type SSEToken struct {
	Kind SSEKind
	// Field is the field's name, for SSEField.
	Field SSEFieldName
	// Value is the next piece of the field's value (after the colon and the
	// one space the rules remove) or of the comment's text.
	Value []byte
	// First marks the first piece of a line, Last the last: the line ended
	// (with a CR, LF or CRLF, or with the stream when Unterminated).
	First, Last bool
	// Unterminated marks a last piece cut by the end of the stream (Close)
	// before its line end.
	Unterminated bool
	// Line is the stream offset of the line's first byte. For SSEEnd it is
	// the offset of the block's first line.
	Line int64
	// End is the stream offset just past Value (for a last piece, the
	// offset of the line terminator). For SSEEnd it is the offset just past
	// the blank line's terminator; when that is a CR whose LF was not fed
	// yet, End stops at the CR (the LF is skipped when it arrives).
	End int64
	// HasData reports, for SSEEnd, that the block had a data field: it is
	// an event.
	HasData bool
}

// Scanner phases within a line.
const (
	phaseStart = iota // no byte of the line yet
	phaseName         // in the field name, before any colon
	phaseValue        // after the colon
)

// SSEScanner splits an event stream into fields, comments and the blank
// lines that end events, by the WHATWG HTML rules (§9.2.6): CR, LF and
// CRLF end lines (a CR at the end of one Feed and an LF at the start of
// the next are one line end), one leading UTF-8 byte order mark is
// skipped, one space after the colon is removed. It is push-mode: the
// caller feeds bytes as they arrive, in any chunking, and takes the tokens
// they complete; the tokens are the same however the bytes are cut, but
// for the split of a line's value into pieces and an SSEEnd's End at a
// split CRLF.
//
// The scanner holds no line in memory (a value arrives in pieces that
// point into the fed bytes), so it needs no bound; a consumer that keeps
// values bounds what it keeps. It assembles nothing: SSEReader builds
// events from its tokens.
type SSEScanner struct {
	p      []byte // fed bytes not yet scanned
	off    int64  // stream offset of p[0]
	lf     int64  // stream offset of the next LF in p (or of p's end); -1 unknown
	closed bool
	done   bool // the end of the stream has been reported

	bomSeen int  // bytes of a leading BOM matched so far
	started bool // past the point where a BOM may be
	cr      bool // the last line ended in CR: an LF next is part of it

	phase   int
	lineOff int64
	name    [5]byte
	nameLen int
	comment bool
	field   SSEFieldName
	space   bool // the next value byte is the first after the colon
	first   bool // no piece of the line has been returned yet

	inBlock    bool
	blockStart int64
	hasData    bool

	tok SSEToken // what Next returns

	// BOM reports whether a leading byte order mark was skipped.
	BOM bool
}

// Feed hands the scanner the next bytes of the stream. Take every token
// they complete with Next (until it reports false) before the next Feed;
// the scanner keeps p until then, and the caller must not change it.
func (s *SSEScanner) Feed(p []byte) {
	if len(s.p) > 0 {
		panic("wire: SSEScanner.Feed before Next used up the previous bytes")
	}
	s.p, s.lf = p, -1
}

// lineEndIndex returns the index in s.p of the next CR or LF, or -1. The next
// LF's place is remembered, so that a stream that ends its lines with CR
// alone is not searched to its end for an LF at every line.
func (s *SSEScanner) lineEndIndex() int {
	if s.lf < s.off {
		if i := bytes.IndexByte(s.p, '\n'); i >= 0 {
			s.lf = s.off + int64(i)
		} else {
			s.lf = s.off + int64(len(s.p))
		}
	}
	lim := int(s.lf - s.off)
	if j := bytes.IndexByte(s.p[:lim], '\r'); j >= 0 {
		return j
	}
	if lim < len(s.p) {
		return lim
	}
	return -1
}

// Close marks the end of the stream: Next then reports a line cut by it
// (a last piece with Unterminated set). The block in progress, if any, is
// not ended (InBlock and HasData tell what it was).
func (s *SSEScanner) Close() { s.closed = true }

// Offset returns the stream offset of the next byte Next will scan: the
// bytes before it have been accounted for in the tokens returned.
func (s *SSEScanner) Offset() int64 { return s.off }

// InBlock reports that lines of a block have been scanned since the last
// SSEEnd; HasData that one of them was a data field. At the end of a
// stream they tell whether it ended inside an event.
func (s *SSEScanner) InBlock() bool { return s.inBlock }

// HasData reports that the block in progress has a data field.
func (s *SSEScanner) HasData() bool { return s.hasData }

// BlockStart returns the stream offset of the block in progress.
func (s *SSEScanner) BlockStart() int64 { return s.blockStart }

func (s *SSEScanner) consume(n int) {
	s.p = s.p[n:]
	s.off += int64(n)
}

var bom = [3]byte{0xEF, 0xBB, 0xBF}

// Next returns the next token the bytes fed so far complete, or nil when
// they are used up (feed more, or after Close, the stream is done). The
// token is the scanner's own and only valid until the next call.
func (s *SSEScanner) Next() *SSEToken {
	for {
		if len(s.p) == 0 {
			if s.closed && !s.done {
				s.done = true
				if !s.started && s.bomSeen > 0 {
					// The stream ended inside what could have been a BOM:
					// those bytes start the first line.
					s.started = true
					s.startLine(s.off - int64(s.bomSeen))
					s.addName(bom[:s.bomSeen])
				}
				if s.phase != phaseStart {
					return s.lineEnd(nil, true)
				}
			}
			return nil
		}
		if s.cr {
			s.cr = false
			if s.p[0] == '\n' {
				s.consume(1)
				continue
			}
		}
		if !s.started {
			if s.p[0] == bom[s.bomSeen] {
				s.bomSeen++
				s.consume(1)
				if s.bomSeen == len(bom) {
					s.started, s.BOM = true, true
				}
				continue
			}
			// Not a BOM: the bytes matched so far start the first line.
			s.started = true
			if s.bomSeen > 0 {
				s.startLine(s.off - int64(s.bomSeen))
				s.addName(bom[:s.bomSeen])
			}
		}
		switch s.phase {
		case phaseStart:
			switch s.p[0] {
			case '\n', '\r':
				s.cr = s.p[0] == '\r'
				s.consume(1)
				if !s.inBlock {
					continue // a blank line that ends nothing
				}
				return s.blockEnd()
			}
			s.startLine(s.off)
			if i := s.lineEndIndex(); i >= 0 {
				// The whole line is here: take it in one step.
				return s.wholeLine(i)
			}
			continue
		case phaseName:
			i := s.lineEndIndex()
			rest := s.p
			if i >= 0 {
				rest = s.p[:i]
			}
			if c := bytes.IndexByte(rest, ':'); c >= 0 {
				i = c
			}
			if i < 0 {
				s.addName(s.p)
				s.consume(len(s.p))
				continue
			}
			s.addName(s.p[:i])
			if s.p[i] == ':' {
				s.consume(i + 1)
				s.phase = phaseValue
				if s.nameLen == 0 {
					s.comment = true
				} else {
					s.field = s.fieldName()
					s.space = true
					if s.field == FieldData {
						s.hasData = true
					}
				}
				continue
			}
			// A line without a colon: the whole line is the name, the
			// value is empty.
			s.field = s.fieldName()
			if s.field == FieldData {
				s.hasData = true
			}
			end := s.off + int64(i)
			s.cr = s.p[i] == '\r'
			s.consume(i + 1)
			return s.token(nil, end, true, false)
		default: // phaseValue
			if s.space {
				s.space = false
				if s.p[0] == ' ' {
					s.consume(1)
					continue
				}
			}
			i := s.lineEndIndex()
			if i < 0 {
				v := s.p
				s.consume(len(v))
				return s.token(v, s.off, false, false)
			}
			v := s.p[:i]
			end := s.off + int64(i)
			s.cr = s.p[i] == '\r'
			s.consume(i + 1)
			return s.token(v, end, true, false)
		}
	}
}

// startLine begins a field or comment line at off.
func (s *SSEScanner) startLine(off int64) {
	s.phase, s.lineOff, s.nameLen, s.comment, s.field, s.space, s.first = phaseName, off, 0, false, FieldOther, false, true
	if !s.inBlock {
		s.inBlock, s.blockStart, s.hasData = true, off, false
	}
}

func (s *SSEScanner) addName(b []byte) {
	if s.nameLen < len(s.name) {
		copy(s.name[s.nameLen:], b)
	}
	s.nameLen += len(b)
}

// wholeLine returns the token of a line that lies whole in s.p, ending at
// index i (a CR or LF).
func (s *SSEScanner) wholeLine(i int) *SSEToken {
	line := s.p[:i]
	var v []byte
	if c := bytes.IndexByte(line, ':'); c == 0 {
		s.comment, v = true, line[1:]
	} else if c > 0 {
		s.field, v = fieldNameOf(line[:c]), line[c+1:]
		if len(v) > 0 && v[0] == ' ' {
			v = v[1:]
		}
	} else {
		s.field = fieldNameOf(line)
	}
	if s.field == FieldData {
		s.hasData = true
	}
	end := s.off + int64(i)
	s.cr = s.p[i] == '\r'
	s.consume(i + 1)
	return s.token(v, end, true, false)
}

func (s *SSEScanner) fieldName() SSEFieldName {
	if s.nameLen > len(s.name) {
		return FieldOther
	}
	return fieldNameOf(s.name[:s.nameLen])
}

func fieldNameOf(name []byte) SSEFieldName {
	switch string(name) {
	case "data":
		return FieldData
	case "event":
		return FieldEvent
	case "id":
		return FieldID
	case "retry":
		return FieldRetry
	}
	return FieldOther
}

// lineEnd is the token that ends the current line at the end of the
// stream.
func (s *SSEScanner) lineEnd(v []byte, unterminated bool) *SSEToken {
	if s.phase == phaseName {
		s.field = s.fieldName()
		if s.field == FieldData {
			s.hasData = true
		}
	}
	return s.token(v, s.off, true, unterminated)
}

// token returns a piece of the current line ending at end.
func (s *SSEScanner) token(v []byte, end int64, last, unterminated bool) *SSEToken {
	t := &s.tok
	*t = SSEToken{Kind: SSEField, Field: s.field, Value: v, First: s.first, Last: last, Unterminated: unterminated, Line: s.lineOff, End: end}
	if s.comment {
		t.Kind, t.Field = SSEComment, FieldOther
	}
	s.first = false
	if last {
		s.phase = phaseStart
	}
	return t
}

// blockEnd is the SSEEnd token for the blank line just consumed.
func (s *SSEScanner) blockEnd() *SSEToken {
	t := &s.tok
	*t = SSEToken{Kind: SSEEnd, Line: s.blockStart, End: s.off, HasData: s.hasData}
	if s.cr && len(s.p) > 0 && s.p[0] == '\n' {
		// The LF of a CRLF blank line, if it is here already, belongs to it.
		s.consume(1)
		s.cr = false
		t.End = s.off
	}
	s.inBlock, s.hasData = false, false
	return t
}
