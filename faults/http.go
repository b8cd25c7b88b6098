package faults

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"time"
)

func checkStatus(param string, code, lo, hi int) error {
	if code < lo || code > hi {
		return fmt.Errorf("param %s: %d: want an HTTP status from %d to %d", param, code, lo, hi)
	}
	return nil
}

// bare sends a status with no body and no Content-Type.
func bare(w http.ResponseWriter, code int) {
	w.Header().Del("Content-Type")
	w.WriteHeader(code)
}

// StatusSequence answers matching POST n with StatusCodes[n-1]; the last
// code repeats. A 2xx code lets the request through to the server; any other
// is sent bare (no body, no Content-Type), with Retry-After when set.
type StatusSequence struct {
	Rules
	// StatusCodes is the sequence; [] lets everything through.
	StatusCodes []int `json:"statusCodes"`
	// RetryAfter, when set, is sent as Retry-After with every non-2xx code.
	RetryAfter string `json:"retryAfter,omitempty"`
}

// Validate implements Scenario.
func (s *StatusSequence) Validate() error {
	if s.StatusCodes == nil {
		return fmt.Errorf("param statusCodes: null: give a list ([] lets every request through)")
	}
	for i, c := range s.StatusCodes {
		if err := checkStatus(fmt.Sprintf("statusCodes[%d]", i), c, 200, 599); err != nil {
			return err
		}
	}
	return checkHeaderValue("retryAfter", s.RetryAfter)
}

// Wrap implements Scenario.
func (s *StatusSequence) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := env.Count(r)
		if len(s.StatusCodes) == 0 || n == 0 {
			next.ServeHTTP(w, r)
			return
		}
		code := s.StatusCodes[min(n, len(s.StatusCodes))-1]
		if code/100 == 2 {
			env.PassThrough(r, "statusCodes[%d] = %d: passed through unchanged", min(n, len(s.StatusCodes))-1, code)
			next.ServeHTTP(w, r)
			return
		}
		env.Note(r, "statusCodes[%d] = %d", min(n, len(s.StatusCodes))-1, code)
		if s.RetryAfter != "" {
			w.Header().Set("Retry-After", s.RetryAfter)
		}
		bare(w, code)
	})
}

func checkHeaderValue(param, v string) error {
	for _, c := range v {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("param %s: control characters are not allowed in a header value", param)
		}
	}
	return nil
}

// StatusPerMethod answers each JSON-RPC method listed in Statuses with its
// status, sent bare; a 2xx status lets the request through.
type StatusPerMethod struct {
	Rules
	// Statuses maps a JSON-RPC method to the status it gets.
	Statuses StatusMap `json:"statuses"`
}

// StatusMap maps JSON-RPC methods to HTTP statuses. Decoding replaces the
// whole map (encoding/json would merge into the defaults).
type StatusMap map[string]int

// UnmarshalJSON replaces the map.
func (m *StatusMap) UnmarshalJSON(b []byte) error {
	var v map[string]int
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = v
	return nil
}

// Validate implements Scenario.
func (s *StatusPerMethod) Validate() error {
	if len(s.Statuses) == 0 {
		return fmt.Errorf("param statuses: give at least one method, such as {\"tools/call\": 401}")
	}
	keys := make([]string, 0, len(s.Statuses))
	for k := range s.Statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := checkStatus("statuses."+k, s.Statuses[k], 200, 599); err != nil {
			return err
		}
	}
	return nil
}

// Matches implements Matcher: only the methods listed.
func (s *StatusPerMethod) Matches(req *Request) (bool, string) {
	if _, ok := s.Statuses[req.Method]; !ok {
		return false, fmt.Sprintf("method %q is not in statuses", req.Method)
	}
	return true, ""
}

// Wrap implements Scenario.
func (s *StatusPerMethod) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := s.Statuses[RequestOf(r).Method]
		if code/100 == 2 {
			env.PassThrough(r, "%d: passed through unchanged", code)
			next.ServeHTTP(w, r)
			return
		}
		bare(w, code)
	})
}

// Retry-After formats.
const (
	RetryAfterSeconds  = "seconds"
	RetryAfterHTTPDate = "http-date"
	RetryAfterNone     = "none"
)

// RateLimited answers 429 Too Many Requests with a Retry-After header in
// seconds or as an HTTP-date.
type RateLimited struct {
	Rules
	// RetryAfterSeconds is the wait asked for.
	RetryAfterSeconds int `json:"retryAfterSeconds"`
	// Format is seconds, http-date (now + the wait) or none (no header).
	Format string `json:"format"`
}

// Validate implements Scenario.
func (s *RateLimited) Validate() error {
	if s.RetryAfterSeconds < 0 {
		return fmt.Errorf("param retryAfterSeconds: %d: must not be negative", s.RetryAfterSeconds)
	}
	switch s.Format {
	case RetryAfterSeconds, RetryAfterHTTPDate, RetryAfterNone:
	default:
		return fmt.Errorf("param format: %q: want seconds, http-date or none", s.Format)
	}
	return nil
}

