// Package serve is the fault-injecting MCP server behind `mcpdiag serve`:
// a healthy fixture MCP server (package fixture) behind fault scenarios
// (package faults), on one main endpoint and one endpoint per scenario, with
// an admin API and a log of every request.
//
// # Endpoints
//
//	/mcp                 the main endpoint: the scenarios of Options.Selection,
//	                     changeable at run time (PUT /admin/scenario)
//	/s/{id}/mcp?k=v      scenario id ("a+b" composes) with params from the query
//	                     (params=JSON, or one key per param: statusCodes=[503],
//	                     match.tool=echo); run=ANY is ignored and only tells two
//	                     endpoints apart
//	/.well-known/oauth-protected-resource/{endpoint path}
//	                     RFC 9728 metadata, the document auth.* scenarios point to
//	/oauth/N/…, /.well-known/oauth-authorization-server/oauth/N
//	                     the authorization server of the Nth endpoint behind an
//	                     auth.* OAuth scenario (auth.go, package authserver)
//
// Every endpoint is its own [faults.Endpoint] over its own fixture server:
// its own counters (per POST, per JSON-RPC method, per tool), schedules and
// random sources, all starting at zero when the endpoint is first used. An
// /s/ endpoint is identified by its path and its query, so two runs with
// different params never share counters.
//
// # Admin API
//
// Answered only to direct loopback clients (a loopback peer, a loopback
// Host, an allowed Origin, and no Forwarded, X-Forwarded-* or Via header: a
// proxy on the same host must not hand the API to its own clients), unless
// Options.AdminToken is set; then every admin request, loopback or not, must
// carry "Authorization: Bearer <token>".
//
//	GET  /admin/log[?endpoint=E]        the log, JSONL (see below)
//	POST /admin/reset[?endpoint=E]      zero the counters and restart the schedules
//	                                    of every endpoint (or of E); clearLog=1 also
//	                                    empties the log; dropEndpoints=1 forgets every
//	                                    /s/ endpoint (the next request makes it afresh)
//	GET  /admin/scenario[?endpoint=/mcp] the selection of the main endpoint
//	PUT  /admin/scenario                {"scenario":"a+b","params":…}: new scenarios
//	                                    for /mcp from the next request, counters zeroed
//	                                    (what GET returns can be PUT back)
//	GET  /admin/counters                the counters of every endpoint
//	GET  /admin/scenarios               the catalogue, as `mcpdiag scenarios --json`
//
// # Log
//
// The chain is router → recorder → faults.Endpoint → fixture: every request
// to an MCP endpoint passes through the one recorder (package recorder, the
// proxy's too) and gives one line, a classified record.Record of kind
// "exchange" (the verdict of the response the client received: outcome,
// layer, flags DC, HJ, AB, FI …; time, method, JSON-RPC id, tool, protocol
// version, redacted request headers, hashed session, status, content type,
// bytes; "scenario" names what fired), written before the request's handler
// returns, with the endpoint's own view in the typed members "fault" (the
// selection, the endpoint, the seed, the request's numbers and the counters,
// every scenario's decision: matched, n, fired, why, draw, delays, notes; the
// requestState issued) and "params" (the _meta keys, protocol version,
// capabilities hash, MRTR members). A scenario change, a reset and a refused
// /s/ endpoint write a line of kind "server" with a note saying what
// happened; so does an authorization server's request (its "auth" member).
package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// Defaults.
const (
	// DefaultAddr is where `mcpdiag serve` listens: loopback only.
	DefaultAddr = "127.0.0.1:8080"
	// DefaultLogLimit is how many log lines are kept in memory; older ones
	// are dropped (and counted). --log keeps them all in a file.
	DefaultLogLimit = 20000
	// MainPath is the main endpoint.
	MainPath = "/mcp"
	// DefaultReadHeaderTimeout is how long a client may take to send a
	// request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request: longer than Go's client pool keeps one (90 s), so
	// that a Go client closes first.
	DefaultIdleTimeout = 120 * time.Second
	// MaxEndpoints bounds the /s/ endpoints one server keeps (each has its
	// own fixture server and counters); past it a new one gets 503 until
	// POST /admin/reset?dropEndpoints=1.
	MaxEndpoints = 1000
)

