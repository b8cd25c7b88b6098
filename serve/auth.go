package serve

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpdiag/mcpdiag/authserver"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/record"
)

// OAuthPrefix is where the endpoints' own authorization servers live: the
// issuer of the Nth endpoint behind an auth.* OAuth scenario is
// http://HOST/oauth/N (its RFC 8414 metadata at
// /.well-known/oauth-authorization-server/oauth/N).
const OAuthPrefix = "/oauth/"

// The pre-registered confidential client every endpoint's authorization
// server knows, for the client credentials grant and for a client that
// does not register (test credentials of a loopback test server, not
// secrets: docs/auth.md prints them).
const (
	TestClientID     = "mcpdiag-test-client"
	TestClientSecret = "mcpdiag-test-secret"
)

// authServers holds one authorization server per endpoint whose scenarios
// ask for one (faults.AuthServerScenario), made on the endpoint's first
// request and made afresh when its scenarios change.
type authServers struct {
	mu     sync.Mutex
	byKey  map[string]*authEntry // by endpoint key and Host
	byPath map[string]*authEntry // by issuer path (/oauth/N)
	next   int
}

type authEntry struct {
	key, host, sel string
	cfg            faults.AuthServerConfig
	as             *authserver.Server
}

// authConfig returns the configuration the selection asks for, or false.
func authConfig(sel faults.Selection) (faults.AuthServerConfig, bool) {
	for _, c := range sel {
		if a, ok := c.Scenario.(faults.AuthServerScenario); ok {
			return a.AuthServer(), true
		}
	}
	return faults.AuthServerConfig{}, false
}

// authFor returns the authorization server of endpoint ep (named key) as
// reached through r's Host, making it when needed; nil when ep's scenarios
// need none.
func (s *Server) authFor(key string, ep *faults.Endpoint, r *http.Request) *authEntry {
	sel := ep.Selection()
	cfg, ok := authConfig(sel)
	if !ok {
		return nil
	}
	a := &s.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byKey == nil {
		a.byKey, a.byPath = map[string]*authEntry{}, map[string]*authEntry{}
	}
	id := key + " " + r.Host
	if e := a.byKey[id]; e != nil && e.sel == sel.String() {
		return e
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	a.next++
	path := fmt.Sprintf("%s%d", OAuthPrefix, a.next)
	resource := scheme + "://" + r.Host + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		resource += "?" + r.URL.RawQuery
	}
	as, err := authserver.New(authserver.Options{Issuer: scheme + "://" + r.Host + path, Resource: resource, Scopes: cfg.Scopes, Faults: cfg.Faults,
		Clients: []authserver.Client{{ID: TestClientID, Secret: TestClientSecret}},
		Observe: func(o *authserver.Observation) {
			s.logAuth(path, key, sel.String(), scheme+"://"+r.Host+path, resource, o)
		}})
	if err != nil {
		return nil
	}
	if old := a.byKey[id]; old != nil {
		delete(a.byPath, strings.TrimPrefix(old.as.Issuer(), scheme+"://"+r.Host))
	}
	e := &authEntry{key: key, host: r.Host, sel: sel.String(), cfg: cfg, as: as}
	a.byKey[id], a.byPath[path] = e, e
	return e
}

// withAuth hands the endpoint's authorization server, when it has one, to
// its scenarios through the request context.
func (s *Server) withAuth(key string, ep *faults.Endpoint, r *http.Request) *http.Request {
	e := s.authFor(key, ep, r)
	if e == nil {
		return r
	}
	return r.WithContext(authserver.NewContext(r.Context(), e.as))
}

// serveAuth answers the requests of the authorization servers and the
// protected resource metadata of the endpoints behind one. It reports
// whether it answered.
func (s *Server) serveAuth(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if strings.HasPrefix(p, faults.ProtectedResourcePath) {
		return s.serveAuthResourceMetadata(w, r)
	}
	var issuerPath string
	switch {
	case strings.HasPrefix(p, authserver.WellKnownAS+OAuthPrefix):
		issuerPath = strings.TrimPrefix(p, authserver.WellKnownAS)
	case strings.HasPrefix(p, authserver.WellKnownOIDC+OAuthPrefix):
		issuerPath = strings.TrimPrefix(p, authserver.WellKnownOIDC)
	case strings.HasPrefix(p, OAuthPrefix):
		rest := strings.TrimPrefix(p, OAuthPrefix)
		n, _, _ := strings.Cut(rest, "/")
		issuerPath = OAuthPrefix + n
	default:
		return false
	}
	s.auth.mu.Lock()
	e := s.auth.byPath[issuerPath]
	s.auth.mu.Unlock()
	if e == nil || e.host != r.Host || !e.as.Handles(p) {
		http.Error(w, "mcpdiag serve: no authorization server at "+p+" (each one is made by the first request to its endpoint)", http.StatusNotFound)
		return true
	}
	e.as.ServeHTTP(w, r)
	return true
}

