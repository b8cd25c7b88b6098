package record

import "strings"

// Provider keys: credentials recognised by their own shape, with no name
// beside them (a key pasted into a tool's argument, quoted by a server in
// an error, a path segment). Each shape is a fixed prefix the provider
// documents and a body of a fixed alphabet and length, so that ordinary
// words do not match ("sk-learn", "task-list", "ASIAN", "akia" in prose):
//
//	ghp_ gho_ ghu_ ghs_ ghr_ + 36 or more letters and digits   GitHub tokens
//	github_pat_ + 22 or more letters, digits and "_"          GitHub fine-grained tokens
//	sk- (sk-proj-, sk-ant-, …) + 20 or more of [A-Za-z0-9_-],
//	    with a digit, an upper-case and a lower-case letter   OpenAI and Anthropic keys
//	AKIA, ASIA + 16 of [A-Z2-7]                               AWS access key ids
//	xoxa- xoxb- xoxo- xoxp- xoxr- xoxs- + 10 or more of
//	    [A-Za-z0-9-], with a digit                            Slack tokens
//	glpat- + 20 or more of [A-Za-z0-9_-] (then ".…" kept in)  GitLab personal access tokens
//	AIza + 35 of [A-Za-z0-9_-]                                Google API keys
//	sk_live_ sk_test_ rk_live_ rk_test_ + 24 to 247 letters
//	    and digits                                            Stripe secret and restricted keys
//	whsec_ + 24 to 247 letters and digits                     Stripe webhook signing secrets
//	npm_ + 36 letters and digits                              npm access tokens
//	hf_ + 34 letters                                          Hugging Face tokens
//	pypi-AgEIcHlwaS5vcmc + 50 or more of [A-Za-z0-9_-]        PyPI upload tokens
//	glrt- gldt- + 20 or more of [A-Za-z0-9_-]                 GitLab runner and deploy tokens
//	dop_v1_ doo_v1_ dor_v1_ + 64 hex digits                   DigitalOcean tokens
//	shpat_ shpca_ shppa_ shpss_ + 32 hex digits               Shopify tokens and shared secrets
//	lin_api_ + 40 letters and digits                          Linear API keys
//	pplx- + 48 letters and digits                             Perplexity API keys
//	sntryu_ + 64 hex digits                                   Sentry user tokens
//	xapp- + 10 or more of [A-Za-z0-9-], with a digit          Slack app-level tokens
//
// (names21: the prefixes and lengths of gitleaks' rules and GitHub's
// secret scanning partners; whsec_ from Stripe's webhook documentation.)
//
// The prefix is matched in its case, after a start of text or a byte that
// is not a letter, digit or "_", and the body must end where its alphabet
// ends: a longer run is not a key of that shape.

// providerHints are the prefixes, lower-cased for the gate
// (redact_gate.go), under which scrubPatterns looks for a provider key,
// and the webhook URLs' hints.
var providerHints = []string{
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-",
	"akia", "asia", "xoxa-", "xoxb-", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "glpat-", "aiza",
	"sk_live_", "sk_test_", "rk_live_", "rk_test_",
	"whsec_", "npm_", "hf_", "pypi-agei", "glrt-", "gldt-", "dop_v1_", "doo_v1_", "dor_v1_",
	"shpat_", "shpca_", "shppa_", "shpss_", "lin_api_", "pplx-", "sntryu_", "xapp-",
	// webhookHints (redact_webhook.go), last: a slice of this array
	// (appending them made a second array at init, TestInitHeap).
	"hooks.slack.com", "/webhooks", "%2fwebhooks",
}

// providerShape is one provider key shape: its prefix (in its case) and
// the length of the key that starts s with it, 0 when s is no such key.
type providerShape struct {
	prefix string
	keyLen func(s string) int
}

var providerShapes = []providerShape{
	{"github_pat_", func(s string) int { return runShape(s, 11, isWordByte, 22, 255, 0) }},
	{"ghp_", githubClassic}, {"gho_", githubClassic}, {"ghu_", githubClassic}, {"ghs_", githubClassic}, {"ghr_", githubClassic},
	{"sk-", func(s string) int { return runShape(s, 3, isKeyByte, 20, 400, needDigit|needUpper|needLower) }},
	{"AKIA", awsKeyID}, {"ASIA", awsKeyID},
	{"xoxa-", slackToken}, {"xoxb-", slackToken}, {"xoxo-", slackToken}, {"xoxp-", slackToken}, {"xoxr-", slackToken}, {"xoxs-", slackToken},
	{"glpat-", gitlabToken},
	{"AIza", func(s string) int { return runShape(s, 4, isKeyByte, 35, 35, 0) }},
	{"sk_live_", stripeKey}, {"sk_test_", stripeKey}, {"rk_live_", stripeKey}, {"rk_test_", stripeKey},
	{"whsec_", func(s string) int { return runShape(s, 6, isAlnum, 24, 247, 0) }},
	{"npm_", func(s string) int { return runShape(s, 4, isAlnum, 36, 36, 0) }},
	{"hf_", func(s string) int { return runShape(s, 3, isLetter, 34, 34, 0) }},
	{"pypi-AgEIcHlwaS5vcmc", func(s string) int { return runShape(s, 20, isKeyByte, 50, 1000, 0) }},
	{"glrt-", gitlabToken5}, {"gldt-", gitlabToken5},
	{"dop_v1_", hex64}, {"doo_v1_", hex64}, {"dor_v1_", hex64},
	{"shpat_", shopify}, {"shpca_", shopify}, {"shppa_", shopify}, {"shpss_", shopify},
	{"lin_api_", func(s string) int { return runShape(s, 8, isAlnum, 40, 40, 0) }},
	{"pplx-", func(s string) int { return runShape(s, 5, isAlnum, 48, 48, 0) }},
	{"sntryu_", func(s string) int { return runShape(s, 7, isHexByte, 64, 64, 0) }},
	{"xapp-", slackToken},
}

