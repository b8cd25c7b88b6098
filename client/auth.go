package client

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// AuthFailed is the call-level outcome when the authorization chain could
// not get a token the server accepts: Call.Auth names the step that failed
// and the rule it broke. It is a transport-layer outcome (MCP authorization
// sits at the transport level), exit code 4.
const AuthFailed = classify.AuthFailed

// The steps of the authorization chain, as records and reports name them.
const (
	// StepChallenge marks an MCP exchange answered 401 or 403 with a
	// Bearer challenge: where the chain starts (or steps up).
	StepChallenge = "challenge"
	// StepRequest marks an MCP exchange that carried the chain's access
	// token.
	StepRequest = "request"
	// StepResourceMetadata fetches RFC 9728 protected resource metadata.
	StepResourceMetadata = "resource-metadata"
	// StepASMetadata fetches RFC 8414 / OpenID Connect discovery metadata.
	StepASMetadata = "as-metadata"
	// StepRegistration registers the client (RFC 7591), or uses a
	// pre-registered client or a Client ID Metadata Document URL.
	StepRegistration = "registration"
	// StepAuthorize gets an authorization code (PKCE S256, RFC 8707
	// resource, RFC 9207 iss check).
	StepAuthorize = "authorize"
	// StepToken exchanges the code (or client credentials) for a token.
	StepToken = "token"
	// StepRefresh uses a refresh token.
	StepRefresh = "refresh"
	// StepStepUp is the decision to ask for more scope after a 403
	// insufficient_scope; its authorize and token exchanges carry StepUp.
	StepStepUp = "step-up"
)

// Grants the chain can use.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// AuthorizeMode says how the authorization code reaches the client.
type AuthorizeMode string

// The modes. AuthorizeAuto fetches the authorization URL itself when the
// authorization endpoint is on a loopback address (a local test server such
// as `mcpdiag serve --auth`, which approves at once), and otherwise asks a
// person: through Paste when it is set, else through the browser (Prompt,
// OpenBrowser) and the loopback redirect listener.
const (
	AuthorizeAuto    AuthorizeMode = ""
	AuthorizeFetch   AuthorizeMode = "fetch"
	AuthorizeBrowser AuthorizeMode = "browser"
	AuthorizePaste   AuthorizeMode = "paste"
)

// DefaultMaxStepUps bounds step-up authorizations per operation (method and
// tool): MCP authorization says to retry "no more than a few times".
const DefaultMaxStepUps = 2

// AuthOptions turn on the OAuth 2.1 flow of the MCP authorization spec
// (2026-07-28): on a 401 (or a 403 insufficient_scope) the client discovers
// the authorization server, registers, gets a token and re-sends the
// request. The zero value uses Dynamic Client Registration and fetches the
// authorization URL itself when it is on loopback.
type AuthOptions struct {
	// ClientID and ClientSecret are a pre-registered client (used first,
	// as the spec's registration priority says). ClientIssuer, when set, is
	// the authorization server they belong to: another one is an error.
	// Without it a ClientSecret is sent only to an authorization server on
	// the MCP server's own origin (the first one used binds it): one on
	// another origin is refused, since the server chose it, unless
	// SecretToAnyIssuer.
	ClientID, ClientSecret, ClientIssuer string
	// SecretToAnyIssuer lets a ClientSecret without ClientIssuer go to the
	// authorization server the MCP server names on another origin (the
	// first one used still binds it): for a caller that knows the server
	// and its authorization server are one party, as the conformance
	// suite's scenarios are. mcpdiag call has no flag for it.
	SecretToAnyIssuer bool
	// ClientKey signs a private_key_jwt client assertion (RFC 7523) instead
	// of a client secret; ClientKeyAlg is ES256 (the default for an EC
	// key) or RS256.
	ClientKey    crypto.Signer
	ClientKeyAlg string
	// ClientMetadataURL is a Client ID Metadata Document URL (https, with a
	// path), used as client_id when the authorization server supports it.
	ClientMetadataURL string
	// Grant is GrantAuthorizationCode, GrantClientCredentials, or "" for
	// the authorization code grant unless the authorization server lists
	// only client_credentials and client credentials are given.
	Grant string
	// RedirectURI is the loopback redirect URI (http://127.0.0.1:PORT/PATH);
	// a free port and /callback when empty.
	RedirectURI string
	// Authorize says how the code arrives (AuthorizeAuto by default).
	Authorize AuthorizeMode
	// Prompt receives the authorization URL and instructions for a person.
	Prompt io.Writer
	// Paste is read for the redirected address in AuthorizePaste.
	Paste io.Reader
	// OpenBrowser, when set, opens the authorization URL in a browser.
	OpenBrowser func(url string) error
	// MaxStepUps bounds step-ups per operation (DefaultMaxStepUps when 0).
	MaxStepUps int
	// Store, when set, keeps registrations and tokens between runs.
	Store TokenStore
	// OnSecret is called with every secret the chain handles (tokens,
	// codes, verifiers, client secrets, assertions) so that the caller's
	// redactor masks it wherever it might appear.
	OnSecret func(string)
}

