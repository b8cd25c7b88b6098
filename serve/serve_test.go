package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/serve"
)

// start runs a Server on a real 127.0.0.1 listener.
func start(t *testing.T, opts serve.Options) (*serve.Server, string) {
	t.Helper()
	s := serve.New(opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("not on loopback: %s", ts.URL)
	}
	return s, ts.URL
}

// logLine is a server log line: the record and the serve member.
type logLine struct {
	rec   *record.Record
	serve faults.ServerDetails
	raw   []byte
}

// readLog fetches GET /admin/log (for one endpoint when endpoint is set).
func readLog(t *testing.T, base, endpoint string) []logLine {
	t.Helper()
	u := base + "/admin/log"
	if endpoint != "" {
		u += "?endpoint=" + url.QueryEscape(endpoint)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jsonl" {
		t.Fatalf("GET /admin/log: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []logLine
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		raw := bytes.Clone(sc.Bytes())
		rec, err := record.Decode(raw)
		if err != nil {
			t.Fatalf("log line %s: %v", raw, err)
		}
		d := faults.DetailsOf(rec) // zero on an authorization server's line (its facts are rec.Auth)
		out = append(out, logLine{rec, d, raw})
	}
	return out
}

// postsLogged waits until the log shows want POSTs for endpoint (a request
// is logged when it ends, which may be after its client gave up), and
// returns them.
func postsLogged(t *testing.T, base, endpoint string, want int) []logLine {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for {
		var posts []logLine
		for _, l := range readLog(t, base, endpoint) {
			if l.rec.HTTPMethod == "POST" {
				posts = append(posts, l)
			}
		}
		if len(posts) >= want || time.Now().After(deadline) {
			// Lines are written when a request ends; arrival order is
			// the POST number.
			sort.Slice(posts, func(i, j int) bool { return posts[i].serve.Count.Post < posts[j].serve.Count.Post })
			return posts
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func callEntry(t *testing.T, u string, e faults.Entry, timeout time.Duration) *client.Call {
	t.Helper()
	pol := retry.DefaultPolicy()
	pol.MaxRetries = 0
	opts := client.Options{URL: u, Protocol: e.Protocol, Policy: &pol, Timeout: timeout, Rand: rand.New(rand.NewPCG(1, 2))}
	if e.UsesOAuth() {
		// As `mcpdiag call` does by default: the OAuth chain, with the
		// loopback authorization URL fetched.
		opts.Auth = &client.AuthOptions{}
	}
	if len(e.Input) > 0 {
		in, err := client.ReadInputs(bytes.NewReader(e.Input))
		if err != nil {
			t.Fatal(err)
		}
		opts.Inputs = in
	}
	c, err := client.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CallTool(context.Background(), e.Tool, e.Args)
	if err != nil {
		t.Fatal(err)
	}
	return call
}

// TestEveryScenario calls every scenario of the catalogue on its own
// /s/{id}/mcp endpoint of one server, as `mcpdiag call … --retries 0
// --timeout 10s` would, and checks the outcome the client sees and the POST
// count in the server's own log.
func TestEveryScenario(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 1})
	for _, e := range faults.Catalogue() {
		if e.OnStdio() {
			continue // a stdio scenario: checked through the stdio proxy (package proxy)
		}
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel()
			q := url.Values{}
			if len(e.QuickParams) > 0 {
				q.Set("params", string(e.QuickParams))
			}
			path := "/s/" + e.ID + "/mcp"
			endpoint := path
			if len(q) > 0 {
				endpoint += "?" + q.Encode()
			}
			timeout := 10 * time.Second
			if e.QuickTimeoutMs > 0 {
				timeout = time.Duration(e.QuickTimeoutMs) * time.Millisecond
			}
			call := callEntry(t, base+endpoint, e, timeout)
			if call.Outcome != e.ExpectedOutcome {
				t.Errorf("outcome %s (%s), want %s", call.Outcome, call.Final.Reason, e.ExpectedOutcome)
			}
			if e.AuthStep != "" {
				checkAuthStep(t, call, e)
			}
			posts := postsLogged(t, base, endpoint, e.ExpectedPosts)
			if len(posts) != e.ExpectedPosts {
				t.Errorf("the log shows %d POSTs, want %d", len(posts), e.ExpectedPosts)
			}
			for i, l := range posts {
				// A classified exchange line: the scenario is what fired
				// (as in the proxy's records), the selection and the
				// server's own count are in the fault member.
				if l.rec.Kind != record.KindExchange || l.rec.Outcome == "" || l.rec.Layer == "" || l.rec.Fault.Selection != e.ID ||
					l.rec.Scenario != l.rec.Fault.FiredString() || l.rec.PostCount != 1 || l.serve.Count.Post != i+1 ||
					l.serve.Counters.Posts != i+1 || l.serve.Seed != 1 {
					t.Errorf("line %d: %s", i, l.raw)
				}
			}
		})
	}
}

