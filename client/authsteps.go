package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Spec rules the steps cite.
const (
	rulePRM          = "MCP 2026-07-28, authorization server discovery: MCP servers MUST implement RFC 9728 protected resource metadata (WWW-Authenticate resource_metadata, or the well-known URI at the endpoint's path or at the root)"
	rulePRMResource  = "RFC 9728 §3.3: the resource in the metadata MUST be identical to the URL the client used (or into which the well-known suffix was inserted); MCP 2026-07-28: clients MUST reject a mismatch"
	rulePRMServers   = "MCP 2026-07-28, authorization server discovery: the protected resource metadata MUST include authorization_servers with at least one authorization server"
	ruleASM          = "MCP 2026-07-28, authorization server discovery: authorization servers MUST publish RFC 8414 or OpenID Connect discovery metadata; clients try the well-known URLs in the spec's order"
	ruleIssuer       = "RFC 8414 §3.3, OpenID Connect Discovery §4.3, MCP 2026-07-28: the issuer in the metadata MUST be identical to the issuer the well-known URL was built from; otherwise the metadata MUST NOT be used"
	rulePKCE         = "MCP 2026-07-28 authorization §Authorization Code Protection: clients MUST use PKCE S256 and MUST refuse to proceed when code_challenge_methods_supported is absent or lacks S256"
	ruleEndpoints    = "RFC 8414 §2: authorization_endpoint and token_endpoint are required; MCP 2026-07-28 security considerations: endpoints MUST be https (or loopback)"
	ruleRegistration = "MCP 2026-07-28 client-registration: pre-registered client, else Client ID Metadata Document, else Dynamic Client Registration (RFC 7591); surface a refused registration"
	ruleBinding      = "MCP 2026-07-28 client-registration §Authorization Server Binding: credentials are bound to the issuer that issued them; surface an error rather than use them with another authorization server"
	ruleState        = "OAuth 2.1 §4.1.2.1 / §7.12: the state in the authorization response MUST equal the one sent"
	ruleIss          = "RFC 9207 §2.4, MCP 2026-07-28 §Authorization Response Validation: iss MUST equal the recorded issuer by simple string comparison; absent iss is rejected when authorization_response_iss_parameter_supported is true"
	ruleToken        = "OAuth 2.1 §3.2.4 / RFC 6749 §5.2: the token endpoint's answer"
	ruleBearer       = "MCP 2026-07-28 §Access Token Usage: the client sends the token in the Authorization header, scheme Bearer; a token of another type (DPoP) needs an extension mcpdiag does not build"
	ruleAuthorize    = "OAuth 2.1 §4.1: the authorization endpoint redirects the user-agent to the redirect URI with code and state (or error)"
)

// authVerdict classifies an auth exchange: outcome and reason; failure and
// rule on its AuthInfo when the step broke one.
func authVerdict(ex *Exchange, outcome classify.Outcome, reason, failure, rule string) {
	if ex.Result == nil {
		ex.Result = &classify.Result{}
	}
	if ex.Result.Outcome == classify.NetworkError {
		outcome = classify.NetworkError
	}
	ex.Result.Outcome = outcome
	if reason != "" {
		ex.Result.Reason = ex.Auth.Step + ": " + reason
	}
	if failure != "" {
		ex.Auth.Failure, ex.Auth.Rule = failure, rule
	}
}

// httpStatusReason describes a non-2xx answer, with the OAuth error the body
// names.
func httpStatusReason(ex *Exchange) string {
	s := fmt.Sprintf("HTTP %d %s", ex.Status, http.StatusText(ex.Status))
	code, desc := oauthError(ex.authBody)
	ex.Auth.Error, ex.Auth.ErrorDescription = code, desc
	if code != "" {
		s += " " + code
		if desc != "" {
			s += fmt.Sprintf(" (%s)", desc)
		}
	}
	return s
}

