package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/authserver"
	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
)

// protected serves the go-sdk fixture server at /mcp behind mcpdiag's
// loopback authorization server (authserver, issuer /oauth), with its
// protected-resource metadata, on 127.0.0.1.
func protected(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	resource, prm := ts.URL+"/mcp", ts.URL+"/.well-known/oauth-protected-resource/mcp"
	as, err := authserver.New(authserver.Options{Issuer: ts.URL + "/oauth", Resource: resource, Scopes: []string{"mcp:tools"}})
	if err != nil {
		t.Fatal(err)
	}
	h := goSDKHandler(true)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok, _ := as.Guard(w, r, prm, "mcp:tools"); ok {
			h.ServeHTTP(w, r)
		}
	}))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": resource, "authorization_servers": []string{as.Issuer()}, "scopes_supported": []string{"mcp:tools"}})
	}))
	mux.Handle("/", as)
	return resource
}

// noFollow is a client that does what a browser-less request does: one
// request, no redirect followed.
var noFollow = &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(u string) (int, string, error) {
	resp, err := noFollow.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), nil
}

// TestCallbackWaitsForItsState (audit10): the loopback redirect listener
// of a browser authorization answers only the request that carries the
// state of the authorization in progress. Any local process can reach the
// port: requests without that state (another state, none) get 400 and the
// flow waits on; the browser's real response, after them, completes it.
// Before, the first GET ended the flow (state mismatch: AUTH_FAILED).
// With nothing but wrong requests the flow ends at its timeout, saying how
// many it refused.
func TestCallbackWaitsForItsState(t *testing.T) {
	for _, tt := range []struct {
		name     string
		complete bool
	}{
		{"the real response after two foreign ones", true},
		{"foreign ones only", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := protected(t)
			type step struct {
				what   string
				status int
				err    error
			}
			steps := make(chan step, 4)
			browser := func(authURL string) error {
				go func() {
					defer close(steps)
					a, err := url.Parse(authURL)
					if err != nil {
						steps <- step{"parse", 0, err}
						return
					}
					cb, state := a.Query().Get("redirect_uri"), a.Query().Get("state")
					if !strings.HasPrefix(cb, "http://127.0.0.1:") || state == "" {
						steps <- step{"parse", 0, fmt.Errorf("redirect_uri %q, state %q", cb, state)}
						return
					}
					for _, f := range []struct{ what, query string }{
						{"another state", "?code=forged&state=" + url.QueryEscape(state+"x")},
						// An authorization server's error response
						// without the state (RFC 6749 asks for it).
						{"no state", "?error=access_denied"},
					} {
						st, _, err := get(cb + f.query)
						steps <- step{f.what, st, err}
					}
					if !tt.complete {
						return
					}
					// The browser: the authorization endpoint redirects
					// to the listener with the code and the state.
					st, loc, err := get(authURL)
					if err != nil || st != http.StatusFound && st != http.StatusSeeOther {
						steps <- step{"authorize", st, err}
						return
					}
					st, _, err = get(loc)
					steps <- step{"the response", st, err}
				}()
				return nil
			}
			timeout := 20 * time.Second
			if !tt.complete {
				timeout = 2 * time.Second
			}
			c, err := client.New(client.Options{URL: u, Timeout: timeout, Auth: &client.AuthOptions{Authorize: client.AuthorizeBrowser, OpenBrowser: browser, Prompt: io.Discard}})
			if err != nil {
				t.Fatal(err)
			}
			call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{"another state": http.StatusBadRequest, "no state": http.StatusBadRequest, "the response": http.StatusOK}
			n := 0
			for s := range steps {
				n++
				if s.err != nil || s.status != want[s.what] {
					t.Errorf("%s: status %d (%v), want %d", s.what, s.status, s.err, want[s.what])
				}
			}
			if tt.complete {
				if n != 3 || call.Outcome != classify.ToolSuccess {
					t.Fatalf("%d requests; outcome %s (%+v)", n, call.Outcome, call.Auth)
				}
				return
			}
			if call.Outcome != classify.AuthFailed || call.Auth == nil || !strings.Contains(call.Auth.Reason, "did not come back") || !strings.Contains(call.Auth.Reason, "2 request(s) to it without this authorization's state were refused; one carried error=\"access_denied\")") {
				t.Fatalf("outcome %s (%+v), want AUTH_FAILED at the timeout naming 2 refusals and the error one carried", call.Outcome, call.Auth)
			}
		})
	}
}
