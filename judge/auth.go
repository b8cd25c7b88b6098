package judge

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpdiag/mcpdiag/record"
)

// The auth.* rules judge a client's OAuth authorization chain from the log
// lines of the endpoint's own authorization server (Trace.Auth: what
// mcpdiag serve's /oauth/N saw of each request, record.Auth) and from the
// MCP endpoint's answers (Trace.Exchanges). They run on matrix runs only:
// records carry the client's view of the chain, not the server's. The
// report order of their ids is in rules.go.
var authRules = []Rule{
	{
		ID:     "auth.no-token-elsewhere",
		Title:  "tokens are for the protected resource only: every authorization and token request names it as its resource, and no access token is sent to the authorization server",
		Cite:   `MCP 2026-07-28 Authorization › Resource Parameter Implementation: the resource parameter (RFC 8707) MUST be included in both authorization requests and token requests and MUST identify the MCP server; › Access Token Usage: the token goes in the Authorization header of requests to the MCP server; RFC 8707 §2 (the resource names the token's audience), RFC 9700 §2.3 (access tokens restricted to their audience)`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			for _, r := range t.Auth {
				if r.Auth.BearerSent || wantsResource(r.Auth) {
					return true, ""
				}
			}
			return false, noChain(t, "no authorization or token request")
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			n := 0
			for i, r := range t.Auth {
				a := r.Auth
				if a.BearerSent {
					bad = append(bad, fmt.Sprintf("%s carried, in its Authorization header, an access token issued for %s: a token is sent to the protected resource only", asLabel(i, r), a.TokenResource))
				}
				if !wantsResource(a) {
					continue
				}
				n++
				switch {
				case a.Resource == "":
					bad = append(bad, fmt.Sprintf("%s sent no resource parameter: the token's audience is left to the authorization server (want %s)", asLabel(i, r), a.TokenResource))
				case a.Resource != a.TokenResource:
					bad = append(bad, fmt.Sprintf("%s asked for resource %s, not the MCP server %s", asLabel(i, r), a.Resource, a.TokenResource))
				}
			}
			return verdict(bad, fmt.Sprintf("%d authorization and token request(s), each for resource %s; no access token sent to the authorization server (%d request(s))",
				n, resourceOf(t), len(t.Auth)))
		},
	},
	{
		ID:     "auth.pkce",
		Title:  "PKCE with S256 on every authorization request, and the code_verifier on every code exchange",
		Cite:   `MCP 2026-07-28 Authorization › Authorization Code Protection: clients MUST implement PKCE (OAuth 2.1 §7.5.2) and MUST use the S256 code challenge method when technically capable; RFC 7636 §4.2, §4.5`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			for _, r := range t.Auth {
				if r.Auth.Step == "authorize" || codeExchange(r.Auth) {
					return true, ""
				}
			}
			return false, noChain(t, "no authorization request and no code exchange")
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			auths, codes := 0, 0
			for i, r := range t.Auth {
				a := r.Auth
				switch {
				case a.Step == "authorize":
					auths++
					switch {
					case !a.CodeChallenge:
						bad = append(bad, fmt.Sprintf("%s carried no code_challenge", asLabel(i, r)))
					case a.PKCE != "S256":
						bad = append(bad, fmt.Sprintf("%s used code_challenge_method %s, not S256", asLabel(i, r), a.PKCE))
					}
				case codeExchange(a):
					codes++
					if a.PKCE != "S256" {
						bad = append(bad, fmt.Sprintf("%s exchanged a code without a code_verifier", asLabel(i, r)))
					}
				}
			}
			return verdict(bad, fmt.Sprintf("%d authorization request(s) with an S256 code_challenge, %d code exchange(s) with a code_verifier", auths, codes))
		},
	},
	{
		ID:     "auth.bounded-step-up",
		Title:  "step-up is bounded: a request refused 403 insufficient_scope is re-authorized and sent again at most the bound (default 2), so a scope loop stops",
		Cite:   `MCP 2026-07-28 Authorization › Step-Up Authorization Flow: clients SHOULD implement retry limits and track scope upgrade attempts, so that the same request and operation do not fail again and again; conformance auth/scope-retry-limit; docs/auth.md (--max-step-ups 2)`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			if len(stepUpRefusals(t)) > 0 {
				return true, ""
			}
			return false, noChain(t, "no request was refused 403 by an endpoint behind an authorization server")
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			most := 0
			var again []*Exchange // the requests sent again after a refusal (x's key: t.after)
			for _, x := range stepUpRefusals(t) {
				if y := t.after(x); y != nil {
					again = append(again, y)
				}
			}
			for _, ys := range groupByKey(again) {
				most = max(most, len(ys))
				if len(ys) > t.Limits.MaxStepUps {
					bad = append(bad, fmt.Sprintf("%s %s was sent again %d times after 403 insufficient_scope (POSTs %s); the bound is %d",
						ys[0].Method, ys[0].Tool, len(ys), posts(ys), t.Limits.MaxStepUps))
				}
			}
			first := stepUpRefusals(t)[0]
			var after []string
			for i, r := range t.Auth {
				if r.Auth.Step == "authorize" && !r.Time.Before(first.Start) {
					after = append(after, asLabel(i, r)+" scope "+quoteScope(r.Auth.Scope))
				}
			}
			if len(after) > t.Limits.MaxStepUps {
				bad = append(bad, fmt.Sprintf("%d authorization requests after the first 403 at %s (%s); the bound is %d",
					len(after), first.Label(), strings.Join(after, "; "), t.Limits.MaxStepUps))
			}
			return verdict(bad, fmt.Sprintf("at most %d step-up round(s) of one request, %d authorization request(s) after the first 403 (bound %d)",
				most, len(after), t.Limits.MaxStepUps))
		},
	},
	{
		ID:     "auth.no-token-in-url",
		Title:  "no refresh token (or any token, code_verifier, secret or assertion) in a URL: they travel in the body",
		Cite:   `MCP 2026-07-28 Authorization › Access Token Usage: access tokens MUST NOT be included in the URI query string; RFC 6749 §4.1.3, §6 (token request parameters in the form-encoded body), RFC 6750 §5.3 (no bearer tokens in page URLs), RFC 9700 §4.3 (credentials leak through Referer)`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			if len(t.Auth) > 0 {
				return true, ""
			}
			return false, noChain(t, "no request to the authorization server")
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			body := 0
			for i, r := range t.Auth {
				a := r.Auth
				if len(a.InURL) > 0 {
					bad = append(bad, fmt.Sprintf("%s carried %s in its URL", asLabel(i, r), strings.Join(a.InURL, ", ")))
				}
				if a.RefreshIn == "body" {
					body++
				}
			}
			return verdict(bad, fmt.Sprintf("%d request(s) to the authorization server, no credential in a URL (%d refresh token(s), in the body)", len(t.Auth), body))
		},
	},
}