// fetchDoc GETs a metadata document through the recording client. It
// returns the exchange, whether a document is there (a 2xx; a 4xx is "not
// here"), and a problem that ends the step (a network error, a 5xx, a
// document that is not JSON).
func (a *authState) fetchDoc(ctx context.Context, info AuthInfo, u string, v any) (ex *Exchange, found bool, problem string) {
	hc, tr := a.c.authHTTPClient()
	req, err := http.NewRequestWithContext(withStep(ctx, info), http.MethodGet, u, nil)
	if err != nil {
		return nil, false, fmt.Sprintf("%s is not a URL: %v", u, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	exs := tr.take()
	if len(exs) == 0 {
		return nil, false, "the request was not sent: " + err.Error()
	}
	ex = exs[0]
	if err != nil {
		authVerdict(ex, classify.NetworkError, "no answer from "+u+": "+err.Error(), "", "")
		return ex, false, "no answer from " + u + ": " + err.Error()
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 500:
		r := httpStatusReason(ex)
		authVerdict(ex, classify.HTTPError, r+" from "+u, "", "")
		return ex, false, r + " from " + u
	case resp.StatusCode >= 300:
		r := httpStatusReason(ex)
		if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode < 400 {
			r += " to " + loc + " (redirects are not followed in the authorization chain)"
		}
		authVerdict(ex, classify.HTTPError, r+": not here", "", "")
		ex.Auth.Note = "not here (" + r + ")"
		return ex, false, ""
	case rerr != nil:
		authVerdict(ex, classify.StreamIncomplete, "the document was cut: "+rerr.Error(), "", "")
		return ex, false, "the document at " + u + " was cut: " + rerr.Error()
	case !isJSONType(resp.Header.Get("Content-Type")):
		r := fmt.Sprintf("HTTP %d with Content-Type %q, not application/json", resp.StatusCode, resp.Header.Get("Content-Type"))
		authVerdict(ex, classify.UnexpectedContentType, r, r, "RFC 9728 §3.2 / RFC 8414 §3.2: metadata is a JSON document (application/json)")
		return ex, false, r + " at " + u
	}
	if err := jsonUnmarshal(body, v); err != nil {
		r := "the document is not the JSON object expected: " + err.Error()
		authVerdict(ex, classify.MalformedJSON, r, r, "RFC 9728 §3.2 / RFC 8414 §3.2: metadata is a JSON object")
		return ex, false, r + " (" + u + ")"
	}
	return ex, true, ""
}

// prmCandidate is a URL where protected resource metadata may be, with the
// resource it must name.
type prmCandidate struct{ url, resource, via string }

// prmCandidates lists the spec's order: the challenge's resource_metadata,
// then the well-known URI at the endpoint's path, then at the root.
func prmCandidates(server string, ch *oauthex.Challenge) []prmCandidate {
	var out []prmCandidate
	if ch != nil && ch.Params["resource_metadata"] != "" {
		out = append(out, prmCandidate{ch.Params["resource_metadata"], server, "the 401's WWW-Authenticate resource_metadata"})
	}
	u, err := url.Parse(server)
	if err != nil {
		return out
	}
	u.Fragment, u.RawFragment = "", ""
	origin := u.Scheme + "://" + u.Host
	if p := strings.Trim(u.Path, "/"); p != "" {
		out = append(out, prmCandidate{origin + "/.well-known/oauth-protected-resource/" + p, server, "the well-known URI at the endpoint's path"})
	}
	out = append(out, prmCandidate{origin + "/.well-known/oauth-protected-resource", origin, "the well-known URI at the root"})
	return out
}

// resourceURL is the MCP server URL the resource must match: the URL the
// exchange went to, without a fragment.
func resourceURL(ex *Exchange, fallback string) string {
	s := ex.URL
	if s == "" {
		s = fallback
	}
	if u, err := url.Parse(s); err == nil {
		u.Fragment, u.RawFragment = "", ""
		return u.String()
	}
	return s
}

// sameResource compares resource identifiers exactly, except for the case
// of the scheme and host (the spec: implementations SHOULD accept uppercase
// scheme and host components).
func sameResource(a, b string) bool {
	if a == b {
		return true
	}
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) &&
		ua.RawPath == ub.RawPath && ua.Path == ub.Path && ua.RawQuery == ub.RawQuery && ua.User.String() == ub.User.String()
}

// resourceMetadata finds and checks the protected resource metadata.
func (a *authState) resourceMetadata(ctx context.Context, mcp *Exchange, ch *oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, *AuthFailure) {
	server := resourceURL(mcp, a.c.opts.URL)
	var tried []string
	for _, cand := range prmCandidates(server, ch) {
		var prm oauthex.ProtectedResourceMetadata
		ex, found, problem := a.fetchDoc(ctx, AuthInfo{Step: StepResourceMetadata, Resource: cand.resource}, cand.url, &prm)
		if ex == nil {
			return nil, &AuthFailure{Step: StepResourceMetadata, Reason: problem, Rule: rulePRM}
		}
		a.c.emit(ex)
		if problem != "" {
			return nil, &AuthFailure{Step: StepResourceMetadata, Seq: ex.Seq, Reason: problem + " (" + cand.via + ")", Rule: rulePRM}
		}
		if !found {
			tried = append(tried, fmt.Sprintf("%s (%s): HTTP %d", cand.url, cand.via, ex.Status))
			continue
		}
		if !sameResource(prm.Resource, cand.resource) {
			r := fmt.Sprintf("the protected resource metadata at %s names resource %q, not %s, the resource it must describe", cand.url, prm.Resource, cand.resource)
			authVerdict(ex, classify.AuthFailed, r, r, rulePRMResource)
			return nil, &AuthFailure{Step: StepResourceMetadata, Seq: ex.Seq, Reason: r, Rule: rulePRMResource}
		}
		if len(prm.AuthorizationServers) == 0 {
			r := fmt.Sprintf("the protected resource metadata at %s lists no authorization_servers", cand.url)
			authVerdict(ex, classify.AuthFailed, r, r, rulePRMServers)
			return nil, &AuthFailure{Step: StepResourceMetadata, Seq: ex.Seq, Reason: r, Rule: rulePRMServers}
		}
		for _, as := range prm.AuthorizationServers {
			if why := unsafeURL(as); why != "" {
				r := fmt.Sprintf("authorization_servers lists %q: %s", as, why)
				authVerdict(ex, classify.AuthFailed, r, r, ruleEndpoints)
				return nil, &AuthFailure{Step: StepResourceMetadata, Seq: ex.Seq, Reason: r, Rule: ruleEndpoints}
			}
		}
		ex.Auth.Resource = prm.Resource
		ex.Auth.Note = fmt.Sprintf("resource %s, authorization server %s", prm.Resource, strings.Join(prm.AuthorizationServers, ", "))
		if len(prm.ScopesSupported) > 0 {
			ex.Auth.Note += ", scopes_supported " + quoteScope(strings.Join(prm.ScopesSupported, " "))
		}
		authVerdict(ex, classify.ResultSuccess, "found ("+cand.via+"): "+ex.Auth.Note, "", "")
		a.prmURL = cand.url
		return &prm, nil
	}
	r := "no protected resource metadata: " + strings.Join(tried, "; ")
	return nil, &AuthFailure{Step: StepResourceMetadata, Reason: r, Rule: rulePRM}
}

// unsafeURL says why an endpoint URL may not be used ("" when it may):
// it must parse, be https or loopback http, and have no dangerous scheme.
func unsafeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "not an absolute URL"
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return ""
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return ""
		}
		return "http is allowed for loopback addresses only; it must be https"
	}
	return "scheme " + u.Scheme + " is not https"
}

