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
	// PKCE is the code_challenge_method of an authorization request that
	// carried a challenge, or "S256" on a code exchange that carried a
	// code_verifier; "" when none was sent.
	PKCE string
	// Error and Description are the OAuth error answered ("" on success).
	Error, Description string
	// RefreshInURL reports a refresh_token in the request's query (RFC 6749
	// §6 puts it in the body; a URL is logged and cached everywhere).
	RefreshInURL bool
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
	o := &Observation{Time: s.opts.Now(), Method: r.Method, Path: r.URL.Path, RefreshInURL: r.URL.Query().Has("refresh_token")}
	if tok := BearerToken(r); tok != "" {
		s.mu.Lock()
		_, o.BearerSent = s.tokens[tok]
		s.mu.Unlock()
	}
	sw := &statusWriter{ResponseWriter: w, obs: o}
	defer func() { s.opts.Observe(o) }()
	h(sw, r.WithContext(context.WithValue(r.Context(), obsKey{}, o)))
}