func (o *AuthOptions) maxStepUps() int {
	if o.MaxStepUps > 0 {
		return o.MaxStepUps
	}
	return DefaultMaxStepUps
}

// AuthInfo is what an exchange did in the authorization chain. Nothing in
// it is a secret: no token, code, verifier, client secret or assertion.
type AuthInfo struct {
	// Step is one of the Step constants.
	Step string
	// StepUp is the step-up round of an authorize or token exchange (0 for
	// the first authorization).
	StepUp int
	// Issuer and Resource are the authorization server and the protected
	// resource the step is about.
	Issuer, Resource string
	// Scope is the scope requested, Granted the scope the token has.
	Scope, Granted string
	// Grant, ClientAuth and Registration describe a token request: the
	// grant type, the token endpoint authentication method, and how the
	// client was registered (pre-registered, cimd, dynamic).
	Grant, ClientAuth, Registration string
	// ClientID is the client_id used (client ids are not secrets).
	ClientID string
	// PKCE is "S256" on an authorize exchange that sent a code_challenge
	// and on a token exchange that sent the code_verifier.
	PKCE string
	// Via is how the code arrived on an authorize exchange: fetch, browser
	// or paste.
	Via string
	// Error and ErrorDescription are the OAuth error the peer sent.
	Error, ErrorDescription string
	// Note says what the step learned, in a few words.
	Note string
	// Failure is the rule the answer broke ("" when the step did its part),
	// and Rule the spec text it cites.
	Failure, Rule string
	// TokenResource and TokenIssuer are, on an MCP exchange that carried
	// the chain's access token, the resource and issuer it was issued for.
	TokenResource, TokenIssuer string
}

// AuthFailure says where the authorization chain stopped.
type AuthFailure struct {
	Step   string
	Reason string
	Rule   string
	// Seq is the exchange that showed it (0 when no exchange did, as for a
	// step-up loop or a missing way to register).
	Seq int
}

func (f *AuthFailure) Error() string { return f.Step + ": " + f.Reason }

// registration is a client registered with one authorization server.
type registration struct {
	Method       string `json:"method"` // pre-registered, cimd, dynamic
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// AuthMethod is the token endpoint authentication method.
	AuthMethod  string `json:"authMethod"`
	RedirectURI string `json:"redirectUri,omitempty"`
	key         crypto.Signer
	keyAlg      string
}

// authState is the client's authorization: registrations per issuer, the
// token in use, and the bounds. run serializes chain runs; tokMu guards
// the token, which every request reads.
type authState struct {
	c    *Client
	opts AuthOptions

	run sync.Mutex

	tokMu       sync.RWMutex
	tok         *oauth2.Token
	tokIssuer   string
	tokResource string
	granted     []string // the scopes of the token (granted, else requested)

	requested []string
	regs      map[string]*registration // by issuer
	asm       map[string]*oauthex.AuthServerMeta
	prmURL    string
	stepUps   map[string]int
	attempts  int // authorization requests made (all rounds)

	failMu  sync.Mutex
	failure *AuthFailure

	// storeErr is the last error of opts.Store; loaded reports a token
	// read from it; lastRefresh that the last recovery was a refresh.
	storeErr    error
	loaded      bool
	lastRefresh bool
}

