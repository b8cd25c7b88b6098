package proxy

import "bytes"

// eventScanner finds where SSE events end in a byte stream as it passes, so
// that the proxy can time each event's arrival without parsing it (the
// classifier parses it later, on its own goroutine). An event ends at the
// blank line after a block that had a data field; CR, LF and CRLF end lines,
// and a CRLF split across writes is one line end, as in the WHATWG rules.
// Comment-only and data-less blocks (keep-alives, a bare id) are not events.
type eventScanner struct {
	off     int64 // stream offset of the next byte
	lineLen int   // bytes in the current line so far
	head    [5]byte
	cr      bool // the previous byte was a CR
	hasData bool // the current block has a data field
}

// scan feeds p and calls end with the stream offset just past each event's
// terminating blank line.
func (s *eventScanner) scan(p []byte, end func(off int64)) {
	for len(p) > 0 {
		if s.cr {
			s.cr = false
			if p[0] == '\n' {
				s.off++
				p = p[1:]
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			s.addToLine(p)
			s.off += int64(len(p))
			return
		}
		s.addToLine(p[:i])
		s.off += int64(i) + 1
		s.cr = p[i] == '\r'
		if s.lineLen == 0 {
			if s.hasData {
				off := s.off
				if s.cr {
					// The LF of a CRLF belongs to this event too; if it is in
					// this write, count it now.
					if i+1 < len(p) && p[i+1] == '\n' {
						off++
					}
				}
				end(off)
			}
			s.hasData = false
		} else if s.lineLen >= 4 && string(s.head[:4]) == "data" && (s.lineLen == 4 || s.head[4] == ':') {
			s.hasData = true
		}
		s.lineLen = 0
		p = p[i+1:]
	}
}

func (s *eventScanner) addToLine(b []byte) {
	if s.lineLen < len(s.head) {
		copy(s.head[s.lineLen:], b)
	}
	s.lineLen += len(b)
}
