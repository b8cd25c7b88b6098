package wire

import (
	"bytes"
	"io"
	"testing"
)

// TestSSELastEventID: the reader's LastEventID and Retry are what a client
// resumes a stream with (WHATWG HTML, "Server-sent events"): the id field
// of an event that ended, dispatched or not (an id-only event, SEP-1699's
// priming event with an empty data line), kept by the events after it
// that carry none, reset by an empty id; never an id with a NUL, nor one
// of an event the stream cut before its blank line.
func TestSSELastEventID(t *testing.T) {
	for _, c := range []struct {
		name, in string
		id       string
		hasID    bool
		retry    int64
		hasRetry bool
	}{
		{name: "none", in: "data: x\n\n"},
		{name: "priming", in: "id: p1\nretry: 2000\ndata: \n\n", id: "p1", hasID: true, retry: 2000, hasRetry: true},
		{name: "id only, no data", in: "id: a\n\n", id: "a", hasID: true},
		{name: "kept by a later event without id", in: "id: a\ndata: 1\n\ndata: 2\n\n", id: "a", hasID: true},
		{name: "a later id", in: "id: a\ndata: 1\n\nid: b\ndata: 2\n\n", id: "b", hasID: true},
		{name: "empty id resets", in: "id: a\ndata: 1\n\nid\ndata: 2\n\n", id: "", hasID: true},
		{name: "NUL ignored", in: "id: a\ndata: 1\n\nid: b\x00c\ndata: 2\n\n", id: "a", hasID: true},
		{name: "unterminated event does not count", in: "id: a\ndata: 1\n\nid: b\ndata: 2", id: "a", hasID: true},
		{name: "CRLF", in: "id: a\r\ndata: 1\r\n\r\n", id: "a", hasID: true},
		{name: "retry not digits ignored", in: "retry: 20x\nretry: 30\nretry: -1\ndata: 1\n\n", retry: 30, hasRetry: true},
		{name: "retry counts before the blank line", in: "id: a\ndata: 1\n\nretry: 5\ndata: 2", id: "a", hasID: true, retry: 5, hasRetry: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, pooled := range []bool{false, true} {
				var rd *SSEReader
				if pooled {
					rd = NewPooledSSEReader(&oneByteReader{b: []byte(c.in)}, 0)
				} else {
					rd = NewSSEReader(bytes.NewReader([]byte(c.in)), 0)
				}
				for {
					if _, err := rd.Next(); err == io.EOF || err != nil && !isSkip(err) {
						break
					}
				}
				id, ok := rd.LastEventID()
				ms, rok := rd.Retry()
				if id != c.id || ok != c.hasID || ms != c.retry || rok != c.hasRetry {
					t.Errorf("pooled %v: LastEventID %q %v, Retry %d %v; want %q %v, %d %v", pooled, id, ok, ms, rok, c.id, c.hasID, c.retry, c.hasRetry)
				}
				if pooled {
					rd.Recycle()
				}
			}
		})
	}
}

func isSkip(err error) bool {
	_, ok := err.(*SkippedEventError)
	return ok
}

// oneByteReader hands its bytes one at a time: every field split.
type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0], r.b = r.b[0], r.b[1:]
	return 1, nil
}