// sameOriginURL reports whether a and b parse and have one origin (scheme,
// host and port).
func sameOriginURL(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" && origin(ua) == origin(ub)
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// asmCandidates lists the spec's discovery order for an issuer.
func asmCandidates(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.Trim(u.Path, "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server/" + p,
		origin + "/.well-known/openid-configuration/" + p,
		origin + "/" + p + "/.well-known/openid-configuration",
	}
}

// authServer picks the authorization server (the one a registration or
// token is bound to when the metadata still lists it, else the first) and
// fetches and checks its metadata.
func (a *authState) authServer(ctx context.Context, prm *oauthex.ProtectedResourceMetadata) (string, *oauthex.AuthServerMeta, *AuthFailure) {
	issuer := prm.AuthorizationServers[0]
	_, _, held := a.token()
	for _, as := range prm.AuthorizationServers {
		if _, ok := a.regs[as]; ok || as == held {
			issuer = as
			break
		}
	}
	var tried []string
	for _, u := range asmCandidates(issuer) {
		var asm oauthex.AuthServerMeta
		ex, found, problem := a.fetchDoc(ctx, AuthInfo{Step: StepASMetadata, Issuer: issuer, Resource: prm.Resource}, u, &asm)
		if ex == nil {
			return "", nil, &AuthFailure{Step: StepASMetadata, Reason: problem, Rule: ruleASM}
		}
		a.c.emit(ex)
		if problem != "" {
			return "", nil, &AuthFailure{Step: StepASMetadata, Seq: ex.Seq, Reason: problem, Rule: ruleASM}
		}
		if !found {
			tried = append(tried, fmt.Sprintf("%s: HTTP %d", u, ex.Status))
			continue
		}
		fail := func(r, rule string) (string, *oauthex.AuthServerMeta, *AuthFailure) {
			authVerdict(ex, classify.AuthFailed, r, r, rule)
			return "", nil, &AuthFailure{Step: StepASMetadata, Seq: ex.Seq, Reason: r, Rule: rule}
		}
		if asm.Issuer != issuer {
			return fail(fmt.Sprintf("the metadata at %s says issuer %q, not %q, the issuer its URL was built from", u, asm.Issuer, issuer), ruleIssuer)
		}
		if asm.TokenEndpoint == "" {
			return fail("the metadata has no token_endpoint", ruleEndpoints)
		}
		code := a.grantFor(&asm) == GrantAuthorizationCode
		if code && asm.AuthorizationEndpoint == "" {
			return fail("the metadata has no authorization_endpoint", ruleEndpoints)
		}
		if code && !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
			what := "no code_challenge_methods_supported"
			if len(asm.CodeChallengeMethodsSupported) > 0 {
				what = "code_challenge_methods_supported " + strings.Join(asm.CodeChallengeMethodsSupported, " ") + " without S256"
			}
			return fail("the metadata has "+what+": PKCE S256 cannot be used", rulePKCE)
		}
		for _, e := range []struct{ name, v string }{{"authorization_endpoint", asm.AuthorizationEndpoint}, {"token_endpoint", asm.TokenEndpoint}, {"registration_endpoint", asm.RegistrationEndpoint}} {
			if e.v == "" {
				continue
			}
			if why := unsafeURL(e.v); why != "" {
				return fail(fmt.Sprintf("%s %q: %s", e.name, e.v, why), ruleEndpoints)
			}
		}
		ex.Auth.Note = describeASM(&asm)
		authVerdict(ex, classify.ResultSuccess, "issuer "+asm.Issuer+" checked: "+ex.Auth.Note, "", "")
		a.asm[issuer] = &asm
		return issuer, &asm, nil
	}
	r := fmt.Sprintf("no authorization server metadata for issuer %s: %s", issuer, strings.Join(tried, "; "))
	return "", nil, &AuthFailure{Step: StepASMetadata, Reason: r, Rule: ruleASM}
}

