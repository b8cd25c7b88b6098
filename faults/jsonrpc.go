package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdiag/mcpdiag/wire"
)

// JSONRPCError answers with a JSON-RPC error (HTTP 200 by default), echoing
// the request id whatever its type.
type JSONRPCError struct {
	Rules
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Status is the HTTP status (200: the error is in the protocol layer).
	Status int `json:"status"`
}

// Validate implements Scenario.
func (s *JSONRPCError) Validate() error {
	if len(s.Data) > 0 && !json.Valid(s.Data) {
		return fmt.Errorf("param data: not valid JSON")
	}
	return checkStatus("status", s.Status, 200, 599)
}

// Wrap implements Scenario.
func (s *JSONRPCError) Wrap(_ http.Handler, _ *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer(w, s.Status, errorMessage(RequestOf(r).ID, s.Code, s.Message, s.Data))
	})
}

// ToolError lets the tool run and turns its result into a tool error:
// isError true with ErrorMessage as the only content.
type ToolError struct {
	Rules
	ErrorMessage string `json:"errorMessage"`
}

// Validate implements Scenario.
func (s *ToolError) Validate() error { return nil }

// Wrap implements Scenario.
func (s *ToolError) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		editResult(w, r, next, env, func(res map[string]json.RawMessage) error {
			if rt, ok := res["resultType"]; ok && !wire.StringIs(rt, "complete") {
				return fmt.Errorf("the result is %s, not complete", rt)
			}
			res["content"] = mustJSON([]any{map[string]string{"type": "text", "text": s.ErrorMessage}})
			res["isError"] = json.RawMessage("true")
			delete(res, "structuredContent")
			return nil
		})
	})
}

// Kinds of malformed payload.
const (
	MalformedInvalidJSON    = "invalid_json"
	MalformedWrongID        = "wrong_id"
	MalformedMissingJSONRPC = "missing_jsonrpc"
	MalformedDuplicate      = "duplicate_response"
	MalformedResultAndError = "result_and_error"
)

// MalformedPayload answers HTTP 200 application/json with a broken payload
// built from the server's own response.
type MalformedPayload struct {
	Rules
	// Kind is invalid_json, wrong_id, missing_jsonrpc, duplicate_response or
	// result_and_error.
	Kind string `json:"kind"`
}

// Validate implements Scenario.
func (s *MalformedPayload) Validate() error {
	switch s.Kind {
	case MalformedInvalidJSON, MalformedWrongID, MalformedMissingJSONRPC, MalformedDuplicate, MalformedResultAndError:
		return nil
	}
	return fmt.Errorf("param kind: %q: want invalid_json, wrong_id, missing_jsonrpc, duplicate_response or result_and_error", s.Kind)
}

// Wrap implements Scenario.
func (s *MalformedPayload) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		if s.Kind == MalformedInvalidJSON {
			answer(w, http.StatusOK, []byte(`{ not valid json`))
			return
		}
		msg := serverResponse(next, r, env)
		var body []byte
		switch s.Kind {
		case MalformedWrongID:
			body = withID(msg, wrongID(req.ID))
		case MalformedMissingJSONRPC:
			body = withoutMember(msg, "jsonrpc")
		case MalformedDuplicate:
			body = append(append(bytes.Clone(msg), '\n'), msg...)
		case MalformedResultAndError:
			body = append(bytes.TrimSuffix(bytes.TrimSpace(msg), []byte("}")), `,"error":{"code":-32603,"message":"Internal error"}}`...)
		}
		answer(w, http.StatusOK, body)
	})
}

// serverResponse runs next and returns its JSON-RPC response to the request,
// or a minimal successful tool result when it gave none.
func serverResponse(next http.Handler, r *http.Request, env *Env) []byte {
	req := RequestOf(r)
	c := capture(next, r)
	evs := c.events()
	if i := responseIndex(evs, req.ID); c.status/100 == 2 && i >= 0 {
		return evs[i].data
	}
	env.Note(r, "the server gave no response (HTTP %d); a minimal result stands in", c.status)
	return resultMessage(req.ID, textResult("ok", false, false))
}

// wrongID returns an id that differs from id by value (wire.ID.Equal), of
// the same JSON type when id is a string or a number.
func wrongID(id wire.ID) wire.ID {
	switch {
	case id.IsString():
		s, _ := wire.StringValue(id.Raw())
		return wire.StringID(s + "-wrong")
	case id.IsNumber():
		if n, err := strconv.ParseInt(id.String(), 10, 64); err == nil {
			return wire.IntID(n + 1000)
		}
	}
	// A number not in plain digits (99999.0 is 99999) or out of int64's
	// range, or no string or number at all.
	if w := wire.IntID(99999); !w.Equal(id) {
		return w
	}
	return wire.IntID(99998)
}