func newAuthState(c *Client, o AuthOptions) *authState {
	return &authState{c: c, opts: o, regs: map[string]*registration{}, asm: map[string]*oauthex.AuthServerMeta{}, stepUps: map[string]int{}}
}

func (a *authState) secret(s string) {
	if s != "" && a.opts.OnSecret != nil {
		a.opts.OnSecret(s)
	}
}

// token returns the access token to send, and what it was issued for.
func (a *authState) token() (tok, resource, issuer string) {
	a.tokMu.RLock()
	defer a.tokMu.RUnlock()
	if a.tok == nil {
		return "", "", ""
	}
	return a.tok.AccessToken, a.tokResource, a.tokIssuer
}

func (a *authState) setToken(t *oauth2.Token, issuer, resource string, granted []string) {
	a.secret(t.AccessToken)
	a.secret(t.RefreshToken)
	a.tokMu.Lock()
	a.tok, a.tokIssuer, a.tokResource, a.granted = t, issuer, resource, granted
	a.tokMu.Unlock()
	a.save(issuer, resource)
}

func (a *authState) dropToken() {
	a.tokMu.Lock()
	a.tok, a.tokIssuer, a.tokResource, a.granted = nil, "", "", nil
	a.tokMu.Unlock()
}

func (a *authState) setFailure(f *AuthFailure) {
	a.failMu.Lock()
	a.failure = f
	a.failMu.Unlock()
}

// takeFailure returns the last chain failure and forgets it.
func (a *authState) takeFailure() *AuthFailure {
	a.failMu.Lock()
	defer a.failMu.Unlock()
	f := a.failure
	a.failure = nil
	return f
}

// authorization is the Authorization header value for an MCP request: the
// caller's --bearer, or the chain's token.
func (c *Client) authorization() (value, resource, issuer string) {
	if c.opts.Bearer != "" {
		return "Bearer " + c.opts.Bearer, "", ""
	}
	if c.auth == nil {
		return "", "", ""
	}
	tok, res, iss := c.auth.token()
	if tok == "" {
		return "", "", ""
	}
	return "Bearer " + tok, res, iss
}

// bearerChallenge returns the Bearer challenge of a response's
// WWW-Authenticate headers (every challenge of every header line is read,
// as RFC 9110 §11.6.1 allows several), or nil.
func bearerChallenge(h http.Header) *oauthex.Challenge {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		// A malformed header still may carry a usable first challenge:
		// fall back to the classifier's reading of the first one.
		for _, v := range h.Values("WWW-Authenticate") {
			w := classify.ParseWWWAuthenticate(v)
			if strings.EqualFold(w.Scheme, "bearer") {
				p := map[string]string{}
				if w.ResourceMetadata != "" {
					p["resource_metadata"] = w.ResourceMetadata
				}
				if w.Scope != "" {
					p["scope"] = w.Scope
				}
				if w.Error != "" {
					p["error"] = w.Error
				}
				return &oauthex.Challenge{Scheme: "bearer", Params: p}
			}
		}
		return nil
	}
	for i := range cs {
		if cs[i].Scheme == "bearer" {
			if cs[i].Params == nil {
				cs[i].Params = map[string]string{}
			}
			return &cs[i]
		}
	}
	return nil
}

// wantsAuth reports whether an MCP exchange's answer is one the chain
// handles: a 401, or a 403 whose Bearer challenge says insufficient_scope.
func wantsAuth(ex *Exchange) bool {
	switch ex.Status {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		ch := bearerChallenge(ex.ResponseHeader)
		return ch != nil && strings.EqualFold(ch.Params["error"], "insufficient_scope")
	}
	return false
}

