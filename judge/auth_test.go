package judge

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

const (
	testResource = "http://127.0.0.1:1/s/auth.oauth/mcp?run=x"
	otherOrigin  = "http://127.0.0.1:2/mcp"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// asLine is an authorization server's log line at t0+ms.
func asLine(ms int, method, path string, status int, a record.Auth) *record.Record {
	a.Server, a.For, a.TokenResource = "/oauth/1", "/s/auth.oauth/mcp?run=x", testResource
	return &record.Record{Kind: record.KindServer, Time: t0.Add(time.Duration(ms) * time.Millisecond), HTTPMethod: method, URL: path, Status: status, Auth: &a}
}

// post is an MCP POST of tools/call tool at t0+ms, answered status.
func post(n, ms int, tool string, status int) *Exchange {
	x := &Exchange{N: n, Start: t0.Add(time.Duration(ms) * time.Millisecond), HTTPMethod: http.MethodPost, Method: "tools/call", Tool: tool,
		ID: wire.IntID(int64(n)), ArgsHash: "sha256:a", Status: status, Header: http.Header{}}
	x.End = x.Start.Add(time.Millisecond)
	if status >= 300 {
		x.Failed, x.Rejected, x.What = true, status < 500, "HTTP "+http.StatusText(status)
	}
	return x
}

// A good chain: metadata, registration, an S256 authorization with the
// resource, the code exchange with the verifier, a refresh in the body.
func goodChain() []*record.Record {
	return []*record.Record{
		asLine(1, "GET", "/.well-known/oauth-authorization-server/oauth/1", 200, record.Auth{Step: "as-metadata"}),
		asLine(2, "POST", "/oauth/1/register", 201, record.Auth{Step: "registration", ClientID: "dyn-1"}),
		asLine(3, "GET", "/oauth/1/authorize", 302, record.Auth{Step: "authorize", Resource: testResource, Scope: "mcp:tools", PKCE: "S256", CodeChallenge: true}),
		asLine(4, "POST", "/oauth/1/token", 200, record.Auth{Step: "token", Grant: "authorization_code", Resource: testResource, PKCE: "S256", Granted: "mcp:tools"}),
		asLine(20, "POST", "/oauth/1/token", 200, record.Auth{Step: "refresh", Grant: "refresh_token", Resource: testResource, RefreshIn: "body", Granted: "mcp:tools"}),
	}
}

// with returns goodChain with line i replaced by r (or appended, i < 0).
func with(i int, r *record.Record) []*record.Record {
	c := goodChain()
	if i < 0 {
		return append(c, r)
	}
	c[i] = r
	return c
}

// TestAuthRules: each auth rule passes a good chain, fails each way of
// breaking it (with evidence naming the request), and is n/a where there
// is no authorization server.
func TestAuthRules(t *testing.T) {
	stepUp := func(rounds, auths int) *Trace {
		xs := []*Exchange{post(1, 0, "delete_item", 401)}
		var as []*record.Record
		as = append(as, goodChain()[:4]...)
		ms := 10
		for i := 0; i <= rounds; i++ {
			status := 403
			if i == rounds && rounds < 2 {
				status = 200
			}
			xs = append(xs, post(len(xs)+1, ms, "delete_item", status))
			ms += 10
		}
		for i := 0; i < auths; i++ {
			as = append(as, asLine(15+10*i, "GET", "/oauth/1/authorize", 302, record.Auth{Step: "authorize", Resource: testResource, Scope: "mcp:tools mcp:tools:write", PKCE: "S256", CodeChallenge: true}))
		}
		return &Trace{Exchanges: xs, Auth: as}
	}
	tests := []struct {
		name, rule string
		trace      *Trace
		verdict    Verdict
		words      []string
	}{
		{"good chain", "auth.no-token-elsewhere", &Trace{Auth: goodChain()}, Pass, []string{"3 authorization and token request(s), each for resource " + testResource}},
		{"no resource", "auth.no-token-elsewhere", &Trace{Auth: with(2, asLine(3, "GET", "/oauth/1/authorize", 302, record.Auth{Step: "authorize", PKCE: "S256", CodeChallenge: true}))},
			Fail, []string{"AS #3 authorize (GET /oauth/1/authorize → 302) sent no resource parameter"}},
		{"another resource", "auth.no-token-elsewhere", &Trace{Auth: with(3, asLine(4, "POST", "/oauth/1/token", 400, record.Auth{Step: "token", Grant: "authorization_code", Resource: otherOrigin, PKCE: "S256", Error: "invalid_target"}))},
			Fail, []string{"AS #4 token", "asked for resource " + otherOrigin + ", not the MCP server " + testResource}},
		{"bearer to the AS", "auth.no-token-elsewhere", &Trace{Auth: with(-1, asLine(30, "GET", "/.well-known/oauth-authorization-server/oauth/1", 200, record.Auth{Step: "as-metadata", BearerSent: true}))},
			Fail, []string{"AS #6 as-metadata", "an access token issued for " + testResource}},
		{"no AS", "auth.no-token-elsewhere", &Trace{}, NotApplicable, []string{"no authorization server"}},

		{"good chain", "auth.pkce", &Trace{Auth: goodChain()}, Pass, []string{"1 authorization request(s) with an S256 code_challenge, 1 code exchange(s) with a code_verifier"}},
		{"plain", "auth.pkce", &Trace{Auth: with(2, asLine(3, "GET", "/oauth/1/authorize", 302, record.Auth{Step: "authorize", Resource: testResource, PKCE: "plain", CodeChallenge: true}))},
			Fail, []string{"AS #3 authorize", "code_challenge_method plain, not S256"}},
		{"no challenge", "auth.pkce", &Trace{Auth: with(2, asLine(3, "GET", "/oauth/1/authorize", 302, record.Auth{Step: "authorize", Resource: testResource, PKCE: "S256"}))},
			Fail, []string{"AS #3 authorize", "carried no code_challenge"}},
		{"no verifier", "auth.pkce", &Trace{Auth: with(3, asLine(4, "POST", "/oauth/1/token", 400, record.Auth{Step: "token", Grant: "authorization_code", Resource: testResource}))},
			Fail, []string{"AS #4 token", "without a code_verifier"}},
		{"client credentials only", "auth.pkce", &Trace{Auth: []*record.Record{asLine(1, "POST", "/oauth/1/token", 200, record.Auth{Step: "token", Grant: "client_credentials", Resource: testResource})}},
			NotApplicable, []string{"no authorization request and no code exchange"}},

		{"one step-up", "auth.bounded-step-up", stepUp(1, 1), Pass, []string{"at most 1 step-up round(s) of one request, 1 authorization request(s) after the first 403 (bound 2)"}},
		{"two step-ups", "auth.bounded-step-up", stepUp(2, 2), Pass, []string{"at most 2 step-up round(s)"}},
		{"three step-ups", "auth.bounded-step-up", stepUp(3, 3), Fail,
			[]string{"tools/call delete_item was sent again 3 times after 403 insufficient_scope (POSTs 3, 4, 5); the bound is 2", "3 authorization requests after the first 403 at POST 2"}},
		{"authorizations without re-sending", "auth.bounded-step-up", stepUp(1, 4), Fail, []string{"4 authorization requests after the first 403"}},
		{"no 403", "auth.bounded-step-up", &Trace{Exchanges: []*Exchange{post(1, 0, "echo", 401), post(2, 10, "echo", 200)}, Auth: goodChain()},
			NotApplicable, []string{"no request was refused 403"}},
		{"403 without an AS", "auth.bounded-step-up", &Trace{Exchanges: []*Exchange{post(1, 0, "delete_item", 403)}}, NotApplicable, []string{"no authorization server"}},

		{"good chain", "auth.no-token-in-url", &Trace{Auth: goodChain()}, Pass, []string{"5 request(s) to the authorization server, no credential in a URL (1 refresh token(s), in the body)"}},
		{"refresh in the URL", "auth.no-token-in-url", &Trace{Auth: with(4, asLine(20, "POST", "/oauth/1/token", 400, record.Auth{Step: "refresh", Grant: "refresh_token", Resource: testResource, RefreshIn: "url", InURL: []string{"refresh_token"}, Error: "invalid_grant"}))},
			Fail, []string{"AS #5 refresh (POST /oauth/1/token → 400) carried refresh_token in its URL"}},
		{"verifier in the URL", "auth.no-token-in-url", &Trace{Auth: with(3, asLine(4, "POST", "/oauth/1/token", 200, record.Auth{Step: "token", Grant: "authorization_code", Resource: testResource, PKCE: "S256", InURL: []string{"code_verifier", "code"}}))},
			Fail, []string{"AS #4 token", "carried code_verifier, code in its URL"}},
		{"no AS", "auth.no-token-in-url", &Trace{}, NotApplicable, []string{"no authorization server"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule+"/"+tt.name, func(t *testing.T) {
			r, ok := RuleByID(tt.rule)
			if !ok || !r.Active || r.Passive {
				t.Fatalf("rule %s: %v, active %v, passive %v", tt.rule, ok, r.Active, r.Passive)
			}
			tt.trace.Limits = tt.trace.Limits.WithDefaults()
			c := judgeOne(r, tt.trace)
			if c.Verdict != tt.verdict {
				t.Errorf("%s, want %s: %s", c.Verdict, tt.verdict, c.Evidence)
			}
			for _, w := range tt.words {
				if !strings.Contains(c.Evidence, w) {
					t.Errorf("evidence %q does not say %q", c.Evidence, w)
				}
			}
		})
	}
}

// TestReauthorizedRepeatIsNoBackoffRetry: a request sent again at once
// with a token issued after its 401 or 403 is not a backoff retry; the
// same repeats with no token issued in between are.
func TestReauthorizedRepeatIsNoBackoffRetry(t *testing.T) {
	xs := []*Exchange{post(1, 0, "echo", 401), post(2, 5, "echo", 401), post(3, 10, "echo", 200)}
	tokens := []*record.Record{
		asLine(2, "POST", "/oauth/1/token", 200, record.Auth{Step: "token", Grant: "authorization_code", Resource: testResource, PKCE: "S256"}),
		asLine(7, "POST", "/oauth/1/token", 200, record.Auth{Step: "refresh", Grant: "refresh_token", Resource: testResource, RefreshIn: "body"}),
	}
	r, _ := RuleByID("safety.backoff")
	for _, tt := range []struct {
		name string
		auth []*record.Record
		want Verdict
	}{
		{"re-authorized", tokens, NotApplicable},
		{"a refused token exchange", []*record.Record{asLine(2, "POST", "/oauth/1/token", 400, record.Auth{Step: "token"}), asLine(7, "POST", "/oauth/1/token", 500, record.Auth{Step: "refresh"})}, Fail},
		{"no authorization server", nil, Fail},
	} {
		tr := &Trace{Exchanges: xs, Auth: tt.auth}
		tr.Limits = tr.Limits.WithDefaults()
		if c := judgeOne(r, tr); c.Verdict != tt.want {
			t.Errorf("%s: safety.backoff %s (%s), want %s", tt.name, c.Verdict, c.Evidence, tt.want)
		}
	}
}
