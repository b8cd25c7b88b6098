package authserver

import (
	"net/http"
	"strings"
)

// BearerToken returns the token of r's "Authorization: Bearer" header, or
// "" when there is none.
func BearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// Challenge is a Bearer challenge (RFC 6750 §3, MCP authorization
// §Protected Resource Metadata Discovery).
type Challenge struct {
	// ResourceMetadata is the resource_metadata URL ("" leaves it out).
	ResourceMetadata string
	// Scope names the scopes the request needs ("" leaves it out).
	Scope string
	// Error and Description are the error code (invalid_token,
	// insufficient_scope) and its text; only when a token was sent.
	Error, Description string
}

// String is the WWW-Authenticate value.
func (c Challenge) String() string {
	var parts []string
	if c.ResourceMetadata != "" {
		parts = append(parts, "resource_metadata="+quote(c.ResourceMetadata))
	}
	if c.Scope != "" {
		parts = append(parts, "scope="+quote(c.Scope))
	}
	if c.Error != "" {
		parts = append(parts, "error="+quote(c.Error))
	}
	if c.Description != "" {
		parts = append(parts, "error_description="+quote(c.Description))
	}
	if len(parts) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(parts, ", ")
}

func quote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", "").Replace(v) + `"`
}

// Write answers the challenge: 403 for insufficient_scope, 401 otherwise.
func (c Challenge) Write(w http.ResponseWriter) {
	status := http.StatusUnauthorized
	if c.Error == "insufficient_scope" {
		status = http.StatusForbidden
	}
	w.Header().Set("WWW-Authenticate", c.String())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	msg := "unauthorized"
	if c.Description != "" {
		msg += ": " + c.Description
	}
	_, _ = w.Write([]byte(msg + "\n"))
}

// Guard checks r's bearer token for the resource: it returns the token and
// its record when the token is good and carries scope (when scope is set).
// Otherwise it answers the challenge (401 without a token or with a bad
// one, 403 insufficient_scope for a good token without the scope; the
// challenge names metadataURL when it is set) and returns ok false with the
// reason.
func (s *Server) Guard(w http.ResponseWriter, r *http.Request, metadataURL, scope string) (raw string, t *Token, ok bool, why string) {
	raw = BearerToken(r)
	ch := Challenge{ResourceMetadata: metadataURL, Scope: scope}
	if raw == "" {
		ch.Write(w)
		return "", nil, false, "no bearer token"
	}
	t, why = s.Check(raw)
	if t == nil {
		ch.Error, ch.Description = "invalid_token", why
		ch.Write(w)
		return raw, nil, false, why
	}
	if scope != "" {
		for _, sc := range strings.Fields(scope) {
			if !t.Has(sc) {
				ch.Error, ch.Description = "insufficient_scope", "this request needs scope "+scope
				ch.Write(w)
				return raw, t, false, "the token lacks scope " + sc
			}
		}
	}
	return raw, t, true, ""
}
