package record

import (
	"strings"
	"testing"
)

// providerKeys are keys of every provider shape (made up, of the
// documented lengths and alphabets), for the tests of redact_provider.go
// and the end-to-end tests that grep outputs for them.
var providerKeys = map[string]string{
	"github classic":     "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
	"github oauth":       "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a",
	"github user":        "ghu_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8",
	"github server":      "ghs_" + "0123456789abcdefABCDEF0123456789abcd",
	"github refresh":     "ghr_" + "1B4a2e77838347a7E420ce178F2E7c6912E1",
	"github fine":        "github_pat_" + "11ABCDEFG0123456789abc_def0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu",
	"openai legacy":      "sk-" + "Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9jKl1nOp3rSt5v",
	"openai project":     "sk-proj-" + "Xy12_Ab34-Cd56Ef78Gh90Ij12Kl34Mn56Op78Qr90St12Uv34Wx56",
	"anthropic":          "sk-ant-api03-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c2V3b4N5m6Q7w8E9r0T1y2U3i4O5p6A7s8D9f0-AA",
	"aws key id":         "AKIA" + "IOSFODNN7EXAMPLE",
	"aws temporary":      "ASIA" + "Y34FZKBOKMUTVV7A",
	"slack bot":          "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
	"slack user":         "xoxp-" + "1234567890-0987654321-1122334455-abcdef0123456789abcdef0123456789",
	"gitlab":             "glpat-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn",
	"gitlab routable":    "glpat-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr.01.0q1w2e3r4",
	"google api key":     "AIza" + "SyD-1a2B3c4D5e6F7g8H9i0J_kLmNoPqRsT",
	"jwt without a name": "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLXZhbHVl",
	// names21.
	"npm":            "npm_" + "TCllNwh2WLQlMWVhybM1iQrsTj6rMQ0BOh6d",
	"stripe webhook": "whsec_" + "5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH",
	"hugging face":   "hf_" + "abcdefghijklmnopqrstuvwxyzABCDEFGH",
	"pypi":           "pypi-AgEIcHlwaS5vcmc" + "CJDU3OTM5NzQ3LWI5NzgtNDAxZi04ZjYwLTE2N2Q5YzFkZDJjYgACKlsz",
	"gitlab runner":  "glrt-" + "2CR8_eVxiioB1QmzPZwa",
	"digitalocean":   "dop_v1_" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	"shopify":        "shpat_" + "0123456789abcdef0123456789abcdef",
	"linear":         "lin_api_" + "Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9jKl1n",
	"perplexity":     "pplx-" + "Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9jKl1nOp3rSt5v",
	"sentry user":    "sntryu_" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	"slack app":      "xapp-" + "1-A0123456789-1234567890123-abcdef0123",
}

// TestProviderKeysMasked: a provider key with no name beside it is masked
// wherever text puts it: alone, in prose, in quotes, in a URL path or
// query, after an escape, at the end of a line.
func TestProviderKeysMasked(t *testing.T) {
	r := NewRedactorKey([]byte("provider"))
	for name, key := range providerKeys {
		for _, s := range []string{
			key,
			"the key " + key + " was revoked",
			`{"note": "use ` + key + `"}`,
			"'" + key + "'",
			"GET /mcp/s/" + key + "/sse HTTP/1.1",
			"https://api.example/v1?k=" + key + "&x=1",
			`line one\n` + key,
			"path%2F" + key,
			"(" + key + ")",
			"value=" + key + ",next",
		} {
			got := r.Scrub(s)
			if strings.Contains(got, key) || !strings.Contains(got, r.Mask(key)) {
				t.Errorf("%s: Scrub(%q) = %q, want the key masked", name, s, got)
			}
			if again := r.Scrub(got); again != got {
				t.Errorf("%s: a second Scrub changed %q to %q", name, got, again)
			}
		}
	}
}

// TestProviderKeyNearMisses: words that start like a provider key but are
// not of its shape stay as they are.
func TestProviderKeyNearMisses(t *testing.T) {
	r := NewRedactorKey([]byte("provider"))
	for _, s := range []string{
		"sk-learn", "pip install sk-learn-extra", "task-list", "the ask-the-user-for-permission flag",
		"sk-learn-compatible-estimator-pipeline", // long, but no digit and no upper-case letter
		"sk-1234567890123456789012",              // digits only
		"ASIAN", "ASIANS and EUROPEANS", "AKIA", "akia in prose", "asia-pacific", "Asia/Tokyo",
		"AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPLE0", "AKIAIOSFODNN1EXAMPLE", // 15, 17, a 1 (not base32)
		"akiaiosfodnn7example", "XAKIAIOSFODNN7EXAMPLE",
		"ghp_", "ghp_short", "ghp_" + strings.Repeat("a", 35), "xghp_" + strings.Repeat("a1", 18),
		"ghp-" + strings.Repeat("a1", 18), "GHP_" + strings.Repeat("a1", 18),
		"github_pat_short", "my_github_pat_" + strings.Repeat("a1", 20),
		"xoxb-", "xoxb-abcdefghijkl", "xoxz-123456789012", "xox-123456789012",
		"glpat-", "glpat-short1", "aglpat-" + strings.Repeat("a1", 10),
		"AIza", "AIzaSy", "AIza" + strings.Repeat("b", 34), "AIza" + strings.Repeat("b", 36), "aiza" + strings.Repeat("b", 35),
		"Ghost_writer", "skeleton-key-less", "xoxo- hugs and kisses",
		"sha256:850cbb3a8d795f0d41d4b4659900f785b9e13983b6ba2c595037847ad749e8d6",
	} {
		if got := r.Scrub(s); got != s {
			t.Errorf("Scrub(%q) = %q, want it unchanged", s, got)
		}
	}
}

