package record

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// headerField is one header of a record as the encoder reads it: its name,
// its redaction rule (classifyHeader, looked up once per record) and its
// values as the producer gave them.
type headerField struct {
	name   string
	rule   headerRule
	values []string
}

// readHeaders appends the headers of h to fs, sorted by name (the order
// encoding/json writes a map's keys in), each with its rule.
func readHeaders(fs []headerField, h http.Header) []headerField {
	start := len(fs)
	for name, vs := range h {
		fs = append(fs, headerField{name: name, rule: classifyHeader(name), values: vs})
	}
	slices.SortFunc(fs[start:], func(a, b headerField) int { return strings.Compare(a.name, b.name) })
	return fs
}

// encodeState is the room encodeInto works in, reused from record to
// record (encodeStates): the record's redacted copy and its headers read
// once. Held on the heap and not on the caller's stack, so that encoding a
// record does not grow the stack of the goroutine that writes it (a
// finishing goroutine per SSE exchange, whose stack would be copied).
type encodeState struct {
	c Record
	h lineHeaders
}

// lineHeaders are a record's headers as readHeaders read them, to be
// redacted by red as appendRecord writes them.
type lineHeaders struct {
	red       *Redactor
	req, resp []headerField
}

var encodeStates = sync.Pool{New: func() any { return new(encodeState) }}

// maxPooledHeaders bounds the header fields an encodeState keeps for the
// next record.
const maxPooledHeaders = 256

// put clears st (it must hold nothing of the record it encoded) and gives
// it back to the pool.
func (st *encodeState) put() {
	st.c = Record{}
	h := &st.h
	h.red = nil
	if cap(h.req) > maxPooledHeaders || cap(h.resp) > maxPooledHeaders {
		return
	}
	clear(h.req)
	clear(h.resp)
	h.req, h.resp = h.req[:0], h.resp[:0]
	encodeStates.Put(st)
}
