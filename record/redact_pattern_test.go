package record

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The secrets below are unique strings, so that a test can search an output
// for them; each is long enough to be told from its surroundings.
const (
	canaryA = "cAnArY-aaaa-0001-SECRET"
	canaryB = "cAnArY-bbbb-0002-SECRET"
	// A JWT-shaped value: three base64url segments, the first a JSON object.
	canaryJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlLWNhbmFyeS0wMDA5"
	canaryPEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCanaryPem\n-----END PRIVATE KEY-----"
)

// TestRedactByPattern: the names the fixed list missed (issue 11, hole 2),
// and any other name containing one of the stems, are redacted in headers,
// query strings, JSON members at any depth and form bodies; the name stays,
// the value becomes a mask with its length and a short hash.
func TestRedactByPattern(t *testing.T) {
	t.Parallel()
	red := NewRedactor()
	headers := []string{
		"DPoP", "X-Goog-IAP-JWT-Assertion", "X-Access-Code", "X-Passcode", "Authorization", "Proxy-Authorization",
		"X-Api-Key", "Api-Key", "X-Amz-Security-Token", "X-Client-Secret", "X-Session-Token", "Cookie",
		"X-Hub-Signature-256", "X-Credential", "X-Pwd", "X-Passphrase", "X-Private-Key", "X-Auth", "X-Jwt",
	}
	for _, name := range headers {
		got := red.Headers(http.Header{name: {canaryA}})[name][0]
		if strings.Contains(got, canaryA) || !IsRedacted(got) {
			t.Errorf("header %s: %q", name, got)
		}
	}
	// Each value in the query once, under a name the old list lacked.
	for _, name := range []string{"auth", "pwd", "jwt", "apiKey", "secret_key", "dpop", "session", "Signature", "assertion", "passphrase", "sig", "code", "state", "X-Amz-Credential", "access_code"} {
		u := "https://host/mcp?ok=1&" + name + "=" + canaryA + "#f"
		got := red.URL(u)
		if strings.Contains(got, canaryA) || !strings.Contains(got, name+"=[redacted:len=") || !strings.Contains(got, "ok=1") {
			t.Errorf("URL query %s: %q", name, got)
		}
	}
	// JSON members at any depth, in every spelling.
	members := []string{
		"aws_secret_access_key", "secret_key", "apiSecret", "passphrase", "jwt", "access_token", "accessToken",
		"Access-Token", "client_secret", "password", "userPassword", "pwd", "api_key", "apikey", "privateKey",
		"private_key", "sortKey", "keys", "x-api-key", "authorization", "auth", "oauthToken", "sessionId",
		"session", "cookie", "set_cookie", "signature", "client_assertion", "credentials", "dpop_proof", "id_token",
		"refresh_token", "code_verifier", "x_auth_token", "bearerToken", "accessCode", "passcode",
	}
	for _, name := range members {
		body := fmt.Sprintf(`{"a":[{"b":{%q:%q,"n":1}}],%q:{"x":[%q]}}`, name, canaryA, name, canaryB)
		got, _ := red.Body([]byte(body), 0)
		if strings.Contains(got, canaryA) || strings.Contains(got, canaryB) || !json.Valid([]byte(got)) {
			t.Errorf("JSON member %s: %s", name, got)
			continue
		}
		want := fmt.Sprintf(`{"a":[{"b":{%q:%q,"n":1}}],%q:%q}`, name, red.Mask(canaryA), name, red.Mask(`{"x":["`+canaryB+`"]}`))
		if got != want {
			t.Errorf("JSON member %s:\n got %s\nwant %s", name, got, want)
		}
	}
	// Form bodies.
	for _, name := range []string{"password", "client_secret", "code", "state", "assertion", "pwd", "refresh_token", "apiKey"} {
		got, _ := red.Body([]byte("grant_type=x&"+name+"="+canaryA+"&client_id=app"), 0)
		if want := "grant_type=x&" + name + "=" + red.Mask(canaryA) + "&client_id=app"; got != want {
			t.Errorf("form %s: %q, want %q", name, got, want)
		}
	}
}

