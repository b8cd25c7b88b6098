// Package authserver is a small OAuth 2.1 authorization server for loopback
// tests, and the token check of the protected resource in front of it:
// what `mcpdiag serve` runs behind its auth.* scenarios so that a client's
// whole authorization chain (MCP authorization, 2026-07-28) runs end to end
// with no outside service.
//
// It serves RFC 8414 metadata (and the same document at the OpenID Connect
// discovery paths), an authorization endpoint whose test user approves at
// once (authorization code with PKCE S256 only, the RFC 8707 resource
// indicator checked, RFC 9207 iss in the response), a token endpoint
// (authorization_code, refresh_token with rotation, client_credentials;
// client_secret_basic, client_secret_post, private_key_jwt or none),
// and RFC 7591 dynamic registration. Tokens are opaque random strings kept
// in memory, bound to one resource; Check tells a resource whether a token
// is good for it and with which scopes.
//
// Faults break one step on purpose: the metadata names another issuer,
// registration is refused, or the token endpoint answers an error status.
// A test server, not a production one: one test user, no consent screen,
// state in memory only.
package authserver

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults.
const (
	// DefaultTokenLifetime is how long an access token is good for.
	DefaultTokenLifetime = time.Hour
	// CodeLifetime is how long an authorization code may wait for its
	// exchange.
	CodeLifetime = time.Minute
	// MaxClients bounds dynamic registrations (and MaxTokens live tokens)
	// kept per server: past it the oldest are forgotten.
	MaxClients = 1000
	MaxTokens  = 10000
)

// The paths under the issuer.
const (
	PathAuthorize = "/authorize"
	PathToken     = "/token"
	PathRegister  = "/register"
)

// Well-known paths (RFC 8414 §3, OpenID Connect Discovery 1.0 §4).
const (
	WellKnownAS   = "/.well-known/oauth-authorization-server"
	WellKnownOIDC = "/.well-known/openid-configuration"
)

// Client is a pre-registered client.
type Client struct {
	ID string
	// Secret, when set, makes a confidential client (client_secret_basic
	// or client_secret_post); empty is a public client.
	Secret string
	// RedirectURIs are the allowed redirect URIs; any loopback URI when
	// empty (RFC 8252 §7.3: the port of a loopback redirect may vary).
	RedirectURIs []string
	// PublicKey, when set (an *ecdsa.PublicKey on P-256 or an
	// *rsa.PublicKey), authenticates the client with private_key_jwt
	// (RFC 7523) instead of a secret.
	PublicKey crypto.PublicKey
}

// Faults break one step of the chain on purpose.
type Faults struct {
	// WrongIssuer makes the metadata name an issuer that is not the one
	// its URL was built from (RFC 8414 §3.3 says the client must reject
	// it).
	WrongIssuer bool
	// RefuseRegistration answers every dynamic registration 400
	// invalid_client_metadata.
	RefuseRegistration bool
	// TokenStatus, when set, is the status the token endpoint answers
	// every authorization_code and client_credentials request with (a 5xx
	// with a plain body, a 4xx with an OAuth error).
	TokenStatus int
}

// Options configure a Server.
type Options struct {
	// Issuer is the issuer identifier: an http(s) URL with no query, for
	// example http://127.0.0.1:8080/oauth/1. Required.
	Issuer string
	// Resource is the protected resource tokens are issued for (the MCP
	// endpoint's URL): a request naming another resource is refused
	// (invalid_target). Required.
	Resource string
	// Scopes are scopes_supported; offline_access is added (it asks for a
	// refresh token).
	Scopes []string
	// Clients are pre-registered clients.
	Clients []Client
	// TokenLifetime is the access tokens' lifetime (DefaultTokenLifetime
	// when 0).
	TokenLifetime time.Duration
	// Faults break a step.
	Faults Faults
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Observe, when set, is called with every request the server answers,
	// after the answer.
	Observe func(*Observation)
}

// Token is what the server knows of an access token it issued. It holds no
// secret.
type Token struct {
	ClientID string
	Resource string
	Scopes   []string
	Grant    string
	Expiry   time.Time
	// Expired is set by Expire: the token is refused from then on.
	Expired bool
}

// Has reports whether the token carries scope.
func (t *Token) Has(scope string) bool { return slices.Contains(t.Scopes, scope) }

type code struct {
	clientID, redirectURI, challenge, resource string
	scopes                                     []string
	expiry                                     time.Time
}