func describeASM(asm *oauthex.AuthServerMeta) string {
	var parts []string
	parts = append(parts, "issuer "+asm.Issuer)
	if len(asm.CodeChallengeMethodsSupported) > 0 {
		parts = append(parts, "PKCE "+strings.Join(asm.CodeChallengeMethodsSupported, " "))
	}
	var reg []string
	if asm.ClientIDMetadataDocumentSupported {
		reg = append(reg, "client ID metadata documents")
	}
	if asm.RegistrationEndpoint != "" {
		reg = append(reg, "dynamic registration")
	}
	if len(reg) > 0 {
		parts = append(parts, "registration by "+strings.Join(reg, " or "))
	}
	if asm.AuthorizationResponseIssParameterSupported {
		parts = append(parts, "iss in the authorization response")
	}
	if len(asm.ScopesSupported) > 0 {
		parts = append(parts, "scopes_supported "+quoteScope(strings.Join(asm.ScopesSupported, " ")))
	}
	return strings.Join(parts, ", ")
}

// authMethod picks the token endpoint authentication method a client with
// these credentials uses at this server.
func authMethod(asm *oauthex.AuthServerMeta, hasSecret, hasKey bool) string {
	supported := asm.TokenEndpointAuthMethodsSupported
	ok := func(m string) bool {
		return len(supported) == 0 && m == "client_secret_basic" || slices.Contains(supported, m)
	}
	switch {
	case hasKey:
		return "private_key_jwt"
	case hasSecret:
		for _, m := range []string{"client_secret_basic", "client_secret_post"} {
			if ok(m) {
				return m
			}
		}
		return "client_secret_basic"
	}
	return "none"
}