func TestLogLine(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 5})
	e, _ := faults.Lookup("errors.tool_error")
	u := base + "/s/errors.tool_error/mcp?run=log"
	pol := retry.DefaultPolicy()
	pol.MaxRetries = 0
	c, _ := client.New(client.Options{URL: u, Policy: &pol, Bearer: "very-secret-token", Header: http.Header{"User-Agent": {"test-agent"}}})
	if _, err := c.CallTool(context.Background(), e.Tool, e.Args); err != nil {
		t.Fatal(err)
	}
	lines := postsLogged(t, base, "/s/errors.tool_error/mcp?run=log", 2)
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	l := lines[1]
	if bytes.Contains(l.raw, []byte("very-secret-token")) {
		t.Errorf("the bearer token reached the log: %s", l.raw)
	}
	r := l.rec
	if r.Method != "tools/call" || r.Tool != "echo" || r.ProtocolVersion != "2026-07-28" || r.Status != 200 || r.JSONRPC.ID.String() != "2" ||
		r.Client != "mcpdiag@0.1.0" || r.RequestHeaders.Get("Mcp-Method") != "tools/call" || !record.IsRedacted(r.RequestHeaders.Get("Authorization")) ||
		!strings.Contains(r.Note, "fault injected (FI): errors.tool_error") || r.ContentType != "text/event-stream" {
		t.Errorf("record %s", l.raw)
	}
	// A classified exchange record, as the proxy writes: the verdict of
	// the response the client received, its layer and flags, the scenario
	// that fired, the server's own view in the typed members.
	if r.Kind != record.KindExchange || r.Outcome != classify.ToolError || r.Layer != classify.LayerApplication ||
		r.IsError == nil || !*r.IsError || r.SSE == nil || !r.SSE.Terminal || !slices.Equal(r.Flags, record.Flags{record.FlagFI}) ||
		r.Scenario != "errors.tool_error" || r.Fault == nil || r.Fault.Selection != "errors.tool_error" || r.Params == nil ||
		r.Timings.Headers == 0 || len(r.HTTPStatuses) != 1 || r.HTTPStatuses[0] != 200 {
		t.Errorf("not a classified exchange record: %s", l.raw)
	}
	if lines[0].rec.Kind != record.KindExchange || lines[0].rec.Outcome != classify.ResultSuccess || len(lines[0].rec.Flags) != 0 || lines[0].rec.Scenario != "" {
		t.Errorf("the tools/list line: %s", lines[0].raw)
	}
	d := l.serve
	if d.Endpoint != "/s/errors.tool_error/mcp?run=log" || d.Count.Post != 2 || d.Count.Method != 1 || d.Count.Tool != 1 ||
		d.Counters.Methods["tools/list"] != 1 || d.Fired != "errors.tool_error" || len(d.Faults) != 1 || !d.Faults[0].Fired ||
		len(d.Meta) != 3 || d.Meta[0] != "io.modelcontextprotocol/clientCapabilities" {
		t.Errorf("serve member %+v", d)
	}
	first := lines[0].serve.Faults[0]
	if first.Matched || first.Fired || first.Why == "" {
		t.Errorf("the tools/list decision %+v", first)
	}
}