type refresh struct {
	clientID, resource string
	scopes             []string
}

// Server is the authorization server. It is an http.Handler for the paths
// Handles reports; the caller routes them to it.
type Server struct {
	opts   Options
	prefix string // the issuer's path

	mu       sync.Mutex
	clients  map[string]*Client
	order    []string // dynamic clients, oldest first
	codes    map[string]*code
	tokens   map[string]*Token
	tokOrder []string
	refresh  map[string]*refresh
	stats    Stats
}

// Stats count what the server did, for tests and logs.
type Stats struct {
	Registrations, Authorizations, Tokens, Refreshes, Refused int
}

// New returns a Server. It fails when Issuer or Resource is not an
// absolute http(s) URL.
func New(o Options) (*Server, error) {
	u, err := url.Parse(o.Issuer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("authserver: issuer %q: want an http(s) URL without query or fragment", o.Issuer)
	}
	if r, err := url.Parse(o.Resource); err != nil || r.Host == "" {
		return nil, fmt.Errorf("authserver: resource %q: want an absolute URL", o.Resource)
	}
	if o.TokenLifetime <= 0 {
		o.TokenLifetime = DefaultTokenLifetime
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if !slices.Contains(o.Scopes, "offline_access") {
		o.Scopes = append(slices.Clone(o.Scopes), "offline_access")
	}
	s := &Server{opts: o, prefix: strings.TrimSuffix(u.EscapedPath(), "/"), clients: map[string]*Client{},
		codes: map[string]*code{}, tokens: map[string]*Token{}, refresh: map[string]*refresh{}}
	for i := range o.Clients {
		c := o.Clients[i]
		s.clients[c.ID] = &c
	}
	return s, nil
}

// Issuer returns the issuer identifier.
func (s *Server) Issuer() string { return s.opts.Issuer }

// Resource returns the protected resource.
func (s *Server) Resource() string { return s.opts.Resource }

// Scopes returns scopes_supported.
func (s *Server) Scopes() []string { return slices.Clone(s.opts.Scopes) }

// Stats returns the counts.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Handles reports whether a request path is one of this server's: its
// metadata (RFC 8414 path insertion, and both OpenID Connect forms) or an
// endpoint under the issuer.
func (s *Server) Handles(path string) bool {
	switch path {
	case WellKnownAS + s.prefix, WellKnownOIDC + s.prefix, s.prefix + WellKnownOIDC,
		s.prefix + PathAuthorize, s.prefix + PathToken, s.prefix + PathRegister:
		return true
	}
	return false
}

// ServeHTTP answers the server's paths; any other gets 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.observed(w, r, s.serve)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch r.URL.Path {
	case WellKnownAS + s.prefix, WellKnownOIDC + s.prefix, s.prefix + WellKnownOIDC:
		observation(r).Step = "as-metadata"
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		writeJSON(w, http.StatusOK, s.metadata())
	case s.prefix + PathAuthorize:
		observation(r).Step = "authorize"
		s.authorize(w, r)
	case s.prefix + PathToken:
		s.token(w, r)
	case s.prefix + PathRegister:
		observation(r).Step = "registration"
		s.register(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) metadata() map[string]any {
	iss := s.opts.Issuer
	if s.opts.Faults.WrongIssuer {
		iss = strings.TrimSuffix(s.opts.Issuer, "/") + "/elsewhere"
	}
	return map[string]any{
		"issuer":                                           iss,
		"authorization_endpoint":                           s.opts.Issuer + PathAuthorize,
		"token_endpoint":                                   s.opts.Issuer + PathToken,
		"registration_endpoint":                            s.opts.Issuer + PathRegister,
		"scopes_supported":                                 s.opts.Scopes,
		"response_types_supported":                         []string{"code"},
		"grant_types_supported":                            []string{"authorization_code", "refresh_token", "client_credentials"},
		"token_endpoint_auth_methods_supported":            []string{"client_secret_basic", "client_secret_post", "private_key_jwt", "none"},
		"token_endpoint_auth_signing_alg_values_supported": []string{"ES256", "RS256"},
		"code_challenge_methods_supported":                 []string{"S256"},
		"authorization_response_iss_parameter_supported":   true,
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// oauthError answers an OAuth error response (RFC 6749 §5.2).
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	if sw, ok := w.(*statusWriter); ok {
		sw.obs.Error, sw.obs.Description = code, desc
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="mcpdiag test authorization server"`)
	}
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func secret() string { return rand.Text() }

// isLoopbackRedirect reports an http redirect URI on a loopback host.
func isLoopbackRedirect(u *url.URL) bool {
	if u.Scheme != "http" {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// redirectAllowed applies the client's redirect URIs; a loopback URI
// matches whatever its port (RFC 8252 §7.3).
func redirectAllowed(c *Client, uri string) bool {
	u, err := url.Parse(uri)
	if err != nil || u.Fragment != "" {
		return false
	}
	if len(c.RedirectURIs) == 0 {
		return isLoopbackRedirect(u)
	}
	for _, allowed := range c.RedirectURIs {
		if allowed == uri {
			return true
		}
		a, err := url.Parse(allowed)
		if err == nil && isLoopbackRedirect(a) && isLoopbackRedirect(u) && a.Hostname() == u.Hostname() && a.EscapedPath() == u.EscapedPath() {
			return true
		}
	}
	return false
}

// authorize is the authorization endpoint: the test user approves at
// once. Errors before the redirect URI is known are answered 400; later
// ones go back to the client in the redirect (RFC 6749 §4.1.2.1).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form
	o := observation(r)
	o.ClientID, o.Resource, o.Scope = q.Get("client_id"), q.Get("resource"), q.Get("scope")
	o.Challenge, o.PKCE = q.Get("code_challenge") != "", q.Get("code_challenge_method")
	if o.Challenge && o.PKCE == "" {
		o.PKCE = "plain" // RFC 7636 §4.3: the default method
	}
	s.mu.Lock()
	c := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	if c == nil {
		s.refused()
		http.Error(w, "unknown client_id "+strconvQuote(q.Get("client_id"))+": register first", http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if !redirectAllowed(c, redirect) {
		s.refused()
		http.Error(w, "redirect_uri "+strconvQuote(redirect)+" is not registered for this client", http.StatusBadRequest)
		return
	}
	back := func(v url.Values) {
		u, _ := url.Parse(redirect)
		qq := u.Query()
		for k, vs := range v {
			qq[k] = vs
		}
		if st := q.Get("state"); st != "" {
			qq.Set("state", st)
		}
		qq.Set("iss", s.opts.Issuer)
		u.RawQuery = qq.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	fail := func(code, desc string) {
		s.refused()
		o.Error, o.Description = code, desc
		back(url.Values{"error": {code}, "error_description": {desc}})
	}
	if q.Get("response_type") != "code" {
		fail("unsupported_response_type", "only response_type=code")
		return
	}
	if q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" {
		fail("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256")
		return
	}
	res := q.Get("resource")
	if res != "" && res != s.opts.Resource {
		fail("invalid_target", "resource "+strconvQuote(res)+" is not "+s.opts.Resource)
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	for _, sc := range scopes {
		if !slices.Contains(s.opts.Scopes, sc) {
			fail("invalid_scope", "unknown scope "+strconvQuote(sc))
			return
		}
	}
	k := secret()
	s.mu.Lock()
	s.codes[k] = &code{clientID: c.ID, redirectURI: redirect, challenge: q.Get("code_challenge"), resource: s.opts.Resource,
		scopes: scopes, expiry: s.opts.Now().Add(CodeLifetime)}
	s.stats.Authorizations++
	s.mu.Unlock()
	back(url.Values{"code": {k}})
}

func strconvQuote(v string) string { b, _ := json.Marshal(v); return string(b) }

func (s *Server) refused() {
	s.mu.Lock()
	s.stats.Refused++
	s.mu.Unlock()
}

// clientAuth authenticates the client of a token request: HTTP Basic or
// the form's client_id and client_secret; a public client sends its id
// alone.
func (s *Server) clientAuth(r *http.Request) (*Client, string, string) {
	if r.PostForm.Get("client_assertion_type") == AssertionType {
		c, err := s.verifyAssertion(r.PostForm.Get("client_assertion"))
		if err != nil {
			return nil, "invalid_client", err.Error()
		}
		if id := r.PostForm.Get("client_id"); id != "" && id != c.ID {
			return nil, "invalid_client", "client_id differs from the assertion's sub"
		}
		return c, "", ""
	}
	id, sec, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		sec, _ = url.QueryUnescape(sec)
	} else {
		id, sec = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	s.mu.Lock()
	c := s.clients[id]
	s.mu.Unlock()
	switch {
	case id == "":
		return nil, "invalid_client", "no client authentication and no client_id"
	case c == nil:
		return nil, "invalid_client", "unknown client_id " + strconvQuote(id)
	case c.Secret != "" && subtle.ConstantTimeCompare([]byte(sec), []byte(c.Secret)) != 1:
		return nil, "invalid_client", "client authentication failed"
	case c.Secret == "" && sec != "":
		return nil, "invalid_client", "a public client sends no secret"
	case c.PublicKey != nil:
		return nil, "invalid_client", "this client authenticates with private_key_jwt"
	}
	return c, "", ""
}

// token is the token endpoint.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form: "+err.Error())
		return
	}
	f := r.PostForm
	grant := f.Get("grant_type")
	o := observation(r)
	o.Grant, o.Resource, o.Scope, o.ClientID = grant, f.Get("resource"), f.Get("scope"), f.Get("client_id")
	if grant == "refresh_token" {
		o.Step = "refresh"
	} else {
		o.Step = "token"
	}
	if f.Get("code_verifier") != "" {
		o.PKCE = "S256"
	}
	o.RefreshIn = refreshIn(r)
	_, _, basic := r.BasicAuth()
	switch {
	case f.Get("client_assertion_type") == AssertionType:
		o.ClientAuth = "private_key_jwt"
	case basic:
		o.ClientAuth = "client_secret_basic"
	case f.Get("client_secret") != "":
		o.ClientAuth = "client_secret_post"
	default:
		o.ClientAuth = "none"
	}
	if st := s.opts.Faults.TokenStatus; st != 0 && grant != "refresh_token" {
		s.refused()
		if st >= 500 {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(st)
			_, _ = io.WriteString(w, "mcpdiag test authorization server: the token endpoint fails on purpose\n")
			return
		}
		oauthError(w, st, "invalid_grant", "the token endpoint refuses on purpose")
		return
	}
	c, ecode, edesc := s.clientAuth(r)
	if c == nil {
		s.refused()
		oauthError(w, http.StatusUnauthorized, ecode, edesc)
		return
	}
	o.ClientID = c.ID
	if res := f.Get("resource"); res != "" && res != s.opts.Resource {
		s.refused()
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource "+strconvQuote(res)+" is not "+s.opts.Resource)
		return
	}
	switch grant {
	case "authorization_code":
		s.mu.Lock()
		cd := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // one use (RFC 6749 §4.1.2)
		s.mu.Unlock()
		switch {
		case cd == nil || cd.expiry.Before(s.opts.Now()):
			s.refused()
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or expired code")
			return
		case cd.clientID != c.ID:
			s.refused()
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the code was issued to another client")
			return
		case cd.redirectURI != f.Get("redirect_uri"):
			s.refused()
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
			return
		case !pkceOK(f.Get("code_verifier"), cd.challenge):
			s.refused()
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the code_verifier does not match the code_challenge (PKCE S256)")
			return
		}
		s.issue(w, o, c.ID, cd.resource, cd.scopes, grant, slices.Contains(cd.scopes, "offline_access"))
	case "refresh_token":
		s.mu.Lock()
		rt := s.refresh[f.Get("refresh_token")]
		s.mu.Unlock()
		if rt == nil || rt.clientID != c.ID {
			s.refused()
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or used refresh token")
			return
		}
		scopes := rt.scopes
		if sc := strings.Fields(f.Get("scope")); len(sc) > 0 {
			for _, x := range sc {
				if !slices.Contains(rt.scopes, x) {
					s.refused()
					oauthError(w, http.StatusBadRequest, "invalid_scope", "a refresh cannot widen the scope: "+strconvQuote(x))
					return
				}
			}
			scopes = sc
		}
		s.mu.Lock()
		_, live := s.refresh[f.Get("refresh_token")]
		delete(s.refresh, f.Get("refresh_token")) // rotation (OAuth 2.1 §4.3.1)
		s.stats.Refreshes++
		s.mu.Unlock()
		if !live {
			s.refused()
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or used refresh token")
			return
		}
		s.issue(w, o, c.ID, rt.resource, scopes, grant, true)
	case "client_credentials":
		if c.Secret == "" && c.PublicKey == nil {
			s.refused()
			oauthError(w, http.StatusUnauthorized, "unauthorized_client", "client_credentials needs a confidential client")
			return
		}
		scopes := strings.Fields(f.Get("scope"))
		for _, sc := range scopes {
			if !slices.Contains(s.opts.Scopes, sc) || sc == "offline_access" {
				s.refused()
				oauthError(w, http.StatusBadRequest, "invalid_scope", "unknown scope "+strconvQuote(sc))
				return
			}
		}
		s.issue(w, o, c.ID, s.opts.Resource, scopes, grant, false)
	default:
		s.refused()
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type "+strconvQuote(grant))
	}
}

func pkceOK(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// issue answers a new access token (and a refresh token when withRefresh);
// o notes the scope granted.
func (s *Server) issue(w http.ResponseWriter, o *Observation, clientID, resource string, scopes []string, grant string, withRefresh bool) {
	at := secret()
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.opts.TokenLifetime / time.Second),
		"scope": strings.Join(scopes, " ")}
	s.mu.Lock()
	s.tokens[at] = &Token{ClientID: clientID, Resource: resource, Scopes: slices.Clone(scopes), Grant: grant, Expiry: s.opts.Now().Add(s.opts.TokenLifetime)}
	s.tokOrder = append(s.tokOrder, at)
	if len(s.tokOrder) > MaxTokens {
		delete(s.tokens, s.tokOrder[0])
		s.tokOrder = s.tokOrder[1:]
	}
	if withRefresh {
		rt := secret()
		s.refresh[rt] = &refresh{clientID: clientID, resource: resource, scopes: slices.Clone(scopes)}
		resp["refresh_token"] = rt
	}
	s.stats.Tokens++
	s.mu.Unlock()
	o.Granted = strings.Join(scopes, " ")
	writeJSON(w, http.StatusOK, resp)
}

// register is RFC 7591 dynamic registration.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if s.opts.Faults.RefuseRegistration {
		s.refused()
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "dynamic registration is closed on this server (the fault scenario refuses it on purpose)")
		return
	}
	var m struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		GrantTypes   []string `json:"grant_types"`
		ClientName   string   `json:"client_name"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&m); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not a JSON object: "+err.Error())
		return
	}
	for _, u := range m.RedirectURIs {
		pu, err := url.Parse(u)
		if err != nil || !(isLoopbackRedirect(pu) || pu.Scheme == "https") || pu.Fragment != "" {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uri "+strconvQuote(u)+": loopback http or https, no fragment")
			return
		}
	}
	if m.AuthMethod == "" {
		m.AuthMethod = "client_secret_basic" // RFC 7591 §2
	}
	c := &Client{ID: "dyn-" + secret()[:16], RedirectURIs: m.RedirectURIs}
	switch m.AuthMethod {
	case "none":
	case "client_secret_basic", "client_secret_post":
		c.Secret = secret()
	default:
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "token_endpoint_auth_method "+strconvQuote(m.AuthMethod)+" is not supported")
		return
	}
	s.mu.Lock()
	s.clients[c.ID] = c
	s.order = append(s.order, c.ID)
	if len(s.order) > MaxClients {
		delete(s.clients, s.order[0])
		s.order = s.order[1:]
	}
	s.stats.Registrations++
	s.mu.Unlock()
	observation(r).ClientID = c.ID
	resp := map[string]any{"client_id": c.ID, "client_id_issued_at": s.opts.Now().Unix(), "redirect_uris": m.RedirectURIs,
		"token_endpoint_auth_method": m.AuthMethod, "grant_types": m.GrantTypes, "client_name": m.ClientName}
	if c.Secret != "" {
		resp["client_secret"] = c.Secret
		resp["client_secret_expires_at"] = 0
	}
	writeJSON(w, http.StatusCreated, resp)
}

// Check looks up an access token: nil with the reason when it is unknown,
// expired, or issued for another resource.
func (s *Server) Check(token string) (*Token, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tokens[token]
	switch {
	case t == nil:
		return nil, "the access token is not one this authorization server issued"
	case t.Expired || !t.Expiry.After(s.opts.Now()):
		return nil, "the access token expired"
	case t.Resource != s.opts.Resource:
		return nil, "the access token was issued for " + t.Resource + ", not this resource"
	}
	cp := *t
	return &cp, ""
}

// Expire makes an access token expire now (a token that dies mid-session).
func (s *Server) Expire(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tokens[token]; t != nil {
		t.Expired = true
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying s, for the resource's handlers.
func NewContext(ctx context.Context, s *Server) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// FromContext returns the Server of ctx, or nil.
func FromContext(ctx context.Context) *Server {
	s, _ := ctx.Value(ctxKey{}).(*Server)
	return s
}
