package main

import (
	"io"
	"os"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/spf13/pflag"
)

// authFlags are the OAuth flags of call and auth (docs/auth.md).
type authFlags struct {
	noAuth            bool
	clientID          string
	clientSecret      string
	clientIssuer      string
	clientKey         string
	clientKeyAlg      string
	clientMetadataURL string
	grant             string
	redirectURI       string
	open              bool
	authCode          bool
	tokenCache        string
	maxStepUps        int
}

func (a *authFlags) add(f *pflag.FlagSet, withNoAuth bool) {
	if withNoAuth {
		f.BoolVar(&a.noAuth, "no-auth", false, "do not run the OAuth chain on a 401 (the 401 is the outcome)")
	}
	f.StringVar(&a.clientID, "client-id", "", "a pre-registered OAuth client id (used before dynamic registration)")
	f.StringVar(&a.clientSecret, "client-secret", "", "its client secret (never printed or recorded)")
	f.StringVar(&a.clientIssuer, "client-issuer", "", "the authorization server (`ISSUER`) the pre-registered client belongs to: it is used with no other; without it a --client-secret goes only to an authorization server on the MCP server's own origin")
	f.StringVar(&a.clientKey, "client-key", "", "a PEM private key FILE: private_key_jwt client authentication instead of a secret")
	f.StringVar(&a.clientKeyAlg, "client-key-alg", "", "ES256 or RS256 (default: from the key)")
	f.StringVar(&a.clientMetadataURL, "client-metadata-url", "", "an https Client ID Metadata Document URL, used as client_id when the server supports it")
	f.StringVar(&a.grant, "grant", "", "authorization_code or client_credentials (default: authorization_code unless the server offers only client credentials)")
	f.StringVar(&a.redirectURI, "redirect-uri", "", "the loopback redirect URI, http://127.0.0.1:PORT/PATH (default: a free port, /callback)")
	f.BoolVar(&a.open, "open", false, "open the authorization URL in a browser")
	f.BoolVar(&a.authCode, "auth-code", false, "headless: print the authorization URL and read the address the browser was sent to from stdin")
	f.StringVar(&a.tokenCache, "token-cache", "", "keep registrations and tokens in FILE (mode 0600) between runs; 'default' is the user config dir's mcpdiag/tokens.json; none when empty")
	f.IntVar(&a.maxStepUps, "max-step-ups", client.DefaultMaxStepUps, "most step-up authorizations per operation after 403 insufficient_scope")
}

// options builds the client's AuthOptions (nil with --no-auth). A person
// is asked to sign in only on a terminal, with --open, or with --auth-code;
// otherwise a sign-in that needs one fails at once, saying so. Every
// secret the chain handles goes to red.
func (a *authFlags) options(stdin io.Reader, stderr io.Writer, red *record.Redactor) (*client.AuthOptions, error) {
	if a.noAuth {
		return nil, nil
	}
	if a.maxStepUps < 1 {
		return nil, usageError("--max-step-ups must be >= 1")
	}
	o := &client.AuthOptions{ClientID: a.clientID, ClientSecret: a.clientSecret, ClientIssuer: a.clientIssuer, ClientKeyAlg: a.clientKeyAlg,
		ClientMetadataURL: a.clientMetadataURL, Grant: a.grant, RedirectURI: a.redirectURI, MaxStepUps: a.maxStepUps,
		OnSecret: func(s string) { _ = red.AddSecret(s) }}
	if a.clientSecret != "" {
		if err := red.AddSecret(a.clientSecret); err != nil {
			return nil, usageError("--client-secret: %v", err)
		}
	}
	if a.clientKey != "" {
		b, err := os.ReadFile(a.clientKey)
		if err != nil {
			return nil, usageError("--client-key: %v", err)
		}
		key, err := client.ParseClientKey(b)
		if err != nil {
			return nil, usageError("--client-key %s: %v", a.clientKey, err)
		}
		o.ClientKey = key
	}
	switch {
	case a.authCode && a.open:
		return nil, usageError("--auth-code and --open cannot both be set")
	case a.authCode:
		o.Authorize, o.Paste, o.Prompt = client.AuthorizePaste, stdin, stderr
	case a.open:
		o.Authorize, o.Prompt, o.OpenBrowser = client.AuthorizeBrowser, stderr, client.SystemBrowser
	case isTerminal(stdin):
		o.Prompt = stderr
	}
	if a.tokenCache != "" {
		path := a.tokenCache
		if path == "default" {
			p, err := client.DefaultTokenCache()
			if err != nil {
				return nil, usageError("--token-cache default: %v", err)
			}
			path = p
		}
		o.Store = &client.FileStore{Path: path}
	}
	return o, nil
}
