package record

import (
	"strings"
	"testing"
)

// dottedCredentialNames are credential names written with dots, as
// property keys and log fields are (redact20): the last segment is a
// credential name, or the last two together are one.
var dottedCredentialNames = []string{
	"access.code", "Access.Code", "code.verifier", "pkce.code.verifier", "client.secret", "oauth.client.secret",
	"db.password", "spring.datasource.password", "auth.token", "api.key", "aws.secret_access_key", "pin.code",
	"smtp.pass", "user.pw_hash",
	// review20: the part before the dot a credential name of its own.
	"auth.code", "oauth.code", "authorization.code", "oauth.code.verifier",
	// names21: a one-time password; a credential word before a
	// lower-case last segment that is no stem.
	"user.otp", "mfa.totp", "secret.value", "password.hash", "Secret.Value", "token.raw",
}

// TestDottedCredentialNamesInText: a dotted credential name on a
// "name: value" line of text (a tool's text result, an error message, a
// log line) has its value masked, whatever the value's shape. Before
// redact20 the line scanner read only the last segment ("code",
// "verifier", "token"), and access.code and code.verifier kept every
// value, the others any value that was not one word shaped like a
// credential ("auth.token: hunter2 again").
func TestDottedCredentialNamesInText(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("dotted"))
	values := []string{"Zk3j9QpL2mX8", "hunter2 again", "s3cr3t"}
	lines := []func(n, v string) string{
		func(n, v string) string { return "upstream said:\n" + n + ": " + v + "\nbye" },
		func(n, v string) string { return "error: " + n + ": " + v },
		func(n, v string) string { return `level=warn msg="config loaded" ` + n + `: ` + v },
		func(n, v string) string { return n + ":\t" + v },
	}
	for _, n := range dottedCredentialNames {
		for _, v := range values {
			for _, line := range lines {
				in := line(n, v)
				got := red.Scrub(in)
				if strings.Contains(got, v) || !strings.Contains(got, n+":") || !strings.Contains(got, "[redacted:len=") {
					t.Errorf("Scrub(%q) = %q: want %s's value masked and the name kept", in, got, n)
				}
				if again := red.Scrub(got); again != got {
					t.Errorf("Scrub(Scrub(%q)) = %q, want %q", in, again, got)
				}
			}
		}
	}
}

// TestDottedNamesKeptInText: lines with a dot before a colon that a
// diagnosis reads are kept as they are: MCP's and OpenTelemetry's dotted
// names, version and decimal numbers, URLs, and Go's and Python's
// qualified names whose package or class holds a credential word but whose
// last segment names none (redact20 measured these over the repository's
// testdata, the spec's examples, server-everything and 7 MiB of Go and
// Python source: no line changed).
func TestDottedNamesKeptInText(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("dotted"))
	for _, in := range []string{
		"params.name: echo",
		"error.data.reason: the token is missing",
		"v1.2: released with a new token format",
		"3.14: pi, not a PIN",
		"see https://docs.example/v1.2: token endpoint moved",
		"jwt.ParseWithClaims: token is expired",
		"session.Close: connection reset by peer",
		"auth.Login: invalid grant for this session",
		"oauth2.Exchange: the authorization code expired",
		"gen_ai.usage.input_tokens: 1500",
		"gen_ai.token.type: input",
		"auth.token_endpoint: https://as.example/oauth/token",
		"http.request.method: POST",
		"rpc.jsonrpc.error_code: -32602",
		"mcp.method.name: tools/call",
		"jwt.exceptions.DecodeError: Not enough segments",
	} {
		if got := red.Scrub(in); got != in {
			t.Errorf("Scrub(%q) = %q, want it kept", in, got)
		}
	}
}

// passPwPinNames hold a password or a PIN under "pass", "pw", "pin" or
// a stem (redact20): masked in every context.
var passPwPinNames = []string{
	"pass_phrase", "passPhrase", "passphrase", "passcode", "pass-word", "pwd", "db_pwd", "PGPASSWORD", "MYSQL_PWD",
	"dbPass", "userPwd", "apiPin", "pin_code", "pinCode",
	// A form of the password or PIN after its word (heldFormWord), or a
	// PIN's number: kept before redact20.
	"pw_hash", "pwHash", "pass_digest", "user_pw_value", "pin_number", "pinNo", "pin_hash", "sim.pin.num",
}

// notPassPwPinNames hold "pass", "pw" or "pin" as a word that goes on, or
// inside a word: no credential (redact20 decided db_pass_endpoint: a URL,
// not a password).
var notPassPwPinNames = []string{"db_pass_endpoint", "pass_rate", "pass_through", "pin_count", "pin_mode", "bypass", "compass", "mapping", "pw_policy"}

// TestPassPwPinNames: every passPwPinNames name is masked and every
// notPassPwPinNames name kept, in every context the redactor reads a name
// in. pw_hash, pin_number and the other forms were recorded as sent
// before redact20.
func TestPassPwPinNames(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("pass pw pin"))
	for _, c := range exemptContexts {
		for _, n := range passPwPinNames {
			for _, v := range exemptValues[3:] {
				checkTail(t, red, c, n, v, true)
			}
		}
		for _, n := range notPassPwPinNames {
			for _, v := range plainValues {
				if c.form && strings.Contains(v, "/") {
					continue // a form's value is written as sent
				}
				checkTail(t, red, c, n, v, false)
			}
		}
	}
}

// FuzzDottedNames: for any dotted credential name the tests know, any
// value of one or more words, any line shape of TestDottedCredentialNamesInText
// and any text on the lines before it, Scrub shows none of the value's
// words and a second Scrub changes nothing (redact20).
func FuzzDottedNames(f *testing.F) {
	f.Add(uint16(0), uint8(0), uint8(1), []byte("seed"), "")
	f.Add(uint16(3), uint8(2), uint8(3), []byte("\x00\xffabcdefgh"), "token: x\n{\"a\": 1}")
	f.Add(uint16(9), uint8(1), uint8(2), []byte("zzzzzzzzzzzzzzzzzzzz"), "p%61ssword=1 \\u0041")
	red := NewRedactorKey([]byte("fuzz dotted"))
	f.Fuzz(func(t *testing.T, i uint16, shape, words uint8, seed []byte, before string) {
		name := dottedCredentialNames[int(i)%len(dottedCredentialNames)]
		v := randomValue(seed)
		n := 1 + int(words)%4
		parts := make([]string, 0, n)
		for k := range n {
			w := v[k*len(v)/n : (k+1)*len(v)/n]
			if len(w) < 4 {
				continue
			}
			parts = append(parts, w)
		}
		if len(parts) == 0 {
			parts = []string{v}
		}
		value := strings.Join(parts, " ")
		var line string
		switch shape % 4 {
		case 0:
			line = name + ": " + value
		case 1:
			line = "error: " + name + ": " + value
		case 2:
			line = `level=warn msg="x" ` + name + ": " + value
		default:
			line = name + ":\t" + value
		}
		in := before + "\n" + line + "\nbye"
		got := red.Scrub(in)
		for _, w := range parts {
			if strings.Contains(got, w) && !strings.Contains(red.Scrub(before), w) {
				t.Fatalf("Scrub(%q) = %q: %q of %s's value is in the clear", in, got, w, name)
			}
		}
		if again := red.Scrub(got); again != got {
			t.Fatalf("Scrub(Scrub(%q)) = %q, want %q", in, again, got)
		}
	})
}
