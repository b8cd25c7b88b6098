package client

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// callback is the loopback redirect listener (RFC 8252 §7.3): it receives
// one authorization response.
type callback struct {
	uri  string
	path string
	ln   net.Listener
	srv  *http.Server
	got  chan *callbackHit
	once sync.Once

	// mu guards state (the authorization's, set by expect before its URL
	// is shown) and refused (the requests to the path that did not carry
	// it: any local process can reach the port, and the first GET must
	// not end the flow), and the first refused request's OAuth error, if
	// it carried one (an authorization server that leaves out the state
	// on an error response: RFC 6749 §4.1.2.1 asks for it).
	mu         sync.Mutex
	state      string
	refused    int
	refusedErr string
}

// expect sets the state the authorization response must carry: a request
// with any other (or none, or before expect) is answered 400 and ignored.
func (cb *callback) expect(state string) {
	cb.mu.Lock()
	cb.state = state
	cb.mu.Unlock()
}

// carries reports whether state is the one expected, and counts a refusal
// when it is not, keeping the first refused request's error parameter
// (oauthErr, "" when none).
func (cb *callback) carries(state, oauthErr string) bool {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.state != "" && subtle.ConstantTimeCompare([]byte(state), []byte(cb.state)) == 1 {
		return true
	}
	cb.refused++
	if cb.refusedErr == "" && oauthErr != "" {
		cb.refusedErr = oauthErr
	}
	return false
}

// refusals is how many requests to the path carried another state, and the
// first of those requests' OAuth error, if one carried it.
func (cb *callback) refusals() (int, string) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	return cb.refused, cb.refusedErr
}

// callbackHit is the authorization response the listener received, and the
// exchange that records it (the browser's request to mcpdiag).
type callbackHit struct {
	query url.Values
	at    time.Time
	raddr string
}

// newCallback opens the listener of redirect (http://127.0.0.1:PORT/PATH;
// a free port and /callback when empty).
func newCallback(redirect string) (*callback, error) {
	addr, path := "127.0.0.1:0", "/callback"
	if redirect != "" {
		u, err := url.Parse(redirect)
		if err != nil || u.Scheme != "http" || !isLoopbackHost(u.Hostname()) {
			return nil, fmt.Errorf("--redirect-uri %q: must be http://127.0.0.1:PORT/PATH (a loopback address)", redirect)
		}
		host := u.Hostname()
		if strings.EqualFold(host, "localhost") {
			host = "127.0.0.1"
		}
		port := u.Port()
		if port == "" {
			port = "80"
		}
		addr, path = net.JoinHostPort(host, port), u.EscapedPath()
		if path == "" {
			path = "/"
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	cb := &callback{ln: ln, path: path, got: make(chan *callbackHit, 1)}
	if redirect != "" {
		cb.uri = redirect
	} else {
		cb.uri = "http://" + ln.Addr().String() + path
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != cb.path || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !cb.carries(q.Get("state"), q.Get("error")) {
			// Not the response to this authorization (another local
			// process, a stale tab): it does not end the flow, which
			// waits on for the right one until its time runs out.
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintln(w, "mcpdiag: this request does not carry the state of the authorization in progress: it was ignored.")
			return
		}
		hit := &callbackHit{query: q, at: time.Now(), raddr: r.RemoteAddr}
		delivered := false
		cb.once.Do(func() { cb.got <- hit; delivered = true })
		if !delivered {
			w.WriteHeader(http.StatusConflict)
			fmt.Fprintln(w, "mcpdiag: this authorization response came after the first one and was ignored.")
			return
		}
		fmt.Fprintln(w, "mcpdiag: the authorization response arrived. You can close this tab.")
	})
	cb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = cb.srv.Serve(ln) }()
	return cb, nil
}

func (cb *callback) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = cb.srv.Shutdown(ctx)
}

// matchesRedirect reports whether loc is the redirect URI (same scheme,
// host, port and path), as an authorization response must be.
func matchesRedirect(loc, redirect string) (url.Values, bool) {
	l, err1 := url.Parse(loc)
	r, err2 := url.Parse(redirect)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	if !strings.EqualFold(l.Scheme, r.Scheme) || !strings.EqualFold(l.Host, r.Host) || l.EscapedPath() != r.EscapedPath() {
		return nil, false
	}
	return l.Query(), true
}