// register returns the client registration for issuer: the one already
// made, the pre-registered client, the Client ID Metadata Document URL, or
// a new dynamic registration, in the spec's order.
func (a *authState) register(ctx context.Context, asm *oauthex.AuthServerMeta, issuer, redirect string) (*registration, *AuthFailure) {
	if reg, ok := a.regs[issuer]; ok && (reg.RedirectURI == "" || reg.RedirectURI == redirect || reg.Method != "dynamic") {
		return reg, nil
	}
	o := a.opts
	if o.ClientID != "" {
		bound := o.ClientIssuer
		if bound == "" {
			for iss, r := range a.regs {
				if r.Method == "pre-registered" {
					bound = iss
				}
			}
		}
		if bound != "" && bound != issuer {
			return nil, &AuthFailure{Step: StepRegistration, Rule: ruleBinding,
				Reason: fmt.Sprintf("the pre-registered client %q belongs to %s, and the resource now names %s: it is not used with another authorization server", o.ClientID, bound, issuer)}
		}
		if bound == "" && o.ClientSecret != "" && !o.SecretToAnyIssuer && !sameOriginURL(issuer, a.c.opts.URL) {
			// The server (or metadata on another origin it points to)
			// chose this authorization server: a secret the caller holds
			// for another one would be handed to whoever runs it. A
			// private_key_jwt assertion names its audience and expires
			// (RFC 7523 §3), so a key is not held back.
			return nil, &AuthFailure{Step: StepRegistration, Rule: ruleBinding,
				Reason: fmt.Sprintf("the pre-registered client %q has a secret, and the authorization server the resource names, %s, is on another origin than the MCP server %s: the secret is sent only to the authorization server named with --client-issuer (AuthOptions.ClientIssuer), or to one on the MCP server's own origin", o.ClientID, issuer, a.c.opts.URL)}
		}
		reg := &registration{Method: "pre-registered", ClientID: o.ClientID, ClientSecret: o.ClientSecret, key: o.ClientKey, keyAlg: o.ClientKeyAlg}
		reg.AuthMethod = authMethod(asm, o.ClientSecret != "", o.ClientKey != nil)
		a.secret(o.ClientSecret)
		a.regs[issuer] = reg
		return reg, nil
	}
	if o.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported {
		reg := &registration{Method: "cimd", ClientID: o.ClientMetadataURL, key: o.ClientKey, keyAlg: o.ClientKeyAlg}
		reg.AuthMethod = authMethod(asm, false, o.ClientKey != nil)
		a.regs[issuer] = reg
		return reg, nil
	}
	if asm.RegistrationEndpoint == "" {
		var have []string
		if o.ClientMetadataURL != "" {
			have = append(have, "a client ID metadata document URL (the server does not support them)")
		}
		r := fmt.Sprintf("the authorization server %s has no registration_endpoint, and no pre-registered client was given (--client-id)", issuer)
		if len(have) > 0 {
			r += "; the client has " + strings.Join(have, ", ")
		}
		return nil, &AuthFailure{Step: StepRegistration, Reason: r, Rule: ruleRegistration}
	}
	meta := &oauthex.ClientRegistrationMetadata{
		ClientName:      a.c.opts.clientInfo().Name,
		ApplicationType: "native",
		GrantTypes:      []string{"authorization_code", "refresh_token"},
		ResponseTypes:   []string{"code"},
	}
	if redirect != "" {
		meta.RedirectURIs = []string{redirect}
	} else {
		meta.GrantTypes = []string{"client_credentials"}
		meta.ResponseTypes = nil
	}
	meta.TokenEndpointAuthMethod = "none"
	if s := asm.TokenEndpointAuthMethodsSupported; len(s) > 0 && !slices.Contains(s, "none") {
		meta.TokenEndpointAuthMethod = authMethod(asm, true, false)
	}
	hc, tr := a.c.authHTTPClient()
	resp, err := oauthex.RegisterClient(withStep(ctx, AuthInfo{Step: StepRegistration, Issuer: issuer, Registration: "dynamic"}), asm.RegistrationEndpoint, meta, hc)
	exs := tr.take()
	var ex *Exchange
	if len(exs) > 0 {
		ex = exs[0]
		defer a.c.emit(ex)
	}
	if err != nil {
		r := "the registration was refused: " + err.Error()
		var regErr *oauthex.ClientRegistrationError
		if ex != nil {
			switch {
			case ex.Result.Outcome == classify.NetworkError:
				r = "no answer from the registration endpoint: " + err.Error()
			case errors.As(err, &regErr):
				ex.Auth.Error, ex.Auth.ErrorDescription = regErr.ErrorCode, regErr.ErrorDescription
				r = fmt.Sprintf("the registration endpoint refused the client: HTTP %d %s", ex.Status, regErr.ErrorCode)
				if regErr.ErrorDescription != "" {
					r += " (" + regErr.ErrorDescription + ")"
				}
			case ex.Status >= 300:
				r = "the registration endpoint answered " + httpStatusReason(ex)
			default:
				r = "the registration answer is unusable: " + err.Error()
			}
			outcome := classify.HTTPError
			if ex.Status < 300 && ex.Result.Outcome != classify.NetworkError {
				outcome = classify.AuthFailed
			}
			authVerdict(ex, outcome, r, r, ruleRegistration)
			return nil, &AuthFailure{Step: StepRegistration, Seq: ex.Seq, Reason: r, Rule: ruleRegistration}
		}
		return nil, &AuthFailure{Step: StepRegistration, Reason: r, Rule: ruleRegistration}
	}
	a.secret(resp.ClientSecret)
	reg := &registration{Method: "dynamic", ClientID: resp.ClientID, ClientSecret: resp.ClientSecret, RedirectURI: redirect}
	reg.AuthMethod = resp.TokenEndpointAuthMethod
	if reg.AuthMethod == "" {
		// RFC 7591 §2: the default is client_secret_basic; a client
		// without a secret can only be a public one.
		reg.AuthMethod = "none"
		if resp.ClientSecret != "" {
			reg.AuthMethod = "client_secret_basic"
		}
	}
	if ex != nil {
		ex.Auth.ClientID, ex.Auth.ClientAuth = reg.ClientID, reg.AuthMethod
		ex.Auth.Note = fmt.Sprintf("client_id %s registered, token endpoint auth %s", reg.ClientID, reg.AuthMethod)
		authVerdict(ex, classify.ResultSuccess, ex.Auth.Note, "", "")
	}
	a.regs[issuer] = reg
	return reg, nil
}