// Options configure a Server. The zero value serves the healthy fixture on
// /mcp with a random seed.
type Options struct {
	// Selection is the scenarios of the main endpoint.
	Selection faults.Selection
	// Seed seeds every endpoint (0: a random seed, reported by Seed and in
	// every log line).
	Seed uint64
	// AdminToken, when set, is required on every admin request and opens
	// the admin API to non-loopback clients.
	AdminToken string
	// NewServer returns the healthy MCP server behind one endpoint; a
	// fixture.New server when nil.
	NewServer func() http.Handler
	// LogLimit bounds the lines kept in memory (DefaultLogLimit when 0).
	LogLimit int
	// LogFile, when set, receives every log line as well. A line it fails
	// to write is counted (LogStats), reported to OnLogLoss, and does not
	// stop the server or the lines after it.
	LogFile record.LineWriter
	// OnLogLoss, when set, is called for every log record lost: a line
	// LogFile failed to write, or a record that could not be encoded (the
	// log then holds a short line saying so in its place).
	OnLogLoss func(record.Loss)
	// Encoder redacts log lines; the zero Encoder when nil.
	Encoder *record.Encoder
	// ReadHeaderTimeout bounds the time a client may take to send a
	// request's headers, from the moment its connection is accepted or its
	// previous response ended (DefaultReadHeaderTimeout when 0; negative
	// for none): connections that send nothing or drip are closed.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that has no request in
	// flight after this long (DefaultIdleTimeout when 0; negative for
	// none). A response in progress is never idle, however slowly it
	// streams (a scenario's delays included).
	IdleTimeout time.Duration
}

// Server is the fault server. It is an http.Handler; ListenAndServe runs it.
type Server struct {
	opts Options
	seed uint64

	mu        sync.Mutex
	endpoints map[string]*faults.Endpoint
	order     []string
	log       [][]byte
	dropped   int
	fileErr   error
	tally     *record.Tally  // the log records: written to LogFile, or lost
	flight    map[string]int // requests per endpoint key whose line is not written yet
	rec       *recorder.Recorder
	auth      authServers // the endpoints' own authorization servers (auth.go)
}

// New returns a Server.
func New(opts Options) *Server {
	if opts.NewServer == nil {
		opts.NewServer = func() http.Handler { return fixture.New(fixture.Options{}) }
	}
	if opts.LogLimit <= 0 {
		opts.LogLimit = DefaultLogLimit
	}
	if opts.Encoder == nil {
		opts.Encoder = &record.Encoder{}
	}
	s := &Server{opts: opts, endpoints: map[string]*faults.Endpoint{}, flight: map[string]int{}, tally: record.NewTally(opts.OnLogLoss)}
	// The one recorder (package recorder), as in the proxy: every request
	// to an MCP endpoint is one classified exchange line, written before
	// the handler returns, with the endpoint's view of it (fault, params).
	// The recorder parses as much of a request body as the fault
	// endpoints read (faults.DefaultMaxBody): a request an endpoint
	// read, and a scenario acted on, has its method, id and tool in its
	// line (docs/decisions.md, ids20). The endpoint holds that much of
	// the body anyway.
	rc, err := recorder.New(recorder.Options{
		Records: logSink{s}, Bodies: recorder.BodiesNone, MaxRequestParse: faults.DefaultMaxBody,
		FaultScenario: true, ServerFacts: true, Sync: true, Name: "server",
	})
	if err != nil {
		panic(err) // the options above are valid
	}
	s.rec = rc
	main := s.newEndpoint(MainPath, MainPath, opts.Selection)
	s.seed = main.Seed()
	s.endpoints[MainPath] = main
	s.order = append(s.order, MainPath)
	return s
}

