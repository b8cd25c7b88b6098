package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// The protocol revisions the fault server tells apart.
const (
	Protocol2026 = wire.Protocol2026
	Protocol2025 = wire.Protocol2025
)

// DefaultMaxBody caps a request body the endpoint reads: 8 MiB. A larger
// body gets 413.
const DefaultMaxBody = 8 << 20

// Request is what the endpoint read from one request, shared by every
// scenario in the chain through the request context.
type Request struct {
	// Post reports an HTTP POST (only POSTs are matched and counted).
	Post bool
	// Body is the request body (POST only).
	Body []byte
	// Method is the JSON-RPC method ("" when the body is not a JSON-RPC
	// request or notification).
	Method string
	// ID is the JSON-RPC id (zero for a notification).
	ID wire.ID
	// Name is params.name of tools/call and prompts/get, or params.uri of
	// resources/read.
	Name string
	// Params is the raw params object.
	Params json.RawMessage
	// Args is params.arguments.
	Args json.RawMessage
	// Protocol is the request's protocol revision: the MCP-Protocol-Version
	// header, else _meta's protocolVersion, else initialize's
	// protocolVersion; "" when none says.
	Protocol string
	// Session is the Mcp-Session-Id header.
	Session string
	// Meta lists the keys of params._meta, sorted.
	Meta []string
	// Message is the JSON-RPC message of the body, parsed once: by the
	// layer in front (the proxy hands it down on the context, see
	// wire.MessageFor) or by the endpoint. The fields above are read from it.
	Message *wire.Message
	// Client is "name@version" from _meta's clientInfo or initialize's
	// clientInfo.
	Client string
	// Start is when the endpoint received the request.
	Start time.Time
	// Count holds this request's numbers at the endpoint: POST number, and
	// number among the POSTs of its method and (tools/call) of its tool.
	Count Count
	// Counters are the endpoint's counters after counting this request.
	Counters Counters

	mu      sync.Mutex
	firings []*Firing
	issued  string // StateHash of the requestState a scenario answered with
}

// Count numbers one request at its endpoint (all 1-based; 0 when the request
// has no method or tool).
type Count struct {
	Post   int `json:"post"`
	Method int `json:"method"`
	Tool   int `json:"tool"`
}

// Counters are an endpoint's counters: POSTs, and POSTs per JSON-RPC method
// and per tool (tools/call by params.name).
type Counters struct {
	Posts   int            `json:"posts"`
	Methods map[string]int `json:"methods"`
	Tools   map[string]int `json:"tools"`
}

func (c Counters) clone() Counters {
	out := Counters{Posts: c.Posts, Methods: make(map[string]int, len(c.Methods)), Tools: make(map[string]int, len(c.Tools))}
	for k, v := range c.Methods {
		out.Methods[k] = v
	}
	for k, v := range c.Tools {
		out.Tools[k] = v
	}
	return out
}

// Firing is one scenario's decision about one request: whether it matched,
// its number among the matches, whether it fired and why, the random draw
// and delay when there were any, and the scenario's notes. It is the
// record's type (record.FaultDecision), so that the decision lands in the
// record's typed "fault" member as it is.
type Firing = record.FaultDecision

type ctxKey struct{}

// RequestOf returns the Request the endpoint attached to r, or nil.
func RequestOf(r *http.Request) *Request {
	req, _ := r.Context().Value(ctxKey{}).(*Request)
	return req
}

func withRequest(r *http.Request, req *Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), ctxKey{}, req))
}

// issueState notes the requestState a scenario answered this request with
// (an input_required result), for the log.
func (q *Request) issueState(state string) {
	q.mu.Lock()
	q.issued = StateHash(json.RawMessage(strconv.Quote(state)))
	q.mu.Unlock()
}

// IssuedState returns the StateHash of the requestState a scenario answered
// this request with ("" when none did).
func (q *Request) IssuedState() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.issued
}

// StateHash identifies a requestState value without recording it; it is
// record.StateHash (the judge hashes request bodies with it too).
func StateHash(raw json.RawMessage) string { return record.StateHash(raw) }

func (q *Request) addFiring(f *Firing) {
	q.mu.Lock()
	q.firings = append(q.firings, f)
	q.mu.Unlock()
}

func (q *Request) firing(layer int) *Firing {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, f := range q.firings {
		if f.Layer == layer {
			return f
		}
	}
	return nil
}

func (q *Request) note(layer int, s string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, f := range q.firings {
		if f.Layer == layer {
			f.Notes = append(f.Notes, s)
			return
		}
	}
}

// passThrough notes s on the layer's decision and, unless its rules
// delayed the request (a change of its own), turns it from fired into
// passed through.
func (q *Request) passThrough(layer int, s string, delays bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, f := range q.firings {
		if f.Layer == layer {
			f.Notes = append(f.Notes, s)
			if !delays && f.Fired {
				f.Fired, f.PassedThrough = false, true
			}
			return
		}
	}
}