// authorizationCode gets a code at the authorization endpoint (PKCE S256,
// state, resource, the scope selected) and exchanges it for a token.
func (a *authState) authorizationCode(ctx context.Context, asm *oauthex.AuthServerMeta, issuer, resource string, reg *registration, scopes []string, stepUp int, cb *callback) *AuthFailure {
	verifier := oauth2.GenerateVerifier()
	state := rand.Text()
	a.secret(verifier)
	a.secret(state)
	cb.expect(state)
	cfg := oauthConfig(asm, reg, cb.uri, scopes)
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	a.attempts++
	info := AuthInfo{Step: StepAuthorize, StepUp: stepUp, Issuer: issuer, Resource: resource, Scope: strings.Join(scopes, " "),
		Registration: reg.Method, ClientID: reg.ClientID, PKCE: "S256", Grant: GrantAuthorizationCode}
	mode, person := a.opts.Authorize, a.personMode()
	if mode == AuthorizeAuto {
		u, _ := url.Parse(asm.AuthorizationEndpoint)
		switch {
		case u != nil && isLoopbackHost(u.Hostname()):
			mode = AuthorizeFetch
		case person != "":
			mode = person
		default:
			return &AuthFailure{Step: StepAuthorize, Rule: ruleAuthorize,
				Reason: "the authorization endpoint " + asm.AuthorizationEndpoint + " needs a person to sign in, and this run has no way to ask one (run on a terminal, or with --open or --auth-code; or pass --bearer=TOKEN)"}
		}
	}
	var (
		q  url.Values
		ex *Exchange
		f  *AuthFailure
	)
	switch mode {
	case AuthorizeFetch:
		info.Via = "fetch"
		var wantsPerson bool
		q, ex, f, wantsPerson = a.fetchCode(ctx, info, authURL, cb.uri)
		if wantsPerson && a.opts.Authorize == AuthorizeAuto && person != "" {
			// A local server that wants a login after all: ask the
			// person, with the same request.
			info.Via = ""
			q, ex, f = a.personCode(ctx, info, person, authURL, cb)
		}
	default:
		q, ex, f = a.personCode(ctx, info, mode, authURL, cb)
	}
	if f != nil {
		return f
	}
	if f := a.checkResponse(ex, q, state, issuer, asm); f != nil {
		return f
	}
	code := q.Get("code")
	a.secret(code)
	ex.Auth.Note = fmt.Sprintf("code received (%s; state and iss checked), client_id %s (%s), PKCE S256, resource %s", info.Via, reg.ClientID, reg.Method, resource)
	if len(scopes) > 0 {
		ex.Auth.Note += ", scope " + quoteScope(strings.Join(scopes, " "))
	} else {
		ex.Auth.Note += ", no scope (none was named)"
	}
	authVerdict(ex, classify.ResultSuccess, ex.Auth.Note, "", "")
	a.c.emit(ex)
	return a.exchangeCode(ctx, asm, issuer, resource, reg, scopes, stepUp, cb.uri, code, verifier)
}