// providerFirst marks the first bytes of the providerShapes' prefixes:
// maskProviderKeys looks for a key only at them.
var providerFirst = func() (t [256]bool) {
	for _, p := range providerShapes {
		t[p.prefix[0]] = true
	}
	return
}()

func hex64(s string) int { return runShape(s, 7, isHexByte, 64, 64, 0) }

func shopify(s string) int { return runShape(s, 6, isHexByte, 32, 32, 0) }

// gitlabToken5 is gitlabToken for a prefix of 5 bytes (glrt-, gldt-).
func gitlabToken5(s string) int { return runShape(s, 5, isKeyByte, 20, 255, 0) }

// stripeKey: a Stripe secret or restricted key, "sk_live_" and the like
// and 24 to 247 letters and digits (redact20: "sk_live_…" in a tool's
// error was recorded in the clear). No digit is asked for: about 1.5% of
// the 24-character keys have none (review20), and the prefix with 24
// letters and digits after it is no word. A publishable key (pk_live_) is
// no secret.
func stripeKey(s string) int { return runShape(s, 8, isAlnum, 24, 247, 0) }

func githubClassic(s string) int { return runShape(s, 4, isAlnum, 36, 251, 0) }

func slackToken(s string) int { return runShape(s, 5, isSlackByte, 10, 250, needDigit) }

// awsKeyID: 16 of AWS's base32 alphabet, A-Z and 2-7, and then no letter
// or digit.
func awsKeyID(s string) int { return runShape(s, 4, isAlnum, 16, 16, needBase32) }

// gitlabToken: a newer token goes on with ".<version>.<checksum>", kept
// in the key.
func gitlabToken(s string) int {
	n := runShape(s, 6, isKeyByte, 20, 255, 0)
	if n == 0 {
		return 0
	}
	for n+1 < len(s) && s[n] == '.' && isKeyByte(s[n+1]) {
		n++
		for n < len(s) && isKeyByte(s[n]) {
			n++
		}
	}
	return n
}

// What runShape requires of a key's body besides its alphabet and length.
const (
	needDigit = 1 << iota
	needUpper
	needLower
	needBase32 // only A-Z and 2-7
)

// runShape returns the length of the key at the start of s whose prefix
// is pre bytes long and whose body is the run of bytes in its alphabet
// that follows: min to max bytes long, holding what need asks; 0 when the
// run is shorter or longer or lacks it.
func runShape(s string, pre int, in func(byte) bool, min, max int, need int) int {
	n := pre
	var have int
	for n < len(s) && in(s[n]) {
		c := s[n]
		switch {
		case c >= '0' && c <= '9':
			have |= needDigit
			if c < '2' || c > '7' {
				have |= 1 << 8 // not base32
			}
		case c >= 'A' && c <= 'Z':
			have |= needUpper
		case c >= 'a' && c <= 'z':
			have |= needLower | 1<<8
		default:
			have |= 1 << 8
		}
		n++
		if n-pre > max {
			return 0
		}
	}
	if n-pre < min || have&need&^needBase32 != need&^needBase32 || need&needBase32 != 0 && have&(1<<8) != 0 {
		return 0
	}
	return n
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

// isWordByte: a letter, a digit or "_".
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

// isKeyByte: base64url's alphabet.
func isKeyByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

func isSlackByte(c byte) bool { return isAlnum(c) || c == '-' }

// hasProviderHint reports whether lower (s lower-cased) holds a provider
// key's prefix: the condition under which scrubPatterns runs
// maskProviderKeys.
func hasProviderHint(lower string) bool { return hasAny(lower, providerHints) }

// keyStart reports whether a key may start at s[i]: at the start of s,
// after a byte that is not a letter, digit or "_", or after an escape
// that ends in one ("\n" in JSON text, "%2F" in a URL).
func keyStart(s string, i int) bool {
	switch {
	case i == 0 || !isWordByte(s[i-1]):
		return true
	case i >= 2 && s[i-2] == '\\':
		return true
	case i >= 3 && s[i-3] == '%' && isHexByte(s[i-2]) && isHexByte(s[i-1]):
		return true
	}
	return false
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// maskProviderKeys masks every provider key in s (see providerShapes).
func (r *Redactor) maskProviderKeys(s string) string { return r.maskFound(s, providerKeyAt) }

// providerKeyAt returns the end of the provider key starting at s[i].
func providerKeyAt(s string, i int) (start, end int, ok bool) {
	if !providerFirst[s[i]] || !keyStart(s, i) {
		return 0, 0, false
	}
	for _, p := range providerShapes {
		if !strings.HasPrefix(s[i:], p.prefix) {
			continue
		}
		if n := p.keyLen(s[i:]); n > 0 {
			return i, i + n, true
		}
	}
	return 0, 0, false
}

// maskFound returns s with every credential find reports masked: find(s, i)
// looks at s[i] and gives the bytes [start, end) to mask (start ≥ i, end >
// start), and the scan goes on after them.
func (r *Redactor) maskFound(s string, find func(s string, i int) (start, end int, ok bool)) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		start, end, ok := find(s, i)
		if !ok {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(r.Mask(s[start:end]))
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
