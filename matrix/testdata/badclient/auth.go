package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
)

// oauth is the client's OAuth 2.1 chain (MCP authorization), as small as
// mcpdiag serve's authorization servers allow: protected resource metadata
// (RFC 9728), authorization server metadata (RFC 8414), dynamic
// registration (RFC 7591) of a public client, the authorization code with
// PKCE S256 and the resource indicator (RFC 8707) fetched from the
// loopback test user without following the redirect, the code exchange,
// refresh, and step-up on 403 insufficient_scope with a bound. The OAuth
// modes break one rule each:
//
//	no-resource      leave the resource parameter out of every authorization and token request
//	token-elsewhere  once it has a token, send it to the authorization server too (it re-reads the metadata with it)
//	pkce-plain       try code_challenge_method=plain first, S256 only when that is refused
//	step-up-loop     follow every insufficient_scope challenge, even one for scopes it holds, up to 3 times (paced)
//	token-in-url     send the refresh token in the token endpoint's query string
type oauth struct {
	mode      string
	resource  string // the protected resource (its metadata's resource)
	issuer    string
	meta      asMeta
	clientID  string
	token     string
	refresh   string
	granted   []string
	supported []string // the resource's scopes_supported
	reauths   int
	stepUps   map[string]int // by tool
}

type asMeta struct {
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RegistrationEndpoint  string   `json:"registration_endpoint"`
	ScopesSupported       []string `json:"scopes_supported"`
	Methods               []string `json:"code_challenge_methods_supported"`
}

const redirectURI = "http://127.0.0.1:1/callback"

// noRedirect is a client that reads a redirect instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// errNotOAuth says that the endpoint names no authorization server: its
// 401 stays the outcome.
var errNotOAuth = errors.New("the resource metadata names no authorization server")

// challenge runs the chain after a 401 (or a 403 insufficient_scope) of
// the MCP request for tool. It returns true when the request should be
// sent again with the new token, or the outcome to print (AUTH_FAILED);
// neither when the answer is not an OAuth challenge this client follows.
func (o *oauth) challenge(ctx context.Context, mcpURL, tool string, res *classify.Result) (again bool, out classify.Outcome) {
	var ch classify.WWWAuthenticate
	if res.HTTP() != nil && res.HTTP().WWWAuthenticate != nil {
		ch = *res.HTTP().WWWAuthenticate
	}
	if !strings.EqualFold(ch.Scheme, "bearer") {
		return false, ""
	}
	switch {
	case res.Status == http.StatusUnauthorized:
		if o.reauths >= 2 {
			return false, classify.AuthFailed
		}
		o.reauths++
		if ch.Error == "invalid_token" && o.refresh != "" && o.refreshToken(ctx) == nil {
			return true, ""
		}
	case res.Status == http.StatusForbidden && ch.Error == "insufficient_scope" && o.token == "":
		// A 403 before any token of ours: the chain from the start.
	case res.Status == http.StatusForbidden && ch.Error == "insufficient_scope":
		if o.stepUps == nil {
			o.stepUps = map[string]int{}
		}
		need := strings.Fields(ch.Scope)
		held := !slices.ContainsFunc(need, func(s string) bool { return !slices.Contains(o.granted, s) })
		bound := 2
		if o.mode == "step-up-loop" {
			bound = 3
			time.Sleep(time.Duration(25<<o.stepUps[tool]) * time.Millisecond) // paced: no hammering, just no end
		} else if held {
			return false, classify.AuthFailed // a loop: the token already has what is asked
		}
		if o.stepUps[tool] >= bound {
			return false, classify.AuthFailed
		}
		o.stepUps[tool]++
		if err := o.authorize(ctx, union(o.granted, need)); err != nil {
			return false, classify.AuthFailed
		}
		return true, ""
	default:
		return false, ""
	}
	if o.meta.TokenEndpoint == "" {
		if err := o.discover(ctx, mcpURL, ch.ResourceMetadata); err != nil {
			if errors.Is(err, errNotOAuth) {
				return false, ""
			}
			return false, classify.AuthFailed
		}
	}
	scopes := strings.Fields(ch.Scope)
	if len(scopes) == 0 {
		scopes = o.supported
	}
	if err := o.authorize(ctx, scopes); err != nil {
		return false, classify.AuthFailed
	}
	return true, ""
}