// fetchCode GETs the authorization URL itself (a local server that approves
// at once, as a test user would) and reads the code from the redirect. The
// redirect is not followed: its Location is the authorization response.
func (a *authState) fetchCode(ctx context.Context, info AuthInfo, authURL, redirect string) (q url.Values, _ *Exchange, _ *AuthFailure, wantsPerson bool) {
	hc, tr := a.c.authHTTPClient()
	req, err := http.NewRequestWithContext(withStep(ctx, info), http.MethodGet, authURL, nil)
	if err != nil {
		return nil, nil, &AuthFailure{Step: StepAuthorize, Reason: "the authorization URL does not parse: " + err.Error(), Rule: ruleAuthorize}, false
	}
	resp, err := hc.Do(req)
	exs := tr.take()
	if len(exs) == 0 {
		return nil, nil, &AuthFailure{Step: StepAuthorize, Reason: "the authorization request was not sent: " + err.Error(), Rule: ruleAuthorize}, false
	}
	ex := exs[0]
	if err != nil {
		authVerdict(ex, classify.NetworkError, "no answer from the authorization endpoint: "+err.Error(), "", "")
		a.c.emit(ex)
		return nil, ex, &AuthFailure{Step: StepAuthorize, Seq: ex.Seq, Reason: "no answer from the authorization endpoint: " + err.Error(), Rule: ruleAuthorize}, false
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	// The redirect holds the code: the record keeps its address only.
	if loc != "" {
		ex.ResponseHeader.Set("Location", redactedRedirect(loc))
	}
	if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
		r := fmt.Sprintf("the authorization endpoint answered HTTP %d %s instead of redirecting back: it wants a person to sign in (run with --open or on a terminal, or --auth-code)", resp.StatusCode, http.StatusText(resp.StatusCode))
		if resp.StatusCode >= 400 {
			r = "the authorization endpoint answered " + httpStatusReason(ex)
		}
		outcome := classify.HTTPError
		if resp.StatusCode < 300 {
			outcome = classify.AuthFailed
		}
		authVerdict(ex, outcome, r, r, ruleAuthorize)
		a.c.emit(ex)
		return nil, ex, &AuthFailure{Step: StepAuthorize, Seq: ex.Seq, Reason: r, Rule: ruleAuthorize}, resp.StatusCode < 300
	}
	q, ok := matchesRedirect(loc, redirect)
	if !ok {
		r := fmt.Sprintf("the authorization endpoint redirected to %s, not to the redirect URI %s", redactedRedirect(loc), redirect)
		authVerdict(ex, classify.AuthFailed, r, r, ruleAuthorize)
		a.c.emit(ex)
		return nil, ex, &AuthFailure{Step: StepAuthorize, Seq: ex.Seq, Reason: r, Rule: ruleAuthorize}, false
	}
	return q, ex, nil, false
}

// redactedRedirect is a redirect address without its query (which holds
// the code and state).
func redactedRedirect(loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return "(an unparsable address)"
	}
	if u.RawQuery != "" {
		var names []string
		for k := range u.Query() {
			names = append(names, k)
		}
		u.RawQuery = ""
		return u.String() + "?(" + strings.Join(sortedStrings(names), ",") + ")"
	}
	return u.String()
}

// personMode is how this run can ask a person for the code ("" when it
// cannot): pasted when Paste is set, else through the browser.
func (a *authState) personMode() AuthorizeMode {
	switch {
	case a.opts.Paste != nil:
		return AuthorizePaste
	case a.opts.Prompt != nil || a.opts.OpenBrowser != nil:
		return AuthorizeBrowser
	}
	return ""
}

