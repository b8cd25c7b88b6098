package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpdiag/mcpdiag/wire"
)

// idOrNull returns the raw id, or null when the request had none.
func idOrNull(id wire.ID) []byte {
	if id.IsZero() {
		return []byte("null")
	}
	return id.Raw()
}

// errorMessage encodes a JSON-RPC error response. data is omitted when nil.
func errorMessage(id wire.ID, code int, message string, data json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idOrNull(id))
	b.WriteString(`,"error":{"code":`)
	b.WriteString(strconv.Itoa(code))
	b.WriteString(`,"message":`)
	m, _ := json.Marshal(message)
	b.Write(m)
	if len(data) > 0 {
		b.WriteString(`,"data":`)
		b.Write(data)
	}
	b.WriteString("}}")
	return b.Bytes()
}

// resultMessage encodes a JSON-RPC result response.
func resultMessage(id wire.ID, result []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idOrNull(id))
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString("}")
	return b.Bytes()
}

// writeJSON writes body as application/json with status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// startSSE sends the headers of an event stream.
func startSSE(w http.ResponseWriter, status int) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	w.WriteHeader(status)
	flush(w)
}

// sseEvent frames one message the way go-sdk does: an event type line and
// one data line.
func sseEvent(data []byte) []byte {
	b := make([]byte, 0, len(data)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// flush sends what was written so far.
func flush(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() }

// progressToken returns the request's progress token, or its id when the
// client gave none (so the notifications stay tied to the request).
func progressToken(req *Request) []byte {
	if t, ok := req.MetaValue("progressToken"); ok {
		return bytes.TrimSpace(t)
	}
	return idOrNull(req.ID)
}

// progressMessage encodes notifications/progress number i of total.
func progressMessage(token []byte, i, total int) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(token) +
		`,"progress":` + strconv.Itoa(i) + `,"total":` + strconv.Itoa(total) + `,"message":"step ` + strconv.Itoa(i) + ` of ` + strconv.Itoa(total) + `"}}`)
}

// captured is a response a handler wrote into memory.
type captured struct {
	status int
	header http.Header
	body   bytes.Buffer
}

// captureWriter is the ResponseWriter capture gives the handler.
type captureWriter struct{ c *captured }

func (w captureWriter) Header() http.Header { return w.c.header }
func (w captureWriter) WriteHeader(code int) {
	if w.c.status == 0 {
		w.c.status = code
	}
}
func (w captureWriter) Write(p []byte) (int, error) {
	if w.c.status == 0 {
		w.c.status = http.StatusOK
	}
	return w.c.body.Write(p)
}
func (w captureWriter) Flush() {}

// capture runs next to completion and returns what it wrote.
func capture(next http.Handler, r *http.Request) *captured {
	c := &captured{header: http.Header{}}
	next.ServeHTTP(captureWriter{c}, r)
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c
}

// isSSE reports whether the captured body is an event stream.
func (c *captured) isSSE() bool {
	return strings.HasPrefix(strings.ToLower(c.header.Get("Content-Type")), "text/event-stream")
}

// event is one SSE event of a captured stream.
type event struct {
	typ   string
	id    string
	hasID bool
	data  []byte
}