// oauthConfig is the x/oauth2 configuration of a registration at a server.
func oauthConfig(asm *oauthex.AuthServerMeta, reg *registration, redirect string, scopes []string) *oauth2.Config {
	cfg := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint}}
	switch reg.AuthMethod {
	case "client_secret_basic":
		cfg.ClientSecret, cfg.Endpoint.AuthStyle = reg.ClientSecret, oauth2.AuthStyleInHeader
	case "client_secret_post":
		cfg.ClientSecret, cfg.Endpoint.AuthStyle = reg.ClientSecret, oauth2.AuthStyleInParams
	default: // none, private_key_jwt: client_id in the body, no secret
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	return cfg
}

// tokenRequest sends one token request (fn calls x/oauth2 with a context
// carrying the recording client) and checks the token.
func (a *authState) tokenRequest(ctx context.Context, info AuthInfo, fn func(ctx context.Context) (*oauth2.Token, error)) (*oauth2.Token, *Exchange, *AuthFailure) {
	hc, tr := a.c.authHTTPClient()
	tctx := context.WithValue(withStep(ctx, info), oauth2.HTTPClient, hc)
	tok, err := fn(tctx)
	exs := tr.take()
	var ex *Exchange
	if len(exs) > 0 {
		ex = exs[len(exs)-1]
		defer a.c.emit(ex)
	}
	rule := ruleToken
	if err != nil {
		r := "the token request failed: " + err.Error()
		var re *oauth2.RetrieveError
		if ex == nil {
			return nil, nil, &AuthFailure{Step: info.Step, Reason: r, Rule: rule}
		}
		switch {
		case ex.Result.Outcome == classify.NetworkError:
			r = "no answer from the token endpoint: " + ex.Result.Network().Error
		case errors.As(err, &re):
			ex.Auth.Error, ex.Auth.ErrorDescription = re.ErrorCode, re.ErrorDescription
			r = fmt.Sprintf("the token endpoint answered %d", ex.Status)
			if re.ErrorCode != "" {
				r += " " + re.ErrorCode
			}
			if re.ErrorDescription != "" {
				r += " (" + re.ErrorDescription + ")"
			}
		default:
			r = "the token endpoint's answer is unusable: " + err.Error()
		}
		outcome := classify.HTTPError
		if ex.Status >= 200 && ex.Status < 300 {
			outcome = classify.AuthFailed
		}
		authVerdict(ex, outcome, r, r, rule)
		return nil, ex, &AuthFailure{Step: info.Step, Seq: ex.Seq, Reason: r, Rule: rule}
	}
	a.secret(tok.AccessToken)
	a.secret(tok.RefreshToken)
	if ex == nil {
		return tok, nil, nil
	}
	if tok.AccessToken == "" {
		r := "the token endpoint's answer has no access_token"
		authVerdict(ex, classify.AuthFailed, r, r, rule)
		return nil, ex, &AuthFailure{Step: info.Step, Seq: ex.Seq, Reason: r, Rule: rule}
	}
	if tt := tok.Type(); !strings.EqualFold(tt, "bearer") {
		r := fmt.Sprintf("the token endpoint issued a %s token, not one of type Bearer", tt)
		authVerdict(ex, classify.AuthFailed, r, r, ruleBearer)
		return nil, ex, &AuthFailure{Step: info.Step, Seq: ex.Seq, Reason: r, Rule: ruleBearer}
	}
	return tok, ex, nil
}

