package record

import (
	"net/http"
	"strings"
	"testing"
)

// mask22ListsKept are arrays of two strings whose first is a credential
// name and which are no name/value pair: the value of a member whose name
// says it lists kinds of things (listMember). OAuth's metadata (RFC 8414,
// RFC 7591) says by them whether refresh tokens and public clients are
// supported; a tool's inputSchema which arguments are required. Before
// mask22 each second string was masked (outsider21 D4).
var mask22ListsKept = []string{
	`{"grant_types":["authorization_code","refresh_token"]}`,
	`{"grant_types": [ "password", "refresh_token" ]}`,
	`{"token_endpoint_auth_methods_supported":["client_secret_basic","none"]}`,
	`{"token_endpoint_auth_methods_supported":["client_secret_post","client_secret_basic"]}`,
	`{"response_types":["token","code"]}`,
	`{"scopes_supported":["session","read"]}`,
	`{"scope":["session","read"]}`,
	`{"grantTypes":["authorization_code","refresh_token"]}`,
	`{"name":"lookup","inputSchema":{"type":"object","required":["api_key","query"]}}`,
}

// mask22PairsMasked are name/value pairs whose value stays masked: a
// pair standing alone or in a list of pairs (fetch's headers, a list of
// tuples, Object.entries), under a member whose name lists nothing, or
// under a credential name.
var mask22PairsMasked = []struct{ text, secret string }{
	{`["Authorization","Bearer Hx7q2Lm9Pz"]`, "Hx7q2Lm9Pz"},
	{`["api_key","sk-Hx7q2Lm9PzQw3r"]`, "Hx7q2Lm9PzQw3r"},
	{`["password","hunter2x"]`, "hunter2x"},
	{`{"headers":[["authorization","Bearer Hx7q2Lm9Pz"]]}`, "Hx7q2Lm9Pz"},
	{`{"headers":[["api_key","Hx7q2Lm9Pz"],["accept","*/*"]]}`, "Hx7q2Lm9Pz"},
	{`{"header":["X-Api-Key","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	{`{"args":["--api-key","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	{`{"cmd":["AUTH","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	// A pair inside a list member's array is a pair.
	{`{"grant_types":[["password","Hx7q2Lm9Pz"]]}`, "Hx7q2Lm9Pz"},
	// A credential name that ends in a list word is masked whole.
	{`{"api_key_types":["password","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	// required is JSON Schema's keyword alone.
	{`{"password_required":["password","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	{`{"not_required":["password","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	// Under a list member, a second string that is no registered name
	// (lower-case words and "_") is a value: kept in the clear by the
	// member's name alone before (review22).
	{`{"auth_methods":["password","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	{`{"scope":["token","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	{`{"servers":["password","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	{`{"required":["password","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
	{`{"grant_types":["password","hunter2x"]}`, "hunter2x"},
	{`{"grant_types": [ "password", "s3cr3t_value" ]}`, "s3cr3t_value"},
	{`{"scopes":["api_key","Bearer-abc"]}`, "Bearer-abc"},
}

// TestMask22PairArrays: each mask22ListsKept document is given back byte
// for byte as a JSON body, as a JSON document cut short (read as text),
// and as text in every names21 producer; each mask22PairsMasked secret
// is in none of those outputs.
func TestMask22PairArrays(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("mask22"))
	for _, in := range mask22ListsKept {
		if got := body(red, in); got != in {
			t.Errorf("Body(%s) = %s, want it kept byte for byte", in, got)
		}
		cut := in[:len(in)-1]
		if got := body(red, cut); got != cut {
			t.Errorf("Body(%s) (cut) = %s, want it kept byte for byte", cut, got)
		}
		for _, p := range names21Producers {
			got := p.run(red, in)
			if !strings.Contains(got, in) && !strings.Contains(got, strings.Trim(jsonQuote(in), `"`)) {
				t.Errorf("%s: %s became %s, want it kept", p.name, in, got)
			}
		}
	}
	for _, tc := range mask22PairsMasked {
		outs := map[string]string{"Body": body(red, tc.text), "Body cut": body(red, tc.text[:len(tc.text)-1])}
		for _, p := range names21Producers {
			outs[p.name] = p.run(red, tc.text)
		}
		for name, got := range outs {
			if strings.Contains(got, tc.secret) {
				t.Errorf("%s: %s recorded as %s: the secret is in the clear", name, tc.text, got)
			}
			if !strings.Contains(got, "[redacted") {
				t.Errorf("%s: %s recorded as %s: no mask", name, tc.text, got)
			}
		}
	}
}

// mask22ExceptionsMasked are messages of an exception whose class names a
// credential, each quoting the secret among other words: kept in the
// clear before mask22 (a message of more than one word was read as
// prose, names21).
var mask22ExceptionsMasked = []struct{ text, secret string }{
	{"PasswordMismatchError: expected hunter2-Secret", "hunter2-Secret"},
	{"PasswordMismatchError: expected 'hunter2-Secret', got 'x'", "hunter2-Secret"},
	{"AuthenticationError: Incorrect API key provided: abcd1234efgh5678", "abcd1234efgh5678"},
	{"openai.AuthenticationError: Incorrect API key provided: abcd1234efgh5678. You can find your API key at https://platform.example.com/account/api-keys.", "abcd1234efgh5678"},
	{"jwt.exceptions.InvalidTokenError: token Zq9x7Wk2Lm5N is not valid", "Zq9x7Wk2Lm5N"},
	{"InvalidOtpError: code 804172 was already used", "804172"},
	{"BadCredentialsException: bad credentials for bob (Hx7q2Lm9Pz)", "Hx7q2Lm9Pz"},
	// review22: cut at the word's quote, read as an e-mail address, read
	// as a path.
	{"PasswordMismatchError: expected \"hunter2-Secret\" for bob", "hunter2-Secret"},
	{"PasswordMismatchError: expected P@ssw0rd2024 for bob", "P@ssw0rd2024"},
	{"AuthenticationError: Incorrect API key provided: /abcd1234efgh5678", "abcd1234efgh5678"},
	{"PasswordMismatchError: got \"x\", expected \"hunter2-Secret\"", "hunter2-Secret"},
	{"Traceback (most recent call last):\n  File \"app.py\", line 9, in login\nPasswordMismatchError: expected hunter2-Secret for bob", "hunter2-Secret"},
}

// mask22ExceptionsKept are messages of a credential's exception that quote
// no credential: times, dates, counts, ports, versions, URLs, paths and
// e-mail addresses stay as written.
var mask22ExceptionsKept = []string{
	"InvalidTokenError: Signature has expired",
	"TokenExpiredError: jwt expired at 2026-12-07T10:00:00Z",
	"AuthenticationError: 401 Unauthorized from https://api.example.com/v1/chat",
	"InvalidKeyError: key rotated on 2026-12-07, see /etc/keys/v2/current.pem",
	"TokenLimitError: 4096 tokens requested, 8192 allowed on port 8080",
	"AuthenticationError: no account for bob2@example.com since v1.2.3 (10.0.0.1)",
	"jwt.exceptions.ExpiredSignatureError: Signature has expired",
	"InvalidTokenError: \"session\" cookie missing for bob2@example.com, see /v1/tokens",
}

// TestMask22ExceptionMessages: a credential-shaped word in a credential
// exception's message is masked in every producer (the class and the
// other words kept), a second Scrub changes nothing; a message holding
// none is kept byte for byte.
func TestMask22ExceptionMessages(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("mask22"))
	for _, tc := range mask22ExceptionsMasked {
		for _, p := range names21Producers {
			got := p.run(red, tc.text)
			if strings.Contains(got, tc.secret) {
				t.Errorf("%s: %q recorded as %q: the secret is in the clear", p.name, tc.text, got)
			}
			if !strings.Contains(got, "Error: ") && !strings.Contains(got, "Exception: ") || !strings.Contains(got, "[redacted") {
				t.Errorf("%s: %q recorded as %q: want the class kept and the secret masked", p.name, tc.text, got)
			}
		}
		got := red.Scrub(tc.text)
		if again := red.Scrub(got); again != got {
			t.Errorf("Scrub(Scrub(%q)) = %q, want %q", tc.text, again, got)
		}
	}
	for _, in := range mask22ExceptionsKept {
		for _, p := range names21Producers {
			if got := p.run(red, in); !strings.Contains(got, in) && !strings.Contains(got, strings.Trim(jsonQuote(in), `"`)) {
				t.Errorf("%s: %q became %q, want it kept", p.name, in, got)
			}
		}
	}
}

// TestMask22MeasureHeaders: a header whose credential name ends in a time
// or a count (names21's rule for text, JSON and forms) keeps a number and
// masks anything else, and registers no number as a secret to mask
// elsewhere; a credential header with a number stays masked.
func TestMask22MeasureHeaders(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("mask22"))
	kept := http.Header{
		"X-Client-Secret-Expires-At": {"0"},
		"X-Token-Expires-In":         {"3600"},
		"X-Session-Expires-At":       {"1700000000"},
		"X-Session-Count":            {"4"},
		"X-Api-Key-Rotated-At":       {" 1700000000"},
	}
	got := red.Headers(kept)
	for name, vs := range kept {
		if g := got[name]; len(g) != 1 || g[0] != vs[0] {
			t.Errorf("Headers: %s: %q became %q, want it kept", name, vs, g)
		}
	}
	masked := http.Header{
		"X-Client-Secret-Expires-At": {"Hx7q2Lm9Pz"},
		"X-Token-Expires-In":         {"3600 Hx7q2Lm9Pz"},
		"X-Client-Secret":            {"1700000000"},
		"X-Api-Key":                  {"12345678"},
		"X-Password-Length":          {"0x1f Hx7q2Lm9Pz"},
	}
	got = red.Headers(masked)
	for name, vs := range masked {
		if g := strings.Join(got[name], ""); strings.Contains(g, vs[0]) || !strings.Contains(g, "[redacted") {
			t.Errorf("Headers: %s: %q became %q, want it masked", name, vs, g)
		}
	}
	for _, name := range []string{"X-Client-Secret-Expires-At", "X-Token-Expires-In"} {
		if IsCredentialHeader(name) {
			t.Errorf("IsCredentialHeader(%s) = true, want false (a time)", name)
		}
	}
	// The values of the request's own headers registered as secrets: a
	// time is none, a string under the same name is.
	sec := NewRedactorKey([]byte("mask22"))
	sec.AddHeaderSecrets(http.Header{"X-Client-Secret-Expires-At": {"1700000000"}, "X-Token-Expires-At": {"Hx7q2Lm9PzQw"}})
	if s := "expires 1700000000, echo Hx7q2Lm9PzQw"; sec.Scrub(s) != "expires 1700000000, echo [redacted:len=12:h="+sec.Mask("Hx7q2Lm9PzQw")[len("[redacted:len=12:h="):] {
		t.Errorf("after AddHeaderSecrets, Scrub(%q) = %q, want the time kept and the string masked", s, sec.Scrub(s))
	}
	w := sec.withHeaderSecrets(http.Header{"X-Client-Secret-Expires-At": {"1700000000"}})
	if s := `{"client_secret_expires_at":1700000000}`; w.Scrub(s) != s {
		t.Errorf("withHeaderSecrets: Scrub(%s) = %s, want it kept", s, w.Scrub(s))
	}
}

// TestMask22Netrc: a .netrc entry split over an event stream's data lines
// or spelled in mixed case over a body's lines has its password masked
// (kept in the clear before mask22); "data:" is no machine's name, and
// prose near the keywords is kept. And, rechecked after collide21:
// "client_secret VALUE # comment" masks the value, keeps the comment.
func TestMask22Netrc(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("mask22"))
	for _, in := range []string{
		"data: machine api.example.com\ndata: login bob\ndata: password Hx7q2Lm9Pz\n\n",
		"event: message\r\ndata:machine api.example.com login bob\r\ndata:password Hx7q2Lm9Pz\r\n\r\n",
		"id: 1\ndata: cat ~/.netrc\ndata: machine api.example.com\ndata:   login bob\ndata:   PASSWORD Hx7q2Lm9Pz\n\n",
		"machine api.example.com\nlogin bob\nPASSword Hx7q2Lm9Pz\n",
		"MACHINE api.example.com\nLogin bob\npAsSwOrD Hx7q2Lm9Pz\n",
	} {
		got := body(red, in)
		if strings.Contains(got, "Hx7q2Lm9Pz") || !strings.Contains(got, "login bob") && !strings.Contains(got, "Login bob") {
			t.Errorf("Body(%q) = %q: want the password masked, the entry kept", in, got)
		}
		if again := body(red, got); again != got {
			t.Errorf("Body(Body(%q)) = %q, want %q", in, again, got)
		}
	}
	for _, in := range []string{
		"data: the machine\ndata: password policy applies\n\n",
		"data: machine learning\ndata: is not a password\n\n",
		"the default\nPASSWORD policy applies\n",
	} {
		if got := body(red, in); got != in {
			t.Errorf("Body(%q) = %q, want it kept", in, got)
		}
	}
	for _, p := range names21Producers {
		in := "client_secret Hx7q2Lm9Pz # from vault"
		if got := p.run(red, in); strings.Contains(got, "Hx7q2Lm9Pz") || !strings.Contains(got, "client_secret [redacted:len=10:") || !strings.Contains(got, " # from vault") {
			t.Errorf("%s: %q became %q, want the value masked, the comment kept", p.name, in, got)
		}
	}
}

// TestMask22EscapedSeparatorAfterBlank: a credential name of several
// words, a blank and an escaped "=" or ":" before the value is an
// assignment written with escapes, not the name and a value: the value
// is masked, as it is written plainly. collide21's blank-separated rule
// masked the escape alone and kept the value (mask22's fuzzing).
func TestMask22EscapedSeparatorAfterBlank(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("mask22"))
	for _, in := range []string{
		`ADPoP \x3D "Hx7q2Lm9PzQw"0`,
		`client_secret \u003d "Hx7q2Lm9PzQw"`,
		`client_secret %3D Hx7q2Lm9PzQw`,
		`api_key &#61; Hx7q2Lm9PzQw`,
		`api_key \x3a Hx7q2Lm9PzQw`,
	} {
		if got := red.Scrub(in); strings.Contains(got, "Hx7q2Lm9PzQw") {
			t.Errorf("Scrub(%q) = %q: the secret is in the clear", in, got)
		}
	}
}

// TestMask22FlagsInArgumentLists: in an argument list written as JSON (a
// command's args, as an MCP client's configuration writes a server's),
// the argument after a credential's flag is masked, as "--api-key v" in
// text is; kept before mask22 unless the list was the pair ["--api-key",
// "v"] alone. The list's other arguments, a flag after the flag (in a
// list of more than two: two are a pair), and the value of a flag that
// names no credential are kept.
func TestMask22FlagsInArgumentLists(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("mask22"))
	for _, tc := range []struct{ text, secret string }{
		{`{"command":"npx","args":["-y","@acme/mcp-server","--api-key","Hx7q2Lm9Pz"]}`, "Hx7q2Lm9Pz"},
		{`{"args":["server","--client-secret","Hx7q2Lm9Pz","--port","8080"]}`, "Hx7q2Lm9Pz"},
		{`["run","--password", "hunter two"]`, "hunter two"},
		{`{"args":["--token",123456789,"-v"]}`, "123456789"},
	} {
		outs := map[string]string{"Body": body(red, tc.text), "Body cut": body(red, tc.text[:len(tc.text)-1])}
		for _, p := range names21Producers {
			outs[p.name] = p.run(red, tc.text)
		}
		for name, got := range outs {
			if strings.Contains(got, tc.secret) || !strings.Contains(got, "[redacted") {
				t.Errorf("%s: %s recorded as %s: want the value masked", name, tc.text, got)
			}
			if !strings.Contains(got, "--port") && strings.Contains(tc.text, "--port") {
				t.Errorf("%s: %s recorded as %s: want the other flags kept", name, tc.text, got)
			}
		}
	}
	for _, in := range []string{
		`{"command":"npx","args":["-y","@acme/mcp-server","--port","8080","--max-tokens","4096"]}`,
		`{"args":["--api-key","--verbose","-v"]}`,
		`{"args":["--api-key"]}`,
	} {
		if got := body(red, in); got != in {
			t.Errorf("Body(%s) = %s, want it kept byte for byte", in, got)
		}
		for _, p := range names21Producers {
			if got := p.run(red, in); !strings.Contains(got, in) && !strings.Contains(got, strings.Trim(jsonQuote(in), `"`)) {
				t.Errorf("%s: %s became %s, want it kept", p.name, in, got)
			}
		}
	}
}