// TestRedactValuesByShape: a JWT, a "Bearer …"/"Basic …"/"DPoP …"
// credential and a PEM block are redacted wherever they are: free text,
// JSON strings under any name, header values, error messages.
func TestRedactValuesByShape(t *testing.T) {
	t.Parallel()
	red := NewRedactor()
	texts := []string{
		"the upstream said: Bearer " + canaryA + " is expired",
		"got basic " + canaryA + ",",
		"header DPoP " + canaryA,
		"token " + canaryJWT + " rejected",
		canaryJWT,
		"key:\n" + canaryPEM + "\nend",
		"cut key: -----BEGIN RSA PRIVATE KEY-----\nMIIB" + canaryA,
		"Authorization: " + canaryA + "\nnext",
		"X-Api-Key: " + canaryA,
		"error: X-Goog-IAP-JWT-Assertion: " + canaryA,
		"GET /cb?auth=" + canaryA + "&x=1",
		`upstream body {"jwt":"` + canaryA + `"}`,
		`escaped {\"apiSecret\":\"` + canaryA + `\"}`,
		`YAML api_key: ` + canaryA,
	}
	// An authorization server's redirect body (Go's http.Redirect): the
	// query of the link holds the code and the state, values of no
	// particular shape (canaryA's "SECRET" would give itself away).
	const plain = "zqPlainValue0001xq"
	for _, in := range []string{
		`<a href="http://127.0.0.1:5/callback?code=` + plain + `&amp;iss=http%3A%2F%2Fas">Found</a>.`,
		`<a href="http://127.0.0.1:5/callback?iss=x&amp;state=` + plain + `">Found</a>.`,
		`redirected to /cb?sig=` + plain + `&x=1`,
	} {
		if got := red.Scrub(in); strings.Contains(got, plain) || !strings.Contains(got, "[redacted") {
			t.Errorf("Scrub(%q) = %q", in, got)
		}
	}
	for _, in := range texts {
		got := red.Scrub(in)
		if strings.Contains(got, canaryA) || strings.Contains(got, "c2lnbmF0dXJl") || strings.Contains(got, "MIIE") || strings.Contains(got, "eyJzdWIi") {
			t.Errorf("Scrub(%q) = %q", in, got)
		}
		if !strings.Contains(got, "[redacted") {
			t.Errorf("Scrub(%q) = %q: no mark of what was removed", in, got)
		}
	}
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"invalid Bearer ` + canaryA + `","data":{"detail":"` + canaryJWT + `","pem":"` + strings.ReplaceAll(canaryPEM, "\n", `\n`) + `"}}}`
	got, _ := red.Body([]byte(body), 0)
	if strings.Contains(got, canaryA) || strings.Contains(got, "eyJzdWIi") || strings.Contains(got, "MIIE") || !json.Valid([]byte(got)) {
		t.Errorf("Body = %s", got)
	}
	if !strings.Contains(got, `"code":-32001`) || !strings.Contains(got, `"message":"invalid Bearer [redacted:len=`) {
		t.Errorf("Body lost what a diagnosis needs: %s", got)
	}
	if h := red.Headers(http.Header{"X-Debug": {"sent " + canaryJWT}}); strings.Contains(h["X-Debug"][0], "eyJzdWIi") {
		t.Errorf("JWT kept in a header value: %q", h["X-Debug"][0])
	}
}