// markChallenge notes on an MCP exchange what its challenge asked for.
func markChallenge(ex *Exchange) {
	info := AuthInfo{Step: StepChallenge}
	if ex.Auth != nil {
		info.TokenResource, info.TokenIssuer = ex.Auth.TokenResource, ex.Auth.TokenIssuer
	}
	if ch := bearerChallenge(ex.ResponseHeader); ch != nil {
		info.Scope, info.Error, info.ErrorDescription = ch.Params["scope"], ch.Params["error"], ch.Params["error_description"]
		var parts []string
		if rm := ch.Params["resource_metadata"]; rm != "" {
			parts = append(parts, "resource_metadata "+rm)
		}
		if s := ch.Params["scope"]; s != "" {
			parts = append(parts, "scope "+quoteScope(s))
		}
		if e := ch.Params["error"]; e != "" {
			parts = append(parts, "error "+e)
		}
		if len(parts) == 0 {
			// Not "Bearer challenge": the redactor masks the word
			// after a scheme name as a credential.
			parts = append(parts, "a challenge of the scheme Bearer, with no parameters")
		}
		info.Note = strings.Join(parts, ", ")
	} else {
		info.Note = "WWW-Authenticate has no challenge of the scheme Bearer: the well-known metadata URLs are tried"
	}
	ex.Auth = &info
}

// authorize runs the chain for an MCP exchange answered 401 or 403
// insufficient_scope, try counting the answers of this one request so far.
// It reports whether the request may be re-sent with a new token; when not,
// the failure is kept for the call (Call.Auth).
func (a *authState) authorize(ctx context.Context, ex *Exchange, op string, try int) bool {
	a.run.Lock()
	defer a.run.Unlock()
	var f *AuthFailure
	if ex.Status == http.StatusForbidden {
		f = a.stepUp(ctx, ex, op)
	} else {
		f = a.unauthorized(ctx, ex, try)
	}
	if f != nil {
		a.setFailure(f)
		return false
	}
	return true
}

// unauthorized handles a 401: discovery (again, so that a changed
// authorization server is seen), then a refresh when the same server issued
// the token in hand, else a new authorization.
func (a *authState) unauthorized(ctx context.Context, ex *Exchange, try int) *AuthFailure {
	ch := bearerChallenge(ex.ResponseHeader)
	held, heldRes, heldIss := a.token()
	if held != "" && try > 1 && !a.lastRefresh {
		return &AuthFailure{Step: StepToken, Seq: ex.Seq,
			Reason: fmt.Sprintf("the server answered 401 again to the access token %s had just issued for %s: it does not accept tokens from its own authorization server", heldIss, heldRes),
			Rule:   "MCP authorization §Token Handling: MCP servers MUST only accept tokens issued for them; a token issued for this resource by the server's authorization server should be accepted"}
	}
	prm, f := a.resourceMetadata(ctx, ex, ch)
	if f != nil {
		return f
	}
	issuer, asm, f := a.authServer(ctx, prm)
	if f != nil {
		return f
	}
	if held != "" {
		if heldIss != issuer {
			// SEP-2352: a new authorization server means a new
			// registration; nothing of the old one is reused.
			a.dropToken()
			a.requested = nil
		} else if try <= 1 && a.refreshable() {
			if f := a.refresh(ctx, asm, issuer, prm.Resource); f == nil {
				a.lastRefresh = true
				return nil
			}
			// A refused refresh falls through to a new authorization.
		}
	}
	a.lastRefresh = false
	scopes := a.selectScopes(ch, prm, asm)
	return a.obtain(ctx, asm, issuer, prm.Resource, scopes, 0)
}