// grantedScopes is the token response's scope, else what was asked for
// (RFC 6749 §5.1: scope may be omitted when identical to the request).
func grantedScopes(tok *oauth2.Token, requested []string) []string {
	if s, ok := tok.Extra("scope").(string); ok && strings.TrimSpace(s) != "" {
		return strings.Fields(s)
	}
	return slices.Clone(requested)
}

func tokenNote(tok *oauth2.Token, resource string, granted []string) string {
	n := "an access token (type Bearer) for " + resource
	if len(granted) > 0 {
		n += ", scope " + quoteScope(strings.Join(granted, " "))
	}
	if !tok.Expiry.IsZero() {
		if tok.ExpiresIn > 0 {
			n += fmt.Sprintf(", expires in %ds", tok.ExpiresIn)
		}
	}
	if tok.RefreshToken != "" {
		n += ", with a refresh token"
	}
	return n
}

// exchangeCode turns an authorization code into a token.
func (a *authState) exchangeCode(ctx context.Context, asm *oauthex.AuthServerMeta, issuer, resource string, reg *registration, scopes []string, stepUp int, redirect, code, verifier string) *AuthFailure {
	cfg := oauthConfig(asm, reg, redirect, scopes)
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource)}
	extra, f := a.assertion(asm, issuer, reg)
	if f != nil {
		return f
	}
	opts = append(opts, extra...)
	info := AuthInfo{Step: StepToken, StepUp: stepUp, Issuer: issuer, Resource: resource, Scope: strings.Join(scopes, " "), Grant: GrantAuthorizationCode,
		ClientAuth: reg.AuthMethod, Registration: reg.Method, ClientID: reg.ClientID, PKCE: "S256"}
	tok, ex, f := a.tokenRequest(ctx, info, func(ctx context.Context) (*oauth2.Token, error) { return cfg.Exchange(ctx, code, opts...) })
	if f != nil {
		return f
	}
	granted := grantedScopes(tok, scopes)
	if ex != nil {
		ex.Auth.Granted = strings.Join(granted, " ")
		ex.Auth.Note = tokenNote(tok, resource, granted)
		authVerdict(ex, classify.ResultSuccess, ex.Auth.Note, "", "")
	}
	a.requested = union(a.requested, scopes)
	a.setToken(tok, issuer, resource, granted)
	return nil
}