func TestAdminScenarioAndReset(t *testing.T) {
	srv, base := start(t, serve.Options{})
	e, _ := faults.Lookup("baseline")
	if call := callEntry(t, base+"/mcp", e, 10*time.Second); call.Outcome != "TOOL_SUCCESS" {
		t.Fatalf("healthy /mcp: %s", call.Outcome)
	}
	put := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, base+"/admin/scenario", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := put(`{"scenario":"errors.tool_error","params":{"errorMessage":7}}`); code != 400 || !strings.Contains(body, "param errorMessage") {
		t.Errorf("bad params: %d %s", code, body)
	}
	if code, body := put(`{"scenario":"errors.jsonrpc_error+baseline","params":[{"code":-32000},{}]}`); code != 200 || !strings.Contains(body, `"scenario": "errors.jsonrpc_error+baseline"`) {
		t.Fatalf("put: %d %s", code, body)
	}
	if call := callEntry(t, base+"/mcp", e, 10*time.Second); call.Outcome != "JSONRPC_ERROR" {
		t.Errorf("after the change: %s", call.Outcome)
	}
	resp, _ := http.Get(base + "/admin/scenario")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"code": -32000`) {
		t.Errorf("GET /admin/scenario: %s", b)
	}

	// The change is in the log, between the requests before and after.
	var notes []string
	for _, l := range readLog(t, base, "") {
		if l.rec.HTTPMethod == "PUT" {
			notes = append(notes, l.rec.Note)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `changed from "" to "errors.jsonrpc_error+baseline"`) {
		t.Errorf("change notes %q", notes)
	}
	// Counters: the change zeroed them; the call after it made 2 POSTs.
	resp, _ = http.Get(base + "/admin/counters")
	var counters map[string]struct {
		Counters faults.Counters `json:"counters"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&counters)
	resp.Body.Close()
	if counters["/mcp"].Counters.Posts != 2 {
		t.Errorf("counters %+v", counters)
	}
	// Requests end after their client has its answer: wait for them.
	for srv.InFlight("/mcp") > 0 {
		time.Sleep(5 * time.Millisecond)
	}
	resp, _ = http.Post(base+"/admin/reset?clearLog=1", "", nil)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("reset: %d", resp.StatusCode)
	}
	log := readLog(t, base, "")
	if len(log) != 1 || !strings.Contains(log[0].rec.Note, "reset") {
		t.Errorf("after reset and clearLog the log is %d lines", len(log))
	}
	// After the reset the first tools/call is number 1 again.
	callEntry(t, base+"/mcp", e, 10*time.Second)
	posts := postsLogged(t, base, "/mcp", 2)
	if len(posts) != 2 || posts[1].serve.Count.Post != 2 || posts[1].serve.Faults[0].N != 1 {
		t.Errorf("after reset: %d posts", len(posts))
	}
	// What GET returns can be PUT back; a different seed cannot.
	if code, body := put(string(b)); code != 200 || !strings.Contains(body, `"code": -32000`) {
		t.Errorf("PUT of the GET body: %d %s", code, body)
	}
	if code, body := put(`{"scenario":"baseline","seed":"12345"}`); code != 400 || !strings.Contains(body, "seed") {
		t.Errorf("PUT with another seed: %d %s", code, body)
	}
}

func TestScenarioEndpoints(t *testing.T) {
	_, base := start(t, serve.Options{})
	get := func(u string, body string) (int, string) {
		resp, err := http.Post(base+u, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/s/no.such/mcp", `{}`); code != 404 || !strings.Contains(body, "unknown scenario") {
		t.Errorf("unknown: %d %s", code, body)
	}
	if code, body := get("/s/errors.http_status_sequence/mcp?statusCodes=[999]", `{}`); code != 400 || !strings.Contains(body, "param statusCodes[0]") {
		t.Errorf("bad params: %d %s", code, body)
	}
	// A stdio scenario is in the catalogue but not served: it says where it
	// applies.
	if code, body := get("/s/stdio.drop/mcp", `{}`); code != 400 || !strings.Contains(body, "stdio.drop applies to stdio servers (mcpdiag proxy --stdio)") {
		t.Errorf("stdio scenario: %d %s", code, body)
	}
	// The same id with different params: separate counters.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	a, _ := get("/s/errors.http_status_sequence/mcp?statusCodes=[500,200]&run=a", body)
	b, _ := get("/s/errors.http_status_sequence/mcp?statusCodes=[500,200]&run=b", body)
	a2, _ := get("/s/errors.http_status_sequence/mcp?run=a&statusCodes=[500,200]", body)
	if a != 500 || b != 500 || a2 == 500 {
		t.Errorf("statuses %d %d %d: want 500, 500 (own counters), then not 500 (same endpoint, query in another order)", a, b, a2)
	}
	if code, _ := get("/nowhere", body); code != 404 {
		t.Errorf("unknown path: %d", code)
	}
	// Resource metadata, as auth.token_lifecycle advertises.
	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/s/auth.token_lifecycle/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if doc["resource"] != base+"/s/auth.token_lifecycle/mcp" {
		t.Errorf("metadata %v", doc)
	}
}

// TestAdminAccess checks the admin rule: loopback only, or the token.
func TestAdminAccess(t *testing.T) {
	s := serve.New(serve.Options{})
	req := httptest.NewRequest(http.MethodGet, "/admin/counters", nil)
	req.RemoteAddr = "192.0.2.7:5555"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a remote client without a token: %d", rec.Code)
	}
	req.RemoteAddr = "[::1]:5555"
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a loopback peer naming a foreign Host (DNS rebinding): %d", rec.Code)
	}
	req.Host = "127.0.0.1:8080"
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("a loopback client: %d", rec.Code)
	}
	req.Header.Set("Origin", "http://evil.example")
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a loopback peer sent by a foreign page (Origin): %d", rec.Code)
	}
	s = serve.New(serve.Options{AdminToken: "tok"})
	for _, tt := range []struct {
		remote, auth string
		want         int
	}{
		{"192.0.2.7:1", "", 401}, {"127.0.0.1:1", "", 401}, {"192.0.2.7:1", "Bearer nope", 401}, {"192.0.2.7:1", "Bearer tok", 200},
	} {
		req := httptest.NewRequest(http.MethodGet, "/admin/counters", nil)
		req.RemoteAddr = tt.remote
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s %q: %d, want %d", tt.remote, tt.auth, rec.Code, tt.want)
		}
	}
}

