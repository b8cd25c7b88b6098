package record

import (
	"encoding/json"
	"net/http"
	"slices"
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
	// One word of 8 bytes or less: masked before redact19 (no
	// descriptor), and still (a kind glued to a descriptor in a longer
	// word, "authserver", is one).
	"tokenuri", "authurl", "jwtalg", "dpoptype",
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
	// OpenInference's token counts (llm.token_count.*), whole or from a
	// dotted line's last two segments (review20).
	"llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total",
	"token_count_prompt", "token_count.total",
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

// holderNames are credential names the tests know (TestRedactByPattern's
// members and more), as words, each holding a credential by a word that
// names no kind of credential (key, secret, password, …): with any exempt
// tail after it the name is a credential name. Not db_pass, user_pw,
// sim_pin: "pass", "pw" and "pin" make a credential name only as its last
// word (pass_type, pin_method are none; passWord, pinWord), with or
// without an exemption.
var holderNames = [][]string{
	{"api", "key"}, {"x", "api", "key"}, {"client", "secret"}, {"secret"}, {"password"}, {"user", "password"},
	{"private", "key"}, {"secret", "key"}, {"aws", "secret", "access", "key"}, {"api", "secret"}, {"passphrase"},
	{"pwd"}, {"passcode"}, {"access", "code"}, {"code", "verifier"}, {"cookie"}, {"set", "cookie"},
	{"key"}, {"keys"}, {"sort", "key"}, {"refresh", "token", "secret"},
	{"session", "secret"}, {"x", "auth", "key"}, {"bearer", "token", "password"},
}

// kindNames are credential names the tests know that hold a credential by
// a word naming its kind (token, session, auth, …): with an idempotency
// key's name after it the name is a credential name; with a descriptor
// word after it, it is a descriptor of that kind (subject_token_type) and
// kept.
var kindNames = [][]string{
	{"access", "token"}, {"id", "token"}, {"refresh", "token"}, {"token"}, {"session"}, {"session", "id"},
	{"auth"}, {"x", "auth", "token"}, {"authorization"}, {"jwt"}, {"dpop"}, {"client", "assertion"},
	{"signature"}, {"credentials"}, {"bearer", "token"},
}

// idempotencyTails and descriptorTails are the exempt tails, as words:
// the exempt names themselves, which are kept (keptExemptNames holds them
// in other spellings).
var (
	idempotencyTails = [][]string{{"idempotency", "key"}}
	descriptorTails  = [][]string{
		{"endpoint"}, {"endpoints"}, {"token", "endpoint"}, {"authorization", "endpoint"}, {"uri"}, {"uris"},
		{"jwks", "uri"}, {"redirect", "uris"}, {"url"}, {"urls"}, {"server"}, {"servers"}, {"authorization", "servers"},
		{"supported"}, {"token", "endpoint", "auth", "methods", "supported"},
		{"token", "endpoint", "auth", "signing", "alg", "values", "supported"}, {"code", "challenge", "methods", "supported"},
		{"type"}, {"types"}, {"token", "type"}, {"method"}, {"methods"}, {"alg"}, {"algs"}, {"algorithm"},
		{"algorithms"}, {"scheme"}, {"schemes"},
	}
)

// spell writes words in one of three spellings: snake_case, camelCase,
// kebab-case (as a header writes it, Each-Word-Capitalized).
func spell(words []string, how int) string {
	var b strings.Builder
	for i, w := range words {
		switch how {
		case 0:
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteString(w)
		case 1:
			if i > 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
		default:
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// randomValue turns any bytes into a value that matches no provider
// pattern and is shaped as a credential word (12 bytes or more of letters
// and digits, starting "Q7"): only the name can mask it.
func randomValue(seed []byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("Q7")
	for _, c := range seed {
		if len(b) >= 40 {
			break
		}
		b = append(b, alphabet[int(c)%len(alphabet)])
	}
	for len(b) < 12 {
		b = append(b, alphabet[len(b)*7%len(alphabet)])
	}
	return string(b)
}

// checkTail checks one name in one context: masked (want true) or kept.
func checkTail(t *testing.T, red *Redactor, c exemptContext, name, value string, masked bool) {
	t.Helper()
	got := c.run(red, name, value)
	switch {
	case masked && strings.Contains(got, value):
		t.Errorf("%s %s: the value is kept: %s", c.ctx, name, got)
	case masked && !strings.Contains(got, "[redacted") && !(c.ctx == "header" && isSessionHash(got)):
		t.Errorf("%s %s: no mask: %s", c.ctx, name, got)
	case !masked && (!strings.Contains(got, value) || strings.Contains(got, "[redacted")):
		t.Errorf("%s %s: the value %q is not kept: %s", c.ctx, name, value, got)
	}
}

// tailCase is one name of the property: a credential name (or none) and
// a tail, and whether the name is masked.
type tailCase struct {
	head, tail []string
	masked     bool
}

// tailCases: every holder name with every exempt tail (masked), every
// kind name with an idempotency key's name (masked) and with a descriptor
// (kept), and each exempt tail alone (kept).
func tailCases() []tailCase {
	var cases []tailCase
	for _, h := range holderNames {
		for _, tl := range append(slices.Clone(idempotencyTails), descriptorTails...) {
			cases = append(cases, tailCase{h, tl, true})
		}
	}
	for _, h := range kindNames {
		for _, tl := range idempotencyTails {
			cases = append(cases, tailCase{h, tl, true})
		}
		for _, tl := range descriptorTails {
			cases = append(cases, tailCase{h, tl, false})
		}
	}
	for _, tl := range append(slices.Clone(idempotencyTails), descriptorTails...) {
		if strings.Join(tl, "") != "idempotencykey" && !sensitiveName(strings.Join(tl, "_"), ctxJSON) &&
			!strings.Contains(strings.Join(tl, ""), "token") && !strings.Contains(strings.Join(tl, ""), "auth") {
			continue // no stem: no exemption to test
		}
		cases = append(cases, tailCase{nil, tl, false})
	}
	return cases
}

// TestExemptTailsEverywhere: FuzzExemptTails' property over every case,
// spelling and context with one value (redact19).
func TestExemptTailsEverywhere(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("tails"))
	value := randomValue([]byte("redact19 tails"))
	for _, tc := range tailCases() {
		for how := range 3 {
			name := spell(append(slices.Clone(tc.head), tc.tail...), how)
			for _, c := range exemptContexts {
				checkTail(t, red, c, name, value, tc.masked)
			}
		}
	}
}

// FuzzExemptTails: for a credential name C the tests know and an exempt
// tail T, C+T in snake_case, camelCase or kebab-case is masked with any
// value in every context the redactor reads a name in, when C holds a
// credential (holderNames) or T is an idempotency key's name; a kind of
// credential followed by a descriptor (subject_token_type) and the exempt
// names themselves are kept.
func FuzzExemptTails(f *testing.F) {
	f.Add(uint16(0), uint8(0), uint8(0), []byte("seed"))
	f.Add(uint16(7), uint8(1), uint8(5), []byte("\x00\xff abc"))
	f.Add(uint16(500), uint8(2), uint8(11), []byte("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"))
	cases := tailCases()
	red := NewRedactorKey([]byte("fuzz tails"))
	f.Fuzz(func(t *testing.T, i uint16, how, ctx uint8, seed []byte) {
		tc := cases[int(i)%len(cases)]
		name := spell(append(slices.Clone(tc.head), tc.tail...), int(how)%3)
		checkTail(t, red, exemptContexts[int(ctx)%len(exemptContexts)], name, randomValue(seed), tc.masked)
	})
}

// TestTwoWordStemsInText: the stems of two words (accesscode,
// codeverifier) written with a separator (access_code, code-verifier)
// are credential names in free text too: the gate of Scrub looked for the
// stems in the text as written, found none, and kept the value of a PKCE
// code verifier in "code_verifier=…" (redact19, found by
// TestExemptTailsEverywhere).
func TestTwoWordStemsInText(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("two words"))
	for _, name := range []string{"access_code", "access-code", "Access_Code", "code_verifier", "Code-Verifier", "pkce_code_verifier"} {
		for _, c := range exemptContexts {
			for _, v := range exemptValues[3:] {
				checkTail(t, red, c, name, v, true)
			}
		}
	}
	// A JSON body cut short (judged as text) naming it with a blank
	// between its words (review19: kept).
	const v = "Zk3j9QpL2mX8"
	for _, body := range []string{`{"access code":"` + v + `", "x`, `{"Access.Code":"` + v + `", "x`} {
		if got, _ := red.Body([]byte(body), 1<<20); strings.Contains(got, v) {
			t.Errorf("Body(%q) = %q: the access code is in the clear", body, got)
		}
	}
}
