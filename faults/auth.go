package faults

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdiag/mcpdiag/authserver"
)

// ProtectedResourcePath is where the fault server publishes OAuth protected
// resource metadata (RFC 9728); the endpoint path is appended.
const ProtectedResourcePath = "/.well-known/oauth-protected-resource"

// resourceMetadataURL returns the metadata URL advertised for r's endpoint.
func resourceMetadataURL(r *http.Request, env *Env, override string) string {
	if override != "" {
		return override
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	base := env.Base
	if base == "" {
		base = r.URL.Path
	}
	return scheme + "://" + r.Host + ProtectedResourcePath + base
}

func quoteParam(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// TokenLifecycle answers 401 with a Bearer challenge naming the protected
// resource metadata, as a server does before a token is valid or after it
// expired. The schedule says when: {"first": N} rejects the first N matching
// POSTs, {} rejects every one.
type TokenLifecycle struct {
	Rules
	// ResourceMetadata overrides the advertised metadata URL (default: this
	// server's /.well-known/oauth-protected-resource + the endpoint path).
	ResourceMetadata string `json:"resourceMetadata,omitempty"`
	// Scope, when set, is added to the challenge.
	Scope string `json:"scope,omitempty"`
}

// Validate implements Scenario.
func (s *TokenLifecycle) Validate() error {
	if err := checkHeaderValue("resourceMetadata", s.ResourceMetadata); err != nil {
		return err
	}
	return checkHeaderValue("scope", s.Scope)
}

// Wrap implements Scenario.
func (s *TokenLifecycle) Wrap(_ http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch := "Bearer resource_metadata=" + quoteParam(resourceMetadataURL(r, env, s.ResourceMetadata))
		if s.Scope != "" {
			ch += ", scope=" + quoteParam(s.Scope)
		}
		if r.Header.Get("Authorization") != "" {
			// RFC 6750 §3.1: an error code only when a token was sent.
			ch += `, error="invalid_token", error_description="The access token expired"`
		}
		w.Header().Set("WWW-Authenticate", ch)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("unauthorized\n"))
	})
}

// InsufficientScope answers 403 with a Bearer challenge
// error="insufficient_scope" naming the scope the operation needs (MCP
// authorization: step-up).
type InsufficientScope struct {
	Rules
	Scope            string `json:"scope"`
	ResourceMetadata string `json:"resourceMetadata,omitempty"`
}

// Validate implements Scenario.
func (s *InsufficientScope) Validate() error {
	if strings.TrimSpace(s.Scope) == "" {
		return fmt.Errorf("param scope: empty: name the scope the operation needs")
	}
	if err := checkHeaderValue("resourceMetadata", s.ResourceMetadata); err != nil {
		return err
	}
	return checkHeaderValue("scope", s.Scope)
}

// Wrap implements Scenario.
func (s *InsufficientScope) Wrap(_ http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope=`+quoteParam(s.Scope)+
			", resource_metadata="+quoteParam(resourceMetadataURL(r, env, s.ResourceMetadata))+
			`, error_description="This operation needs scope `+strings.ReplaceAll(s.Scope, `"`, "")+`"`)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("forbidden: insufficient scope\n"))
	})
}

// AuthServerConfig is what an endpoint behind mcpdiag serve's own
// authorization server needs from its scenario: the scopes, the faults of
// the authorization server, and whether the protected resource metadata
// is published.
type AuthServerConfig struct {
	// Scopes are scopes_supported (of the resource and the server).
	Scopes []string
	// Faults break a step of the authorization server.
	Faults authserver.Faults
	// NoResourceMetadata hides the endpoint's protected resource metadata
	// (404 at every well-known URL) and leaves resource_metadata out of
	// the challenge.
	NoResourceMetadata bool
}

// AuthServerScenario is implemented by the scenarios that put an endpoint
// behind mcpdiag serve's own authorization server (package authserver).
// The server hosting the endpoint builds one authorization server per
// endpoint from AuthServer and hands it to the scenario's handler through
// the request context ([authserver.FromContext]); without one (a proxy
// --upstream endpoint) the handler answers 500 saying so.
type AuthServerScenario interface {
	HTTPScenario
	AuthServer() AuthServerConfig
}

// OAuthScope is the scope every request to an OAuth endpoint needs by
// default; OAuthWriteScope the one delete_item needs in the step-up
// scenarios.
const (
	OAuthScope      = "mcp:tools"
	OAuthWriteScope = "mcp:tools:write"
)