// Wrap implements Scenario.
func (s *RateLimited) Wrap(_ http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch s.Format {
		case RetryAfterSeconds:
			w.Header().Set("Retry-After", strconv.Itoa(s.RetryAfterSeconds))
		case RetryAfterHTTPDate:
			// Rounded up to the next second, so the wait is never shorter
			// than asked.
			at := time.Now().Add(time.Duration(s.RetryAfterSeconds)*time.Second + time.Second - 1).UTC()
			w.Header().Set("Retry-After", at.Format(http.TimeFormat))
		}
		if v := w.Header().Get("Retry-After"); v != "" {
			env.Note(r, "Retry-After: %s", v)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte("rate limited: too many requests\n"))
	})
}

// UnexpectedContentType answers with a body that is not MCP, such as the
// HTML page a proxy or a login wall returns.
type UnexpectedContentType struct {
	Rules
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"`
}

// Validate implements Scenario.
func (s *UnexpectedContentType) Validate() error {
	if err := checkStatus("status", s.Status, 200, 599); err != nil {
		return err
	}
	if s.ContentType == "" {
		return fmt.Errorf("param contentType: empty (errors.empty_response covers a missing body)")
	}
	return checkHeaderValue("contentType", s.ContentType)
}

// Wrap implements Scenario.
func (s *UnexpectedContentType) Wrap(_ http.Handler, _ *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", s.ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(s.Body)))
		w.WriteHeader(s.Status)
		_, _ = w.Write([]byte(s.Body))
	})
}

// EmptyResponse answers a request with a 2xx status and no body.
type EmptyResponse struct {
	Rules
	// Status is 202 (what a notification gets), 200 or 204.
	Status int `json:"status"`
	// ContentType, when set, is sent with the empty body.
	ContentType string `json:"contentType,omitempty"`
}

// Validate implements Scenario.
func (s *EmptyResponse) Validate() error {
	if err := checkStatus("status", s.Status, 200, 299); err != nil {
		return err
	}
	return checkHeaderValue("contentType", s.ContentType)
}

// Wrap implements Scenario.
func (s *EmptyResponse) Wrap(_ http.Handler, _ *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.ContentType != "" {
			w.Header().Set("Content-Type", s.ContentType)
		}
		w.WriteHeader(s.Status)
	})
}

// NonCompliantEnvelope answers with a non-2xx status and a valid JSON-RPC
// result body: the server's own result, or ResultPayload.
type NonCompliantEnvelope struct {
	Rules
	HTTPStatus int `json:"httpStatus"`
	// ResultPayload, when set, is the result sent instead of the server's.
	ResultPayload json.RawMessage `json:"resultPayload,omitempty"`
}

// Validate implements Scenario.
func (s *NonCompliantEnvelope) Validate() error {
	if err := checkStatus("httpStatus", s.HTTPStatus, 300, 599); err != nil {
		return err
	}
	if len(s.ResultPayload) > 0 && !json.Valid(s.ResultPayload) {
		return fmt.Errorf("param resultPayload: not valid JSON")
	}
	return nil
}

// Wrap implements Scenario.
func (s *NonCompliantEnvelope) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		if len(s.ResultPayload) > 0 {
			writeJSON(w, s.HTTPStatus, resultMessage(req.ID, s.ResultPayload))
			return
		}
		c := capture(next, r)
		evs := c.events()
		i := responseIndex(evs, req.ID)
		if c.status/100 != 2 || i < 0 {
			env.Note(r, "the server did not answer with a response (HTTP %d); sent with HTTP %d as it was", c.status, s.HTTPStatus)
			c.status = s.HTTPStatus
			c.replay(w)
			return
		}
		writeJSON(w, s.HTTPStatus, evs[i].data)
	})
}

// Connection-close timings and modes.
const (
	CloseBeforeHandler = "before_handler"
	CloseAfterHandler  = "after_handler"
	CloseReset         = "reset"
	CloseFIN           = "close"
)

// ConnectionClose drops the connection without an HTTP response: before the
// server handles the request (the tool does not run), or after (the tool
// ran, its answer is discarded). A reset sends a TCP RST; close a FIN.
type ConnectionClose struct {
	Rules
	When string `json:"when"`
	Mode string `json:"mode"`
}

// Validate implements Scenario.
func (s *ConnectionClose) Validate() error {
	switch s.When {
	case CloseBeforeHandler, CloseAfterHandler:
	default:
		return fmt.Errorf("param when: %q: want before_handler or after_handler", s.When)
	}
	switch s.Mode {
	case CloseReset, CloseFIN:
	default:
		return fmt.Errorf("param mode: %q: want reset or close", s.Mode)
	}
	return nil
}

// Wrap implements Scenario.
func (s *ConnectionClose) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.When == CloseAfterHandler {
			c := capture(next, r)
			env.Note(r, "the server answered HTTP %d (%d bytes); discarded", c.status, c.body.Len())
		}
		dropConnection(w, r, env, s.Mode == CloseReset)
	})
}

// dropConnection takes over the connection and closes it (with an RST when
// reset is set). When the connection cannot be taken over, the handler
// aborts, which also closes it.
func dropConnection(w http.ResponseWriter, r *http.Request, env *Env, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		env.Note(r, "cannot take over the connection (%v); aborting the response instead", err)
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
		env.Note(r, "connection reset (RST)")
	} else {
		env.Note(r, "connection closed (FIN)")
	}
	_ = conn.Close()
}
