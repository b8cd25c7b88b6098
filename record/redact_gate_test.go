package record

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// oracleScrubPatterns is scrubPatterns as it was before its gate
// (patternsMayApply, redact_gate.go), kept verbatim as the test oracle,
// with the patterns added since (maskUserinfo, the Python names,
// maskAssignments, maskEnclosedAssignments) run under their own conditions and the scheme
// credentials masked as scrubPatterns masks them (maskSchemeCredentials), not the gate's: the
// gated function must return what this one returns, for every string and
// context.
func (r *Redactor) oracleScrubPatterns(s string, ctx nameContext) string {
	if strings.Contains(s, "@") && strings.Contains(s, "://") {
		s = r.maskUserinfo(s)
	}
	lower := strings.ToLower(s)
	if strings.Contains(lower, "-----begin") {
		s = r.maskPEM(s)
	}
	if strings.Contains(lower, "bearer") || strings.Contains(lower, "basic") || strings.Contains(lower, "dpop") {
		// The pattern's own function since ca83b06 (a credential a quote
		// closes): the oracle is of the gate, not of the pattern.
		s = r.maskSchemeCredentials(s)
	}
	hints := lower
	if hasLetterEscape(s) { // an escaped name (redact12), decoded for the hints
		hints = lower + "\n" + strings.ToLower(decodeName(lower))
	}
	if hasAny(hints, nameHints) || ctx == ctxForm && hasAny(hints, []string{"code", "state", "sig"}) {
		if strings.IndexByte(s, ':') >= 0 {
			s = r.maskFieldLines(s)
			if strings.IndexByte(s, '"') >= 0 {
				s = r.maskAfterNames(s, jsonNameRE, jsonMemberValueRE, jsonTextName, countValue)
				if strings.IndexByte(s, '\\') >= 0 {
					s = r.maskAfterNames(s, jsonEscNameRE, jsonEscValueRE, func(n string) bool { return sensitiveName(n, ctxJSON) })
				}
			}
			if strings.Contains(s, "'") {
				s = r.maskAfterNames(s, pyNameRE, pyValueRE, jsonTextName, countValue)
			}
		}
		if strings.Contains(s, `"`) {
			s = r.maskTextPairs(s)
		}
		if strings.Contains(s, "--") {
			s = r.maskAfterNames(s, flagNameRE, flagValueRE, jsonTextName)
			if strings.Contains(s, `"--`) {
				s = r.maskAfterNames(s, jsonFlagRE, jsonFlagValueRE, jsonTextName) // mask22
			}
		}
		if strings.IndexByte(s, '=') >= 0 {
			s = r.maskAfterNames(s, formNameRE, formValueRE, func(n string) bool { return sensitiveName(n, ctx) })
			s = r.maskAssignments(s, ctx)
			s = r.maskEnclosedAssignments(s, ctx) // outsider20
		}
		if strings.Contains(lower, "password") && (strings.Contains(lower, "machine") || strings.Contains(lower, "default")) {
			s = r.maskNetrc(s) // redact20
		}
		if strings.ContainsAny(s, " \t") {
			s = r.maskBlankSeparated(s) // names21
		}
	}
	if strings.Contains(lower, "curl") && strings.Contains(s, "-u") {
		s = r.maskCurlUser(s) // redact20
	}
	if ctx != ctxForm && strings.ContainsAny(s, "?&") && hasAny(lower, queryHints) {
		s = r.maskAfterNames(s, queryNameRE, formValueRE, func(n string) bool { return sensitiveName(n, ctxForm) })
	}
	s = r.maskEscapedText(s, ctx) // an escaped name or separator (redact13)
	if hasAny(lower, providerHints) {
		s = r.maskProviderKeys(s)
	}
	if strings.Count(s, ".") >= 2 || strings.Contains(s, `\u002`) { // and its dots escaped (redact20)
		s = r.maskJWTs(s)
	}
	return s
}

// oracleScrub is Scrub over the oracle.
func (r *Redactor) oracleScrub(s string) string {
	if s == "" {
		return s
	}
	s = r.replaceSecrets(s)
	if _, ok := cleanWords[s]; ok {
		return s
	}
	return r.oracleScrubPatterns(s, ctxJSON)
}

var gateContexts = []nameContext{ctxJSON, ctxForm, ctxHeader}

// checkGate compares the gated patterns with the oracle on s in every
// context, and checks the gate's own promise: when it says no pattern
// applies, the oracle leaves s as it is.
func checkGate(t *testing.T, r *Redactor, s string) {
	t.Helper()
	for _, ctx := range gateContexts {
		want := r.oracleScrubPatterns(s, ctx)
		if got := r.scrubPatterns(s, ctx); got != want {
			t.Fatalf("scrubPatterns(%q, %d) = %q, the oracle gives %q", s, ctx, got, want)
		}
		if !patternsMayApply(s, ctx) && want != s {
			t.Fatalf("patternsMayApply(%q, %d) = false, but the oracle changes it to %q", s, ctx, want)
		}
	}
	if got, want := r.Scrub(s), r.oracleScrub(s); got != want {
		t.Fatalf("Scrub(%q) = %q, the oracle gives %q", s, got, want)
	}
}