// refresh uses the refresh token (grant_type=refresh_token, with the
// resource: RFC 8707 §2.2).
func (a *authState) refresh(ctx context.Context, asm *oauthex.AuthServerMeta, issuer, resource string) *AuthFailure {
	reg := a.regs[issuer]
	a.tokMu.RLock()
	rt := a.tok.RefreshToken
	granted := slices.Clone(a.granted)
	a.tokMu.RUnlock()
	if reg == nil {
		return &AuthFailure{Step: StepRefresh, Reason: "no registration with " + issuer}
	}
	cfg := oauthConfig(asm, reg, "", nil)
	// x/oauth2's own refresh sends no resource; the code exchange with the
	// grant type replaced does (the empty code parameter it leaves counts
	// as absent: RFC 6749 §3.2).
	opts := []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("grant_type", "refresh_token"), oauth2.SetAuthURLParam("refresh_token", rt), oauth2.SetAuthURLParam("resource", resource)}
	extra, f := a.assertion(asm, issuer, reg)
	if f != nil {
		return f
	}
	opts = append(opts, extra...)
	info := AuthInfo{Step: StepRefresh, Issuer: issuer, Resource: resource, Grant: "refresh_token", ClientAuth: reg.AuthMethod, Registration: reg.Method, ClientID: reg.ClientID}
	tok, ex, f := a.tokenRequest(ctx, info, func(ctx context.Context) (*oauth2.Token, error) { return cfg.Exchange(ctx, "", opts...) })
	if f != nil {
		return f
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = rt // RFC 6749 §6: the old one stays valid when none is issued
	}
	g := grantedScopes(tok, granted)
	if ex != nil {
		ex.Auth.Granted = strings.Join(g, " ")
		ex.Auth.Note = "refreshed: " + tokenNote(tok, resource, g)
		authVerdict(ex, classify.ResultSuccess, ex.Auth.Note, "", "")
	}
	a.setToken(tok, issuer, resource, g)
	return nil
}

// clientCredentials gets a token with the client_credentials grant (the
// OAuth client credentials extension, SEP-1046): a client secret (basic or
// post) or a private_key_jwt assertion.
func (a *authState) clientCredentials(ctx context.Context, asm *oauthex.AuthServerMeta, issuer, resource string, reg *registration, scopes []string, stepUp int) *AuthFailure {
	if reg.ClientSecret == "" && reg.key == nil {
		return &AuthFailure{Step: StepToken, Reason: "the client_credentials grant needs a client secret (--client-secret) or a private key (--client-key)",
			Rule: "OAuth 2.1 §4.2, SEP-1046: client credentials authenticate the client"}
	}
	cfg := &clientcredentials.Config{ClientID: reg.ClientID, ClientSecret: reg.ClientSecret, TokenURL: asm.TokenEndpoint, Scopes: scopes,
		EndpointParams: url.Values{"resource": {resource}}}
	switch reg.AuthMethod {
	case "client_secret_post":
		cfg.AuthStyle = oauth2.AuthStyleInParams
	case "private_key_jwt":
		cfg.AuthStyle, cfg.ClientSecret = oauth2.AuthStyleInParams, ""
		assertion, err := clientAssertion(reg.key, reg.keyAlg, reg.ClientID, issuer)
		if err != nil {
			return &AuthFailure{Step: StepToken, Reason: "signing the client assertion: " + err.Error(), Rule: "RFC 7523 §3"}
		}
		a.secret(assertion)
		cfg.EndpointParams.Set("client_assertion_type", assertionType)
		cfg.EndpointParams.Set("client_assertion", assertion)
	default:
		cfg.AuthStyle = oauth2.AuthStyleInHeader
	}
	info := AuthInfo{Step: StepToken, StepUp: stepUp, Issuer: issuer, Resource: resource, Scope: strings.Join(scopes, " "), Grant: GrantClientCredentials,
		ClientAuth: reg.AuthMethod, Registration: reg.Method, ClientID: reg.ClientID}
	tok, ex, f := a.tokenRequest(ctx, info, cfg.Token)
	if f != nil {
		return f
	}
	granted := grantedScopes(tok, scopes)
	if ex != nil {
		ex.Auth.Granted = strings.Join(granted, " ")
		ex.Auth.Note = tokenNote(tok, resource, granted) + " (client credentials)"
		authVerdict(ex, classify.ResultSuccess, ex.Auth.Note, "", "")
	}
	a.requested = union(a.requested, scopes)
	a.setToken(tok, issuer, resource, granted)
	return nil
}

// assertion returns the private_key_jwt parameters of a token request.
func (a *authState) assertion(asm *oauthex.AuthServerMeta, issuer string, reg *registration) ([]oauth2.AuthCodeOption, *AuthFailure) {
	if reg.AuthMethod != "private_key_jwt" || reg.key == nil {
		return nil, nil
	}
	s, err := clientAssertion(reg.key, reg.keyAlg, reg.ClientID, issuer)
	if err != nil {
		return nil, &AuthFailure{Step: StepToken, Reason: "signing the client assertion: " + err.Error(), Rule: "RFC 7523 §3"}
	}
	a.secret(s)
	return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("client_assertion_type", assertionType), oauth2.SetAuthURLParam("client_assertion", s)}, nil
}