// TestLowercaseAuthorizationDump: "authorization:" in lower case, as
// HTTP/2 header dumps print it, masks its value at the start of a line
// or before a scheme and a credential; in prose it stays.
func TestLowercaseAuthorizationDump(t *testing.T) {
	r := NewRedactorKey([]byte("provider"))
	for _, tc := range []struct {
		in, secret string
	}{
		{"authorization: token abcdef0123456789", "abcdef0123456789"},
		{":method: GET\nauthorization: token abcdef0123456789\naccept: */*", "abcdef0123456789"},
		{"sent authorization: bearer zyxwvu9876543210", "zyxwvu9876543210"},
		{"  > authorization: token 0123456789abcdef", "0123456789abcdef"},
		{"proxy-authorization: basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"},
		{"header authorization: Token q1w2e3r4t5y6", "q1w2e3r4t5y6"},
	} {
		if got := r.Scrub(tc.in); strings.Contains(got, tc.secret) {
			t.Errorf("Scrub(%q) = %q, want %q masked", tc.in, got, tc.secret)
		}
	}
	for _, s := range []string{
		"step-up authorization: ask for the scope",
		"the authorization: denied",
		"authorization: required", // at the start: masked, see below
	} {
		got := r.Scrub(s)
		if strings.HasPrefix(s, "authorization:") {
			if got == s {
				t.Errorf("Scrub(%q) unchanged: a dump line's value is masked", s)
			}
			continue
		}
		if got != s {
			t.Errorf("Scrub(%q) = %q, want it unchanged", s, got)
		}
	}
}

// TestAttack8Leftovers (redact10): the credentials attack8 found still
// recorded: a flag's value in text, a single credential word's value when
// it is shaped like a credential, the member names pass and pw, pair
// arrays and HAR-style pairs in text and JSON; and what must stay.
func TestAttack8Leftovers(t *testing.T) {
	r := NewRedactorKey([]byte("attack8"))
	const v = "Zq9secretVal42"
	for _, s := range []string{
		"mytool --password " + v + " --verbose",
		"ran: mytool --api-key " + v,
		`exec --client-secret=x --client-secret ` + v,
		"Token: " + v,
		"session: " + v + "\nnext line",
		`{"pass": "` + v + `"}`,
		`{"db_pass": "` + v + `", "user": "bob"}`,
		`{"pw": "` + v + `"}`,
		`{"smtpPass": "` + v + `"}`,
		`{"passwd": "` + v + `"}`,
		`[["X-Api-Key", "` + v + `"], ["Accept", "*/*"]]`,
		`[["X-Api-Key","` + v, // cut
		`{"name": "X-Api-Key", "value": "` + v + `"}`,
		`{"value": "` + v + `", "name": "Authorization"}`,
		`error: {"name":"DB_PASSWORD","value":"` + v + `"} was refused`,
		`cut {"pass": "` + v,
	} {
		for _, scrub := range []func(string) string{r.Scrub, func(s string) string { b, _ := r.Body([]byte(s), 0); return b }} {
			got := scrub(s)
			if strings.Contains(got, v) {
				t.Errorf("%q → %q: the value is kept", s, got)
			}
			if again := scrub(got); again != got {
				t.Errorf("%q: a second pass changed %q to %q", s, got, again)
			}
		}
	}
	for _, s := range []string{
		"Token: expired", "session: 2026-12-06", "token: see the docs", "Token: abc",
		`{"bypass": "yes-1234567"}`, `{"compass": "north-12345"}`, `{"passage": "text-12345"}`,
		`[["Accept", "*/*"]]`, `["token", "count", "x"]`, `{"name": "Accept", "value": "text/html"}`,
		"use --verbose output", "--timeout 30",
		`{"family": "transport", "pass": 5, "fail": 0}`, `{"pass": 5, "fail": 0`, // counts (probe's grades), parsed and cut
	} {
		if got := r.Scrub(s); got != s {
			t.Errorf("Scrub(%q) = %q, want it unchanged", s, got)
		}
		if got := string(r.RedactJSON([]byte(s))); got != s {
			t.Errorf("RedactJSON(%q) = %q, want it unchanged", s, got)
		}
	}
}
