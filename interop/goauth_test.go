package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpdiag/mcpdiag/authserver"
	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
)

// goSDKProtected is go-sdk v1.8.0's MCP server behind go-sdk's own auth
// middleware (auth.RequireBearerToken, and its RFC 9728 metadata handler
// auth.ProtectedResourceMetadataHandler): the resource side of the chain is
// software mcpdiag did not write. go-sdk has no authorization server, so
// the tokens come from mcpdiag's loopback one (package authserver), which
// the go-sdk verifier asks. With expireFirstCall, the token that carries
// the first tools/call expires just before the middleware checks it.
func goSDKProtected(t *testing.T, stateless, expireFirstCall bool) (url string, as *authserver.Server) {
	t.Helper()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("not on loopback: %s", ts.URL)
	}
	resource := ts.URL + "/mcp"
	as, err := authserver.New(authserver.Options{Issuer: ts.URL + "/oauth", Resource: resource, Scopes: []string{"mcp:tools"}})
	if err != nil {
		t.Fatal(err)
	}
	verifier := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		info, why := as.Check(tok)
		if info == nil {
			return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, why)
		}
		return &auth.TokenInfo{Scopes: info.Scopes, Expiration: info.Expiry}, nil
	}
	protect := auth.RequireBearerToken(verifier, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: ts.URL + "/.well-known/oauth-protected-resource/mcp", Scopes: []string{"mcp:tools"}})
	mcpHandler := protect(goSDKHandler(stateless))
	var (
		mu      sync.Mutex
		expired bool
	)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if expireFirstCall && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct{ Method string }
			_ = json.Unmarshal(body, &m)
			mu.Lock()
			first := m.Method == "tools/call" && !expired
			expired = expired || first
			mu.Unlock()
			if first {
				as.Expire(authserver.BearerToken(r))
			}
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: resource, AuthorizationServers: []string{as.Issuer()}, ScopesSupported: []string{"mcp:tools"},
		BearerMethodsSupported: []string{"header"}}))
	mux.Handle("/", as)
	return resource, as
}

// TestGoSDKAuthMiddleware: mcpdiag's client gets through go-sdk's auth
// middleware from a fresh start, in both eras, and again after the token
// expires mid-session (the middleware's 401 leads to a refresh, and the
// call is sent again with the new token).
func TestGoSDKAuthMiddleware(t *testing.T) {
	for _, tt := range []struct {
		name      string
		stateless bool
		protocol  string
		expire    bool
		steps     string
	}{
		{"2026-07-28", true, client.Protocol2026, false, "challenge resource-metadata as-metadata registration authorize token"},
		{"2025-11-25", false, client.Protocol2025, false, "challenge resource-metadata as-metadata registration authorize token"},
		{"token expires mid-session", true, client.Protocol2026, true,
			"challenge resource-metadata as-metadata registration authorize token challenge resource-metadata as-metadata refresh"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, as := goSDKProtected(t, tt.stateless, tt.expire)
			c, err := client.New(client.Options{URL: u, Protocol: tt.protocol, Timeout: 10 * time.Second, Auth: &client.AuthOptions{}})
			if err != nil {
				t.Fatal(err)
			}
			call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`))
			if err != nil {
				t.Fatal(err)
			}
			var steps []string
			for _, ex := range call.Exchanges {
				if ex.Auth == nil {
					t.Errorf("#%d %s %s carried no token and was no step of the chain", ex.Seq, ex.Method, ex.URL)
					continue
				}
				if ex.Auth.Step != client.StepRequest {
					steps = append(steps, ex.Auth.Step)
				}
				if ex.Auth.Step == client.StepRequest && ex.Auth.TokenResource != u {
					t.Errorf("#%d %s carried a token for %q, not %s", ex.Seq, ex.Method, ex.Auth.TokenResource, u)
				}
				if ex.Auth.Step == client.StepAuthorize && ex.Auth.PKCE != "S256" {
					t.Errorf("#%d authorize without PKCE S256: %+v", ex.Seq, ex.Auth)
				}
			}
			if call.Outcome != classify.ToolSuccess || call.Auth != nil {
				t.Fatalf("outcome %s (%+v), steps %v", call.Outcome, call.Auth, steps)
			}
			if got := strings.Join(steps, " "); got != tt.steps {
				t.Errorf("steps %s, want %s", got, tt.steps)
			}
			if st := as.Stats(); st.Registrations != 1 || tt.expire && st.Refreshes != 1 {
				t.Errorf("authorization server %+v", st)
			}
		})
	}
}
