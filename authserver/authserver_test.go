package authserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/authserver"
)

// server runs an authorization server on a real 127.0.0.1 listener, with
// the resource /mcp on the same origin.
func server(t *testing.T, f authserver.Faults) (*authserver.Server, string) {
	t.Helper()
	var as *authserver.Server
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if as.Handles(r.URL.Path) {
			as.ServeHTTP(w, r)
			return
		}
		if _, _, ok, _ := as.Guard(w, r, "", "mcp:tools"); ok {
			_, _ = io.WriteString(w, "ok")
		}
	}))
	t.Cleanup(ts.Close)
	var err error
	as, err = authserver.New(authserver.Options{Issuer: ts.URL + "/oauth/1", Resource: ts.URL + "/mcp",
		Scopes: []string{"mcp:tools"}, Faults: f, Clients: []authserver.Client{{ID: "conf", Secret: "conf-secret-123"}}})
	if err != nil {
		t.Fatal(err)
	}
	return as, ts.URL
}

// noRedirect is a client that returns redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func getJSON(t *testing.T, u string, v any) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		_ = json.NewDecoder(resp.Body).Decode(v)
	}
	return resp.StatusCode
}

func postForm(t *testing.T, u string, form url.Values, user, pass string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// register registers a public client with a loopback redirect.
func register(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/oauth/1/register", "application/json",
		strings.NewReader(`{"redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&m)
	if resp.StatusCode != http.StatusCreated || m.ClientID == "" || m.ClientSecret != "" {
		t.Fatalf("register: %d %+v", resp.StatusCode, m)
	}
	return m.ClientID
}

const verifier = "a-verifier-of-at-least-forty-three-characters-0123456789"

func challenge(v string) string {
	s := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(s[:])
}

// authorize asks for a code (the test user approves at once) and returns
// the redirect's query.
func authorize(t *testing.T, base, clientID string, q url.Values) url.Values {
	t.Helper()
	v := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}, "state": {"st-1"}, "scope": {"mcp:tools offline_access"},
		"resource": {base + "/mcp"}}
	for k, vs := range q {
		v[k] = vs
	}
	resp, err := noRedirect.Get(base + "/oauth/1/authorize?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Host != "127.0.0.1:9" || loc.Path != "/cb" {
		t.Fatalf("redirected to %q", resp.Header.Get("Location"))
	}
	return loc.Query()
}

func TestMetadataAndFaults(t *testing.T) {
	t.Parallel()
	_, base := server(t, authserver.Faults{})
	for _, p := range []string{"/.well-known/oauth-authorization-server/oauth/1", "/.well-known/openid-configuration/oauth/1", "/oauth/1/.well-known/openid-configuration"} {
		var m map[string]any
		if st := getJSON(t, base+p, &m); st != 200 || m["issuer"] != base+"/oauth/1" || m["token_endpoint"] != base+"/oauth/1/token" {
			t.Errorf("%s: %d %v", p, st, m)
		}
	}
	_, bad := server(t, authserver.Faults{WrongIssuer: true})
	var m map[string]any
	getJSON(t, bad+"/.well-known/oauth-authorization-server/oauth/1", &m)
	if m["issuer"] == bad+"/oauth/1" || m["authorization_endpoint"] != bad+"/oauth/1/authorize" {
		t.Errorf("wrong issuer: %v", m)
	}
	_, closed := server(t, authserver.Faults{RefuseRegistration: true})
	resp, err := http.Post(closed+"/oauth/1/register", "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:9/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 400 || e["error"] != "invalid_client_metadata" {
		t.Errorf("refused registration: %d %v", resp.StatusCode, e)
	}
}

// TestCodeFlow: code with PKCE, one use; the token opens the resource;
// refresh rotates; a refresh cannot widen the scope.
func TestCodeFlow(t *testing.T) {
	t.Parallel()
	as, base := server(t, authserver.Faults{})
	id := register(t, base)
	q := authorize(t, base, id, nil)
	if q.Get("state") != "st-1" || q.Get("iss") != base+"/oauth/1" || q.Get("code") == "" {
		t.Fatalf("authorization response %v", q)
	}
	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"client_id": {id}, "code_verifier": {"wrong-verifier-of-at-least-forty-three-characters-000000"}}
	if st, m := postForm(t, base+"/oauth/1/token", exchange, "", ""); st != 400 || m["error"] != "invalid_grant" {
		t.Errorf("a wrong verifier: %d %v", st, m)
	}
	// The failed attempt used the code up (RFC 6749 §4.1.2: one use).
	q = authorize(t, base, id, nil)
	exchange.Set("code", q.Get("code"))
	exchange.Set("code_verifier", verifier)
	st, tok := postForm(t, base+"/oauth/1/token", exchange, "", "")
	if st != 200 || tok["access_token"] == "" || tok["refresh_token"] == "" || tok["scope"] != "mcp:tools offline_access" {
		t.Fatalf("token: %d %v", st, tok)
	}
	if st, _ := postForm(t, base+"/oauth/1/token", exchange, "", ""); st != 400 {
		t.Errorf("the code reused: %d", st)
	}
	at := tok["access_token"].(string)
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+at)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the resource with the token: %d", resp.StatusCode)
	}
	as.Expire(at)
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("an expired token: %d %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	rf := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {id}, "scope": {"mcp:tools mcp:other"}}
	if st, m := postForm(t, base+"/oauth/1/token", rf, "", ""); st != 400 || m["error"] != "invalid_scope" {
		t.Errorf("a widening refresh: %d %v", st, m)
	}
	rf.Del("scope")
	st, tok2 := postForm(t, base+"/oauth/1/token", rf, "", "")
	if st != 200 || tok2["access_token"] == at || tok2["refresh_token"] == tok["refresh_token"] {
		t.Errorf("refresh: %d %v", st, tok2)
	}
	if st, _ := postForm(t, base+"/oauth/1/token", rf, "", ""); st != 400 {
		t.Errorf("a rotated refresh token reused: %d", st)
	}
}

// TestAuthorizeRefusals: no PKCE, another resource, an unknown scope go
// back to the client as errors; an unknown client or redirect is a 400
// with no redirect at all.
func TestAuthorizeRefusals(t *testing.T) {
	t.Parallel()
	_, base := server(t, authserver.Faults{})
	id := register(t, base)
	for _, tt := range []struct {
		name string
		q    url.Values
		want string
	}{
		{"no PKCE", url.Values{"code_challenge": {""}}, "invalid_request"},
		{"plain PKCE", url.Values{"code_challenge_method": {"plain"}}, "invalid_request"},
		{"another resource", url.Values{"resource": {"http://127.0.0.1:1/other"}}, "invalid_target"},
		{"unknown scope", url.Values{"scope": {"admin"}}, "invalid_scope"},
	} {
		if q := authorize(t, base, id, tt.q); q.Get("error") != tt.want || q.Get("code") != "" {
			t.Errorf("%s: %v, want error %s", tt.name, q, tt.want)
		}
	}
	for _, q := range []string{"client_id=nobody&redirect_uri=http://127.0.0.1:9/cb", "client_id=" + id + "&redirect_uri=http://evil.example/cb"} {
		resp, err := noRedirect.Get(base + "/oauth/1/authorize?response_type=code&" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d %q", q, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

func TestClientCredentialsAndTokenFault(t *testing.T) {
	t.Parallel()
	_, base := server(t, authserver.Faults{})
	cc := url.Values{"grant_type": {"client_credentials"}, "scope": {"mcp:tools"}}
	if st, m := postForm(t, base+"/oauth/1/token", cc, "conf", "wrong"); st != 401 || m["error"] != "invalid_client" {
		t.Errorf("a wrong secret: %d %v", st, m)
	}
	if st, m := postForm(t, base+"/oauth/1/token", cc, "conf", "conf-secret-123"); st != 200 || m["access_token"] == "" || m["refresh_token"] != nil {
		t.Errorf("client credentials: %d %v", st, m)
	}
	_, broken := server(t, authserver.Faults{TokenStatus: 500})
	if st, _ := postForm(t, broken+"/oauth/1/token", cc, "conf", "conf-secret-123"); st != 500 {
		t.Errorf("the token fault: %d", st)
	}
}

// signES256 signs claims as an ES256 JWT with key.
func signES256(t *testing.T, key *ecdsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT"})
	c, _ := json.Marshal(claims)
	in := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	d := sha256.Sum256([]byte(in))
	r, s, err := ecdsa.Sign(rand.Reader, key, d[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return in + "." + enc.EncodeToString(sig)
}

// TestPrivateKeyJWT: a client known by its public key gets a token with a
// client assertion it signed; a wrong audience, an expired assertion,
// another key's signature and a secret instead of an assertion are
// refused invalid_client.
func TestPrivateKeyJWT(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var as *authserver.Server
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { as.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	as, _ = authserver.New(authserver.Options{Issuer: ts.URL + "/oauth", Resource: ts.URL + "/mcp", Scopes: []string{"mcp:tools"},
		Clients: []authserver.Client{{ID: "kc", PublicKey: &key.PublicKey}}})
	now := time.Now()
	good := map[string]any{"iss": "kc", "sub": "kc", "aud": ts.URL + "/oauth", "exp": now.Add(time.Minute).Unix(), "jti": "j1"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, tt := range []struct {
		name   string
		jwt    string
		status int
	}{
		{"signed by the client's key", signES256(t, key, good), 200},
		{"aud the token endpoint", signES256(t, key, with("aud", []string{ts.URL + "/oauth/token"})), 200},
		{"another audience", signES256(t, key, with("aud", "https://elsewhere")), 401},
		{"expired", signES256(t, key, with("exp", now.Add(-time.Minute).Unix())), 401},
		{"iss is not sub", signES256(t, key, with("iss", "someone")), 401},
		{"another key", signES256(t, other, good), 401},
	} {
		f := url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {authserver.AssertionType}, "client_assertion": {tt.jwt}}
		if st, m := postForm(t, ts.URL+"/oauth/token", f, "", ""); st != tt.status || st != 200 && m["error"] != "invalid_client" {
			t.Errorf("%s: %d %v, want %d", tt.name, st, m, tt.status)
		}
	}
	if st, _ := postForm(t, ts.URL+"/oauth/token", url.Values{"grant_type": {"client_credentials"}}, "kc", "a-secret"); st != 401 {
		t.Errorf("a key client with a secret: %d", st)
	}
}
