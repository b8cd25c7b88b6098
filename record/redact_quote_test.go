package record

import (
	"strings"
	"testing"
)

// TestSchemeCredentialBeforeAQuote: a "Bearer …", "Basic …" or "DPoP …"
// credential that a double quote closes is masked: a tool's JSON text
// quoting a header (`{"region": "Bearer …"}`, what the fixture's
// header_echo returns), an error message that quotes the value it refused
// (Go's %q), base64 with its padding. Before, bearerRE did not end a
// token68 at `"` (so as to keep `Bearer realm="mcp"`), and every one of
// these was recorded in the clear (outsider19: a header_echo result through
// call and proxy, in the records, the HAR and the page). Challenges, whose
// quote opens an auth-param's value, are kept whole.
func TestSchemeCredentialBeforeAQuote(t *testing.T) {
	t.Parallel()
	red := NewRedactor()
	const tok = "t0k3nInParamHdr123"
	const b64 = "dXNlcjpwYXNzd29yZA==" // user:password
	const b64one = "dXNlcjE6cGFzczE="  // user1:pass1, one '=' of padding
	for _, tc := range []struct{ in, secret string }{
		{`invalid header value "Bearer ` + tok + `"`, tok},
		{`{"upstreamHeader":"Bearer ` + tok + `"}`, tok},
		{`{"region": "Bearer ` + tok + `", "decoded": "Bearer ` + tok + `"}`, tok},
		{`got "DPoP ` + tok + `", want none`, tok},
		{`Bearer ` + tok + `"`, tok},
		{`got "Basic ` + b64 + `"`, b64},
		{`got "Basic ` + b64one + `"`, b64one},
		{`{"h":"Basic ` + b64one + `"}`, b64one},
		{`["Basic ` + b64one + `", 1]`, b64one},
		{`h="Basic ` + b64one + `";`, b64one},
		// One '=' of padding, the closing quote followed by punctuation
		// that ends a sentence or a clause (review19: these were kept).
		{`the header was "Basic ` + b64one + `".`, b64one},
		{`sent "Basic ` + b64one + `": refused`, b64one},
		{`sent "Basic ` + b64one + `"!`, b64one},
		{`"Basic ` + b64one + `"?`, b64one},
		{`'"Basic ` + b64one + `"'`, b64one},
		{`{"text":"got \"Basic ` + b64one + `\"."}`, b64one},
	} {
		got := red.Scrub(tc.in)
		if strings.Contains(got, tc.secret) || !strings.Contains(got, "[redacted:len=") {
			t.Errorf("Scrub(%q) = %q: the credential is in the clear", tc.in, got)
		}
		if again := red.Scrub(got); again != got {
			t.Errorf("Scrub(Scrub(%q)) = %q, want %q unchanged", tc.in, again, got)
		}
	}
	// The body of an SSE answer whose tool result is JSON text quoting the
	// credential under a name that is no credential name.
	body := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\n  \\\"region\\\": \\\"Bearer " + tok + "\\\"\\n}\"}]}}\n\n"
	if got, _ := red.Body([]byte(body), 1<<20); strings.Contains(got, tok) {
		t.Errorf("Body(%q) = %q: the credential is in the clear", body, got)
	}
	for _, keep := range []string{
		`Bearer realm="mcp", error="invalid_token"`,
		`Basic realm="x"`,
		`Bearer error="invalid_token", error_description="expired"`,
		`Bearer resource_metadata="https://rs/.well-known/oauth-protected-resource"`,
		`DPoP algs="ES256 PS256"`,
		`Bearer realm="", scope="files:read"`,
		`{"www":"Bearer realm=\"mcp\""}`,
	} {
		if got := red.Scrub(keep); got != keep {
			t.Errorf("Scrub(%q) = %q, want it kept (a challenge)", keep, got)
		}
	}
}
