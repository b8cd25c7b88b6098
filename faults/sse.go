package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// progressEvents returns n progress notification messages for req.
func progressEvents(req *Request, n int) [][]byte {
	token := progressToken(req)
	out := make([][]byte, n)
	for i := range n {
		out[i] = progressMessage(token, i+1, n)
	}
	return out
}

// Stream ends.
const (
	EndClose = "close"
	EndAbort = "abort"
)

// SSETruncated lets the tool run, then sends an event stream that stops
// before the response: Notifications progress notifications, of which the
// first AfterEvents are sent whole, then optionally half of the next event;
// the stream then ends cleanly (close) or the connection is dropped without
// the end of the chunked body (abort).
type SSETruncated struct {
	Rules
	Notifications int    `json:"notifications"`
	AfterEvents   int    `json:"afterEvents"`
	MidEvent      bool   `json:"midEvent"`
	End           string `json:"end"`
}

// Validate implements Scenario.
func (s *SSETruncated) Validate() error {
	if s.Notifications < 0 || s.Notifications > 1000 {
		return fmt.Errorf("param notifications: %d: want 0 to 1000", s.Notifications)
	}
	if s.AfterEvents < 0 || s.AfterEvents > s.Notifications {
		return fmt.Errorf("param afterEvents: %d: want 0 to notifications (%d); more would send the response itself", s.AfterEvents, s.Notifications)
	}
	switch s.End {
	case EndClose, EndAbort:
	default:
		return fmt.Errorf("param end: %q: want close or abort", s.End)
	}
	return nil
}

// Wrap implements Scenario.
func (s *SSETruncated) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		msgs := append(progressEvents(req, s.Notifications), serverResponse(next, r, env))
		startSSE(w, http.StatusOK)
		for _, m := range msgs[:s.AfterEvents] {
			_, _ = w.Write(sseEvent(m))
		}
		if s.MidEvent {
			ev := sseEvent(msgs[s.AfterEvents])
			_, _ = w.Write(ev[:len(ev)/2])
			env.Note(r, "cut in the middle of event %d after %d bytes of it", s.AfterEvents+1, len(ev)/2)
		} else {
			env.Note(r, "cut after %d whole events", s.AfterEvents)
		}
		flush(w)
		if s.End == EndAbort {
			panic(http.ErrAbortHandler)
		}
	})
}

// SSEErrorInStream answers with an event stream of Notifications progress
// notifications and then a JSON-RPC error as the terminal message. The tool
// does not run.
type SSEErrorInStream struct {
	Rules
	Notifications int             `json:"notifications"`
	Code          int             `json:"code"`
	Message       string          `json:"message"`
	Data          json.RawMessage `json:"data,omitempty"`
}

// Validate implements Scenario.
func (s *SSEErrorInStream) Validate() error {
	if s.Notifications < 0 || s.Notifications > 1000 {
		return fmt.Errorf("param notifications: %d: want 0 to 1000", s.Notifications)
	}
	if len(s.Data) > 0 && !json.Valid(s.Data) {
		return fmt.Errorf("param data: not valid JSON")
	}
	return nil
}

// Wrap implements Scenario.
func (s *SSEErrorInStream) Wrap(_ http.Handler, _ *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		startSSE(w, http.StatusOK)
		for _, m := range progressEvents(req, s.Notifications) {
			_, _ = w.Write(sseEvent(m))
		}
		_, _ = w.Write(sseEvent(errorMessage(req.ID, s.Code, s.Message, s.Data)))
	})
}

// SSENotificationsThenResult lets the tool run, then streams Notifications
// progress notifications IntervalMs apart, then the server's response.
type SSENotificationsThenResult struct {
	Rules
	Notifications int `json:"notifications"`
	IntervalMs    int `json:"intervalMs"`
}

// Validate implements Scenario.
func (s *SSENotificationsThenResult) Validate() error {
	if s.Notifications < 0 || s.Notifications > 10000 {
		return fmt.Errorf("param notifications: %d: want 0 to 10000", s.Notifications)
	}
	return checkMs("intervalMs", s.IntervalMs)
}

// Wrap implements Scenario.
func (s *SSENotificationsThenResult) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		resp := serverResponse(next, r, env)
		startSSE(w, http.StatusOK)
		for i, m := range progressEvents(req, s.Notifications) {
			if i > 0 && !sleep(r.Context(), ms(s.IntervalMs)) {
				env.Note(r, "%s after %d notifications", gone(r), i)
				return
			}
			_, _ = w.Write(sseEvent(m))
			flush(w)
		}
		if s.Notifications > 0 && !sleep(r.Context(), ms(s.IntervalMs)) {
			return
		}
		_, _ = w.Write(sseEvent(resp))
	})
}

