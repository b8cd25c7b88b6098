package record

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// exemptValues are the values the exemption tests plant: real-looking
// secrets of the provider shapes and a JWT, which the value patterns mask
// under any name, and values that match no pattern (a random 20-byte
// string, a short one), which only the name can mask.
var exemptValues = []string{
	providerKeys["openai project"],
	providerKeys["github classic"],
	canaryJWT,
	"q8Zr3kLmN2pX7vTw9YbC",
	"Zx4Qw9Lp2Vn7",
}

// plainValues are values a kept name must keep as they were sent: they
// match no value pattern.
var plainValues = []string{"q8Zr3kLmN2pX7vTw9YbC", "https://as.example/oauth/token", "RS256"}

// exemptContext is one place where the redactor reads a name: run returns
// the output for the name with the value under it, and the value as the
// output shows it when it is kept.
type exemptContext struct {
	ctx string
	run func(red *Redactor, name, value string) string
	// form: the context reads the name as a form field or a query key,
	// whose value is written as sent (a URL-safe value only).
	form bool
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func body(red *Redactor, s string) string {
	got, _ := red.Body([]byte(s), 1<<20)
	return got
}

// exemptContexts are the contexts of docs/security.md ("What is
// redacted"): JSON members of a request's arguments and of a result, a
// HAR name/value pair, a pair array, a header, a form field, a query key,
// a field line, an assignment and a JSON member in free text, JSON held in
// a JSON string (a tool's text result) and a command line's flag.
var exemptContexts = []exemptContext{
	{ctx: "arguments member", run: func(red *Redactor, n, v string) string {
		return body(red, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{`+jsonQuote(n)+`:`+jsonQuote(v)+`}}}`)
	}},
	{ctx: "result member", run: func(red *Redactor, n, v string) string {
		return body(red, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"a":{`+jsonQuote(n)+`:[`+jsonQuote(v)+`]}}}}`)
	}},
	{ctx: "HAR pair", run: func(red *Redactor, n, v string) string {
		return body(red, `{"log":{"entries":[{"request":{"headers":[{"name":`+jsonQuote(n)+`,"value":`+jsonQuote(v)+`}]}}]}}`)
	}},
	{ctx: "pair array", run: func(red *Redactor, n, v string) string {
		return body(red, `{"headers":[[`+jsonQuote(n)+`,`+jsonQuote(v)+`]]}`)
	}},
	{ctx: "header", run: func(red *Redactor, n, v string) string {
		return red.Headers(http.Header{n: {v}})[n][0]
	}},
	{ctx: "form field", form: true, run: func(red *Redactor, n, v string) string {
		return body(red, "grant_type=x&"+n+"="+v+"&client_id=app")
	}},
	{ctx: "query key", form: true, run: func(red *Redactor, n, v string) string {
		return red.URL("https://rs.example/mcp?ok=1&" + n + "=" + v + "#f")
	}},
	{ctx: "text field line", run: func(red *Redactor, n, v string) string {
		return red.Scrub("upstream said:\n" + n + ": " + v + "\nbye")
	}},
	{ctx: "text assignment", run: func(red *Redactor, n, v string) string {
		return red.Scrub("retrying with " + n + "=" + v + " now")
	}},
	{ctx: "text JSON", run: func(red *Redactor, n, v string) string {
		return red.Scrub(`upstream body {"` + n + `": "` + v + `", "n": 1}`)
	}},
	{ctx: "JSON in a string", run: func(red *Redactor, n, v string) string {
		inner := `{"` + n + `":"` + v + `"}`
		return body(red, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`+jsonQuote(inner)+`}]}}`)
	}},
	{ctx: "flag", run: func(red *Redactor, n, v string) string {
		return strings.Join(red.Args([]string{"server", "--" + n, v}), " ")
	}},
}

// credentialTailNames hold a credential name followed by a word an
// exemption keeps (an idempotency key, a descriptor): each is a credential
// name, and its value is masked in every context. Before redact19 the
// exemptions matched the end of the name, and every value under these was
// recorded as it was sent.
var credentialTailNames = []string{
	// A credential name, then an idempotency key's name.
	"api_key_idempotency_key", "apiKeyIdempotencyKey", "secret_idempotency_key", "X-Api-Key-Idempotency-Key",
	"client_secret_idempotency_key", "password-idempotency-key", "access_token_idempotency_key", "sessionIdempotencyKey",
	// A credential name, then a descriptor's last word.
	"client_secret_token_endpoint", "clientSecretTokenEndpoint", "api_key_type", "apiKeyUrl", "password_url",
	"secret_uri", "private_key_alg", "passwordMethod", "session_secret_server", "api_key_scheme", "x-api-key-url",
	"client_secret_supported", "db_password_endpoint", "secretKeyAlgorithms", "refresh_token_secret_type",
	"client_secret_token_endpoint_auth_methods_supported", "key_type", "api_key_token_type", "password_auth_type",
	"cookie_url",
	// A credential name, then a word that only ends in a descriptor's
	// word (observer, prototype, curl): no descriptor at all.
	"token_observer", "secret_prototype", "password_curl", "api_key_archetype", "accessTokenObserver",
	// Glued in one lower-case word: no word boundary to read a
	// descriptor at; masked (docs/decisions.md, redact19).
	"secrettype", "passwordurl", "secretidempotencykey",
}

// keptExemptNames hold a stem but no credential: their values are kept in
// every context, as a diagnosis needs them. The OAuth metadata of RFC
// 8414, RFC 9728 and RFC 7591 (and OpenID Connect's and RFC 8693's names
// built the same way), MCP's progressToken, idempotency keys and the
// token counts of language-model APIs.
var keptExemptNames = []string{
	// RFC 8414 (and RFC 9126, 8628, 9207, 9396, 9449).
	"authorization_endpoint", "token_endpoint", "jwks_uri", "token_endpoint_auth_methods_supported",
	"token_endpoint_auth_signing_alg_values_supported", "revocation_endpoint_auth_methods_supported",
	"introspection_endpoint_auth_signing_alg_values_supported", "device_authorization_endpoint",
	"pushed_authorization_request_endpoint", "authorization_details_types_supported",
	"dpop_signing_alg_values_supported", "authorization_signing_alg_values_supported",
	// RFC 9728.
	"authorization_servers", "authorizationServers", "authorization_server",
	// RFC 7591.
	"token_endpoint_auth_method",
	// OpenID Connect discovery.
	"id_token_signing_alg_values_supported", "id_token_encryption_alg_values_supported",
	"id_token_encryption_enc_values_supported", "end_session_endpoint", "frontchannel_logout_session_supported",
	// Token responses, RFC 8693 and RFC 7523.
	"token_type", "tokenType", "access_token_type", "issued_token_type", "subject_token_type",
	"requested_token_type", "actor_token_type", "client_assertion_type",
	// Descriptors of a token or an authentication, in camelCase.
	"tokenEndpoint", "tokenUrl", "accessTokenUrl", "refresh_token_url", "auth_type", "authScheme", "authMethod",
	"signature_method", "session_url", "jwt_alg", "credential_endpoint",
	// MCP.
	"progressToken",
	// Idempotency keys.
	"idempotency_key", "idempotencyKey", "Idempotency-Key", "x_idempotency_key", "X-Idempotency-Key",
	"request_idempotency_key",
	// Token counts.
	"maxTokens", "max_tokens", "input_tokens", "output_tokens", "total_tokens", "prompt_tokens",
	"completion_tokens", "cached_tokens", "tokenCount",
}

// TestExemptionsCoverOnlyTheirNames: every credentialTailNames value is
// masked in every context, and every keptExemptNames value is kept as it
// was sent (redact19).
func TestExemptionsCoverOnlyTheirNames(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("redact19"))
	for _, name := range credentialTailNames {
		if !sensitiveName(name, ctxJSON) {
			t.Errorf("sensitiveName(%q) = false, want true", name)
		}
		for _, c := range exemptContexts {
			for _, v := range exemptValues {
				if got := c.run(red, name, v); strings.Contains(got, v) {
					t.Errorf("%s %s: the value is kept: %s", c.ctx, name, got)
				} else if !strings.Contains(got, "[redacted") && !(c.ctx == "header" && isSessionHash(got)) {
					// A header that names a session is hashed
					// (classifyHeaderName).
					t.Errorf("%s %s: no mask: %s", c.ctx, name, got)
				}
			}
		}
	}
	for _, name := range keptExemptNames {
		if sensitiveName(name, ctxJSON) {
			t.Errorf("sensitiveName(%q) = true, want false", name)
		}
		for _, c := range exemptContexts {
			for _, v := range plainValues {
				if c.form && strings.ContainsAny(v, ":/") {
					continue
				}
				if got := c.run(red, name, v); !strings.Contains(got, v) || strings.Contains(got, "[redacted") {
					t.Errorf("%s %s: the value %q is not kept: %s", c.ctx, name, v, got)
				}
			}
		}
	}
}
