package faults

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"

	"github.com/mcpdiag/mcpdiag/classify"
)

// Scenario is one fault. Its exported fields are its JSON params; it embeds
// [Rules] for matching, scheduling and delays. What it does to the traffic
// comes from one more method, by transport: [HTTPScenario] (Wrap) or
// [LineScenario] (WrapLines).
type Scenario interface {
	// Validate reports the first bad param, naming it. The common rules are
	// validated separately.
	Validate() error
}

// HTTPScenario is a scenario for HTTP servers (mcpdiag serve, mcpdiag proxy
// --upstream).
type HTTPScenario interface {
	Scenario
	// Wrap returns the handler that produces the fault in front of next. It
	// is called when the endpoint is built (and again after a reset, so any
	// state the handler keeps starts afresh). The handler it returns is
	// called only for the requests the scenario's rules fire on.
	Wrap(next http.Handler, env *Env) http.Handler
}

// Transport is what a scenario applies to: the HTTP traffic of a server, or
// the lines of a stdio server.
type Transport string

// The transports.
const (
	TransportHTTP  Transport = "http"
	TransportStdio Transport = "stdio"
)

// transportOf returns the transport scenario s applies to ("" when s has no
// method for either).
func transportOf(s Scenario) Transport {
	switch s.(type) {
	case HTTPScenario:
		return TransportHTTP
	case LineScenario:
		return TransportStdio
	}
	return ""
}

// Applies says what a scenario of transport t applies to, for errors that
// refuse it elsewhere.
func (t Transport) Applies() string {
	if t == TransportStdio {
		return "stdio servers (mcpdiag proxy --stdio)"
	}
	return "HTTP servers (mcpdiag serve, mcpdiag proxy --upstream)"
}

func (t Transport) servers() string {
	if t == TransportStdio {
		return "a stdio server"
	}
	return "an HTTP server"
}

// Matcher is implemented by scenarios that narrow the requests they match
// beyond Rules.Match (for example to the methods of a facet, or to requests
// holding a session). A request must satisfy both.
type Matcher interface {
	// Matches reports whether the scenario looks at req, and if not, why.
	Matches(req *Request) (bool, string)
}

// Rules are the matching, scheduling and delay every scenario shares. Embed
// it; its fields become the "match", "schedule" and "delay" params.
type Rules struct {
	// Match selects the POSTs the scenario looks at.
	Match Match `json:"match"`
	// Schedule selects, among the matching POSTs, those it fires on.
	Schedule Schedule `json:"schedule"`
	// Delay is applied to every request the scenario fires on.
	Delay Delay `json:"delay"`
}

// CommonRules returns the rules; embedding Rules provides it.
func (r *Rules) CommonRules() *Rules { return r }

// ruled is implemented by every scenario that embeds Rules.
type ruled interface{ CommonRules() *Rules }

func (r *Rules) validate() error {
	if err := r.Match.validate(); err != nil {
		return err
	}
	if err := r.Schedule.validate(); err != nil {
		return err
	}
	return r.Delay.validate()
}

// Env is what a scenario's handler shares with its endpoint: its place in the
// chain, the seed, the key that signs requestState, a seeded random source,
// and the per-request decision it can add notes to.
type Env struct {
	// ID is the scenario id; Index its position in the chain (0 is the
	// outermost).
	ID    string
	Index int
	// Seed is the seed of this layer's random sources.
	Seed uint64
	// Key is the HMAC-SHA256 key for requestState (per endpoint).
	Key []byte
	// Base is the endpoint's base URL path (for example /mcp), for URLs a
	// scenario advertises such as resource metadata.
	Base string

	mu  sync.Mutex
	rng *rand.Rand
	// delays reports rules with an active delay: a request they delayed
	// was changed even when the scenario passes it through.
	delays bool
}

// Float64 returns a seeded pseudo-random number in [0,1). Draws are taken in
// request order, so a sequential client sees the same draws for the same
// seed.
func (e *Env) Float64() float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rng.Float64()
}

// Note adds a line to this scenario's decision for request r; it appears in
// the server log under "faults".
func (e *Env) Note(r *http.Request, format string, args ...any) {
	if req := RequestOf(r); req != nil {
		req.note(e.Index, fmt.Sprintf(format, args...))
	}
}

// PassThrough notes, for request r, that the scenario leaves it unchanged
// (the note says why): the decision is recorded as passed through
// (FaultDecision.PassedThrough), not fired, so the exchange gets no FI and
// counts as no fault fired. A scenario calls it before passing r on
// untouched; when its rules delay r, the delay changed r and the
// decision stays fired.
func (e *Env) PassThrough(r *http.Request, format string, args ...any) {
	if req := RequestOf(r); req != nil {
		req.passThrough(e.Index, fmt.Sprintf(format, args...), e.delays)
	}
}

// NoteRequest adds a line to this scenario's decision for req (the form
// line scenarios use, having no *http.Request).
func (e *Env) NoteRequest(req *Request, format string, args ...any) {
	if req != nil {
		req.note(e.Index, fmt.Sprintf(format, args...))
	}
}

// Count returns the 1-based number of r among the requests this scenario
// matched (0 when it did not match r).
func (e *Env) Count(r *http.Request) int {
	if req := RequestOf(r); req != nil {
		if f := req.firing(e.Index); f != nil {
			return f.N
		}
	}
	return 0
}

