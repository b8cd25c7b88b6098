package serve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/serve"
)

// checkAuthStep holds an OAuth entry's promise about the chain: an
// AUTH_FAILED call names e.AuthStep as the step that failed; a successful
// one went through an exchange of that step that did its part.
func checkAuthStep(t *testing.T, call *client.Call, e faults.Entry) {
	t.Helper()
	if call.Outcome == client.AuthFailed {
		if call.Auth == nil || call.Auth.Step != e.AuthStep {
			t.Errorf("AUTH_FAILED at %+v, want step %s", call.Auth, e.AuthStep)
		}
		return
	}
	if call.Auth != nil {
		t.Errorf("a %s call with an auth failure %+v", call.Outcome, call.Auth)
	}
	for _, ex := range call.Exchanges {
		if ex.Auth != nil && (ex.Auth.Step == e.AuthStep || e.AuthStep == client.StepStepUp && ex.Auth.StepUp > 0) && ex.Auth.Failure == "" {
			return
		}
	}
	t.Errorf("no %s exchange in the chain", e.AuthStep)
	for _, ex := range call.Exchanges {
		if ex.Auth != nil {
			t.Logf("  #%d %s %d %s %s", ex.Seq, ex.Auth.Step, ex.Status, ex.Auth.Note, ex.Auth.Failure)
		}
	}
}

// TestAuthServerLog: every request to an endpoint's authorization server is
// a line of serve's log, naming its step, the client, PKCE, and the MCP
// endpoint it serves, in the typed auth member (no spliced serve member);
// the MCP endpoint's own filter leaves them out, the authorization
// server's keeps them; a refresh token in a URL and an access token sent
// to the authorization server are flagged; no secret is in any line.
func TestAuthServerLog(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 1})
	endpoint := "/s/auth.token_expired/mcp"
	e, _ := faults.Lookup("auth.token_expired")
	call := callEntry(t, base+endpoint, e, 10*time.Second)
	if call.Outcome != e.ExpectedOutcome {
		t.Fatalf("outcome %s", call.Outcome)
	}
	var issuer string
	for _, ex := range call.Exchanges {
		if ex.Auth != nil && ex.Auth.Step == client.StepToken {
			issuer = ex.Auth.Issuer
		}
	}
	// What a careless client would do: the refresh token in the query, and
	// the access token sent to the authorization server.
	req, _ := http.NewRequest(http.MethodPost, issuer+"/token?refresh_token=zqRefreshInURL0001", strings.NewReader("grant_type=refresh_token"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	tok, _, _ := strings.Cut(strings.TrimPrefix(call.Exchanges[len(call.Exchanges)-1].RequestHeader.Get("Authorization"), "Bearer "), " ")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	var steps []string
	var flagged bool
	for _, l := range readLog(t, base, "") {
		a := l.rec.Auth
		if a == nil {
			continue
		}
		if a.For != endpoint || !strings.HasPrefix(a.Server, serve.OAuthPrefix) || a.Issuer != issuer || a.TokenResource != base+endpoint {
			t.Errorf("line %s", l.raw)
		}
		if strings.Contains(string(l.raw), `"serve":`) {
			t.Errorf("an authorization server line with a spliced serve member: %s", l.raw)
		}
		steps = append(steps, a.Step)
		switch {
		case a.Step == "authorize" && (a.PKCE != "S256" || !a.CodeChallenge || a.Resource != base+endpoint || a.Scope == ""):
			t.Errorf("authorize: PKCE, resource or scope not logged: %s", l.raw)
		case a.Step == "token" && (a.PKCE != "S256" || a.Grant != "authorization_code" || a.Granted == "" || a.RefreshIn != ""):
			t.Errorf("token: PKCE, grant or granted scope not logged: %s", l.raw)
		case a.Step == "refresh" && len(a.InURL) == 0 && (a.RefreshIn != "body" || a.Granted == "" || a.BearerSent):
			t.Errorf("refresh: where the refresh token arrived, or the scope granted, not logged: %s", l.raw)
		case a.Step == "refresh" && len(a.InURL) > 0:
			flagged = a.BearerSent && a.RefreshIn == "url" && strings.Join(a.InURL, ",") == "refresh_token" && a.Error != ""
		}
		for _, secret := range []string{"zqRefreshInURL0001", tok} {
			if strings.Contains(string(l.raw), secret) {
				t.Errorf("a secret in the log: %s", l.raw)
			}
		}
	}
	if got := strings.Join(steps, " "); got != "as-metadata registration authorize token as-metadata refresh refresh" {
		t.Errorf("steps %s", got)
	}
	if !flagged {
		t.Error("the refresh token in the URL and the access token sent to the authorization server were not flagged")
	}
	for _, l := range readLog(t, base, endpoint) {
		if l.rec.Auth != nil {
			t.Errorf("the endpoint's filter kept an authorization server line: %s", l.raw)
		}
	}
	asPath := strings.TrimPrefix(issuer, base)
	asLines := readLog(t, base, asPath)
	if len(asLines) != len(steps) {
		t.Errorf("GET /admin/log?endpoint=%s: %d lines, want the %d of the authorization server", asPath, len(asLines), len(steps))
	}
}

// TestReauthorizedRequestHasNewID: a request the server refused with 401
// (or 403 insufficient_scope) and the client sent again after the chain
// carries a new JSON-RPC id, as every request sent again does (an id MUST
// NOT have been used before by the requestor).
func TestReauthorizedRequestHasNewID(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 1})
	for _, id := range []string{"auth.oauth", "auth.step_up", "auth.token_expired"} {
		e, _ := faults.Lookup(id)
		call := callEntry(t, base+"/s/"+id+"/mcp", e, 10*time.Second)
		if call.Outcome != e.ExpectedOutcome {
			t.Fatalf("%s: outcome %s", id, call.Outcome)
		}
		resent := 0
		for i, ex := range call.Exchanges {
			if ex.Auth == nil || ex.Auth.Step != client.StepChallenge {
				continue
			}
			for _, next := range call.Exchanges[i+1:] {
				if next.Method == ex.Method && next.Tool == ex.Tool && next.Auth != nil && next.Auth.Step != client.StepChallenge && next.HTTPMethod == "" {
					resent++
					if next.ID.Equal(ex.ID) {
						t.Errorf("%s: #%d %s re-sent #%d's request with the same id %s", id, next.Seq, next.Method, ex.Seq, ex.ID)
					}
					break
				}
			}
		}
		if resent == 0 {
			t.Errorf("%s: no request was sent again after a challenge", id)
		}
	}
}

