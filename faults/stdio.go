package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// DefaultGarbage is the line stdio.garbage writes by default: a typical
// stray print.
const DefaultGarbage = "Server started on stdio (debug mode)"

// errDropped is what stdio.drop reports for the response it keeps back.
var errDropped = errors.New("the response was dropped by the fault (FI): the client never receives it")

// lineFunc is a LineFault made of two optional functions.
type lineFunc struct {
	request  func(ctx context.Context, req *Request, srv LineServer)
	response func(ctx context.Context, req *Request, resp []byte) ([]LineOut, error)
}

func (f lineFunc) Request(ctx context.Context, req *Request, srv LineServer) {
	if f.request != nil {
		f.request(ctx, req, srv)
	}
}

func (f lineFunc) Response(ctx context.Context, req *Request, resp []byte) ([]LineOut, error) {
	if f.response == nil {
		return []LineOut{{Line: resp}}, nil
	}
	return f.response(ctx, req, resp)
}

// StdioDelay injects nothing but the delay of its rules: the response line
// of a request it fires on is held back for the delay, then forwarded.
type StdioDelay struct {
	Rules
}

// Validate implements Scenario: without a delay the scenario would do
// nothing.
func (s *StdioDelay) Validate() error {
	if !s.Delay.active() {
		return fmt.Errorf("param delay: no delay set (for example {\"ms\":500})")
	}
	return nil
}

// WrapLines implements LineScenario.
func (s *StdioDelay) WrapLines(_ *Env) LineFault { return lineFunc{} }

// StdioDrop never forwards the response line of a request it fires on: the
// server answered, the client never hears of it.
type StdioDrop struct {
	Rules
}

// Validate implements Scenario.
func (s *StdioDrop) Validate() error { return nil }

// WrapLines implements LineScenario.
func (s *StdioDrop) WrapLines(env *Env) LineFault {
	return lineFunc{response: func(_ context.Context, req *Request, _ []byte) ([]LineOut, error) {
		env.NoteRequest(req, "response dropped")
		return nil, errDropped
	}}
}

// StdioGarbage writes Line, which is not JSON-RPC, to the client just
// before the response line of a request it fires on, as a server that
// prints to stdout does.
type StdioGarbage struct {
	Rules
	Line string `json:"line"`
}

// Validate implements Scenario.
func (s *StdioGarbage) Validate() error {
	switch {
	case s.Line == "":
		return fmt.Errorf("param line: empty")
	case strings.ContainsAny(s.Line, "\r\n"):
		return fmt.Errorf("param line: must be one line (no CR or LF)")
	}
	return nil
}

// WrapLines implements LineScenario.
func (s *StdioGarbage) WrapLines(env *Env) LineFault {
	return lineFunc{response: func(_ context.Context, req *Request, resp []byte) ([]LineOut, error) {
		env.NoteRequest(req, "a stray line before the response")
		return []LineOut{{Line: []byte(s.Line), Injected: true}, {Line: resp}}, nil
	}}
}

// StdioExit kills the server right after passing it a request it fires on:
// the server dies in the middle of the request, and what it writes from then
// on never reaches the client.
type StdioExit struct {
	Rules
}

// Validate implements Scenario.
func (s *StdioExit) Validate() error { return nil }

// WrapLines implements LineScenario.
func (s *StdioExit) WrapLines(env *Env) LineFault {
	return lineFunc{request: func(_ context.Context, req *Request, srv LineServer) {
		env.NoteRequest(req, "the server is killed once the request reached it")
		srv.Kill()
	}}
}