// Seed returns the seed of every endpoint.
func (s *Server) Seed() uint64 { return s.seed }

func (s *Server) newEndpoint(path, name string, sel faults.Selection) *faults.Endpoint {
	seed := s.opts.Seed
	if seed == 0 {
		seed = s.seed
	}
	return faults.NewEndpoint(sel, s.opts.NewServer(), faults.EndpointOptions{
		Path: path, Name: name, Seed: seed,
	})
}

// logSink writes the recorder's exchange records into the log.
type logSink struct{ s *Server }

// Write encodes rec into a log line. A record that cannot be encoded is
// counted as lost and leaves a short line saying so in its place; a line
// the log file refuses is counted by append. It never returns an error: the
// log's own tally holds the losses.
func (l logSink) Write(rec *record.Record) error {
	s := l.s
	line, err := s.opts.Encoder.Encode(rec)
	if err != nil {
		s.append(fallbackLine(rec.Time, rec.Scenario, err), false)
		s.tally.Lose(record.Loss{Ref: record.RefOf(rec), Reason: record.LostUnencodable, Err: err})
		return nil
	}
	s.append(line, true)
	return nil
}

// record serves r on endpoint ep (named key) behind the recorder, counting
// it in flight until its log line is written.
func (s *Server) record(w http.ResponseWriter, r *http.Request, key string, ep *faults.Endpoint) {
	s.mu.Lock()
	s.flight[key]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.flight[key]--; s.flight[key] <= 0 {
			delete(s.flight, key)
		}
		s.mu.Unlock()
	}()
	s.rec.Serve(w, s.withAuth(key, ep, r), ep)
}

// InFlight returns how many requests to the endpoint named key (MainPath,
// or an /s/ path with its query) have no log line yet. Once it is 0, every
// request that arrived there is in the log.
func (s *Server) InFlight(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flight[key]
}

// fallbackLine is written when a record cannot be encoded: the request is
// still in the log, and the line says that its record was lost.
func fallbackLine(t time.Time, scenario string, err error) []byte {
	b, _ := json.Marshal(map[string]any{"v": record.SchemaVersion, "kind": record.KindServer, "time": t.UTC(),
		"scenario": scenario, "note": "the log line could not be encoded: " + err.Error()})
	return append(visible.JSON(b), '\n')
}

// append keeps a log line in memory and writes it to the log file. A failed
// write is counted and reported, and the next line is tried all the same
// (a full disk may have room again). isRecord is false for a fallback
// line, whose record was already counted as lost.
func (s *Server) append(line []byte, isRecord bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.log) >= s.opts.LogLimit {
		n := len(s.log) - s.opts.LogLimit + 1
		s.log = append(s.log[:0:0], s.log[n:]...)
		s.dropped += n
	}
	s.log = append(s.log, line)
	if s.opts.LogFile == nil {
		return
	}
	err := s.opts.LogFile.WriteLine(line)
	switch {
	case err != nil && s.fileErr == nil:
		s.fileErr = err
		fallthrough
	case err != nil:
		if isRecord {
			s.tally.Lose(record.Loss{Ref: record.RefOfLine(line), Reason: record.LostWrite, Err: err})
		}
	case isRecord:
		s.tally.Wrote()
	}
}

// LogStats counts the log records given to LogFile: written, or lost and
// why. Without a LogFile only encoding failures are counted.
func (s *Server) LogStats() record.SinkStats { return s.tally.Stats() }

// LogLost returns a *record.LostError when any log record was lost (not
// written to LogFile, or not encodable), nil otherwise.
func (s *Server) LogLost() error { return s.tally.Err() }

