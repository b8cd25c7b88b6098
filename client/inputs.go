package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/wire"
)

// InputRequest is one entry of an InputRequiredResult's inputRequests (or,
// on 2025-11-25, a server request on the stream, keyed by its method).
type InputRequest struct {
	// Key is the inputRequests member's name; a server request's Key is
	// its Method: its id is the server's choice, not a name an --input
	// file can give (ids 1 and "1" are two requests, docs/decisions.md).
	Key    string
	Method string
	Params json.RawMessage
	// ID is a server request's id, with its JSON type; zero for an
	// inputRequests entry.
	ID wire.ID
}

// ErrNoAnswer is returned by an InputProvider that has no answer for a key.
var ErrNoAnswer = errors.New("no answer for this input request")

// InputProvider answers input requests: elicitation (ElicitResult), sampling
// (CreateMessageResult) or roots (ListRootsResult).
type InputProvider interface {
	Answer(ctx context.Context, req InputRequest) (json.RawMessage, error)
}

// MapInputs answers from a map of key → response, as read from --input FILE.
// A key may also be a method name ("elicitation/create"), which answers every
// request of that method that has no answer of its own.
type MapInputs map[string]json.RawMessage

// Answer implements InputProvider.
func (m MapInputs) Answer(_ context.Context, req InputRequest) (json.RawMessage, error) {
	if v, ok := m[req.Key]; ok {
		return v, nil
	}
	if v, ok := m[req.Method]; ok {
		return v, nil
	}
	return nil, ErrNoAnswer
}

// Declares names the client capabilities m answers, for the client to
// declare (a server offers a tool that samples, say, only to a client that
// declares sampling): "sampling" when an entry answers
// sampling/createMessage (its key is that method, or its answer is a
// CreateMessageResult: it has model and role), "roots" when one answers
// roots/list (its key is that method, or its answer has roots), and
// "elicitation" when any other entry is left (an input request key's
// answer to an elicitation, or an elicitation/create entry); an empty
// file declares elicitation. Sorted.
func (m MapInputs) Declares() []string {
	if len(m) == 0 {
		// An empty file still says the client takes part in input
		// rounds: the server asks, the call ends "input required, not
		// answered" (exit 5) rather than a 400 for a capability the
		// client did not declare.
		return []string{"elicitation"}
	}
	has := map[string]bool{}
	for k, v := range m {
		var shape map[string]json.RawMessage
		_ = json.Unmarshal(v, &shape)
		_, model := shape["model"]
		_, role := shape["role"]
		_, roots := shape["roots"]
		switch {
		case k == "sampling/createMessage" || model && role:
			has["sampling"] = true
		case k == "roots/list" || roots:
			has["roots"] = true
		default:
			has["elicitation"] = true
		}
	}
	var out []string
	for _, c := range []string{"elicitation", "roots", "sampling"} {
		if has[c] {
			out = append(out, c)
		}
	}
	return out
}

// ReadInputs reads an --input file: a JSON object mapping keys to responses.
func ReadInputs(r io.Reader) (MapInputs, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(r)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("input file: %w (want a JSON object mapping input request keys to responses)", err)
	}
	for k, v := range m {
		if wire.Kind(v) != '{' {
			return nil, fmt.Errorf("input file: the answer for %q is not a JSON object", k)
		}
	}
	return MapInputs(m), nil
}

// PromptInputs asks a person at a terminal to answer form and URL
// elicitations: accept, decline or cancel, and on accept each requested
// field.
type PromptInputs struct {
	In  io.Reader
	Out io.Writer
	br  *bufio.Reader
}