// personCode shows the authorization URL to a person and waits for the
// response: on the loopback listener (browser), or pasted (paste).
func (a *authState) personCode(ctx context.Context, info AuthInfo, mode AuthorizeMode, authURL string, cb *callback) (url.Values, *Exchange, *AuthFailure) {
	w := a.opts.Prompt
	if w != nil {
		fmt.Fprintf(w, "mcpdiag: authorization needed. Open this address in a browser and sign in:\n\n  %s\n\n", visible.String(authURL))
	}
	start := time.Now()
	ex := &Exchange{Seq: a.c.nextSeq(), HTTPMethod: http.MethodGet, URL: cb.uri, Start: start, Origin: OriginNone, Result: &classify.Result{}}
	ex.Auth = &info
	var q url.Values
	switch mode {
	case AuthorizePaste:
		info.Via = "paste"
		ex.Auth.Via = "paste"
		if w != nil {
			fmt.Fprintf(w, "Then paste the address the browser was sent to (it starts with %s) and press Enter:\n", cb.uri)
		}
		line, err := readLine(ctx, a.opts.Paste)
		if err != nil {
			ex.Total = time.Since(start)
			a.c.record(ex)
			r := "no redirected address was pasted: " + err.Error()
			authVerdict(ex, classify.AuthFailed, r, r, ruleAuthorize)
			a.c.emit(ex)
			return nil, ex, &AuthFailure{Step: StepAuthorize, Seq: ex.Seq, Reason: r, Rule: ruleAuthorize}
		}
		pq, ok := matchesRedirect(strings.TrimSpace(line), cb.uri)
		if !ok {
			ex.Total = time.Since(start)
			a.c.record(ex)
			r := "the pasted text is not an address at the redirect URI " + cb.uri
			authVerdict(ex, classify.AuthFailed, r, r, ruleAuthorize)
			a.c.emit(ex)
			return nil, ex, &AuthFailure{Step: StepAuthorize, Seq: ex.Seq, Reason: r, Rule: ruleAuthorize}
		}
		q = pq
		ex.Status = http.StatusOK
	default:
		info.Via = "browser"
		ex.Auth.Via = "browser"
		if a.opts.OpenBrowser != nil {
			if err := a.opts.OpenBrowser(authURL); err != nil && w != nil {
				fmt.Fprintf(w, "mcpdiag: could not open a browser (%v); open the address above yourself.\n", err)
			}
		}
		if w != nil {
			fmt.Fprintf(w, "Waiting for the browser to come back to %s …\n", cb.uri)
		}
		select {
		case hit := <-cb.got:
			q = hit.query
			ex.Status = http.StatusOK
		case <-ctx.Done():
			ex.Total = time.Since(start)
			a.c.record(ex)
			r := "the browser did not come back to " + cb.uri + " before the call's time ran out (--timeout): " + ctx.Err().Error()
			if n, oauthErr := cb.refusals(); n > 0 {
				r += fmt.Sprintf(" (%d request(s) to it without this authorization's state were refused", n)
				if oauthErr != "" {
					// Not trusted (no state), but what the user needs
					// to see when it was their authorization server.
					r += fmt.Sprintf("; one carried error=%.64q", oauthErr)
				}
				r += ")"
			}
			authVerdict(ex, classify.AuthFailed, r, r, ruleAuthorize)
			a.c.emit(ex)
			return nil, ex, &AuthFailure{Step: StepAuthorize, Seq: ex.Seq, Reason: r, Rule: ruleAuthorize}
		}
	}
	ex.Total = time.Since(start)
	a.c.record(ex)
	return q, ex, nil
}

func readLine(ctx context.Context, r interface{ Read([]byte) (int, error) }) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		if err != nil && s != "" {
			err = nil
		}
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// checkResponse validates an authorization response: the iss parameter
// first (RFC 9207 §2.4: on a mismatch nothing else of the response is acted
// on, not even its error), then state, then error or code.
func (a *authState) checkResponse(ex *Exchange, q url.Values, state, issuer string, asm *oauthex.AuthServerMeta) *AuthFailure {
	fail := func(r, rule string) *AuthFailure {
		authVerdict(ex, classify.AuthFailed, r, r, rule)
		a.c.emit(ex)
		return &AuthFailure{Step: StepAuthorize, Seq: ex.Seq, Reason: r, Rule: rule}
	}
	iss, hasIss := q.Get("iss"), q.Has("iss")
	switch {
	case hasIss && iss != issuer:
		return fail(fmt.Sprintf("the authorization response's iss is %q, not the recorded issuer %q (compared as plain strings, without normalization): the response is rejected", iss, issuer), ruleIss)
	case !hasIss && asm.AuthorizationResponseIssParameterSupported:
		return fail("the authorization server advertises authorization_response_iss_parameter_supported, yet its response has no iss: the response is rejected", ruleIss)
	}
	if q.Get("state") != state {
		return fail("the authorization response's state is not the one sent: the response is rejected", ruleState)
	}
	if e := q.Get("error"); e != "" {
		ex.Auth.Error, ex.Auth.ErrorDescription = e, q.Get("error_description")
		r := "the authorization server refused: " + e
		if d := q.Get("error_description"); d != "" {
			r += " (" + d + ")"
		}
		return fail(r, "OAuth 2.1 §4.1.2.1: the authorization error response")
	}
	if q.Get("code") == "" {
		return fail("the authorization response has no code", ruleAuthorize)
	}
	return nil
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