// discover reads the resource's and the authorization server's metadata
// and registers the client.
func (o *oauth) discover(ctx context.Context, mcpURL, metaURL string) error {
	u, err := url.Parse(mcpURL)
	if err != nil {
		return err
	}
	candidates := []string{metaURL}
	if metaURL == "" {
		suffix := u.EscapedPath()
		if u.RawQuery != "" {
			suffix += "?" + u.RawQuery
		}
		candidates = []string{u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + suffix, u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"}
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	found := false
	for _, c := range candidates {
		if err := getJSON(ctx, c, "", &prm); err == nil {
			found = true
			break
		}
	}
	if !found {
		return fmt.Errorf("no protected resource metadata")
	}
	if len(prm.AuthorizationServers) == 0 {
		return errNotOAuth
	}
	o.resource, o.issuer, o.supported = prm.Resource, prm.AuthorizationServers[0], prm.ScopesSupported
	iu, err := url.Parse(o.issuer)
	if err != nil {
		return err
	}
	if err := getJSON(ctx, iu.Scheme+"://"+iu.Host+"/.well-known/oauth-authorization-server"+iu.EscapedPath(), "", &o.meta); err != nil {
		return err
	}
	if o.meta.Issuer != o.issuer || !slices.Contains(o.meta.Methods, "S256") {
		return fmt.Errorf("issuer %q, want %q (or no S256)", o.meta.Issuer, o.issuer)
	}
	body, _ := json.Marshal(map[string]any{"redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "client_name": "badclient"})
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := postJSON(ctx, o.meta.RegistrationEndpoint, "application/json", string(body), &reg); err != nil {
		return err
	}
	o.clientID = reg.ClientID
	return nil
}

// authorize gets a token for scopes (plus offline_access when the server
// offers it): the authorization request, then the code exchange.
func (o *oauth) authorize(ctx context.Context, scopes []string) error {
	if slices.Contains(o.meta.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(slices.Clone(scopes), "offline_access")
	}
	methods := []string{"S256"}
	if o.mode == "pkce-plain" {
		methods = []string{"plain", "S256"}
	}
	var code, verifier string
	for _, m := range methods {
		verifier = random()
		challenge := verifier
		if m == "S256" {
			sum := sha256.Sum256([]byte(verifier))
			challenge = base64.RawURLEncoding.EncodeToString(sum[:])
		}
		state := random()
		q := url.Values{"response_type": {"code"}, "client_id": {o.clientID}, "redirect_uri": {redirectURI}, "state": {state},
			"code_challenge": {challenge}, "code_challenge_method": {m}, "scope": {strings.Join(scopes, " ")}}
		o.addResource(q)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.meta.AuthorizationEndpoint+"?"+q.Encode(), nil)
		resp, err := noRedirect.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || err != nil {
			return fmt.Errorf("authorize: %d", resp.StatusCode)
		}
		back := loc.Query()
		if back.Get("state") != state || back.Get("iss") != o.issuer {
			return fmt.Errorf("authorize: state or iss differs")
		}
		if code = back.Get("code"); code != "" {
			break
		}
	}
	if code == "" {
		return fmt.Errorf("authorize: no code")
	}
	f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}, "client_id": {o.clientID}, "code_verifier": {verifier}}
	o.addResource(f)
	return o.tokenRequest(ctx, o.meta.TokenEndpoint, f)
}

// refreshToken trades the refresh token for a new access token.
func (o *oauth) refreshToken(ctx context.Context) error {
	f := url.Values{"grant_type": {"refresh_token"}, "client_id": {o.clientID}}
	o.addResource(f)
	endpoint := o.meta.TokenEndpoint
	if o.mode == "token-in-url" {
		endpoint += "?" + url.Values{"refresh_token": {o.refresh}}.Encode()
	} else {
		f.Set("refresh_token", o.refresh)
	}
	o.refresh = ""
	return o.tokenRequest(ctx, endpoint, f)
}

func (o *oauth) tokenRequest(ctx context.Context, endpoint string, f url.Values) error {
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
	}
	if err := postJSON(ctx, endpoint, "application/x-www-form-urlencoded", f.Encode(), &tok); err != nil {
		return err
	}
	if tok.AccessToken == "" {
		return fmt.Errorf("token: no access_token")
	}
	o.token, o.refresh, o.granted = tok.AccessToken, tok.RefreshToken, strings.Fields(tok.Scope)
	if o.mode == "token-elsewhere" {
		// The bad part: the token goes with every request from now on,
		// the authorization server's too.
		iu, _ := url.Parse(o.issuer)
		var m asMeta
		_ = getJSON(ctx, iu.Scheme+"://"+iu.Host+"/.well-known/oauth-authorization-server"+iu.EscapedPath(), o.token, &m)
	}
	return nil
}

func (o *oauth) addResource(v url.Values) {
	if o.mode != "no-resource" {
		v.Set("resource", o.resource)
	}
}

func getJSON(ctx context.Context, u, bearer string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return doJSON(req, v)
}

func postJSON(ctx context.Context, u, contentType, body string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	return doJSON(req, v)
}

func doJSON(req *http.Request, v any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d", req.Method, req.URL.Path, resp.StatusCode)
	}
	return json.Unmarshal(b, v)
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// union is have plus more, in order, without repeats.
func union(have, more []string) []string {
	out := slices.Clone(have)
	for _, s := range more {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
