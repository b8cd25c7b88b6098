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
	// out is where the redacted values start in lineHeaders.vals (set by
	// redact).
	out int
}

// readHeaders appends the headers of h to fs, sorted by name (the order
// encoding/json writes a map's keys in), each with its rule.
func readHeaders(fs []headerField, h http.Header) []headerField {
	start := len(fs)
	for name, vs := range h {
		fs = append(fs, headerField{name: name, rule: classifyHeader(name), values: vs})
	}
	sortFields(fs[start:])
	return fs
}

// sortFields sorts fs by name. A record's few fields are sorted by
// insertion, with the names compared in place (slices.SortFunc calls a
// comparison function per step: twice the time for the 4 and 3 fields of
// the proxy's JSON record); more than 12, as slices.SortFunc would, by it.
// The names of a header map differ, so no order between equal names is
// lost.
func sortFields(fs []headerField) {
	if len(fs) > 12 {
		slices.SortFunc(fs, func(a, b headerField) int { return strings.Compare(a.name, b.name) })
		return
	}
	for i := 1; i < len(fs); i++ {
		if fs[i].name > fs[i-1].name {
			continue
		}
		f := fs[i]
		j := i
		for ; j > 0 && f.name < fs[j-1].name; j-- {
			fs[j] = fs[j-1]
		}
		fs[j] = f
	}
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
	vals      []string // the redacted values of req's then resp's fields
}

// redact redacts every value of the headers with red, as Redactor.Headers
// does, into h.vals. The encoder does it before it writes the line, so
// that the redactor's frames (Scrub, the patterns) are not called below
// appendRecordHeaders' on the stack of the goroutine writing the record.
func (h *lineHeaders) redact(red *Redactor) {
	h.red = red
	h.vals = h.vals[:0]
	for _, fs := range [2][]headerField{h.req, h.resp} {
		for i := range fs {
			f := &fs[i]
			f.out = len(h.vals)
			for _, v := range f.values {
				h.vals = append(h.vals, red.headerValue(f.rule, v))
			}
		}
	}
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
	if cap(h.req) > maxPooledHeaders || cap(h.resp) > maxPooledHeaders || cap(h.vals) > maxPooledHeaders {
		return
	}
	clear(h.req)
	clear(h.resp)
	clear(h.vals)
	h.req, h.resp, h.vals = h.req[:0], h.resp[:0], h.vals[:0]
	encodeStates.Put(st)
}