// gateFragments are the pieces the differential tests build strings from:
// every hint and pattern shape of scrubPatterns, separators its patterns
// look for, non-ASCII runes that strings.ToLower maps to ASCII letters
// (the Kelvin sign K → k, U+0130 İ → i) or that regexp's case folding
// matches (ſ ~ s), and plain words.
var gateFragments = func() []string {
	f := []string{
		"-----BEGIN ", "-----END ", "PRIVATE KEY", "-----", "CERTIFICATE",
		"Bearer ", "bearer", "Basic ", "DPoP ", "dpop", "token68", "abc.def", "=", "==",
		"eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxIn0", "e30", "e30K", "ewkg", "ewogIC", "eyAi", "e3", "ew", "ex", "e_", "e-", "eyA", ".", "..", "sig-part",
		":", ": ", "\"", "\\\"", "\\", "\":\"", "\": ", "=", "&", "?", "&amp;", ";", "#", " ", "\t", "\n", "\r\n",
		"X-Api-Key", "api_key", "apiKey", "client_secret", "Authorization", "AUTHORIZATION", "authorization",
		"Cookie", "session", "Set-Cookie", "password", "passwd", "pwd", "passphrase", "passcode", "accesscode",
		"credential", "assertion", "jwt", "signature", "codeverifier", "code_verifier", "progressToken",
		"code", "state", "sig", "code=", "state=", "sig=", "Code", "STATE", "Sig",
		"monkey", "author", "keyword", "http://127.0.0.1:8080/mcp", "1.2.3", "v1.0", "example.com",
		"the tool call completed", "TOOL_SUCCESS", "application/json", "Thu, 03 Dec 2026 14:34:00 GMT",
		"pin", "pin=", "PIN: ", "ping", "mapping", "%61", "%2D", "%5F", "%255F", "\\u0061", "\\u0074", "%7B", "p%61ss", "\\u005f", // redact12
		"\\x61", "\\x5f", "&#97;", "&#x61;", "&#0061;", "&#61;", "&#x3D;", "&#58;", "%3D", "%3A", "%253D", "%20", "+", "&quot;", "&apos;", "&colon;", "\\u003d", "\\u003a", "&amp;#97;", "#1", // redact13
		"\u212aey", "to\u212aen", "basİc", "sİg", "İ", "\u212a", "ſecret", "ſ", "é", "\xff", "\u2028", "日本",
		"PlAnTeD-0123456789-value", "[redacted]", "[redacted:len=3:h=0123abcd]",
		"@", "://", "postgres://", "u:pw@", "'", "'password': ", " = ", "=\"", "='",
		"ghp_", "github_pat_", "sk-", "sk-proj-", "AKIA", "ASIA", "xoxb-", "glpat-", "AIza", "A1b2C3d4E5f6G7h8I9", "IOSFODNN7EXAMPLE", "0123456789", "_-",
		"client_secret ", "secret.value: ", "user.otp: ", "OTP", "machine h\nlogin u\npassword ", "data: ", "InvalidTokenError: ", "_expires_at", "key_id", "progress.token", "test.pass: ", // names21
		"npm_TCllNwh2WLQlMWVhybM1iQrsTj6rMQ0BOh6d", "whsec_", "0123456789abcdef0123456789abcdef",
	}
	for _, l := range [][]string{pemHints, nameHints, formHints, queryHints, providerHints} {
		f = append(f, l...)
	}
	for _, k := range providerKeys {
		f = append(f, k)
	}
	return f
}()

// mutateCase changes the case of s's ASCII letters at random.
func mutateCase(rng *rand.Rand, s string) string {
	switch rng.IntN(4) {
	case 0:
		return s
	case 1:
		return strings.ToUpper(s)
	case 2:
		return strings.ToLower(s)
	}
	b := []byte(s)
	for i, c := range b {
		if rng.IntN(2) == 0 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = c ^ 0x20
		}
	}
	return string(b)
}

// randomGateString joins fragments in random case and cuts the result at
// random byte offsets, so that hints are split across the string's ends
// and joined across fragment boundaries ("to" + "ken").
func randomGateString(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(10) {
		fr := gateFragments[rng.IntN(len(gateFragments))]
		if rng.IntN(5) == 0 && len(fr) > 1 {
			i := rng.IntN(len(fr))
			if rng.IntN(2) == 0 {
				fr = fr[:i]
			} else {
				fr = fr[i:]
			}
		}
		b.WriteString(mutateCase(rng, fr))
	}
	s := b.String()
	if rng.IntN(4) == 0 && len(s) > 0 {
		i := rng.IntN(len(s) + 1)
		j := i + rng.IntN(len(s)-i+1)
		s = s[i:j]
	}
	return s
}