// stepUp handles a 403 insufficient_scope: the union of the scopes held and
// the challenged ones, at most MaxStepUps times per operation, and never
// for a scope the current token already has (that is a loop).
func (a *authState) stepUp(ctx context.Context, ex *Exchange, op string) *AuthFailure {
	ch := bearerChallenge(ex.ResponseHeader)
	challenged := strings.Fields(ch.Params["scope"])
	const rule = "MCP authorization §Step-Up Authorization Flow: retry with the new authorization no more than a few times and treat repeated failure as permanent; track scope upgrade attempts"
	if len(challenged) == 0 {
		return &AuthFailure{Step: StepStepUp, Seq: ex.Seq, Rule: "RFC 6750 §3.1, MCP authorization §Runtime Insufficient Scope Errors: the scope parameter names the scopes the operation needs",
			Reason: "the server answered 403 insufficient_scope without a scope parameter: there is no scope to ask for"}
	}
	if f := a.scopeLoop(ex); f != nil {
		return f
	}
	a.tokMu.RLock()
	granted := slices.Clone(a.granted)
	a.tokMu.RUnlock()
	if n := a.stepUps[op]; n >= a.opts.maxStepUps() {
		return &AuthFailure{Step: StepStepUp, Seq: ex.Seq, Rule: rule,
			Reason: fmt.Sprintf("%s still answered 403 insufficient_scope (scope %s) after %d step-up(s): the bound (%d per operation) is reached", op, quoteScope(strings.Join(challenged, " ")), n, a.opts.maxStepUps())}
	}
	a.stepUps[op]++
	prm, f := a.resourceMetadata(ctx, ex, ch)
	if f != nil {
		return f
	}
	issuer, asm, f := a.authServer(ctx, prm)
	if f != nil {
		return f
	}
	scopes := union(union(a.requested, granted), challenged)
	return a.obtain(ctx, asm, issuer, prm.Resource, scopes, a.stepUps[op])
}

// scopeLoop returns the failure of a 403 insufficient_scope that asks for
// scopes the token in hand already has (a loop), or nil.
func (a *authState) scopeLoop(ex *Exchange) *AuthFailure {
	if ex.Status != http.StatusForbidden {
		return nil
	}
	ch := bearerChallenge(ex.ResponseHeader)
	if ch == nil || !strings.EqualFold(ch.Params["error"], "insufficient_scope") {
		return nil
	}
	challenged := strings.Fields(ch.Params["scope"])
	a.tokMu.RLock()
	granted := slices.Clone(a.granted)
	held := a.tok != nil
	a.tokMu.RUnlock()
	if !held || len(challenged) == 0 || !subset(challenged, granted) {
		return nil
	}
	return &AuthFailure{Step: StepStepUp, Seq: ex.Seq, Rule: "MCP authorization §Step-Up Authorization Flow: retry with the new authorization no more than a few times and treat repeated failure as permanent; track scope upgrade attempts",
		Reason: fmt.Sprintf("the server asked for scope %s after a token for %s was issued (a loop; stopped after %d authorization(s))",
			quoteScope(strings.Join(challenged, " ")), quoteScope(strings.Join(granted, " ")), a.attempts)}
}

func (a *authState) refreshable() bool {
	a.tokMu.RLock()
	defer a.tokMu.RUnlock()
	return a.tok != nil && a.tok.RefreshToken != ""
}

// selectScopes applies the spec's scope selection: the challenge's scope,
// else the resource metadata's scopes_supported, else none; plus
// offline_access when the authorization server lists it (SEP-2207: the
// client wants a refresh token).
func (a *authState) selectScopes(ch *oauthex.Challenge, prm *oauthex.ProtectedResourceMetadata, asm *oauthex.AuthServerMeta) []string {
	var scopes []string
	switch {
	case ch != nil && strings.TrimSpace(ch.Params["scope"]) != "":
		scopes = strings.Fields(ch.Params["scope"])
	case len(prm.ScopesSupported) > 0:
		scopes = slices.Clone(prm.ScopesSupported)
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") && a.grantFor(asm) == GrantAuthorizationCode {
		scopes = append(scopes, "offline_access")
	}
	return scopes
}

// grantFor picks the grant: the caller's, else the authorization code
// unless the server lists only client_credentials and there are client
// credentials to use.
func (a *authState) grantFor(asm *oauthex.AuthServerMeta) string {
	if a.opts.Grant != "" {
		return a.opts.Grant
	}
	g := asm.GrantTypesSupported
	if len(g) > 0 && !slices.Contains(g, GrantAuthorizationCode) && slices.Contains(g, GrantClientCredentials) &&
		a.opts.ClientID != "" && (a.opts.ClientSecret != "" || a.opts.ClientKey != nil) {
		return GrantClientCredentials
	}
	return GrantAuthorizationCode
}