// SSEWrongID lets the tool run and streams its response under another id
// (id+1000 for a number, id+"-wrong" for a string); with ThenCorrect the
// right response follows.
type SSEWrongID struct {
	Rules
	ThenCorrect bool `json:"thenCorrect"`
}

// Validate implements Scenario.
func (s *SSEWrongID) Validate() error { return nil }

// Wrap implements Scenario.
func (s *SSEWrongID) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp := serverResponse(next, r, env)
		startSSE(w, http.StatusOK)
		_, _ = w.Write(sseEvent(withID(resp, wrongID(RequestOf(r).ID))))
		if s.ThenCorrect {
			_, _ = w.Write(sseEvent(resp))
		}
	})
}

// SSEServerRequest puts a JSON-RPC request from the server on the response
// stream (legal in 2025-11-25, a violation in 2026-07-28), then, with
// ThenResult, the server's response.
type SSEServerRequest struct {
	Rules
	// Method is the server request's method: elicitation/create, ping,
	// sampling/createMessage or roots/list.
	Method     string `json:"method"`
	ThenResult bool   `json:"thenResult"`
}

// Validate implements Scenario.
func (s *SSEServerRequest) Validate() error {
	if _, ok := serverRequestParams[s.Method]; !ok {
		return fmt.Errorf("param method: %q: want elicitation/create, ping, sampling/createMessage or roots/list", s.Method)
	}
	return nil
}

var serverRequestParams = map[string]string{
	"elicitation/create":     `{"mode":"form","message":"Which environment?","requestedSchema":{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}}`,
	"ping":                   ``,
	"sampling/createMessage": `{"messages":[{"role":"user","content":{"type":"text","text":"Summarise"}}],"maxTokens":100}`,
	"roots/list":             ``,
}

// Wrap implements Scenario.
func (s *SSEServerRequest) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var resp []byte
		if s.ThenResult {
			resp = serverResponse(next, r, env)
		}
		msg := `{"jsonrpc":"2.0","id":"mcpdiag-server-request-1","method":"` + s.Method + `"`
		if p := serverRequestParams[s.Method]; p != "" {
			msg += `,"params":` + p
		}
		msg += "}"
		startSSE(w, http.StatusOK)
		_, _ = w.Write(sseEvent([]byte(msg)))
		if resp != nil {
			_, _ = w.Write(sseEvent(resp))
		}
	})
}

// SSEKeepaliveThenHang opens an event stream and sends only keep-alive
// comments, every IntervalMs, for HangMs; then the stream ends without a
// response. The tool does not run.
type SSEKeepaliveThenHang struct {
	Rules
	IntervalMs int `json:"intervalMs"`
	HangMs     int `json:"hangMs"`
}

// Validate implements Scenario.
func (s *SSEKeepaliveThenHang) Validate() error {
	if s.IntervalMs < 1 {
		return fmt.Errorf("param intervalMs: %d: want at least 1", s.IntervalMs)
	}
	if err := checkMs("intervalMs", s.IntervalMs); err != nil {
		return err
	}
	return checkMs("hangMs", s.HangMs)
}

// Wrap implements Scenario.
func (s *SSEKeepaliveThenHang) Wrap(_ http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		startSSE(w, http.StatusOK)
		end := time.Now().Add(ms(s.HangMs))
		sent := 0
		for {
			_, _ = w.Write([]byte(": keepalive\n\n"))
			flush(w)
			sent++
			left := time.Until(end)
			if left <= 0 {
				env.Note(r, "%d keep-alives; the stream ended without a response", sent)
				return
			}
			if !sleep(r.Context(), min(left, ms(s.IntervalMs))) {
				env.Note(r, "%d keep-alives; %s", sent, gone(r))
				return
			}
		}
	})
}

// SSESlowDrip lets the tool run and sends its response as an event stream
// BytesPerChunk bytes at a time, IntervalMs apart.
type SSESlowDrip struct {
	Rules
	BytesPerChunk int `json:"bytesPerChunk"`
	IntervalMs    int `json:"intervalMs"`
}

// Validate implements Scenario.
func (s *SSESlowDrip) Validate() error {
	if s.BytesPerChunk < 1 {
		return fmt.Errorf("param bytesPerChunk: %d: want at least 1", s.BytesPerChunk)
	}
	return checkMs("intervalMs", s.IntervalMs)
}