// Entry is one scenario of the catalogue.
type Entry struct {
	// ID is the stable id, "area.name".
	ID string `json:"id"`
	// Title is a one-line summary.
	Title string `json:"title"`
	// Layer is where the fault is injected (the classifier's layers); empty
	// for the baseline.
	Layer classify.Layer `json:"layer"`
	// Description says exactly what goes on the wire.
	Description string `json:"description"`
	// New returns the scenario with its default params.
	New func() Scenario `json:"-"`
	// Example is a params object worth trying (JSON).
	Example json.RawMessage `json:"example"`
	// Tool and Args are the call that triggers the scenario.
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// Protocol, when set, is the --protocol the call uses (the default is
	// auto).
	Protocol string `json:"protocol,omitempty"`
	// Input, when set, is the --input file the call answers MRTR input
	// requests from.
	Input json.RawMessage `json:"input,omitempty"`
	// ExpectedOutcome is what `mcpdiag call URL TOOL --args ARGS --retries 0
	// --timeout 10s` (plus --protocol and --input when set, and --no-auth
	// with NoAuth) reports against a fresh endpoint of mcpdiag serve with
	// the default params.
	ExpectedOutcome classify.Outcome `json:"expectedOutcome"`
	// ExpectedPosts is the number of POSTs the server log shows for that
	// call.
	ExpectedPosts int `json:"expectedPosts"`
	// NeedsCapability, when set, is the client capability the scenario's
	// interaction needs (a top-level ClientCapabilities name, such as
	// "elicitation"): a client that does not declare it cannot take part,
	// and the server must answer its call without the interaction (a tool
	// error over 2025-11-25, a 400 -32021 over 2026-07-28). The outcome
	// above is that of a client that declares it; the matrix judges a run
	// whose client declared no such capability "not tested".
	NeedsCapability string `json:"needsCapability,omitempty"`
	// Why explains the expected outcome (the path the call takes).
	Why string `json:"why"`
	// NoAuth makes the entry's call run with --no-auth: set on the entries
	// that answer 401 or 403 with no authorization server behind them, whose
	// outcome is that answer (HTTP_ERROR) rather than the OAuth chain's
	// AUTH_FAILED at resource-metadata.
	NoAuth bool `json:"noAuth,omitempty"`
	// AuthStep, for the scenarios behind mcpdiag serve's own authorization
	// server, is the step of the authorization chain the outcome names:
	// where an AUTH_FAILED call stopped (Call.Auth.Step), or the step that
	// let a successful call through (an exchange of that step in the
	// chain, such as refresh or step-up).
	AuthStep string `json:"authStep,omitempty"`
	// QuickParams and QuickTimeoutMs, when set, keep the expected outcome
	// and POST count while making a slow scenario fast: a hang of seconds
	// against a client timeout of QuickTimeoutMs, where the defaults hang
	// 15-30 s against 10 s. Tests and matrix runs use them.
	QuickParams    json.RawMessage `json:"quickParams,omitempty"`
	QuickTimeoutMs int             `json:"quickTimeoutMs,omitempty"`
	// Transport is what the scenario applies to (TransportHTTP when
	// empty). For a stdio entry, Tool and Args are the call a client makes
	// through `mcpdiag proxy --stdio --scenario ID`, ExpectedOutcome is the
	// outcome of the first record the proxy writes with the fault injected
	// (FI), and ExpectedPosts counts the request lines of the conversation
	// (initialize, then the call).
	Transport Transport `json:"transport"`
	// ServerMistake marks the server.* entries: the fixture made to commit
	// one failure-reporting mistake of a server, for `mcpdiag probe` to
	// find. They judge servers, not clients: the matrix skips them.
	ServerMistake bool `json:"serverMistake,omitempty"`
}

// UsesOAuth reports whether the entry's scenario puts the endpoint behind
// mcpdiag serve's own authorization server (AuthServerScenario): its call
// runs the OAuth chain, as `mcpdiag call` does by default. The other
// entries are called with --no-auth (a 401 is their outcome).
func (e Entry) UsesOAuth() bool {
	_, ok := e.New().(AuthServerScenario)
	return ok
}

// OnStdio reports whether the entry is a stdio scenario.
func (e Entry) OnStdio() bool { return e.Transport == TransportStdio }

func (e Entry) transport() Transport {
	if e.Transport == "" {
		return TransportHTTP
	}
	return e.Transport
}

// Defaults returns the default params as JSON.
func (e Entry) Defaults() json.RawMessage {
	b, err := json.Marshal(e.New())
	if err != nil {
		panic("faults: " + e.ID + ": defaults do not encode: " + err.Error())
	}
	return b
}

// MarshalJSON adds the defaults to the entry.
func (e Entry) MarshalJSON() ([]byte, error) {
	type plain Entry
	if e.Transport == "" {
		e.Transport = TransportHTTP
	}
	return json.Marshal(struct {
		plain
		Defaults json.RawMessage `json:"defaults"`
	}{plain(e), e.Defaults()})
}

// Lookup returns the catalogue entry with id.
func Lookup(id string) (Entry, bool) {
	for _, e := range Catalogue() {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// IDs returns every scenario id, in catalogue order.
func IDs() []string {
	var ids []string
	for _, e := range Catalogue() {
		ids = append(ids, e.ID)
	}
	return ids
}