// withID returns msg with its id member replaced.
func withID(msg []byte, id wire.ID) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(msg, &obj) != nil {
		return msg
	}
	obj["id"] = id.Raw()
	return envelopeOrder(obj)
}

func withoutMember(msg []byte, name string) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(msg, &obj) != nil {
		return msg
	}
	delete(obj, name)
	return envelopeOrder(obj)
}

// envelopeOrder encodes a JSON-RPC message with jsonrpc, id, method,
// params, result, error first, then the rest sorted.
func envelopeOrder(obj map[string]json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	put := func(k string, v json.RawMessage) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.Write(v)
	}
	order := []string{"jsonrpc", "id", "method", "params", "result", "error"}
	for _, k := range order {
		if v, ok := obj[k]; ok {
			put(k, v)
		}
	}
	var rest []string
	for k := range obj {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		put(k, obj[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Kinds of invalid tool result.
const (
	InvalidContentNotArray   = "content_not_array"
	InvalidBadBlock          = "bad_block"
	InvalidNonBooleanIsError = "non_boolean_is_error"
	InvalidUnknownResultType = "unknown_result_type"
)

// InvalidToolResult lets the tool run and breaks the shape of its result.
type InvalidToolResult struct {
	Rules
	// Kind is content_not_array, bad_block (a block without a type),
	// non_boolean_is_error ("isError": "false") or unknown_result_type.
	Kind string `json:"kind"`
	// ResultType is the resultType sent by unknown_result_type.
	ResultType string `json:"resultType"`
}

// Validate implements Scenario.
func (s *InvalidToolResult) Validate() error {
	switch s.Kind {
	case InvalidContentNotArray, InvalidBadBlock, InvalidNonBooleanIsError, InvalidUnknownResultType:
	default:
		return fmt.Errorf("param kind: %q: want content_not_array, bad_block, non_boolean_is_error or unknown_result_type", s.Kind)
	}
	if s.Kind == InvalidUnknownResultType && (s.ResultType == "complete" || s.ResultType == "input_required") {
		return fmt.Errorf("param resultType: %q is a known result type", s.ResultType)
	}
	return nil
}

// Wrap implements Scenario.
func (s *InvalidToolResult) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		editResult(w, r, next, env, func(res map[string]json.RawMessage) error {
			switch s.Kind {
			case InvalidContentNotArray:
				res["content"] = json.RawMessage(`{"type":"text","text":"content is an object, not an array"}`)
			case InvalidBadBlock:
				res["content"] = json.RawMessage(`[{"text":"a content block without a type"}]`)
			case InvalidNonBooleanIsError:
				res["isError"] = json.RawMessage(`"false"`)
			case InvalidUnknownResultType:
				res["resultType"] = mustJSON(s.ResultType)
			}
			return nil
		})
	})
}

// UnsupportedVersion rejects requests whose protocol revision is in Reject:
// 400 with -32022 and data.supported/requested (2026-07-28), or for an
// initialize, HTTP 200 with -32602 and the same data (the 2025-11-25 rule).
type UnsupportedVersion struct {
	Rules
	Reject    []string `json:"reject"`
	Supported []string `json:"supported"`
}

// Validate implements Scenario.
func (s *UnsupportedVersion) Validate() error {
	if len(s.Reject) == 0 {
		return fmt.Errorf("param reject: empty: name the revisions to refuse")
	}
	if s.Supported == nil {
		return fmt.Errorf("param supported: null: give a list (it may be empty)")
	}
	for _, v := range s.Supported {
		if slices.Contains(s.Reject, v) {
			return fmt.Errorf("param supported: %q is also in reject", v)
		}
	}
	return nil
}

// Matches implements Matcher: requests at a rejected revision.
func (s *UnsupportedVersion) Matches(req *Request) (bool, string) {
	if !slices.Contains(s.Reject, req.Protocol) {
		return false, fmt.Sprintf("protocol %q is not rejected", req.Protocol)
	}
	return true, ""
}

// Wrap implements Scenario.
func (s *UnsupportedVersion) Wrap(_ http.Handler, _ *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		data := mustJSON(map[string]any{"supported": s.Supported, "requested": req.Protocol})
		if req.Method == "initialize" {
			answer(w, http.StatusOK, errorMessage(req.ID, -32602, "Unsupported protocol version", data))
			return
		}
		answer(w, http.StatusBadRequest, errorMessage(req.ID, -32022, "Unsupported protocol version", data))
	})
}

