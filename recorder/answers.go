package recorder

import (
	"sync"

	"github.com/mcpdiag/mcpdiag/classify"
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

func serverRequestKey(session string, id wire.ID) string {
	return session + "\x00" + string(id.Raw())
}

// saw notes a server request seen on a stream of session.
func (s *serverRequests) saw(session string, msg []byte) {
	m := wire.ParseMessage(msg)
	if m.Kind != wire.MessageRequest || m.ID.IsZero() {
		return
	}
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
		return ""
	}
	return m
}

// ambiguousServerRequest marks a key two server requests with different
// methods were seen under, neither answered yet (no method is "\x00").
const ambiguousServerRequest = "\x00"

// unseenServerRequest is the method the answer to a server request the
// recorder did not see is judged under (its record's method stays empty).
const unseenServerRequest = "(server request)"

// judgeAnswer judges a client's answer to a server request (a POST whose
// body is a JSON-RPC response) that the server accepted (2xx, no
// JSON-RPC answer due) as the answer it is, as the stdio proxy judges the
// answer line: the client's result is RESULT_SUCCESS, its JSON-RPC error
// JSONRPC_ERROR, under the server request's method when the recorder saw
// it. ok is false when the answer is not judged so (the server refused
// the POST, or its body was not read whole).
func judgeAnswer(method string, msg *wire.Message, body []byte, protocol string) (*classify.Result, bool) {
	if len(body) == 0 {
		return nil, false
	}
	if method == "" {
		// Not seen: judged as the answer to some request, not (as the
		// classifier reads no method) to a tools/call.
		method = unseenServerRequest
	}
	cex := &classify.Exchange{Method: method, ID: msg.ID, ProtocolVersion: protocol}
	cex.Carries(body)
	res, err := (&classify.Classifier{}).Classify(cex)
	if err != nil {
		return nil, false
	}
	return res, true
}