// wantsResource reports a request that must name the resource (RFC 8707):
// an authorization request, a token request (code, client credentials)
// and a refresh.
func wantsResource(a *record.Auth) bool {
	return a.Step == "authorize" || a.Step == "token" || a.Step == "refresh"
}

// codeExchange reports a token request for an authorization code.
func codeExchange(a *record.Auth) bool {
	return a.Step == "token" && a.Grant == "authorization_code"
}

// stepUpRefusals returns the MCP requests answered 403 by an endpoint
// behind an authorization server (the only 403 those endpoints answer is
// insufficient_scope), in order.
func stepUpRefusals(t *Trace) []*Exchange {
	if len(t.Auth) == 0 {
		return nil
	}
	var out []*Exchange
	for _, x := range t.Exchanges {
		if x.IsRequest() && x.Status == http.StatusForbidden {
			out = append(out, x)
		}
	}
	return out
}

// reauthorized reports a repeat after 401 or 403 that carries a token
// the endpoint's authorization server issued after the refusal (a token or
// refresh answered 200 between the two requests).
func reauthorized(t *Trace, r Repeat) bool {
	if r.Prev.Status != http.StatusUnauthorized && r.Prev.Status != http.StatusForbidden {
		return false
	}
	for _, a := range t.Auth {
		if (a.Auth.Step == "token" || a.Auth.Step == "refresh") && a.Status == http.StatusOK &&
			!a.Time.Before(r.Prev.Start) && a.Time.Before(r.Next.Start) {
			return true
		}
	}
	return false
}

// asLabel names the ith authorization server line of a trace.
func asLabel(i int, r *record.Record) string {
	step := r.Auth.Step
	if step == "" {
		step = "request"
	}
	return fmt.Sprintf("AS #%d %s (%s %s → %d)", i+1, step, r.HTTPMethod, r.URL, r.Status)
}

// resourceOf names the protected resource of a trace's authorization
// server.
func resourceOf(t *Trace) string {
	for _, r := range t.Auth {
		if r.Auth.TokenResource != "" {
			return r.Auth.TokenResource
		}
	}
	return "(unknown)"
}

// noChain is the n/a evidence of an auth rule: why, or that the endpoint
// has no authorization server at all.
func noChain(t *Trace, why string) string {
	if len(t.Auth) == 0 {
		return "the endpoint has no authorization server (or the client never reached it)"
	}
	return why
}

func quoteScope(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}
