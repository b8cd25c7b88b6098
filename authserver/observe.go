package authserver

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"time"
)

// Observation is what the server saw of one request and what it answered,
// for a log. It holds no secret: no token, code, verifier, state, client
// secret or assertion.
type Observation struct {
	Time   time.Time
	Method string
	// Path is the request's path (the query is left out: an authorization
	// request's holds the state).
	Path string
	// Step is as-metadata, authorize, token, refresh or registration (""
	// for a path the server does not serve).
	Step   string
	Status int
	// ClientID, Grant, ClientAuth (the token endpoint authentication
	// method the request used), Resource (the resource parameter) and
	// Scope describe the request.
	ClientID, Grant, ClientAuth, Resource, Scope string
	// PKCE is the code_challenge_method of an authorization request
	// (as sent; "plain", RFC 7636's default, for a challenge sent without
	// one), or "S256" on a code exchange that carried a code_verifier; ""
	// when none was sent. Challenge reports that an authorization request
	// carried a code_challenge.
	PKCE      string
	Challenge bool
	// Granted is the scope of the token issued ("" when none was).
	Granted string
	// Error and Description are the OAuth error answered ("" on success).
	Error, Description string
	// RefreshIn says where a refresh token arrived: "body" (RFC 6749 §6),
	// "url" (the query: a URL is logged and cached everywhere) or
	// "body+url"; "" when none did.
	RefreshIn string
	// InURL names the credential parameters found in the request's query
	// (refresh_token, access_token, code_verifier, client_secret,
	// client_assertion, and code at the token endpoint), in that order:
	// the names only, never a value.
	InURL []string
	// BearerSent reports that the request carried, as a Bearer token, an
	// access token this server issued for its resource: a token sent to a
	// server it was not issued for.
	BearerSent bool
}

type obsKey struct{}

// observation returns the request's Observation (a throwaway one outside
// ServeHTTP).
func observation(r *http.Request) *Observation {
	if o, ok := r.Context().Value(obsKey{}).(*Observation); ok {
		return o
	}
	return &Observation{}
}

// statusWriter keeps the status and the OAuth error of a response.
type statusWriter struct {
	http.ResponseWriter
	obs *Observation
}

func (w *statusWriter) WriteHeader(code int) {
	if w.obs.Status == 0 {
		w.obs.Status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.obs.Status == 0 {
		w.obs.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack lets a caller take the connection, as the plain writer would.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// observed runs h with an Observation in the request's context and hands
// it to Options.Observe when the response is written.
func (s *Server) observed(w http.ResponseWriter, r *http.Request, h func(http.ResponseWriter, *http.Request)) {
	if s.opts.Observe == nil {
		h(w, r)
		return
	}
	o := &Observation{Time: s.opts.Now(), Method: r.Method, Path: r.URL.Path, InURL: credentialsInURL(r, s.prefix+PathToken)}
	if tok := BearerToken(r); tok != "" {
		s.mu.Lock()
		_, o.BearerSent = s.tokens[tok]
		s.mu.Unlock()
	}
	sw := &statusWriter{ResponseWriter: w, obs: o}
	defer func() { s.opts.Observe(o) }()
	h(sw, r.WithContext(context.WithValue(r.Context(), obsKey{}, o)))
}

// urlCredentials are the parameters whose value is a credential: none of
// them belongs in a URL (the token request's parameters go in the body,
// RFC 6749 §4.1.3 and §6; MCP authorization, Token Requirements: "Access
// tokens MUST NOT be included in the URI query string"). code is one only
// at the token endpoint: the authorization response carries it in the
// redirect, by design.
var urlCredentials = []string{"refresh_token", "access_token", "code_verifier", "client_secret", "client_assertion", "code"}

// credentialsInURL names the credential parameters in r's query (token is
// the token endpoint's path).
func credentialsInURL(r *http.Request, token string) []string {
	q := r.URL.Query()
	var out []string
	for _, k := range urlCredentials {
		if q.Has(k) && (k != "code" || r.URL.Path == token) {
			out = append(out, k)
		}
	}
	return out
}

// refreshIn says where r carried a refresh token: "body", "url",
// "body+url" or "".
func refreshIn(r *http.Request) string {
	body, query := r.PostForm.Has("refresh_token"), r.URL.Query().Has("refresh_token")
	switch {
	case body && query:
		return "body+url"
	case body:
		return "body"
	case query:
		return "url"
	}
	return ""
}