// event logs an admin action as a server line.
func (s *Server) event(r *http.Request, scenario, note string) {
	rec := &record.Record{Kind: record.KindServer, Time: time.Now(), Scenario: scenario, HTTPMethod: r.Method,
		URL: r.URL.RequestURI(), Client: r.Header.Get("User-Agent"), Note: note}
	line, err := s.opts.Encoder.Encode(rec)
	if err != nil {
		s.append(fallbackLine(rec.Time, scenario, err), false)
		s.tally.Lose(record.Loss{Ref: record.RefOf(rec), Reason: record.LostUnencodable, Err: err})
		return
	}
	s.append(line, true)
}

// Log returns a copy of the log lines kept in memory, oldest first.
func (s *Server) Log() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.log...)
}

// LogFileError returns the first error writing the log file, if any (see
// LogStats for how many lines it cost).
func (s *Server) LogFileError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fileErr
}

// Endpoint returns the endpoint named key (MainPath, or an /s/ path with
// its query), or nil.
func (s *Server) Endpoint(key string) *faults.Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoints[key]
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serveAuth(w, r) {
		return
	}
	p := r.URL.Path
	switch {
	case p == MainPath:
		s.record(w, r, MainPath, s.Endpoint(MainPath))
	case strings.HasPrefix(p, "/s/") && strings.HasSuffix(p, "/mcp"):
		s.serveScenario(w, r)
	case p == faults.ProtectedResourcePath || strings.HasPrefix(p, faults.ProtectedResourcePath+"/"):
		s.serveResourceMetadata(w, r)
	case strings.HasPrefix(p, "/admin/"):
		s.serveAdmin(w, r)
	default:
		http.Error(w, "mcpdiag serve: no endpoint here; MCP is at "+MainPath+" and /s/{scenario}/mcp", http.StatusNotFound)
	}
}

// endpointKey names an /s/ endpoint: its path and its sorted query.
func endpointKey(r *http.Request) string {
	q := r.URL.Query()
	if len(q) == 0 {
		return r.URL.Path
	}
	return r.URL.Path + "?" + q.Encode()
}

func (s *Server) serveScenario(w http.ResponseWriter, r *http.Request) {
	key := endpointKey(r)
	s.mu.Lock()
	ep := s.endpoints[key]
	s.mu.Unlock()
	if ep == nil {
		spec, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/s/"), "/mcp"))
		if err == nil {
			var sel faults.Selection
			sel, err = faults.SelectQuery(spec, r.URL.Query())
			if err == nil {
				s.mu.Lock()
				if ep = s.endpoints[key]; ep == nil && len(s.endpoints) <= MaxEndpoints {
					ep = s.newEndpoint(r.URL.Path, key, sel)
					s.endpoints[key] = ep
					s.order = append(s.order, key)
				}
				s.mu.Unlock()
				if ep == nil {
					http.Error(w, fmt.Sprintf("mcpdiag serve: %d scenario endpoints already; POST /admin/reset?dropEndpoints=1 drops them", MaxEndpoints), http.StatusServiceUnavailable)
					return
				}
			}
		}
		if err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, faults.ErrUnknownScenario) {
				status = http.StatusNotFound
			}
			s.event(r, spec, "refused: "+err.Error())
			http.Error(w, "mcpdiag serve: "+err.Error(), status)
			return
		}
	}
	s.record(w, r, key, ep)
}