// OAuth puts the endpoint behind mcpdiag serve's own OAuth 2.1
// authorization server (authorization code with PKCE, refresh, client
// credentials, dynamic registration, a test user who approves at once):
// a POST without a good token for this resource gets 401 with a Bearer
// challenge naming the resource metadata and Scope; with one, it goes on.
// Its fault params break one step of the chain on purpose.
type OAuth struct {
	Rules
	// Scope is what every request needs (OAuthScope when empty).
	Scope string `json:"scope,omitempty"`
	// ToolScopes maps a tool to the further scope its tools/call needs: a
	// token without it gets 403 insufficient_scope (step-up).
	ToolScopes map[string]string `json:"toolScopes,omitempty"`
	// ScopeLoop asks for a tool's scope even from a token that has it
	// (a server that loops on step-up).
	ScopeLoop bool `json:"scopeLoop,omitempty"`
	// NoResourceMetadata publishes no protected resource metadata and
	// names none in the challenge.
	NoResourceMetadata bool `json:"noResourceMetadata,omitempty"`
	// WrongIssuer makes the authorization server metadata name another
	// issuer than the one its URL was built from.
	WrongIssuer bool `json:"wrongIssuer,omitempty"`
	// RefuseRegistration answers dynamic registration 400
	// invalid_client_metadata.
	RefuseRegistration bool `json:"refuseRegistration,omitempty"`
	// TokenStatus, when set (400-599), is the status of every code and
	// client credentials exchange at the token endpoint.
	TokenStatus int `json:"tokenStatus,omitempty"`
	// ExpireOnCall, when set, makes the token of the Nth tools/call that
	// carries a good token expire just then: 401 invalid_token, and the
	// token is refused from then on (a refresh gets a new one).
	ExpireOnCall int `json:"expireOnCall,omitempty"`
}

func (s *OAuth) scope() string {
	if s.Scope == "" {
		return OAuthScope
	}
	return s.Scope
}

// Validate implements Scenario.
func (s *OAuth) Validate() error {
	if err := checkHeaderValue("scope", s.Scope); err != nil {
		return err
	}
	if strings.ContainsAny(s.Scope, `"\`) {
		return fmt.Errorf("param scope: no quotes or backslashes in a scope")
	}
	for tool, sc := range s.ToolScopes {
		if strings.TrimSpace(sc) == "" || strings.ContainsAny(sc, "\" \\") || checkHeaderValue("toolScopes", sc) != nil {
			return fmt.Errorf("param toolScopes.%s: %q: want one scope token (no space, quote or control character)", tool, sc)
		}
	}
	if s.ScopeLoop && len(s.ToolScopes) == 0 {
		return fmt.Errorf("param scopeLoop: needs toolScopes (the scope the server keeps asking for)")
	}
	if s.TokenStatus != 0 && (s.TokenStatus < 400 || s.TokenStatus > 599) {
		return fmt.Errorf("param tokenStatus: %d: want 400-599 (or 0 for none)", s.TokenStatus)
	}
	if s.ExpireOnCall < 0 {
		return fmt.Errorf("param expireOnCall: %d: want >= 0", s.ExpireOnCall)
	}
	return nil
}

// AuthServer implements AuthServerScenario.
func (s *OAuth) AuthServer() AuthServerConfig {
	scopes := []string{s.scope(), OAuthWriteScope}
	for _, sc := range s.ToolScopes {
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	slices.Sort(scopes[2:])
	return AuthServerConfig{Scopes: scopes, NoResourceMetadata: s.NoResourceMetadata,
		Faults: authserver.Faults{WrongIssuer: s.WrongIssuer, RefuseRegistration: s.RefuseRegistration, TokenStatus: s.TokenStatus}}
}

// ResourceMetadataURL is where the metadata of the endpoint r went to is
// published: the well-known path with the endpoint's path and query.
func ResourceMetadataURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := scheme + "://" + r.Host + ProtectedResourcePath + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	return u
}

// Wrap implements Scenario.
func (s *OAuth) Wrap(next http.Handler, env *Env) http.Handler {
	var (
		mu    sync.Mutex
		calls int
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		as := authserver.FromContext(r.Context())
		if as == nil {
			http.Error(w, env.ID+": this endpoint has no authorization server: the auth.* OAuth scenarios run in mcpdiag serve, which hosts one per endpoint", http.StatusInternalServerError)
			return
		}
		meta := ""
		if !s.NoResourceMetadata {
			meta = ResourceMetadataURL(r)
		}
		raw, tok, ok, why := as.Guard(w, r, meta, s.scope())
		if !ok {
			env.Note(r, "refused: %s", why)
			return
		}
		req := RequestOf(r)
		if req == nil || req.Method != "tools/call" {
			next.ServeHTTP(w, r)
			return
		}
		if s.ExpireOnCall > 0 {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == s.ExpireOnCall {
				as.Expire(raw)
				env.Note(r, "the token of tools/call #%d expired now", n)
				authserver.Challenge{ResourceMetadata: meta, Scope: s.scope(), Error: "invalid_token", Description: "the access token expired"}.Write(w)
				return
			}
		}
		if need := s.ToolScopes[req.Name]; need != "" && (!tok.Has(need) || s.ScopeLoop) {
			if tok.Has(need) {
				env.Note(r, "asked for scope %s again, though the token has it (scopeLoop)", need)
			} else {
				env.Note(r, "tool %s needs scope %s, the token has %q", req.Name, need, strings.Join(tok.Scopes, " "))
			}
			authserver.Challenge{ResourceMetadata: meta, Scope: strings.Join(union(tok.Scopes, need), " "), Error: "insufficient_scope",
				Description: "tool " + req.Name + " needs scope " + need}.Write(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// union is the scopes of a token plus one more, offline_access left out
// (it is not a resource scope).
func union(have []string, more string) []string {
	var out []string
	for _, s := range have {
		if s != "offline_access" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if !slices.Contains(out, more) {
		out = append(out, more)
	}
	return out
}