// TestRedactKeepsDiagnosis: names that contain a stem but are not
// credentials are kept, because a diagnosis needs them (docs/security.md
// lists the choices).
func TestRedactKeepsDiagnosis(t *testing.T) {
	t.Parallel()
	red := NewRedactor()
	keep := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"keyword":"go","monkey":"ape","keywords":["a"],"author":"Tolkien"},"_meta":{"progressToken":7}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"keyword":{"type":"string"},"hotkey":{"type":"string"}}}}],"nextCursor":"abc"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"code":7,"state":"x"}}}`,
		`{"resource":"https://rs/mcp","authorization_servers":["https://as"],"token_endpoint":"https://as/token","jwks_uri":"https://as/jwks","token_endpoint_auth_methods_supported":["none"],"token_type":"Bearer"}`,
		`{"method":"sampling/createMessage","params":{"maxTokens":100},"usage":{"input_tokens":5,"output_tokens":9,"total_tokens":14}}`,
		`{"isError":false,"authenticated":true,"session":null}`,
		`{"idempotencyKey":"k-1","requestState":"opaque-state"}`,
		// A WWW-Authenticate challenge under its own name, as classify's
		// verdict (http.wwwAuthenticate) and a HAR's header pair carry it:
		// kept as the header is (outsider18).
		`{"http":{"wwwAuthenticate":{"raw":"Bearer scope=\"files:read\"","scheme":"Bearer","resourceMetadata":"https://rs/.well-known/oauth-protected-resource","scope":"files:read","error":"insufficient_scope"}}}`,
		`{"headers":[{"name":"WWW-Authenticate","value":"Bearer error=\"invalid_token\""},{"name":"Proxy-Authenticate","value":"Basic realm=\"x\""}],"www_authenticate":"Bearer realm=\"mcp\""}`,
	}
	for _, in := range keep {
		got, _ := red.Body([]byte(in), 0)
		if got != in {
			t.Errorf("Body changed what a diagnosis needs:\n in %s\nout %s", in, got)
		}
	}
	h := http.Header{
		"Mcp-Session-Id": {"abc"}, "Www-Authenticate": {`Bearer error="invalid_token", resource_metadata="https://rs/.well-known/oauth-protected-resource"`},
		"Idempotency-Key": {"k-1"}, "Content-Type": {"application/json"}, "Access-Control-Allow-Credentials": {"true"},
		"Mcp-Method": {"tools/call"}, "Keep-Alive": {"timeout=5"},
	}
	got := red.Headers(h)
	for name, v := range h {
		want := v[0]
		if name == "Mcp-Session-Id" {
			want = HashSession("abc")
		}
		if got[name][0] != want {
			t.Errorf("header %s: %q, want %q", name, got[name][0], want)
		}
	}
	for _, s := range []string{"the call failed with HTTP 503", "status code=503", "progressToken=7", "session: expired", "version 1.2.3 of www.example.com", "Bearer realm=\"mcp\", error=\"invalid_token\""} {
		if got := red.Scrub(s); got != s {
			t.Errorf("Scrub(%q) = %q", s, got)
		}
	}
}

// TestChallengeExemptionIsExact: only a challenge under its header's own
// name (WWW-Authenticate, Proxy-Authenticate, in any spelling) is kept; a
// longer name that ends in it (x_www_authenticate, secretWwwAuthenticate,
// an X-WWW-Authenticate header) is judged as any name, and its value is
// masked as it was before 0d6b0dd. With the suffix exemption each of these
// values was recorded as it was sent (review18).
func TestChallengeExemptionIsExact(t *testing.T) {
	t.Parallel()
	red := NewRedactor()
	const tok = "q8Zr3kLmN2pX7vTw9YbC4dFh6JsA1eGu"
	for _, name := range []string{"x_www_authenticate", "secret_www_authenticate", "authorizationWwwAuthenticate", "apiKeyProxyAuthenticate", "x-proxy-authenticate"} {
		in := `{"` + name + `":"` + tok + `","headers":[{"name":"` + name + `","value":"` + tok + `"}]}`
		got, _ := red.Body([]byte(in), 0)
		if strings.Contains(got, tok) || !json.Valid([]byte(got)) {
			t.Errorf("Body kept the value under %s: %s", name, got)
		}
	}
	for _, name := range []string{"X-Www-Authenticate", "X-Secret-Www-Authenticate", "X-Proxy-Authenticate"} {
		if got := red.Headers(http.Header{name: {tok}}); strings.Contains(got[name][0], tok) {
			t.Errorf("header %s kept %q", name, got[name][0])
		}
	}
	// The challenge's own names keep the value (scrubbed as text).
	for _, name := range []string{"wwwAuthenticate", "www_authenticate", "WWW-Authenticate", "proxyAuthenticate", "Proxy-Authenticate"} {
		in := `{"` + name + `":"Bearer realm=\"mcp\", error=\"invalid_token\""}`
		if got, _ := red.Body([]byte(in), 0); got != in {
			t.Errorf("Body changed the challenge under %s: %s", name, got)
		}
	}
}

// TestMask: the mask names the length and a short keyed hash; equal values
// give equal masks under one redactor, masks are idempotent, and another
// redactor (another key) gives another hash.
func TestMask(t *testing.T) {
	t.Parallel()
	a, b := NewRedactor(), NewRedactor()
	m := a.Mask(canaryA)
	if !strings.HasPrefix(m, fmt.Sprintf("[redacted:len=%d:h=", len(canaryA))) || !IsRedacted(m) || strings.Contains(m, canaryA) {
		t.Fatalf("Mask = %q", m)
	}
	if a.Mask(canaryA) != m || a.Mask(m) != m || a.Mask(canaryB) == m {
		t.Error("Mask is not a function of the value, or not idempotent")
	}
	if b.Mask(canaryA) == m {
		t.Error("two redactors share a hash key")
	}
	if k := NewRedactorKey([]byte("k")); k.Mask("x") != NewRedactorKey([]byte("k")).Mask("x") {
		t.Error("the same key gives different hashes")
	}
	// Redacting twice changes nothing.
	body := `{"password":"` + canaryA + `","h":"Bearer ` + canaryB + `"}`
	once, _ := a.Body([]byte(body), 0)
	twice, _ := a.Body([]byte(once), 0)
	if once != twice {
		t.Errorf("not idempotent:\n%s\n%s", once, twice)
	}
	h := a.Headers(http.Header{"Authorization": {"Bearer " + canaryA}, "Cookie": {"sid=" + canaryA + "; theme=dark"}})
	if got := h["Authorization"][0]; got != "Bearer "+m {
		t.Errorf("Authorization = %q, want the scheme kept and the credential masked", got)
	}
	if got := h["Cookie"][0]; got != "sid="+m+"; theme="+a.Mask("dark") {
		t.Errorf("Cookie = %q, want the cookie names kept", got)
	}
	if again := a.Headers(h); again["Authorization"][0] != h["Authorization"][0] || again["Cookie"][0] != h["Cookie"][0] {
		t.Errorf("headers not idempotent: %v", again)
	}
}

// TestScrubKeepsReasons: the classifier's and the policy's own sentences
// survive Scrub unchanged.
func TestScrubKeepsReasons(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"HTTP 401 Unauthorized: the token is missing, invalid or expired; get a token and re-send",
		"HTTP 403 Forbidden: insufficient_scope: step-up authorization: ask for the current scopes",
		"the 2025-11-25 session has expired; initialize a new session and re-send",
		`WWW-Authenticate: Bearer resource_metadata="https://rs/.well-known/oauth-protected-resource"`,
		"-32602 InvalidParams (Unknown tool: keyword_search): a retry unchanged would get the same error",
		"Authentication: required",
	} {
		if got := NewRedactor().Scrub(s); got != s {
			t.Errorf("Scrub(%q) = %q", s, got)
		}
	}
}

// TestRecordHeaderSecrets: a record's own credential header values are
// secrets of that record, so that a server quoting the request's API key
// or token without a name ("invalid API key: …") is masked in the body, the
// error message and the reason, in producers that were never told the
// secret (the proxy, the server log).
func TestRecordHeaderSecrets(t *testing.T) {
	t.Parallel()
	rec := &Record{
		Kind:           KindExchange,
		RequestHeaders: http.Header{"X-Api-Key": {canaryA}, "Authorization": {"Bearer " + canaryB}, "X-Trace": {"short1"}, "X-Token": {"short"}},
		ErrorMessage:   "invalid API key " + canaryA,
		Reason:         "rejected " + canaryB,
		ResponseBody:   &Body{Text: `{"error":{"message":"key ` + canaryA + ` is revoked","data":"` + canaryB + `"}}`},
		Note:           "short1 short",
	}
	red := NewRedactor()
	line, err := (&Encoder{Redactor: red}).Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(line), canaryA) || strings.Contains(string(line), canaryB) {
		t.Fatalf("a header's value survived elsewhere in its record: %s", line)
	}
	if !strings.Contains(string(line), red.Mask(canaryA)) || !strings.Contains(string(line), `"note":"short1 short"`) {
		t.Errorf("want the header's mask in the body, and values under 8 bytes left alone: %s", line)
	}
	// The redactor itself learnt nothing: the next record is judged alone.
	if got := red.Scrub("invalid API key " + canaryA); got != "invalid API key "+canaryA {
		t.Errorf("the record's secrets leaked into the redactor: %q", got)
	}
}
