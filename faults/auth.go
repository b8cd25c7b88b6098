package faults

import (
	"fmt"
	"net/http"
	"strings"
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