// serveAuthResourceMetadata answers the RFC 9728 metadata of an endpoint
// behind an authorization server: the resource, that server, and the
// scopes; 404 when the scenario hides it, and at the root (the resources
// of this server all have a path). Other endpoints are left to
// serveResourceMetadata.
func (s *Server) serveAuthResourceMetadata(w http.ResponseWriter, r *http.Request) bool {
	suffix := strings.TrimPrefix(r.URL.Path, faults.ProtectedResourcePath)
	if suffix == "" || suffix == "/" {
		http.Error(w, "mcpdiag serve: no protected resource at the root; the metadata of an endpoint is at "+faults.ProtectedResourcePath+"{endpoint path}", http.StatusNotFound)
		return true
	}
	if suffix[0] != '/' {
		return false
	}
	key := suffix
	if r.URL.RawQuery != "" {
		key = suffix + "?" + url.Values(r.URL.Query()).Encode()
	}
	var ep *faults.Endpoint
	if suffix == MainPath {
		ep = s.Endpoint(MainPath)
	} else {
		ep = s.Endpoint(key)
	}
	if ep == nil {
		return false
	}
	cfg, ok := authConfig(ep.Selection())
	if !ok {
		return false
	}
	if cfg.NoResourceMetadata {
		http.Error(w, "mcpdiag serve: this endpoint publishes no protected resource metadata (auth.no_resource_metadata)", http.StatusNotFound)
		return true
	}
	mr := r.Clone(r.Context())
	mr.URL.Path, mr.URL.RawPath = suffix, ""
	e := s.authFor(key, ep, mr)
	if e == nil {
		http.Error(w, "mcpdiag serve: the authorization server could not be made", http.StatusInternalServerError)
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return true
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 e.as.Resource(),
		"authorization_servers":    []string{e.as.Issuer()},
		"bearer_methods_supported": []string{"header"},
		"scopes_supported":         e.cfg.Scopes,
		"resource_name":            "mcpdiag fault server (" + ep.Selection().String() + ")",
	})
	return true
}

// logAuth writes an authorization server's request as a server line whose
// typed auth member holds its facts: the authorization server (path) and
// the MCP endpoint it serves, the step, the client, the grant and its
// authentication, PKCE (method, challenge present), the resource and scope
// asked, the scope granted, the OAuth error answered, whether an access
// token of this server was sent to it, where a refresh token arrived, and
// which credential parameters were in the URL. No secret is in it: names,
// methods and presence only.
func (s *Server) logAuth(path, key, scenario, issuer, resource string, o *authserver.Observation) {
	rec := &record.Record{Kind: record.KindServer, Time: o.Time, Scenario: scenario, HTTPMethod: o.Method, URL: o.Path, Status: o.Status,
		Auth: &record.Auth{Step: o.Step, Issuer: issuer, Resource: o.Resource, Scope: o.Scope, Granted: o.Granted, Grant: o.Grant,
			ClientAuth: o.ClientAuth, ClientID: o.ClientID, PKCE: o.PKCE, CodeChallenge: o.Challenge, Error: o.Error,
			ErrorDescription: o.Description, TokenResource: resource, Server: path, For: record.RedactURL(key),
			BearerSent: o.BearerSent, RefreshIn: o.RefreshIn, InURL: o.InURL}}
	switch {
	case o.Step == "":
		rec.Note = "authorization server: no such endpoint"
	case o.Error != "":
		rec.Note = "authorization server " + o.Step + ": answered " + o.Error
	default:
		rec.Note = fmt.Sprintf("authorization server %s: answered %d", o.Step, o.Status)
	}
	if o.BearerSent {
		rec.Note += "; the request carried an access token issued for " + record.RedactURL(key) + ", which is not this server"
	}
	if len(o.InURL) > 0 {
		rec.Note += "; credentials in the URL: " + strings.Join(o.InURL, ", ")
	}
	line, err := s.opts.Encoder.Encode(rec)
	if err != nil {
		s.append(fallbackLine(rec.Time, scenario, err), false)
		s.tally.Lose(record.Loss{Ref: record.RefOf(rec), Reason: record.LostUnencodable, Err: err})
		return
	}
	s.append(line, true)
}