// TestScrubGateMatchesOracle: the gated scrubPatterns returns what the old
// one returns, on every hint and pattern in every case, split and joined
// at every offset, with and without a registered secret.
func TestScrubGateMatchesOracle(t *testing.T) {
	plain := NewRedactorKey([]byte("gate"))
	withSecret := NewRedactorKey([]byte("gate"))
	if err := withSecret.AddSecret("sk-gate-secret-0123"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Redactor{plain, withSecret} {
		// Each fragment alone and in three cases, and every substring of
		// it (a hint cut at either end).
		for _, fr := range gateFragments {
			for _, v := range []string{fr, strings.ToUpper(fr), strings.ToLower(fr)} {
				for i := 0; i <= len(v); i++ {
					for j := i; j <= len(v); j++ {
						checkGate(t, r, v[i:j])
					}
				}
			}
		}
		// Each pattern shape around a value, in the contexts the
		// redactor meets it.
		for _, s := range []string{
			"X-Api-Key: abcdefgh\nnext", "password: hunter22", `{"apiSecret": "v"}`, `\"client_secret\":\"v\"`,
			"a=1&access_token=abc", "?code=xyz&amp;state=s1", "code=abc", "state=abc&sig=def",
			"see Bearer abc.def-ghi and more", "BASIC dXNlcjpwYXNz", "dPoP tok",
			"-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", "-----begin x-----cut",
			"token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln here", "e3x.y.z", "ew.a.b", "ewa.b.c", "eza.b.c", "e-a.b.c", "e30.x.y", "ewkgIn0.a.b", "x=eyAiIn0.a.", "(e30K.e30K.sig)",
			"\u212aey: abcdefgh", "to\u212aen=abc", "ba\u0130c xyz", "\u0130", "sk-gate-secret-0123 and sk-gate-secret-0123",
			"http://user:pw@127.0.0.1:8080/mcp?x=1&token=2#state=3",
		} {
			checkGate(t, r, s)
		}
		rng := rand.New(rand.NewPCG(13, 2026))
		for range 20000 {
			checkGate(t, r, randomGateString(rng))
		}
	}
}

// TestScrubGateSkipsTheProxyRecord: the strings of a typical exchange
// record (bench/proxybench's JSON workload) pass the gate without a
// pattern, which is what the gate is for; and the hints do not.
func TestScrubGateSkipsTheProxyRecord(t *testing.T) {
	rec := benchProxyJSONRecord()
	strs := []string{rec.ID, rec.Client, rec.Reason, rec.Tool, rec.ArgsHash, rec.URL}
	for _, h := range []http.Header{rec.RequestHeaders, rec.ResponseHeaders} {
		for _, vs := range h {
			strs = append(strs, vs...)
		}
	}
	for _, s := range strs {
		if patternsMayApply(s, ctxJSON) {
			t.Errorf("patternsMayApply(%q) = true: the record's strings should skip the patterns", s)
		}
	}
	for _, l := range [][]string{pemHints, nameHints, providerHints} {
		for _, h := range l {
			for _, v := range []string{h, strings.ToUpper(h), "x " + h + " y"} {
				if !patternsMayApply(v, ctxJSON) {
					t.Errorf("patternsMayApply(%q) = false for a hint", v)
				}
			}
		}
	}
	for _, s := range []string{"ä", "\u212a", "ey.a.b", "?code"} {
		if !patternsMayApply(s, ctxJSON) {
			t.Errorf("patternsMayApply(%q) = false", s)
		}
	}
	if patternsMayApply("code", ctxJSON) || !patternsMayApply("code", ctxForm) {
		t.Error(`"code" alone gates the patterns in a form only`)
	}
}

// FuzzScrubGate compares the gated scrubPatterns with the oracle on the
// fuzzer's strings, in every context (go test -fuzz FuzzScrubGate
// -fuzztime 200000x ./record).
func FuzzScrubGate(f *testing.F) {
	for _, fr := range gateFragments {
		f.Add(fr)
	}
	f.Add("X-Api-Key: abcdefgh\n{\"token\":\"v\"} ?code=1&state=2 Bearer a.b.c eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln")
	f.Add("to\u212aen=abc")
	f.Add("client_secret Hx7q2Lm9\ndata: api_key 'a b'\nuser.otp: 804172 otp=1 secret.value: v InvalidTokenError: x client_secret_expires_at: 0 (key_id=k) npm_TCllNwh2WLQlMWVhybM1iQrsTj6rMQ0BOh6d whsec_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH") // names21
	r := NewRedactorKey([]byte("gate"))
	if err := r.AddSecret("sk-gate-secret-0123"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			t.Skip()
		}
		checkGate(t, r, s)
	})
}

// BenchmarkScrubGate is the gate over the strings of a proxy exchange
// record (bench/proxybench's JSON workload), all of which it lets through.
func BenchmarkScrubGate(b *testing.B) {
	rec := benchProxyJSONRecord()
	strs := []string{rec.ID, rec.Client, rec.Reason, rec.Tool, rec.ArgsHash, rec.URL}
	for _, h := range []http.Header{rec.RequestHeaders, rec.ResponseHeaders} {
		for _, vs := range h {
			strs = append(strs, vs...)
		}
	}
	for b.Loop() {
		for _, s := range strs {
			if patternsMayApply(s, ctxJSON) {
				b.Fatal(s)
			}
		}
	}
}
