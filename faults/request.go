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
	// MetaValues holds params._meta.
	MetaValues map[string]json.RawMessage
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
// for the next handler, and parses the JSON-RPC facts.
func readRequest(r *http.Request, limit int64) (*Request, error) {
	req := &Request{Start: time.Now(), Post: r.Method == http.MethodPost, Session: r.Header.Get("Mcp-Session-Id")}
	req.Protocol = r.Header.Get("MCP-Protocol-Version")
	if !req.Post || r.Body == nil {
		return req, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return req, err
	}
	if int64(len(body)) > limit {
		return req, errBodyTooLarge
	}
	req.Body = body
	req.parse()
	return req, nil
}

// parse reads the JSON-RPC facts of the body.
func (q *Request) parse() {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if wire.Kind(q.Body) != '{' || json.Unmarshal(q.Body, &m) != nil {
		return
	}
	q.Method = m.Method
	if len(m.ID) > 0 {
		q.ID = wire.IDFromRaw(bytes.TrimSpace(m.ID))
	}
	q.Params = m.Params
	if wire.Kind(m.Params) != '{' {
		return
	}
	var p struct {
		Name            string                     `json:"name"`
		URI             string                     `json:"uri"`
		Arguments       json.RawMessage            `json:"arguments"`
		Meta            map[string]json.RawMessage `json:"_meta"`
		ProtocolVersion string                     `json:"protocolVersion"`
		ClientInfo      *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch q.Method {
	case "tools/call", "prompts/get":
		q.Name = p.Name
	case "resources/read":
		q.Name = p.URI
	}
	q.Args = p.Arguments
	q.MetaValues = p.Meta
	for k := range p.Meta {
		q.Meta = append(q.Meta, k)
	}
	sort.Strings(q.Meta)
	if q.Protocol == "" {
		if v, ok := p.Meta[wire.MetaProtocolVersion]; ok {
			_ = json.Unmarshal(v, &q.Protocol)
		}
	}
	if q.Protocol == "" && q.Method == "initialize" {
		q.Protocol = p.ProtocolVersion
	}
	info := p.ClientInfo
	if v, ok := p.Meta[wire.MetaClientInfo]; ok {
		_ = json.Unmarshal(v, &info)
	}
	if info != nil && info.Name != "" {
		q.Client = info.Name + "@" + info.Version
	}
}

// capabilities returns _meta's client capabilities (2026-07-28), or nil.
func (q *Request) capabilities() map[string]json.RawMessage {
	raw, ok := q.MetaValues[wire.MetaClientCapabilities]
	if !ok {
		return nil
	}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(raw, &caps)
	return caps
}

// setBody replaces the request body seen by the next handler.
func setBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
}