// frame writes ev back in the plain framing.
func (ev event) frame() []byte {
	var b bytes.Buffer
	if ev.typ != "" {
		b.WriteString("event: " + ev.typ + "\n")
	}
	if ev.hasID {
		b.WriteString("id: " + ev.id + "\n")
	}
	for _, line := range bytes.Split(ev.data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// messages splits a captured 2xx body into its JSON-RPC messages: one for a
// JSON body, one per event for a stream. Events without data are kept (a
// 2025-11-25 priming event) with empty data.
func (c *captured) events() []event {
	if !c.isSSE() {
		if c.body.Len() == 0 {
			return nil
		}
		return []event{{data: bytes.TrimSpace(c.body.Bytes())}}
	}
	var out []event
	rd := wire.NewSSEReader(bytes.NewReader(c.body.Bytes()), 0)
	for {
		ev, err := rd.Next()
		if err != nil {
			var ue *wire.UnterminatedEventError
			if errors.As(err, &ue) {
				out = append(out, event{data: ue.Data})
			}
			break
		}
		out = append(out, event{typ: ev.Type, id: ev.ID, hasID: ev.HasID, data: bytes.Clone(ev.Data)})
	}
	return out
}

// responseIndex returns the index of the event holding the JSON-RPC response
// (result or error) to id, or -1.
func responseIndex(evs []event, id wire.ID) int {
	for i, ev := range evs {
		if isResponse(ev.data) {
			rid, _ := wire.Field(ev.data, "id")
			if id.IsZero() || wire.IDFromRaw(bytes.TrimSpace(rid)).Equal(id) {
				return i
			}
		}
	}
	return -1
}

// isResponse reports whether msg is a JSON-RPC response (result or error).
func isResponse(msg []byte) bool {
	if wire.Kind(msg) != '{' || !json.Valid(msg) {
		return false
	}
	_, hasResult := wire.Field(msg, "result")
	_, hasError := wire.Field(msg, "error")
	return hasResult || hasError
}

// replay writes a captured response unchanged.
func (c *captured) replay(w http.ResponseWriter) {
	for k, vs := range c.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(c.body.Bytes())
}

// rewrite writes the captured response with its events replaced by evs, in
// the same framing (JSON: the first message only).
func (c *captured) rewrite(w http.ResponseWriter, evs []event) {
	for k, vs := range c.header {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	if !c.isSSE() {
		body := []byte{}
		if len(evs) > 0 {
			body = evs[0].data
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(c.status)
		_, _ = w.Write(body)
		return
	}
	w.WriteHeader(c.status)
	for _, ev := range evs {
		_, _ = w.Write(ev.frame())
	}
}

// editResult runs next and lets edit change the "result" object of the
// response to the request, keeping the framing. When the server did not
// answer with a result, the response passes unchanged and a note says so.
func editResult(w http.ResponseWriter, r *http.Request, next http.Handler, env *Env, edit func(result map[string]json.RawMessage) error) {
	c := capture(next, r)
	req := RequestOf(r)
	evs := c.events()
	i := responseIndex(evs, req.ID)
	if c.status/100 != 2 || i < 0 {
		env.PassThrough(r, "the server did not answer with a response (HTTP %d); passed through unchanged", c.status)
		c.replay(w)
		return
	}
	res, ok := wire.Field(evs[i].data, "result")
	var obj map[string]json.RawMessage
	if !ok || json.Unmarshal(res, &obj) != nil || obj == nil {
		env.PassThrough(r, "the server answered without a result object; passed through unchanged")
		c.replay(w)
		return
	}
	if err := edit(obj); err != nil {
		env.PassThrough(r, "%v; passed through unchanged", err)
		c.replay(w)
		return
	}
	nb, _ := marshalOrdered(obj)
	evs[i].data = resultMessage(req.ID, nb)
	c.rewrite(w, evs)
}

// marshalOrdered encodes an object with its members sorted by key
// (encoding/json sorts map keys), so the output is stable.
func marshalOrdered(obj map[string]json.RawMessage) ([]byte, error) {
	return json.Marshal(obj)
}

// mustJSON encodes v, which must encode.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// textResult encodes a complete CallToolResult with one text block.
func textResult(text string, isError bool, legacy bool) []byte {
	obj := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if isError {
		obj["isError"] = true
	}
	if !legacy {
		obj["resultType"] = "complete"
	}
	return mustJSON(obj)
}

// answer writes one JSON-RPC message as the response to req: JSON for
// 2025-11-25 and 2026-07-28 alike (a single message needs no stream).
func answer(w http.ResponseWriter, status int, msg []byte) {
	writeJSON(w, status, msg)
}