// TestShutdownEndsHangs checks that shutting down ends a request hanging in
// a scenario at once, not after the hang, nor by closing its connection when
// the drain's budget runs out. What shows it is what the client and the log
// get, not a time: the hanging request, in flight at the cancel (the
// endpoint says so), is noted as ended by the server's shutdown (a drain
// that ran out closes the connection under the handler, which the scenario
// then notes as a client that left), its log line is flagged SD and says
// no HTTP response was sent, and the client indeed gets none: the
// connection is cut with no head. Before, net/http answered the handler
// that returned 200 with an empty body, while the line said no response
// (and the note said "the client left").
func TestShutdownEndsHangs(t *testing.T) {
	sel, err := faults.Select("timeout.uncooperative_hang", json.RawMessage(`{"hangMs":600000,"match":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := serve.New(serve.Options{Selection: sel})
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	urls := make(chan string, 1)
	go func() { done <- s.Serve(ctx, ln, func(u string) { urls <- u }) }()
	u := testwait.Recv(t, urls, "Serve's URL")
	if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/mcp") {
		t.Errorf("url %s", u)
	}
	answered := make(chan error, 1)
	go func() {
		resp, err := http.Post(u, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		answered <- err
	}()
	testwait.Until(t, "the request to be in flight in the hang", func() bool {
		ep := s.Endpoint("/mcp")
		return ep != nil && ep.InFlight() == 1
	})
	cancel()
	if err := testwait.Recv(t, done, "Serve to end after its context was cancelled"); err != nil {
		t.Errorf("serve: %v", err)
	}
	if err := testwait.Recv(t, answered, "the hanging request to end"); err == nil {
		t.Errorf("the hanging request got an HTTP response, where its log line says none was sent")
	}
	var lines []*record.Record
	for _, line := range s.Log() {
		r, err := record.Decode(line)
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r.Kind == record.KindExchange {
			lines = append(lines, r)
		}
	}
	if len(lines) != 1 || lines[0].JSONRPC.ID.String() != "1" || lines[0].Method != "tools/list" || !lines[0].Flags.Has(record.FlagSD) {
		t.Errorf("want one exchange line, id 1 tools/list flagged SD; log:\n%s", bytes.Join(s.Log(), []byte("\n")))
	}
	log := bytes.Join(s.Log(), []byte("\n"))
	for _, want := range []string{`"httpStatuses":[0]`, `"the server shut down after `, `the tool ran anyway after the server shut down`} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if bytes.Contains(log, []byte("the client left")) {
		t.Errorf("the log says the client left, where the server's shutdown ended the request:\n%s", log)
	}
}

// TestPassThroughIsNoFault: server.id_as_string left the built-in
// client's small ids as they were, yet its requests were logged with FI
// and "fault injected (FI)" while the decision's note said "passed
// through unchanged" (outsider22: report counted a fault fired on
// exchanges the fault never touched). A pass-through is now recorded as
// such (passedThrough, not fired, no FI); a large id on the same
// endpoint still fires.
func TestPassThroughIsNoFault(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 5})
	e, _ := faults.Lookup("server.id_as_string")
	ep := "/s/server.id_as_string/mcp?run=pass"
	c, err := client.New(client.Options{URL: base + ep})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), e.Tool, e.Args); err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1000007,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", base+ep, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(answer), `"id":"1000007"`) {
		t.Fatalf("the large id was not answered as a string: %d %s", resp.StatusCode, answer)
	}
	lines := postsLogged(t, base, ep, 3)
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		r := l.rec
		if r.Fault == nil || len(r.Fault.Decisions) != 1 {
			t.Fatalf("line %d: no single decision: %s", i, l.raw)
		}
		d := r.Fault.Decisions[0]
		large := i == 2
		if r.Flags.Has(record.FlagFI) != large || d.Fired != large || d.PassedThrough == large ||
			strings.Contains(r.Note, "fault injected") != large || (r.Scenario != "") != large {
			t.Errorf("line %d (large id %v): flags %v, fired %v, passedThrough %v, scenario %q, note %q", i, large, r.Flags, d.Fired, d.PassedThrough, r.Scenario, r.Note)
		}
	}
}