// HeaderMismatch answers 400 with -32020 HeaderMismatch about Header.
type HeaderMismatch struct {
	Rules
	// Header is the header said not to match the body, such as Mcp-Name or
	// Mcp-Param-Region (a client re-reads tools/list after a mismatch about
	// an Mcp-Param-* header).
	Header string `json:"header"`
}

// Validate implements Scenario.
func (s *HeaderMismatch) Validate() error {
	if s.Header == "" || strings.ContainsAny(s.Header, " :\r\n") {
		return fmt.Errorf("param header: %q: want a header name such as Mcp-Name", s.Header)
	}
	return nil
}

// Wrap implements Scenario.
func (s *HeaderMismatch) Wrap(_ http.Handler, _ *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		data := mustJSON(map[string]any{"header": s.Header, "received": r.Header.Get(s.Header)})
		answer(w, http.StatusBadRequest, errorMessage(req.ID, -32020, "Header mismatch: "+s.Header+" does not match the request body", data))
	})
}

// MissingCapability answers 400 with -32021 MissingRequiredClientCapability
// listing Required in data.requiredCapabilities.
type MissingCapability struct {
	Rules
	Required json.RawMessage `json:"required"`
	Message  string          `json:"message"`
}

// Validate implements Scenario.
func (s *MissingCapability) Validate() error {
	if wire.Kind(s.Required) != '{' || !json.Valid(s.Required) {
		return fmt.Errorf("param required: want a ClientCapabilities object such as {\"elicitation\":{}}")
	}
	return nil
}

// Wrap implements Scenario.
func (s *MissingCapability) Wrap(_ http.Handler, _ *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data := []byte(`{"requiredCapabilities":` + string(s.Required) + `}`)
		answer(w, http.StatusBadRequest, errorMessage(RequestOf(r).ID, -32021, s.Message, data))
	})
}

// Large result formats.
const (
	LargeJSON     = "json"
	LargeSSE      = "sse"
	LargeSSELines = "sse_lines"
)

// LargeResult answers with a successful tool result whose text is Bytes
// long: as one JSON body, as one SSE event on one data line, or as one event
// whose data spans many lines of at most LineBytes (one content block per
// line).
type LargeResult struct {
	Rules
	Bytes     int    `json:"bytes"`
	Format    string `json:"format"`
	LineBytes int    `json:"lineBytes"`
}

// MaxLargeResult bounds LargeResult.Bytes: 64 MiB.
const MaxLargeResult = 64 << 20

// Validate implements Scenario.
func (s *LargeResult) Validate() error {
	if s.Bytes < 1 || s.Bytes > MaxLargeResult {
		return fmt.Errorf("param bytes: %d: want 1 to %d", s.Bytes, MaxLargeResult)
	}
	switch s.Format {
	case LargeJSON, LargeSSE, LargeSSELines:
	default:
		return fmt.Errorf("param format: %q: want json, sse or sse_lines", s.Format)
	}
	if s.LineBytes < 16 {
		return fmt.Errorf("param lineBytes: %d: want at least 16", s.LineBytes)
	}
	return nil
}

// filler returns n bytes of plain ASCII text that needs no JSON escaping.
func filler(n int) []byte {
	const pattern = "mcpdiag large result 0123456789 abcdefghijklmnopqrstuvwxyz. "
	b := bytes.Repeat([]byte(pattern), n/len(pattern)+1)
	return b[:n]
}

// Wrap implements Scenario.
func (s *LargeResult) Wrap(_ http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		text := filler(s.Bytes)
		if s.Format != LargeSSELines {
			msg := resultMessage(req.ID, textResult(string(text), false, false))
			if s.Format == LargeJSON {
				answer(w, http.StatusOK, msg)
				return
			}
			startSSE(w, http.StatusOK)
			_, _ = w.Write(sseEvent(msg))
			return
		}
		var b bytes.Buffer
		b.WriteString("event: message\ndata: ")
		b.WriteString(`{"jsonrpc":"2.0","id":`)
		b.Write(idOrNull(req.ID))
		b.WriteString(`,"result":{"content":[`)
		chunk := max(s.LineBytes-len(`data: {"type":"text","text":""},`), 1)
		blocks := 0
		for len(text) > 0 {
			n := min(chunk, len(text))
			if blocks > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\ndata: ")
			b.WriteString(`{"type":"text","text":"`)
			b.Write(text[:n])
			b.WriteString(`"}`)
			text = text[n:]
			blocks++
		}
		b.WriteString("\ndata: ],\"resultType\":\"complete\"}}\n\n")
		env.Note(r, "%d content blocks on %d data lines", blocks, blocks+2)
		startSSE(w, http.StatusOK)
		_, _ = w.Write(b.Bytes())
	})
}
