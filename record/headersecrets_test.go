package record

import (
	"net/http"
	"net/textproto"
	"strings"
	"testing"
)

// TestAddHeaderSecrets: the credentials given in request headers are
// masked in any text, not only in their header; other headers and short
// parts are not secrets.
func TestAddHeaderSecrets(t *testing.T) {
	r := NewRedactor()
	h := http.Header{}
	h.Set("Authorization", "Bearer tok-1234567890")
	h.Set("X-Api-Key", "key-abcdefghij")
	h.Set("Cookie", "sid=cookie-value-1234; lang=en")
	h.Set("X-Trace", "trace-visible-0001")
	r.AddHeaderSecrets(h)
	text := "server said: bad token tok-1234567890, key key-abcdefghij, session cookie-value-1234, lang en, trace trace-visible-0001"
	out := r.Scrub(text)
	for _, secret := range []string{"tok-1234567890", "key-abcdefghij", "cookie-value-1234"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q left in %q", secret, out)
		}
	}
	for _, kept := range []string{"trace-visible-0001", "lang en"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q masked in %q: not a credential", kept, out)
		}
	}
}

// TestCommonHeaderRules: the names of commonHeaders are written as
// net/http canonicalizes them (another spelling would never be looked up),
// commonHeader finds each at its index, and each has the rule
// classifyHeaderName gives it.
func TestCommonHeaderRules(t *testing.T) {
	for i, name := range commonHeaders {
		if c := textproto.CanonicalMIMEHeaderKey(name); c != name {
			t.Errorf("%q is not canonical (%q)", name, c)
		}
		if commonHeader(name) != i {
			t.Errorf("commonHeader(%q) = %d, want %d", name, commonHeader(name), i)
		}
		if want := classifyHeaderName(name); commonHeaderRules[i] != want || classifyHeader(name) != want {
			t.Errorf("%s: rule %v, want %v", name, commonHeaderRules[i], want)
		}
	}
	if commonHeader("X-Api-Key") != -1 || commonHeader("content-type") != -1 {
		t.Error("commonHeader finds a name it does not list")
	}
	if classifyHeader("Authorization") != headerAuth || classifyHeader("Mcp-Session-Id") != headerHash || classifyHeader("Content-Type") != headerScrub {
		t.Error("the common rules are not the rules")
	}
}
