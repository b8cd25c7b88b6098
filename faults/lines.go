package faults

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/wire"
)

// LineScenario is a scenario for a stdio server, whose traffic is lines of
// JSON-RPC (mcpdiag proxy --stdio). It has the same rules as an HTTP
// scenario: a request line counts as a POST for match and schedule, and the
// delay waits before the response line (place before_headers; a line has no
// events, so the other places are refused).
type LineScenario interface {
	Scenario
	// WrapLines returns what the scenario does to the requests its rules
	// fire on. It is called once, when the endpoint is built.
	WrapLines(env *Env) LineFault
}

// LineFault is what a line scenario does to a request it fired on.
type LineFault interface {
	// Request is called before the request line is passed to the server;
	// srv acts on the server.
	Request(ctx context.Context, req *Request, srv LineServer)
	// Response is called with the server's response line to the request
	// (without its line end) before it is forwarded, and returns the lines
	// to forward in its place, in order. A nil result with an error drops
	// the response: the client never receives it, and the error says why.
	Response(ctx context.Context, req *Request, resp []byte) ([]LineOut, error)
}

// LineOut is one line to forward to the client.
type LineOut struct {
	// Line is the line, without its line end.
	Line []byte
	// Injected reports a line the fault wrote (it answers no request),
	// rather than the server's own.
	Injected bool
}

// LineServer is the stdio server a LineFault can act on.
type LineServer interface {
	// Kill ends the server as soon as the current request line has reached
	// it. From the call on, the server's output is dropped: the client
	// sees a server that crashed in the middle of the request.
	Kill()
}

// LineEndpoint is the stdio counterpart of Endpoint: a Selection of line
// scenarios over one stdio session, with its own counters and seeded
// randomness, deciding in the order the client's requests arrive. It is safe
// for concurrent use.
type LineEndpoint struct {
	sel    Selection
	seed   uint64
	layers []lineLayer

	mu       sync.Mutex
	counters Counters
}

type lineLayer struct {
	*rule
	fault LineFault
}

// NewLineEndpoint returns an endpoint applying sel to a stdio session. Of
// opts it uses Name, Seed and Key. It fails when a scenario of sel is not a
// LineScenario, or its delay is placed at SSE events.
func NewLineEndpoint(sel Selection, opts EndpointOptions) (*LineEndpoint, error) {
	seed := opts.Seed
	for seed == 0 {
		var b [8]byte
		_, _ = crand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	e := &LineEndpoint{sel: sel, seed: seed, counters: Counters{Methods: map[string]int{}, Tools: map[string]int{}}}
	for i, c := range sel {
		ls, ok := c.Scenario.(LineScenario)
		if !ok {
			return nil, fmt.Errorf("%s applies to %s, not to a stdio server", c.ID, transportOf(c.Scenario).Applies())
		}
		ru := newRule(i, c, seed, opts.Key, opts.Name)
		if p := ru.rules.Delay.place(); ru.rules.Delay.active() && p != PlaceBeforeHeaders {
			return nil, fmt.Errorf("%s: param delay.place: %q: a stdio response is one line, with no events; want before_headers (the wait before the response line)", c.ID, p)
		}
		e.layers = append(e.layers, lineLayer{rule: ru, fault: ls.WrapLines(ru.env)})
	}
	return e, nil
}

// Seed returns the endpoint's seed.
func (e *LineEndpoint) Seed() uint64 { return e.seed }

// Selection returns the scenarios in force.
func (e *LineEndpoint) Selection() Selection { return e.sel }

// Counters returns a copy of the endpoint's counters (Posts counts request
// lines).
func (e *LineEndpoint) Counters() Counters {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counters.clone()
}

// LineRequest is one request line of a stdio session.
type LineRequest struct {
	// Line is the request line, without its line end.
	Line []byte
	// Protocol is the session's protocol revision, used when the line
	// itself names none (a stdio request after initialize carries no
	// version).
	Protocol string
	// Message is the line's JSON-RPC message when the caller has parsed it
	// (nil: Request parses the line). It is used only when its Body is the
	// line's bytes.
	Message *wire.Message
}

// Request decides about one request line of the client (call it for
// requests only, not for notifications or responses), before the line is
// passed to the server: it counts the request, takes every scenario's
// decision, and lets the scenarios that fired act on the server (srv).
func (e *LineEndpoint) Request(ctx context.Context, lr LineRequest, srv LineServer) *LineDecision {
	req := &Request{Start: time.Now(), Post: true, Body: bytes.TrimSpace(lr.Line)}
	if m := lr.Message; m != nil && bytes.Equal(m.Body, req.Body) {
		req.read(m)
	} else {
		m := wire.ParseMessage(req.Body)
		req.read(&m)
	}
	if req.Protocol == "" {
		req.Protocol = lr.Protocol
	}
	e.mu.Lock()
	e.counters.Posts++
	req.Count.Post = e.counters.Posts
	if req.Method != "" {
		e.counters.Methods[req.Method]++
		req.Count.Method = e.counters.Methods[req.Method]
	}
	if req.Name != "" && req.Method == "tools/call" {
		e.counters.Tools[req.Name]++
		req.Count.Tool = e.counters.Tools[req.Name]
	}
	req.Counters = e.counters.clone()
	e.mu.Unlock()

	d := &LineDecision{req: req}
	for _, l := range e.layers {
		f := l.decide(req)
		req.addFiring(f)
		if f.Fired {
			d.fired = append(d.fired, l)
		}
	}
	for _, l := range d.fired {
		l.fault.Request(ctx, req, srv)
	}
	return d
}

// LineDecision is what the endpoint decided about one request line.
type LineDecision struct {
	req   *Request
	fired []lineLayer // outermost first
}

// Request returns what the endpoint read from the request line.
func (d *LineDecision) Request() *Request { return d.req }

// Fired returns the ids of the scenarios that fired, joined with "+" (""
// when none did).
func (d *LineDecision) Fired() string {
	ids := make([]string, len(d.fired))
	for i, l := range d.fired {
		ids[i] = l.id
	}
	return strings.Join(ids, "+")
}

// Firings returns every scenario's decision, outermost first.
func (d *LineDecision) Firings() []Firing { return d.req.Firings() }

// Response applies the scenarios that fired to the server's response line:
// first their delays (a wait that ends early, with ctx's error, when ctx
// ends), then each scenario, the innermost first (as an inner HTTP scenario
// writes what the outer one sees). It returns the lines to forward in place
// of resp; a nil result with an error drops the response, and the error
// says why.
func (d *LineDecision) Response(ctx context.Context, resp []byte) ([]LineOut, error) {
	out := []LineOut{{Line: resp}}
	if len(d.fired) == 0 {
		return out, nil
	}
	for _, l := range d.fired {
		if !l.rules.Delay.active() {
			continue
		}
		w := l.drawDelay()
		d.req.addDelay(l.index, w)
		if !sleep(ctx, w) {
			d.req.note(l.index, "the run ended during the delay")
			return nil, fmt.Errorf("%s: the run ended during the fault's delay: %w", l.id, ctx.Err())
		}
	}
	for i := len(d.fired) - 1; i >= 0; i-- {
		l := d.fired[i]
		var next []LineOut
		for _, o := range out {
			if o.Injected {
				next = append(next, o)
				continue
			}
			lines, err := l.fault.Response(ctx, d.req, o.Line)
			if err != nil {
				return nil, err
			}
			next = append(next, lines...)
		}
		out = next
	}
	return out, nil
}
