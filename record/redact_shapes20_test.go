package record

import (
	"strings"
	"testing"
)

// TestRealSecretShapesInText: the shapes real secrets take in what a tool
// prints (redact20's attack): each secret is masked in free text and in a
// tool's text result, and the text around it is kept. Before redact20 a
// JWT whose dots were written "\u002e", a .netrc entry's password, a
// Stripe key and curl's -u password were recorded in the clear; the other
// shapes were masked already and are kept here as they are.
func TestRealSecretShapesInText(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("shapes"))
	jwtEsc := strings.ReplaceAll(canaryJWT, ".", `\u002e`)
	for _, tc := range []struct {
		name, text, secret, kept string
	}{
		{"JWT with escaped dots", `{"t":"` + jwtEsc + `"} done`, jwtEsc, `{"t":"`},
		{"JWT with escaped dots, upper-case", "token " + strings.ReplaceAll(canaryJWT, ".", `\u002E`) + " sent", strings.ReplaceAll(canaryJWT, ".", `\u002E`), "token "},
		{"netrc line", "machine api.example.com login bob password Hx7q2Lm9Pz", "Hx7q2Lm9Pz", "machine api.example.com login bob password "},
		{"netrc lines", "cat ~/.netrc\nmachine api.example.com\n  login bob\n  password Hx7q2Lm9Pz\n", "Hx7q2Lm9Pz", "  login bob\n"},
		{"netrc default", "default login anonymous password Hx7q2Lm9Pz", "Hx7q2Lm9Pz", "default login anonymous"},
		{"Stripe secret key", "charge failed: sk_live_51HqLyjWDarjtT1zdp7dcXYZ is revoked", "sk_live_51HqLyjWDarjtT1zdp7dcXYZ", "is revoked"},
		{"Stripe test key", "key=sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "key="},
		{"Stripe restricted key", "using rk_live_51HqLyjWDarjtT1zdp7dcXYZ now", "rk_live_51HqLyjWDarjtT1zdp7dcXYZ", "now"},
		{"curl -u", "run: curl -s -u bob:Hx7q2Lm9Pz https://api.example/v1", "Hx7q2Lm9Pz", "curl -s -u bob:"},
		{"curl --user", `exec curl --user "bob:Hx7q2Lm9Pz" -X POST`, "Hx7q2Lm9Pz", `--user "bob:`},
		{"curl --user=", "curl --user=bob:Hx7q2Lm9Pz https://x", "Hx7q2Lm9Pz", "--user=bob:"},
		// review20: kept before.
		{"curl -u with no blank", "curl -ubob:Hx7q2Lm9Pz https://x", "Hx7q2Lm9Pz", "curl -ubob:"},
		{"curl -u with no user", "curl -u :Hx7q2Lm9Pz https://x", "Hx7q2Lm9Pz", "curl -u :"},
		{"curl -u with the key as the user", "curl https://api.stripe.com/v1/charges -u api_5Xk2nXyz8TmQ3vRr: -d amount=5", "api_5Xk2nXyz8TmQ3vRr", "-d amount=5"},
		{"Stripe key with no digit", "charge failed: sk_live_abcdefghijklmnopqrstuvwx is revoked", "sk_live_abcdefghijklmnopqrstuvwx", "is revoked"},
		// Masked before redact20 too.
		{"Bearer with no blank", "Authorization:Bearer Hx7q2Lm9Pz0aB", "Hx7q2Lm9Pz0aB", "Authorization:Bearer "},
		{"x-api-key", "x-api-key: Hx7q2Lm9Pz0aB", "Hx7q2Lm9Pz0aB", "x-api-key: "},
		{"AWS ini", "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = "},
		{"private key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "-----END PRIVATE KEY-----"},
		{"postgres URL", "dial postgres://app:Hx7q2Lm9Pz@db.internal/app failed", "Hx7q2Lm9Pz", "@db.internal/app failed"},
		{"Azure sig", "GET https://acct.blob.core.windows.net/c/b?sv=2020-08-04&sig=Hx7q2Lm9Pz%2Bab%3D&se=2026", "Hx7q2Lm9Pz", "&se=2026"},
		{"S3 presigned", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=5f1c9a7e0b2d4c6a8e0f1a2b3c4d5e6f", "5f1c9a7e0b2d4c6a8e0f1a2b3c4d5e6f", "X-Amz-Algorithm=AWS4-HMAC-SHA256"},
		{"Slack", "slack said invalid_auth for xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "invalid_auth"},
		{"GitHub fine-grained", "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "token "},
		{"Google", "key AIzaSyA1234567890abcdefghijklmnopqrstuv rejected", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "rejected"},
	} {
		for _, in := range []string{tc.text, tc.text + "\n"} {
			got := red.Scrub(in)
			if strings.Contains(got, tc.secret) || !strings.Contains(got, "[redacted") {
				t.Errorf("%s: Scrub(%q) = %q: the secret is in the clear", tc.name, in, got)
			}
			if !strings.Contains(got, tc.kept) {
				t.Errorf("%s: Scrub(%q) = %q: lost %q", tc.name, in, got, tc.kept)
			}
			if again := red.Scrub(got); again != got {
				t.Errorf("%s: Scrub(Scrub(%q)) = %q, want %q", tc.name, in, again, got)
			}
			result := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":` + jsonQuote(in) + `}]}}`
			if got := body(red, result); strings.Contains(got, tc.secret) || strings.Contains(got, jsonQuote(tc.secret)) {
				t.Errorf("%s: a text result %s recorded as %s", tc.name, result, got)
			}
		}
	}
}

// TestRealSecretShapesKept: text a diagnosis reads that is near those
// shapes is kept: prose naming a password without a .netrc entry, a
// publishable Stripe key, a word starting like a Stripe key, and escaped
// dots in no JWT.
func TestRealSecretShapesKept(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("shapes"))
	for _, in := range []string{
		"the default password policy applies to machine accounts",
		"pk_live_51HqLyjWDarjtT1zdp7dcXYZ",
		"sk_live_mode is off",
		`version 1\u002e2\u002e3 released`,
		"network work rk_live",
		"docker run -u 1000:1000 img",
		"git push -u origin main, then curl the endpoint",
		"curl -u bob https://x (curl asks for the password)",
	} {
		if got := red.Scrub(in); got != in {
			t.Errorf("Scrub(%q) = %q, want it kept", in, got)
		}
	}
}
