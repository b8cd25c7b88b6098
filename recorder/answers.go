package recorder

import (
	"sync"

	"github.com/mcpdiag/mcpdiag/wire"
)

// maxServerRequests bounds the server requests the recorder remembers
// until their answers come: past it, the oldest is forgotten (its answer's
// record then has no method).
const maxServerRequests = 1024

// serverRequests remembers the method of each server request (a JSON-RPC
// request the server sent on an event stream: elicitation/create,
// sampling/createMessage, roots/list) by session and id, so that the
// record of the client's answer, POSTed later, can name the method it
// answers.
type serverRequests struct {
	mu    sync.Mutex
	byKey map[string]string
	order []string
}

// serverRequestKey is the key of the server request of id on a stream of
// session: the id by its value (wire.ID.Key), so that an answer of the
// same id spelled otherwise ("\u0031" for "1", 1.0 for 1) names the
// request it answers, as the server pairs it.
func serverRequestKey(session string, id wire.ID) string {
	var b [128]byte
	k := append(append(b[:0], session...), 0)
	return string(id.AppendKey(k))
}

// saw notes msg, the data of an event of a stream of session that is a
// server request (wire.IsServerRequest said so, or the classifier, which
// asks the same), by its id.
func (s *serverRequests) saw(session string, msg []byte) {
	m := wire.ParseMessage(msg)
	k := serverRequestKey(session, m.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey == nil {
		s.byKey = make(map[string]string)
	}
	switch old, ok := s.byKey[k]; {
	case !ok:
		s.order = append(s.order, k)
		s.byKey[k] = m.Method
	case old != m.Method:
		// Two server requests of one id waiting at once under one key
		// (no Mcp-Session-Id: 2024-11-05 HTTP+SSE clients, stateless
		// servers; each connection numbering its requests from 0): the
		// answer cannot tell which it answers, and names neither.
		s.byKey[k] = ambiguousServerRequest
	}
	for len(s.order) > maxServerRequests {
		delete(s.byKey, s.order[0])
		s.order = s.order[1:]
	}
}

// answered returns, and forgets, the method of the server request of
// session that id answers ("" when the recorder did not see it).
func (s *serverRequests) answered(session string, id wire.ID) string {
	m, _ := s.answeredOK(session, id)
	return m
}

// answeredOK is answered, and reports whether the request was noted at all
// (ok: an ambiguous one too).
func (s *serverRequests) answeredOK(session string, id wire.ID) (string, bool) {
	k := serverRequestKey(session, id)
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.byKey[k]
	if ok {
		delete(s.byKey, k)
		for i, o := range s.order {
			if o == k {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
	}
	if m == ambiguousServerRequest {
		return "", ok
	}
	return m, ok
}

// ambiguousServerRequest marks a key two server requests with different
// methods were seen under, neither answered yet (no method is "\x00").
const ambiguousServerRequest = "\x00"

// maxWatchedEvent bounds the data of an event the writer looks at for a
// server request before forwarding it (requestWatch): a request in a
// larger event is noted by the classifier, as it reads the stream, which
// may be after the client answered it (docs/decisions.md).
const maxWatchedEvent = 64 << 10

// requestWatch finds the server requests in an event stream's bytes as
// they are written, before they are forwarded, so that the recorder knows
// a request before the client can have read it: a client that answers at
// once POSTs its answer while the stream's classifier, which reads the
// bytes after they went out (and a short stream's only once it ended),
// may not have seen the request yet. It keeps the data of the event being
// written (up to maxWatchedEvent), joined as wire.SSEReader joins it.
type requestWatch struct {
	scan  wire.SSEScanner
	data  []byte
	lines int  // data lines of the event so far
	over  bool // the event's data is over maxWatchedEvent
	// none: the event's first data bytes show it is no request (a result
	// or an error: wire.HeadRulesOutRequest); its data is not kept.
	none bool
	// typ is the event's type, its first bytes: a longer type is none
	// of "" and "message" either (wire.EventCarriesMessage).
	typ    [8]byte
	typLen int

	// tried: the first forward looked whether the stream may be
	// classified on the forwarding goroutine (startInline).
	tried bool
}

// requestWatches holds the watches of streams that ended.
var requestWatches = sync.Pool{New: func() any { return new(requestWatch) }}

// newRequestWatch returns a watch for a new stream.
func newRequestWatch() *requestWatch {
	w := requestWatches.Get().(*requestWatch)
	*w = requestWatch{}
	return w
}

// release gives w back to requestWatches.
func (w *requestWatch) release() {
	putChunk(w.data)
	w.data = nil
	requestWatches.Put(w)
}

// maxWatchHead is how much of an event's data the watch reads for a
// member that shows it is no request (wire.HeadRulesOutRequest): a
// response's result or error, which a server writes after no more than
// the jsonrpc and id members (the TypeScript SDK first). It reads them
// once the data reaches minWatchHead bytes: a smaller event is kept and
// read whole at its end, which costs no more than its head would.
const (
	maxWatchHead = 128
	minWatchHead = 1 << 10
)

// feed scans b, the next bytes of the stream, and notes in s (under
// session) each server request whose event b completes.
func (w *requestWatch) feed(b []byte, s *serverRequests, session string) {
	w.scan.Feed(b)
	for t := w.scan.Next(); t != nil; t = w.scan.Next() {
		switch t.Kind {
		case wire.SSEField:
			if t.Field == wire.FieldEvent {
				if t.First {
					w.typLen = 0
				}
				w.typLen += copy(w.typ[w.typLen:], t.Value)
				continue
			}
			if t.Field != wire.FieldData || w.over || w.none {
				continue
			}
			sep := t.First && w.lines > 0
			if t.First {
				w.lines++
			}
			n := len(w.data) + len(t.Value)
			if sep {
				n++
			}
			if n > maxWatchedEvent {
				w.over, w.data = true, w.data[:0]
				continue
			}
			prev := len(w.data)
			head := prev < minWatchHead && n >= minWatchHead
			if head && prev == 0 && wire.HeadRulesOutRequest(t.Value[:maxWatchHead]) {
				// A response shows its result or error member in its
				// first bytes, whatever the order of its members: its
				// data is neither kept nor read again.
				w.none = true
				continue
			}
			if cap(w.data) < n {
				// From the chunk pools (n is at most maxPooledChunk):
				// a stream of large events grows no buffer per event.
				d := append(getChunk(max(n, minPooledChunk)), w.data...)
				putChunk(w.data)
				w.data = d
			}
			if sep {
				w.data = append(w.data, '\n')
			}
			w.data = append(w.data, t.Value...)
			if head && prev > 0 && wire.HeadRulesOutRequest(w.data[:maxWatchHead]) {
				// (The data came in more than one piece.)
				w.none, w.data = true, w.data[:0]
			}
		case wire.SSEEnd:
			// The one rule the classifier asks too; string(typ) does not
			// escape, and is not allocated.
			if t.HasData && !w.over && !w.none && wire.IsServerRequest(string(w.typ[:w.typLen]), w.data) {
				s.saw(session, w.data)
			}
			w.lines, w.over, w.none = 0, false, false
			w.typLen = 0
			// The data buffer goes back to the chunk pools at every
			// event's end: an idle stream holds none (it held a 1 KiB
			// chunk, up to 4 KiB, before idle18), for a pool's get and put
			// per event that had data kept.
			putChunk(w.data)
			w.data = nil
		}
	}
}
