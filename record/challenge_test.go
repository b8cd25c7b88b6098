package record

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
)

// challengeRecord is a proxy's record of a tools/list refused 401 with a
// Bearer challenge, as mcpdiag proxy writes it.
func challengeRecord() Record {
	return Record{Kind: KindExchange, ID: "C", Client: "mcpdiag@0.1.0", Conn: "95be77d2-1", HTTPMethod: http.MethodPost,
		Method: "tools/list", Status: 401, Outcome: classify.HTTPError, Time: time.Date(2026, 12, 7, 16, 0, 0, 0, time.UTC),
		Timings:         Timings{Headers: Duration(2 * time.Millisecond)},
		RequestHeaders:  http.Header{"User-Agent": {"Go-http-client/1.1"}},
		ResponseHeaders: http.Header{"Www-Authenticate": {`Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`}}}
}

// TestBearerChallenge: a JSON-RPC request over HTTP refused 401 with a
// Bearer challenge, or 403 with a Bearer challenge saying
// insufficient_scope, is a challenge; without a Bearer challenge, another
// status, another outcome, no JSON-RPC method, a GET, a client's answer, a
// batch or a call line it is not.
func TestBearerChallenge(t *testing.T) {
	cases := []struct {
		name string
		f    func(*Record)
		want bool
	}{
		{"401 Bearer", func(*Record) {}, true},
		{"401 bearer in lower case", func(r *Record) { r.ResponseHeaders.Set("WWW-Authenticate", `bearer realm="x"`) }, true},
		{"401 Bearer without parameters", func(r *Record) { r.ResponseHeaders.Set("WWW-Authenticate", "Bearer") }, true},
		{"401 Bearer on a second header line", func(r *Record) {
			r.ResponseHeaders["Www-Authenticate"] = []string{`Basic realm="x"`, `Bearer scope="a"`}
		}, true},
		{"403 insufficient_scope", func(r *Record) {
			r.Status = 403
			r.ResponseHeaders.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="a b"`)
		}, true},
		{"401 without WWW-Authenticate", func(r *Record) { r.ResponseHeaders = nil }, false},
		{"401 Basic only", func(r *Record) { r.ResponseHeaders.Set("WWW-Authenticate", `Basic realm="x"`) }, false},
		{"403 Bearer invalid_token", func(r *Record) {
			r.Status = 403
			r.ResponseHeaders.Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		}, false},
		{"403 without a challenge", func(r *Record) { r.Status = 403; r.ResponseHeaders = nil }, false},
		{"400 Bearer", func(r *Record) { r.Status = 400 }, false},
		{"NETWORK_ERROR", func(r *Record) { r.Outcome = classify.NetworkError }, false},
		{"no JSON-RPC method", func(r *Record) { r.Method = "" }, false},
		{"a GET", func(r *Record) { r.HTTPMethod = http.MethodGet }, false},
		{"stdio", func(r *Record) { r.HTTPMethod = "" }, false},
		{"a client's answer", func(r *Record) { r.ClientAnswer = true }, false},
		{"a batch", func(r *Record) { r.Batch = 2 }, false},
		{"a call", func(r *Record) { r.Kind = KindCall }, false},
	}
	for _, c := range cases {
		r := challengeRecord()
		c.f(&r)
		if got := r.BearerChallenge(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := r.ChallengeFacts().Challenge; got != c.want && r.ChallengeFacts().Linkable() {
			t.Errorf("%s: ChallengeFacts().Challenge %v, want %v", c.name, got, c.want)
		}
	}
}

// TestChallengeAnswers: the same client's request of the same method and
// tool, in the same recording process, sent after the challenge's answer
// came, with a Bearer token other than the challenge's, answers it; each
// of the facts changed, it does not.
func TestChallengeAnswers(t *testing.T) {
	answer := func() Record {
		r := challengeRecord()
		r.ID, r.Conn, r.Status, r.Outcome, r.ResponseHeaders = "A", "95be77d2-2", 200, classify.ResultSuccess, nil
		r.Time = r.Time.Add(20 * time.Millisecond)
		r.RequestHeaders = http.Header{"User-Agent": {"Go-http-client/1.1"}, "Authorization": {"Bearer [redacted:len=26:h=ecaf12f6]"}}
		return r
	}
	cases := []struct {
		name string
		c, a func(*Record)
		want bool
	}{
		{"the next request with a token", nil, nil, true},
		{"on the challenge's connection", nil, func(a *Record) { a.Conn = "95be77d2-1" }, true},
		{"a new token after an old one", func(c *Record) { c.RequestHeaders.Set("Authorization", "Bearer [redacted:len=26:h=00000000]") }, nil, true},
		{"records without a time", func(c *Record) { c.Time = time.Time{} }, func(a *Record) { a.Time = time.Time{} }, true},
		{"no token", nil, func(a *Record) { a.RequestHeaders.Del("Authorization") }, false},
		{"the challenge's own token again", func(c *Record) { c.RequestHeaders.Set("Authorization", "Bearer [redacted:len=26:h=ecaf12f6]") }, nil, false},
		{"a Basic credential", nil, func(a *Record) { a.RequestHeaders.Set("Authorization", "Basic [redacted:len=12:h=12345678]") }, false},
		{"another client", nil, func(a *Record) { a.Client = "other@1" }, false},
		{"no client name", func(c *Record) { c.Client = "" }, func(a *Record) { a.Client = "" }, false},
		{"another User-Agent", nil, func(a *Record) { a.RequestHeaders.Set("User-Agent", "node") }, false},
		{"another recording process", nil, func(a *Record) { a.Conn = "0badc0de-2" }, false},
		{"a client's own record (no connection)", nil, func(a *Record) { a.Conn = "" }, false},
		{"another method", nil, func(a *Record) { a.Method = "tools/call"; a.Tool = "echo" }, false},
		{"another tool", func(c *Record) { c.Method, c.Tool = "tools/call", "echo" }, func(a *Record) { a.Method, a.Tool = "tools/call", "add" }, false},
		{"the same tool", func(c *Record) { c.Method, c.Tool = "tools/call", "echo" }, func(a *Record) { a.Method, a.Tool = "tools/call", "echo" }, true},
		{"another session", func(c *Record) { c.Session = "sha256:1111111111111111" }, func(a *Record) { a.Session = "sha256:2222222222222222" }, false},
		{"the same session", func(c *Record) { c.Session = "sha256:1111111111111111" }, func(a *Record) { a.Session = "sha256:1111111111111111" }, true},
		{"a session on the answer only (a 401 to initialize has none)", nil, func(a *Record) { a.Session = "sha256:2222222222222222" }, true},
		{"other arguments", func(c *Record) { c.Method, c.Tool, c.ArgsHash = "tools/call", "echo", "sha256:01" }, func(a *Record) { a.Method, a.Tool, a.ArgsHash = "tools/call", "echo", "sha256:02" }, false},
		{"the same arguments", func(c *Record) { c.Method, c.Tool, c.ArgsHash = "tools/call", "echo", "sha256:01" }, func(a *Record) { a.Method, a.Tool, a.ArgsHash = "tools/call", "echo", "sha256:01" }, true},
		{"started before the challenge's answer came", nil, func(a *Record) { a.Time = a.Time.Add(-19 * time.Millisecond) }, false},
		{"a GET", nil, func(a *Record) { a.HTTPMethod = http.MethodGet }, false},
		{"a client's answer", nil, func(a *Record) { a.ClientAnswer = true }, false},
	}
	for _, k := range cases {
		c, a := challengeRecord(), answer()
		if k.c != nil {
			k.c(&c)
		}
		if k.a != nil {
			k.a(&a)
		}
		if !c.BearerChallenge() {
			t.Fatalf("%s: the challenge is none", k.name)
		}
		if got := a.ChallengeFacts().Answers(c.ChallengeFacts()); got != k.want {
			t.Errorf("%s: Answers %v, want %v", k.name, got, k.want)
		}
	}
	// A record never answers itself.
	c := challengeRecord()
	c.RequestHeaders.Set("Authorization", "Bearer [redacted:len=26:h=ecaf12f6]")
	if c.ChallengeFacts().Answers(c.ChallengeFacts()) {
		t.Error("a record answers itself")
	}
}

// TestConnRun: the recording process's part of a connection id.
func TestConnRun(t *testing.T) {
	for in, want := range map[string]string{
		"95be77d2-1": "95be77d2", "95be77d2-12": "95be77d2", "127.0.0.1:5555": "127.0.0.1:5555",
		"[::1]:80": "[::1]:80", "a-b": "a-b", "-1": "-1", "x-": "x-", "": "",
	} {
		if got := connRun(in); got != want {
			t.Errorf("connRun(%q) = %q, want %q", in, got, want)
		}
	}
}
