package faults

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// EndpointOptions configure an Endpoint.
type EndpointOptions struct {
	// Path is the endpoint's URL path (for advertised URLs such as the
	// resource metadata).
	Path string
	// Name identifies the endpoint in observations (Path when empty).
	Name string
	// Seed seeds every random source of the endpoint; 0 draws a random
	// seed, which Seed() reports and every observation carries, so that a
	// run can be replayed with it.
	Seed uint64
	// Key signs requestState (HMAC-SHA256); a random 32-byte key when
	// empty.
	Key []byte
	// MaxBody caps request bodies (DefaultMaxBody when 0).
	MaxBody int64
	// Observe, when set, is called once after every request, in the
	// request's goroutine.
	Observe func(*Observation)
}

// Endpoint is one fault-injecting MCP endpoint: a Selection over the next
// handler, with its own counters and seeded randomness. It is safe for
// concurrent use.
type Endpoint struct {
	next http.Handler
	opts EndpointOptions
	seed uint64

	mu       sync.Mutex
	sel      Selection
	chain    http.Handler
	counters Counters
	inFlight int
}

// InFlight returns the number of requests the endpoint is still handling
// (a scenario may keep one running after its client left). A request stops
// counting after its Observation was reported.
func (e *Endpoint) InFlight() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inFlight
}

// NewEndpoint returns an endpoint applying sel in front of next.
func NewEndpoint(sel Selection, next http.Handler, opts EndpointOptions) *Endpoint {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Name == "" {
		opts.Name = opts.Path
	}
	if len(opts.Key) == 0 {
		opts.Key = make([]byte, 32)
		_, _ = crand.Read(opts.Key)
	}
	seed := opts.Seed
	for seed == 0 {
		var b [8]byte
		_, _ = crand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	e := &Endpoint{next: next, opts: opts, seed: seed}
	e.install(sel)
	return e
}

// Seed returns the endpoint's seed.
func (e *Endpoint) Seed() uint64 { return e.seed }

// Selection returns the scenarios in force.
func (e *Endpoint) Selection() Selection {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sel
}

// Counters returns a copy of the endpoint's counters.
func (e *Endpoint) Counters() Counters {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counters.clone()
}

// Reset zeroes the counters and rebuilds the chain: schedules, random
// sources and scenario state start again from the seed. Requests already
// running finish on the old chain.
func (e *Endpoint) Reset() {
	e.mu.Lock()
	sel := e.sel
	e.mu.Unlock()
	e.install(sel)
}

// SetSelection puts sel in force from the next request, with the counters
// zeroed, as after Reset.
func (e *Endpoint) SetSelection(sel Selection) {
	e.install(sel)
}

func (e *Endpoint) install(sel Selection) {
	var h = e.next
	for i := len(sel) - 1; i >= 0; i-- {
		h = e.layer(i, sel[i], h)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sel, e.chain = sel, h
	e.counters = Counters{Methods: map[string]int{}, Tools: map[string]int{}}
}

// stream returns a generator for one purpose of one layer; the streams of
// different layers and purposes are independent.
func stream(seed uint64, index, purpose int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(index)<<8|uint64(purpose)))
}

// rule is one layer's share of the framework, whatever the transport: its
// rules, its Env, and the decisions it takes (match, schedule, delay draws)
// in arrival order under its own lock.
type rule struct {
	id      string
	index   int
	rules   *Rules
	matcher Matcher
	env     *Env

	mu       sync.Mutex
	n        int
	schedRng *rand.Rand
	delayRng *rand.Rand
}

// newRule builds the rule of scenario c at position index of a chain whose
// endpoint has seed and key.
func newRule(index int, c Configured, seed uint64, key []byte, base string) *rule {
	rules := &Rules{}
	if r, ok := c.Scenario.(ruled); ok {
		rules = r.CommonRules()
	}
	if rules.Schedule.Seed != nil {
		seed = *rules.Schedule.Seed
	}
	matcher, _ := c.Scenario.(Matcher)
	return &rule{
		id: c.ID, index: index, rules: rules, matcher: matcher,
		env:      &Env{ID: c.ID, Index: index, Seed: seed, Key: key, Base: base, rng: stream(seed, index, 2), delays: rules.Delay.active()},
		schedRng: stream(seed, index, 0), delayRng: stream(seed, index, 1),
	}
}