func (p *PromptInputs) line(prompt string) (string, error) {
	if p.br == nil {
		p.br = bufio.NewReader(p.In)
	}
	fmt.Fprint(p.Out, prompt)
	s, err := p.br.ReadString('\n')
	if err != nil && s == "" {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// Answer implements InputProvider for elicitation/create.
func (p *PromptInputs) Answer(_ context.Context, req InputRequest) (json.RawMessage, error) {
	if req.Method != "elicitation/create" {
		return nil, ErrNoAnswer
	}
	var params struct {
		Mode            string `json:"mode"`
		Message         string `json:"message"`
		URL             string `json:"url"`
		RequestedSchema struct {
			Properties map[string]struct {
				Type        string   `json:"type"`
				Title       string   `json:"title"`
				Description string   `json:"description"`
				Enum        []string `json:"enum"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(req.Params, &params); err != nil {
		return nil, fmt.Errorf("elicitation params: %w", err)
	}
	asks := req.Key
	if !req.ID.IsZero() {
		asks = "request id " + req.ID.String()
	}
	fmt.Fprintf(p.Out, "\nThe server asks (%s): %s\n", visible.String(asks), visible.String(params.Message))
	if params.Mode == "url" {
		fmt.Fprintf(p.Out, "  open: %s\n", visible.String(params.URL))
	}
	action := ""
	for action == "" {
		s, err := p.line("  accept, decline or cancel? [a/d/c] ")
		if err != nil {
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		switch strings.ToLower(s) {
		case "a", "accept":
			action = "accept"
		case "d", "decline":
			action = "decline"
		case "c", "cancel":
			action = "cancel"
		}
	}
	out := map[string]any{"action": action}
	if action == "accept" && params.Mode != "url" {
		content := map[string]any{}
		names := make([]string, 0, len(params.RequestedSchema.Properties))
		for n := range params.RequestedSchema.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			prop := params.RequestedSchema.Properties[n]
			label := n
			if prop.Title != "" {
				label = prop.Title
			}
			hint := prop.Type
			if len(prop.Enum) > 0 {
				hint = strings.Join(prop.Enum, "|")
			}
			// The server's words, shown to a person: escaped.
			s, err := p.line(fmt.Sprintf("  %s (%s): ", visible.String(label), visible.String(hint)))
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", n, err)
			}
			switch prop.Type {
			case "boolean":
				content[n] = s == "true" || s == "y" || s == "yes"
			case "number", "integer":
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, fmt.Errorf("%s: %q is not a number", n, s)
				}
				content[n] = f
			default:
				content[n] = s
			}
		}
		out["content"] = content
	}
	b, _ := json.Marshal(out)
	return b, nil
}

// answerInputs builds the next round's inputResponses and requestState from
// an input_required result. It reports false when some request has no answer
// (the call then ends INPUT_REQUIRED, exit 5).
func (c *Client) answerInputs(ctx context.Context, st *callState, res *classify.Result) bool {
	var body struct {
		Result struct {
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
		} `json:"result"`
	}
	_ = json.Unmarshal(res.Response(), &body)
	result, _ := wire.Field(res.Response(), "result")
	if rs, ok := wire.Field(result, "requestState"); ok {
		// Echoed byte for byte: the raw JSON string token, escapes and all.
		st.state = append(json.RawMessage(nil), bytes.TrimSpace(rs)...)
	}
	keys := make([]string, 0, len(body.Result.InputRequests))
	for k := range body.Result.InputRequests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	answers := map[string]json.RawMessage{}
	var missing []string
	for _, k := range keys {
		ir := body.Result.InputRequests[k]
		var ans json.RawMessage
		err := ErrNoAnswer
		if c.opts.Inputs != nil {
			ans, err = c.opts.Inputs.Answer(ctx, InputRequest{Key: k, Method: ir.Method, Params: ir.Params})
		}
		if err != nil {
			missing = append(missing, k)
			continue
		}
		answers[k] = ans
	}
	if len(missing) > 0 {
		st.call.Unanswered = missing
		st.state = nil
		return false
	}
	if len(keys) == 0 && st.state == nil {
		// Nothing to answer and no state to echo (a 2025-11-25 -32042 error,
		// say): sending the same request again would change nothing.
		return false
	}
	if len(keys) > 0 {
		st.inputs, _ = json.Marshal(answers)
	}
	return true
}

// answerServerRequest answers a 2025-11-25 server request (elicitation on
// the response stream) with a POSTed JSON-RPC response.
//
// The answer is asked for under ctx and POSTed under sendCtx: on the
// standalone stream ctx is the stream's, which the call's end cancels (a
// question still open then, a terminal prompt, ends and is answered with
// the error of a request the client cannot answer), and sendCtx the
// call's, so that an answer going out is not cut (see standalone).
func (c *Client) answerServerRequest(ctx, sendCtx context.Context, msg []byte) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &req) != nil || len(req.ID) == 0 {
		return
	}
	body := []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32601,"message":"mcpdiag has no answer for this request"}}`)
	// One question at a time: the standalone stream's goroutine and the
	// response stream may both ask, and a provider (a terminal prompt) need
	// not be safe for concurrent use.
	c.answerMu.Lock()
	ans, err := c.opts.Inputs.Answer(ctx, InputRequest{Key: req.Method, Method: req.Method, Params: req.Params,
		ID: wire.IDFromRaw(bytes.TrimSpace(req.ID))})
	c.answerMu.Unlock()
	if err == nil {
		body = []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + string(ans) + `}`)
	}
	hdr := http.Header{}
	hdr.Set("MCP-Protocol-Version", c.legacyVersion())
	if c.session != "" {
		hdr.Set("Mcp-Session-Id", c.session)
	}
	rq := &request{method: req.Method, notification: true, header: hdr, origin: OriginMRTR, protocol: Protocol2025}
	rq.raw = body
	ex := c.send(sendCtx, rq)
	// Its record is the recorder's of the same POST through mcpdiag proxy
	// (record.Record's ClientAnswer): the server request's method, the
	// answer's id, and one judgment of the answer.
	ex.ClientAnswer, ex.ID = true, wire.ParseMessage(body).ID
	a := classify.ClientAnswer{Method: req.Method, ID: ex.ID, Answer: body, Protocol: ex.Protocol, Status: ex.Status, ResponseBytes: ex.respBytes}
	ex.Result, _ = classify.JudgeClientAnswer(&a, ex.Result, ex.AnswerRefused)
	c.record(ex)
	c.emit(ex)
}
