package client

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpdiag/mcpdiag/retry"
)

// validate reports the first bad option.
func (o *AuthOptions) validate() error {
	if o.ClientSecret != "" && o.ClientID == "" {
		return errors.New("--client-secret needs --client-id")
	}
	if o.ClientKey != nil && o.ClientID == "" && o.ClientMetadataURL == "" {
		return errors.New("--client-key needs --client-id (or a client metadata document URL)")
	}
	if o.ClientIssuer != "" && o.ClientID == "" {
		return errors.New("--client-issuer needs --client-id")
	}
	if o.ClientSecret != "" && o.ClientKey != nil {
		return errors.New("a client authenticates with a secret or a private key, not both")
	}
	switch o.ClientKeyAlg {
	case "", "ES256", "RS256":
	default:
		return fmt.Errorf("client key algorithm %q: ES256 or RS256", o.ClientKeyAlg)
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return fmt.Errorf("client metadata document URL %q: must be an https URL with a path (MCP client registration: Client ID Metadata Documents)", o.ClientMetadataURL)
		}
	}
	switch o.Grant {
	case "", GrantAuthorizationCode, GrantClientCredentials:
	default:
		return fmt.Errorf("grant %q: authorization_code or client_credentials", o.Grant)
	}
	if o.Grant == GrantClientCredentials && (o.ClientID == "" || o.ClientSecret == "" && o.ClientKey == nil) {
		return errors.New("the client_credentials grant needs --client-id and --client-secret (or --client-key)")
	}
	switch o.Authorize {
	case AuthorizeAuto, AuthorizeFetch, AuthorizeBrowser, AuthorizePaste:
	default:
		return fmt.Errorf("authorize mode %q: fetch, browser or paste", o.Authorize)
	}
	if o.Authorize == AuthorizePaste && o.Paste == nil {
		return errors.New("the paste mode needs an input to read the redirected address from")
	}
	if o.RedirectURI != "" {
		u, err := url.Parse(o.RedirectURI)
		if err != nil || u.Scheme != "http" || !isLoopbackHost(u.Hostname()) || u.Port() == "" {
			return fmt.Errorf("redirect URI %q: must be http://127.0.0.1:PORT/PATH (a loopback address with a port)", o.RedirectURI)
		}
	}
	return nil
}

// startAuth resets the per-call state of the flow: the policy's count of
// re-authorizations, the step-up counts and the last failure.
func (c *Client) startAuth() {
	if c.auth == nil {
		return
	}
	c.authFacts = retry.Facts{Safety: retry.ReadOnly, Rand: c.opts.Rand}
	c.auth.run.Lock()
	clear(c.auth.stepUps)
	c.auth.run.Unlock()
	c.auth.takeFailure()
}

// authStopped turns the policy's verdict on an MCP exchange whose
// authorization chain failed into a Fail that names the step: nothing more
// is sent for it.
func authStopped(ex *Exchange) (retry.Decision, bool) {
	if ex.authFail == nil {
		return retry.Decision{}, false
	}
	f := ex.authFail
	return retry.Decision{Action: retry.Fail, Reason: fmt.Sprintf("HTTP %d, and the authorization chain failed at step %s: %s", ex.Status, f.Step, f.Reason)}, true
}

// finishAuth makes a call that ended on an exchange whose authorization
// chain failed an AUTH_FAILED call, with the failure.
func (c *Client) finishAuth(call *Call) {
	if c.auth == nil || call.Final == nil {
		return
	}
	for i := len(call.Exchanges) - 1; i >= 0; i-- {
		ex := call.Exchanges[i]
		if ex.Result != call.Final {
			continue
		}
		if ex.authFail != nil {
			call.Outcome, call.Auth = AuthFailed, ex.authFail
			if d, ok := authStopped(ex); ok {
				call.Decision = d
			}
		}
		return
	}
}

// refreshIfExpired refreshes a token past its expiry before a request uses
// it, when the authorization server is known and a refresh token is held.
// A refused refresh forgets the refresh token: the server's 401 then leads
// to a new authorization.
func (a *authState) refreshIfExpired(ctx context.Context) {
	a.tokMu.RLock()
	t, iss, res := a.tok, a.tokIssuer, a.tokResource
	a.tokMu.RUnlock()
	if t == nil || !expiresSoon(t) || t.RefreshToken == "" {
		return
	}
	a.run.Lock()
	defer a.run.Unlock()
	a.tokMu.RLock()
	same := a.tok == t
	a.tokMu.RUnlock()
	asm := a.asm[iss]
	if !same || asm == nil {
		return
	}
	if f := a.refresh(ctx, asm, iss, res); f != nil {
		a.tokMu.Lock()
		if a.tok == t {
			cp := *t
			cp.RefreshToken = ""
			a.tok = &cp
		}
		a.tokMu.Unlock()
	}
}