// Wrap implements Scenario.
func (s *SSESlowDrip) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := sseEvent(serverResponse(next, r, env))
		startSSE(w, http.StatusOK)
		chunks := 0
		for len(body) > 0 {
			if chunks > 0 && !sleep(r.Context(), ms(s.IntervalMs)) {
				env.Note(r, "%s after %d chunks", gone(r), chunks)
				return
			}
			n := min(s.BytesPerChunk, len(body))
			_, _ = w.Write(body[:n])
			flush(w)
			body = body[n:]
			chunks++
		}
		env.Note(r, "%d chunks", chunks)
	})
}

// SSE framing styles.
const (
	FramingCR        = "cr"
	FramingCRLF      = "crlf"
	FramingBOM       = "bom"
	FramingMultiline = "multiline"
	FramingNoSpace   = "nospace"
	FramingComments  = "comments"
	FramingAll       = "all"
)

var framingStyles = []string{FramingCR, FramingCRLF, FramingBOM, FramingMultiline, FramingNoSpace, FramingComments, FramingAll}

// SSEFraming lets the tool run and sends its response in an event stream
// with unusual but valid framing, which a WHATWG-conformant parser accepts:
// CR or CRLF line ends, a leading byte-order mark, the JSON split over
// several data lines, no space after the colon, comment lines; all combines
// BOM, CRLF, multi-line data, no space and comments.
type SSEFraming struct {
	Rules
	Style string `json:"style"`
}

// Validate implements Scenario.
func (s *SSEFraming) Validate() error {
	for _, st := range framingStyles {
		if s.Style == st {
			return nil
		}
	}
	return fmt.Errorf("param style: %q: want one of %s", s.Style, strings.Join(framingStyles, ", "))
}

// Wrap implements Scenario.
func (s *SSEFraming) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := frameStyled(serverResponse(next, r, env), s.Style)
		startSSE(w, http.StatusOK)
		_, _ = w.Write(body)
	})
}

// frameStyled frames one message in the given style.
func frameStyled(msg []byte, style string) []byte {
	all := style == FramingAll
	eol := "\n"
	switch {
	case style == FramingCR:
		eol = "\r"
	case style == FramingCRLF || all:
		eol = "\r\n"
	}
	sep := ": "
	if style == FramingNoSpace || all {
		sep = ":"
	}
	lines := [][]byte{msg}
	if style == FramingMultiline || all {
		lines = splitJSONLines(msg)
	}
	var b bytes.Buffer
	if style == FramingBOM || all {
		b.WriteString("\xEF\xBB\xBF")
	}
	if style == FramingComments || all {
		b.WriteString(":" + sep[1:] + "comment before the event" + eol)
	}
	b.WriteString("event" + sep + "message" + eol)
	for i, l := range lines {
		if (style == FramingComments || all) && i == 1 {
			b.WriteString(": a comment between data lines" + eol)
		}
		b.WriteString("data" + sep)
		b.Write(l)
		b.WriteString(eol)
	}
	b.WriteString(eol)
	return b.Bytes()
}

// splitJSONLines splits JSON text after each comma outside strings; joined
// with "\n" (JSON whitespace) the lines are the same JSON value.
func splitJSONLines(msg []byte) [][]byte {
	var out [][]byte
	inStr, esc, start := false, false, 0
	for i, c := range msg {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && c == ',':
			out = append(out, msg[start:i+1])
			start = i + 1
		}
	}
	return append(out, msg[start:])
}

// SSEUnterminatedFinalEvent lets the tool run and streams its response as a
// final event without the blank line that dispatches it (WHATWG: such an
// event is discarded).
type SSEUnterminatedFinalEvent struct {
	Rules
	// Trailing is "lf" (the data line ends, the blank line is missing) or
	// "none" (the stream stops right after the JSON).
	Trailing string `json:"trailing"`
}

// Validate implements Scenario.
func (s *SSEUnterminatedFinalEvent) Validate() error {
	switch s.Trailing {
	case "lf", "none":
		return nil
	}
	return fmt.Errorf("param trailing: %q: want lf or none", s.Trailing)
}

// Wrap implements Scenario.
func (s *SSEUnterminatedFinalEvent) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev := sseEvent(serverResponse(next, r, env))
		ev = ev[:len(ev)-2]
		if s.Trailing == "lf" {
			ev = append(ev, '\n')
		}
		startSSE(w, http.StatusOK)
		_, _ = w.Write(ev)
	})
}