// serveResourceMetadata publishes RFC 9728 protected resource metadata for
// the endpoint named by the path suffix.
func (s *Server) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	resource := strings.TrimPrefix(r.URL.Path, faults.ProtectedResourcePath)
	if resource == "" {
		resource = MainPath
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	doc := map[string]any{
		"resource":                 scheme + "://" + r.Host + resource,
		"authorization_servers":    []string{},
		"bearer_methods_supported": []string{"header"},
		"scopes_supported":         []string{"mcp:tools", "mcp:tools:write"},
		"resource_name":            "mcpdiag fault server",
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// adminAllowed applies the admin rule: the token when there is one;
// otherwise a direct loopback client only (loopback peer, no proxy named in
// the request, a loopback Host and an allowed Origin).
func (s *Server) adminAllowed(r *http.Request) (bool, int, string) {
	if s.opts.AdminToken != "" {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.AdminToken)) != 1 {
			return false, http.StatusUnauthorized, "the admin API needs Authorization: Bearer <the --admin-token>"
		}
		return true, 0, ""
	}
	if ok, why := loopback.CheckDirect(r); !ok {
		return false, http.StatusForbidden, "the admin API answers only direct loopback clients unless --admin-token is set: " + why
	}
	return true, 0, ""
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	if ok, status, msg := s.adminAllowed(r); !ok {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpdiag admin"`)
		}
		http.Error(w, msg, status)
		return
	}
	route := r.Method + " " + r.URL.Path
	switch route {
	case "GET /admin/log":
		s.adminLog(w, r)
	case "POST /admin/reset":
		s.adminReset(w, r)
	case "GET /admin/scenario":
		s.adminGetScenario(w, r)
	case "PUT /admin/scenario":
		s.adminPutScenario(w, r)
	case "GET /admin/counters":
		s.adminCounters(w)
	case "GET /admin/scenarios":
		writeJSON(w, http.StatusOK, faults.Catalogue())
	default:
		http.Error(w, "unknown admin route "+route, http.StatusNotFound)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func (s *Server) adminLog(w http.ResponseWriter, r *http.Request) {
	filter := r.URL.Query().Get("endpoint")
	s.mu.Lock()
	lines := append([][]byte(nil), s.log...)
	dropped := s.dropped
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/jsonl")
	w.Header().Set("Mcpdiag-Log-Dropped", fmt.Sprint(dropped))
	for _, l := range lines {
		if filter != "" && !lineHasEndpoint(l, filter) {
			continue
		}
		_, _ = w.Write(l)
	}
}

// lineHasEndpoint reports whether a log line is about endpoint e.
func lineHasEndpoint(line []byte, e string) bool {
	var v struct {
		Fault struct {
			Endpoint string `json:"endpoint"`
		} `json:"fault"`
		Auth struct {
			Server string `json:"server"`
		} `json:"auth"` // the authorization server's lines
	}
	if json.Unmarshal(line, &v) != nil {
		return false
	}
	return v.Fault.Endpoint == e || v.Auth.Server == e
}

func (s *Server) adminReset(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	only := q.Get("endpoint")
	s.mu.Lock()
	var eps []string
	for _, k := range s.order {
		if only == "" || k == only {
			eps = append(eps, k)
		}
	}
	if q.Get("clearLog") == "1" || q.Get("clearLog") == "true" {
		s.log, s.dropped = nil, 0
	}
	if q.Get("dropEndpoints") == "1" || q.Get("dropEndpoints") == "true" {
		for _, k := range s.order[1:] {
			delete(s.endpoints, k)
		}
		s.order = s.order[:1]
		eps = []string{MainPath}
	}
	s.mu.Unlock()
	if only != "" && len(eps) == 0 {
		http.Error(w, "no endpoint "+only+" (it is created by its first request)", http.StatusNotFound)
		return
	}
	for _, k := range eps {
		// A concurrent reset with dropEndpoints may have removed it.
		if ep := s.Endpoint(k); ep != nil {
			ep.Reset()
		}
	}
	s.event(r, "", "reset: counters zeroed and schedules restarted for "+strings.Join(eps, ", "))
	writeJSON(w, http.StatusOK, map[string]any{"reset": eps})
}

// scenarioState is the answer of GET and PUT /admin/scenario. Its scenario
// and params can be PUT back as they are.
type scenarioState struct {
	Endpoint string            `json:"endpoint"`
	Scenario string            `json:"scenario"`
	Params   []faults.Scenario `json:"params"`
	Seed     uint64            `json:"seed,string"`
}

func (s *Server) state(key string) (scenarioState, bool) {
	ep := s.Endpoint(key)
	if ep == nil {
		return scenarioState{}, false
	}
	sel := ep.Selection()
	params := []faults.Scenario{}
	for _, c := range sel {
		params = append(params, c.Scenario)
	}
	return scenarioState{Endpoint: key, Scenario: sel.String(), Params: params, Seed: ep.Seed()}, true
}

func (s *Server) adminGetScenario(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("endpoint")
	if key == "" {
		key = MainPath
	}
	st, ok := s.state(key)
	if !ok {
		http.Error(w, "no endpoint "+key, http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) adminPutScenario(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Endpoint string          `json:"endpoint"`
		Scenario string          `json:"scenario"`
		Params   json.RawMessage `json:"params"`
		Seed     *uint64         `json:"seed,string"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		http.Error(w, `want {"scenario":"a+b","params":{…}}: `+err.Error(), http.StatusBadRequest)
		return
	}
	if body.Endpoint != "" && body.Endpoint != MainPath {
		http.Error(w, "only "+MainPath+" can change its scenario; an /s/{id}/mcp endpoint is its URL", http.StatusBadRequest)
		return
	}
	ep := s.Endpoint(MainPath)
	if body.Seed != nil && *body.Seed != ep.Seed() {
		http.Error(w, fmt.Sprintf("seed %d: the seed is fixed when the server starts (--seed); this one has %d", *body.Seed, ep.Seed()), http.StatusBadRequest)
		return
	}
	sel, err := faults.Select(body.Scenario, body.Params)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	old := ep.Selection().String()
	ep.SetSelection(sel)
	s.event(r, sel.String(), fmt.Sprintf("scenario of %s changed from %q to %q, effective from the next request; its counters were zeroed", MainPath, old, sel.String()))
	st, _ := s.state(MainPath)
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) adminCounters(w http.ResponseWriter) {
	s.mu.Lock()
	keys := append([]string(nil), s.order...)
	s.mu.Unlock()
	sort.Strings(keys)
	out := map[string]any{}
	for _, k := range keys {
		ep := s.Endpoint(k)
		if ep == nil {
			continue // dropped by a concurrent reset
		}
		out[k] = map[string]any{"scenario": ep.Selection().String(), "counters": ep.Counters(), "inFlight": ep.InFlight()}
	}
	writeJSON(w, http.StatusOK, out)
}

// ListenAndServe serves on addr until ctx ends, then shuts down: requests
// still hanging in a scenario are cancelled, and the rest get up to 5 s to
// finish. ready, when set, is called with the main endpoint's URL once the
// listener is open.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln, ready)
}

// Serve is ListenAndServe on an open listener.
func (s *Server) Serve(ctx context.Context, ln net.Listener, ready func(url string)) error {
	base, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: timeoutOr(s.opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       timeoutOr(s.opts.IdleTimeout, DefaultIdleTimeout),
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext:       recorder.ConnContext, // the records' conn
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready(EndpointURL(ln.Addr()))
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.rec.BeginShutdown()      // what the cancel cuts is recorded as cut by the shutdown (SD)
	cancel(faults.ErrShutdown) // ends hangs and slow streams, which note the shutdown as their cause
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	// A handler on a hijacked connection is not one Shutdown waits for:
	// wait for its log line too, with a bound of its own (a Shutdown that
	// used up its budget must not leave none for the records).
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if werr := s.rec.Wait(wctx); werr != nil && err == nil {
		err = fmt.Errorf("serve: %w", werr)
	}
	return err
}

// EndpointURL returns the main endpoint's URL for a listener address; an
// unspecified host (0.0.0.0, ::) is shown as 127.0.0.1.
func EndpointURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + MainPath
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + MainPath
}

// timeoutOr is d, def when d is 0, and none (0 for net/http) when d is
// negative.
func timeoutOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}
