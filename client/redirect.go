package client

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

// checkRedirect looks at an exchange whose response is a redirect (a 3xx
// with a Location). It returns the absolute URL to follow and true for a
// same-origin 307 or 308 when followed is false, and marks ex with the
// FollowRedirect decision. Any other redirect is refused: ex stays the
// HTTP_ERROR the classifier made of it, with a reason that names the
// Location (redacted) and says why it was not followed. Responses that are
// not redirects are left alone.
func (c *Client) checkRedirect(ex *Exchange, followed bool) (string, bool) {
	if ex.Status < 300 || ex.Status > 399 || ex.Result == nil || ex.Result.Outcome != classify.HTTPError {
		return "", false
	}
	loc := ex.ResponseHeader.Get("Location")
	if loc == "" {
		return "", false
	}
	what := fmt.Sprintf("HTTP %d %s to %s", ex.Status, http.StatusText(ex.Status), record.RedactURL(loc))
	next, why := redirectTarget(ex.URL, loc, ex.Status, followed)
	if why != "" {
		ex.Result.Reason = what + ": the redirect was refused: " + why
		return "", false
	}
	ex.Result.Reason = what + ": a same-origin redirect, followed once with the same request"
	ex.Decision = &retry.Decision{Action: FollowRedirect, Reason: "the same request is sent to " + record.RedactURL(next) + " (same origin; a 307 or 308 keeps the method and body)"}
	return next, true
}

// redirectTarget resolves a Location against the request URL and says why
// it may not be followed ("" when it may).
func redirectTarget(from, loc string, status int, followed bool) (string, string) {
	base, err := url.Parse(from)
	if err != nil {
		return "", "the request URL does not parse: " + err.Error()
	}
	to, err := base.Parse(loc)
	if err != nil {
		return "", "the Location is not a URL"
	}
	if o, p := origin(to), origin(base); o != p {
		return "", fmt.Sprintf("it leads to another origin (%s, not %s); mcpdiag never sends a request, its credentials or its body to another origin by following a redirect", o, p)
	}
	switch {
	case to.User != nil:
		return "", "the Location carries user credentials"
	case status != http.StatusTemporaryRedirect && status != http.StatusPermanentRedirect:
		return "", fmt.Sprintf("a %d may turn the POST into a GET; only a same-origin 307 or 308 is followed", status)
	case followed:
		return "", "a second redirect; a redirect is followed once per request"
	}
	return to.String(), ""
}

// origin is the scheme, host and port of u (RFC 6454), the default port
// spelled out.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}