// obtain registers (or reuses the registration with issuer) and gets a new
// token for resource with scopes.
func (a *authState) obtain(ctx context.Context, asm *oauthex.AuthServerMeta, issuer, resource string, scopes []string, stepUp int) *AuthFailure {
	grant := a.grantFor(asm)
	if grant == GrantClientCredentials {
		reg, f := a.register(ctx, asm, issuer, "")
		if f != nil {
			return f
		}
		return a.clientCredentials(ctx, asm, issuer, resource, reg, scopes, stepUp)
	}
	cb, err := a.callbackFor(issuer)
	if err != nil {
		return &AuthFailure{Step: StepAuthorize, Reason: "the loopback redirect listener: " + err.Error(),
			Rule: "RFC 8252 §7.3: a native client receives the code on a loopback redirect URI"}
	}
	defer cb.close()
	reg, f := a.register(ctx, asm, issuer, cb.uri)
	if f != nil {
		return f
	}
	return a.authorizationCode(ctx, asm, issuer, resource, reg, scopes, stepUp, cb)
}

// callbackFor opens the loopback redirect listener for an authorization
// with issuer: the caller's --redirect-uri; else the redirect URI of the
// client already registered dynamically with issuer (a step-up, a new
// authorization after a refused refresh, a registration kept in the token
// store), so that its registration is used again rather than a new one made
// for a new port; else, or when that port is taken now, a new port (and
// then a new registration).
func (a *authState) callbackFor(issuer string) (*callback, error) {
	if a.opts.RedirectURI != "" {
		return newCallback(a.opts.RedirectURI)
	}
	if reg, ok := a.regs[issuer]; ok && reg.Method == "dynamic" && reg.RedirectURI != "" {
		if cb, err := newCallback(reg.RedirectURI); err == nil {
			return cb, nil
		}
	}
	return newCallback("")
}

// union returns a ∪ b, a's order first.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

func quoteScope(s string) string {
	if s == "" {
		return `""`
	}
	return `"` + s + `"`
}

// authExchange runs the chain for one MCP exchange and, when it got a
// token, marks the exchange with the policy's reauthorize decision. It
// reports whether the request is to be re-sent.
func (c *Client) authExchange(ctx context.Context, ex *Exchange, op string, try int) bool {
	markChallenge(ex)
	f := c.authFacts
	if dl, ok := ctx.Deadline(); ok {
		f.Remaining = max(0, timeUntil(dl))
	}
	d := c.pol.Decide(ex.Result, f)
	if d.Action != retry.Reauthorize {
		// A step-up loop is the sharper diagnosis of the two.
		c.auth.run.Lock()
		loop := c.auth.scopeLoop(ex)
		c.auth.run.Unlock()
		if loop != nil {
			c.auth.setFailure(loop)
			return false
		}
		c.auth.setFailure(&AuthFailure{Step: stepOf(ex), Seq: ex.Seq, Reason: "the retry policy refused a new authorization (" + d.Reason + ")",
			Rule: "MCP authorization §Step-Up Authorization Flow: retry limits"})
		return false
	}
	c.authFacts.Count(d)
	if !c.auth.authorize(ctx, ex, op, try) {
		return false
	}
	_, res, iss := c.auth.token()
	d.Reason += fmt.Sprintf(" — the authorization chain got a token for %s from %s: the request is sent again with it", res, iss)
	ex.Decision = &d
	return true
}

// stepOf names the step a refused MCP request stops at: a 403 is a
// step-up that did not happen, a 401 a token that was not accepted.
func stepOf(ex *Exchange) string {
	if ex.Status == http.StatusForbidden {
		return StepStepUp
	}
	return StepToken
}

// jsonUnmarshal is encoding/json's, named so the auth files read alike.
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// expiresSoon reports whether a token is past (or within a few seconds of)
// its expiry.
func expiresSoon(t *oauth2.Token) bool {
	return !t.Expiry.IsZero() && time.Until(t.Expiry) < 10*time.Second
}