// decide takes the rule's decision about req.
func (r *rule) decide(req *Request) *Firing {
	f := &Firing{Scenario: r.id, Layer: r.index}
	if !req.Post {
		f.Why = "not a POST"
		return f
	}
	if ok, why := r.rules.Match.matches(req); !ok {
		f.Why = why
		return f
	}
	if r.matcher != nil {
		if ok, why := r.matcher.Matches(req); !ok {
			f.Why = why
			return f
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	f.Matched, f.N = true, r.n
	var draw *float64
	if r.rules.Schedule.P != nil {
		d := r.schedRng.Float64()
		draw = &d
		f.Draw = draw
	}
	f.Fired, f.Why = r.rules.Schedule.fires(r.n, draw)
	return f
}

// drawDelay draws the rule's next delay.
func (r *rule) drawDelay() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rules.Delay.draw(r.delayRng)
}

// layer wraps next with scenario c at position index.
func (e *Endpoint) layer(index int, c Configured, next http.Handler) http.Handler {
	ru := newRule(index, c, e.seed, e.opts.Key, e.opts.Path)
	hs, ok := c.Scenario.(HTTPScenario)
	if !ok {
		// Select refuses such a selection; a Selection built by hand can
		// still hold one. Every request says so rather than pass silently.
		msg := fmt.Sprintf("%s applies to %s", c.ID, transportOf(c.Scenario).Applies())
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, msg, http.StatusInternalServerError)
		})
	}
	fault := hs.Wrap(next, ru.env)
	rules := ru.rules
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		if req == nil {
			// Used outside an Endpoint: read the request here.
			var err error
			if req, err = readRequest(r, e.opts.MaxBody); err != nil {
				http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
				return
			}
			r = withRequest(r, req)
		}
		f := ru.decide(req)
		req.addFiring(f)
		if !f.Fired {
			next.ServeHTTP(w, r)
			return
		}
		if rules.Delay.active() {
			switch rules.Delay.place() {
			case PlaceBeforeHeaders:
				d := ru.drawDelay()
				req.addDelay(index, d)
				if !sleep(r.Context(), d) {
					req.note(index, "the client went away during the delay")
					return
				}
			default:
				dw := &delayWriter{ResponseWriter: w, ctx: r.Context(), place: rules.Delay.place(), next: ru.drawDelay,
					waited: func(d time.Duration) { req.addDelay(index, d) }}
				defer dw.finish()
				w = dw
			}
		}
		fault.ServeHTTP(w, r)
	})
}

// ServeHTTP counts the request, runs it through the chain in force, and
// reports an Observation.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := readRequest(r, e.opts.MaxBody)
	e.mu.Lock()
	chain, sel := e.chain, e.sel
	if req.Post {
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
	}
	req.Counters = e.counters.clone()
	e.inFlight++
	e.mu.Unlock()

	rec := &recorder{ResponseWriter: w}
	obs := &Observation{Endpoint: e.opts.Name, Scenario: sel.String(), Seed: e.seed, Request: req,
		HTTPMethod: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone(), Time: req.Start}
	defer func() {
		p := recover()
		obs.Duration = time.Since(req.Start)
		obs.Status, obs.ContentType, obs.Bytes, obs.Hijacked = rec.status, rec.contentType, rec.bytes, rec.hijacked
		obs.RetryAfter = rec.retryAfter
		if p != nil {
			obs.Aborted = true
		}
		obs.Firings = req.Firings()
		if e.opts.Observe != nil {
			e.opts.Observe(obs)
		}
		if tap, _ := r.Context().Value(tapKey{}).(func(*Observation)); tap != nil {
			tap(obs)
		}
		// Observed, then no longer in flight: once InFlight is 0, every
		// request that arrived has been observed (logged).
		e.mu.Lock()
		e.inFlight--
		e.mu.Unlock()
		if p != nil {
			panic(p)
		}
	}()
	switch {
	case errors.Is(err, errBodyTooLarge):
		http.Error(rec, fmt.Sprintf("request body larger than %d bytes", e.opts.MaxBody), http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(rec, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	chain.ServeHTTP(rec, withRequest(r, req))
}

type tapKey struct{}

// WithTap returns ctx carrying tap: an Endpoint that serves a request with
// this context calls tap with its Observation once the request is done, in
// the request's goroutine, after EndpointOptions.Observe. A recorder in
// front of the endpoint learns the faults' decision about its own request
// this way, with no header or lookup table to find it again.
func WithTap(ctx context.Context, tap func(*Observation)) context.Context {
	return context.WithValue(ctx, tapKey{}, tap)
}

// IsTapKey reports whether key is the context key WithTap puts a tap under.
// A context type of its own that carries several values in one node (the
// recorder's) answers it: its Value returns the func(*Observation) for this
// key, as a context made by WithTap would.
func IsTapKey(key any) bool {
	_, ok := key.(tapKey)
	return ok
}

// recorder notes the status, type and size of what is written, and whether
// the connection was hijacked.
type recorder struct {
	http.ResponseWriter
	status      int
	contentType string
	retryAfter  string
	bytes       int64
	hijacked    bool
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
		r.contentType = r.Header().Get("Content-Type")
		r.retryAfter = r.Header().Get("Retry-After")
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err == nil {
		r.hijacked = true
	}
	return c, rw, err
}

// Observation is what an Endpoint saw and did for one request.
type Observation struct {
	Endpoint string
	Scenario string
	Seed     uint64
	Time     time.Time
	Duration time.Duration
	// HTTPMethod, URL (path and query) and Header are the request's.
	HTTPMethod string
	URL        string
	Header     http.Header
	Request    *Request
	// Status is the status sent (0 when none was: a reset connection);
	// ContentType and Bytes describe the body sent.
	Status      int
	ContentType string
	Bytes       int64
	// RetryAfter is the Retry-After header sent, if any.
	RetryAfter string
	// Hijacked reports that a scenario took over the connection (to reset
	// or close it); Aborted that the handler aborted the response.
	Hijacked bool
	Aborted  bool
	// Firings are the decisions of every scenario, outermost first.
	Firings []Firing
}

// Fired returns the ids of the scenarios that fired, joined with "+".
func (o *Observation) Fired() string {
	var ids []string
	for _, f := range o.Firings {
		if f.Fired {
			ids = append(ids, f.Scenario)
		}
	}
	return strings.Join(ids, "+")
}