func (q *Request) addDelay(layer int, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, f := range q.firings {
		if f.Layer == layer {
			f.DelayMs = append(f.DelayMs, d.Milliseconds())
			return
		}
	}
}

// Firings returns a copy of the decisions taken so far, outermost first.
func (q *Request) Firings() []Firing {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Firing, len(q.firings))
	for i, f := range q.firings {
		out[i] = *f
		out[i].Notes = append([]string(nil), f.Notes...)
		out[i].DelayMs = append([]int64(nil), f.DelayMs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Layer < out[j].Layer })
	return out
}

// errBodyTooLarge is returned by readRequest for a body over the limit.
var errBodyTooLarge = errors.New("request body too large")

// readRequest reads r's body (POST only, up to limit bytes), puts it back
// for the next handler, and takes the JSON-RPC facts from the message on
// r's context when it was parsed from these bytes (the proxy's), else parses
// the body once.
func readRequest(r *http.Request, limit int64) (*Request, error) {
	req := &Request{Start: time.Now(), Post: r.Method == http.MethodPost, Session: r.Header.Get("Mcp-Session-Id")}
	req.Protocol = r.Header.Get("MCP-Protocol-Version")
	if !req.Post || r.Body == nil {
		return req, nil
	}
	body, err := readAtMost(r.Body, r.ContentLength, limit+1)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return req, err
	}
	if int64(len(body)) > limit {
		return req, errBodyTooLarge
	}
	req.Body = body
	req.read(wire.MessageFor(r.Context(), body))
	return req, nil
}

// readAtMost reads up to n bytes of body into one buffer sized by the
// declared length when there is one (io.ReadAll starts at 512 bytes and
// grows, allocating several times for a body of a few KiB).
func readAtMost(body io.Reader, contentLength, n int64) ([]byte, error) {
	if contentLength < 0 || contentLength >= n {
		return io.ReadAll(io.LimitReader(body, n))
	}
	buf := make([]byte, 0, contentLength+1) // +1: room to meet EOF without growing
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := body.Read(buf[len(buf):min(int64(cap(buf)), n)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// read takes the JSON-RPC facts of the body from its message m.
func (q *Request) read(m *wire.Message) {
	q.Message = m
	if m.Kind != wire.MessageRequest && m.Kind != wire.MessageNotification && m.Kind != wire.MessageResponse {
		return
	}
	q.Method = m.Method
	q.ID = m.ID
	q.Params = m.Params
	switch m.Method {
	case "tools/call", "prompts/get":
		q.Name = m.Tool
	case "resources/read":
		q.Name = m.URI
	}
	q.Args = m.Arguments
	q.Meta = m.MetaKeys
	if q.Protocol == "" {
		q.Protocol = m.Protocol
	}
	q.Client = m.Client
}

// MetaValue returns the raw value of params._meta's member key.
func (q *Request) MetaValue(key string) (json.RawMessage, bool) {
	if q.Message == nil {
		return nil, false
	}
	return q.Message.MetaField(key)
}

// capability returns the raw value of the client capability name declared
// in _meta's clientCapabilities (2026-07-28).
func (q *Request) capability(name string) (json.RawMessage, bool) {
	caps, ok := q.MetaValue(wire.MetaClientCapabilities)
	if !ok || wire.Kind(caps) != '{' {
		return nil, false
	}
	return wire.Field(caps, name)
}

// withoutParam returns body with the member key taken out of its params
// object, every other member's bytes as they were and in their order; ok is
// false (and body is returned as it is) when params has no such member.
func withoutParam(body []byte, key string) (out []byte, ok bool) {
	var b bytes.Buffer
	b.Grow(len(body))
	b.WriteByte('{')
	n := 0
	err := wire.EachField(body, func(k, v []byte) bool {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(k)
		b.WriteByte(':')
		if !wire.KeyIs(k, "params") || wire.Kind(v) != '{' {
			b.Write(v)
			return true
		}
		b.WriteByte('{')
		m := 0
		_ = wire.EachField(v, func(pk, pv []byte) bool {
			if wire.KeyIs(pk, key) {
				ok = true
				return true
			}
			if m > 0 {
				b.WriteByte(',')
			}
			m++
			b.Write(pk)
			b.WriteByte(':')
			b.Write(pv)
			return true
		})
		b.WriteByte('}')
		return true
	})
	if err != nil || !ok {
		return body, false
	}
	b.WriteByte('}')
	return b.Bytes(), true
}

// setBody replaces the request body seen by the next handler.
func setBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
}

// ErrShutdown is the cause a server gives the requests its shutdown
// cancels (context.WithCancelCause on its base context), so that a
// scenario's note names who ended a request: a request cancelled by it was
// not left by its client.
var ErrShutdown = errors.New("the server shut down")

// gone names who ended r's context: "the server shut down" when its cause
// is ErrShutdown, else "the client left".
func gone(r *http.Request) string {
	if errors.Is(context.Cause(r.Context()), ErrShutdown) {
		return "the server shut down"
	}
	return "the client left"
}