// TestStepUpRegistersOnce: a step-up (403 insufficient_scope) reuses the
// client registered for the first authorization with the same issuer: one
// RFC 7591 registration in the chain, and the step-up's authorization
// request and token request name the client_id it returned. Before, each
// authorization listened on a new loopback port, so the registered
// redirect URI differed and the client registered again on every step-up.
func TestStepUpRegistersOnce(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 1})
	e, _ := faults.Lookup("auth.step_up")
	call := callEntry(t, base+"/s/auth.step_up/mcp", e, 10*time.Second)
	if call.Outcome != e.ExpectedOutcome {
		t.Fatalf("outcome %s", call.Outcome)
	}
	var regs, stepUps int
	var clientIDs []string
	for _, ex := range call.Exchanges {
		if ex.Auth == nil {
			continue
		}
		switch ex.Auth.Step {
		case client.StepRegistration:
			regs++
		case client.StepAuthorize, client.StepToken:
			clientIDs = append(clientIDs, ex.Auth.ClientID)
			if ex.Auth.StepUp > 0 {
				stepUps++
			}
		}
	}
	if regs != 1 || stepUps == 0 {
		t.Errorf("%d registration(s) and %d step-up exchange(s) in the chain, want 1 registration and a step-up", regs, stepUps)
	}
	for _, id := range clientIDs {
		if id == "" || id != clientIDs[0] {
			t.Errorf("client ids %q in the authorization and token requests, want one", clientIDs)
			break
		}
	}
	n := 0
	for _, l := range readLog(t, base, "") {
		if l.rec.Auth != nil && l.rec.Auth.Step == "registration" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the authorization server logged %d registrations, want 1", n)
	}
}
