package record

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Redacted replaces a credential value when its length and hash would
// mislead: a value cut by a capture limit. A whole value gets a mask
// (Redactor.Mask).
const Redacted = "[redacted]"

// MinSecretLen is the shortest secret AddSecret accepts: shorter strings
// would mangle unrelated text and are not secrets anyway.
const MinSecretLen = 4

// ErrShortSecret is returned by AddSecret for a secret shorter than
// MinSecretLen.
var ErrShortSecret = errors.New("record: secret too short to scrub safely")

// Redactor removes credentials from records. Its rules are fixed (see
// docs/records.md and docs/security.md): credentials are found by the shape
// of their name (header, query, form and JSON member names containing
// token, secret, passw, key, auth, session, …) and by the shape of their
// value (a JWT, "Bearer …", a PEM block), plus the secrets a caller
// registers with AddSecret. A credential becomes a mask that keeps its
// length and a short keyed hash, never the value. A Redactor is safe for
// concurrent use; the zero value has no extra secrets, a random hash key,
// and is ready to use.
type Redactor struct {
	mu sync.Mutex // serializes AddSecret
	// secrets holds the raw secrets and their encoded variants, longest
	// first. A list is never changed once stored: AddSecret stores a new
	// one, so a reader (every Scrub) loads it without a lock and walks a
	// list no writer touches.
	secrets atomic.Pointer[[]secret]

	keyOnce sync.Once
	key     []byte
}

// secret is one registered secret in one of its spellings.
type secret struct {
	variant, raw string
}

// Default is the redactor used by the package-level helpers and by encoders
// that name none. The CLI registers its secrets here.
var Default = &Redactor{}

// NewRedactor returns a redactor with no extra secrets and a random hash
// key: its masks compare with each other, not with another redactor's.
func NewRedactor() *Redactor { return &Redactor{} }

// NewRedactorKey returns a redactor whose masks hash under key, so that
// masks made by two processes given the same key compare.
func NewRedactorKey(key []byte) *Redactor {
	r := &Redactor{key: append([]byte(nil), key...)}
	r.keyOnce.Do(func() {})
	return r
}

func (r *Redactor) hashKey() []byte {
	r.keyOnce.Do(func() {
		if r.key == nil {
			r.key = make([]byte, 32)
			if _, err := rand.Read(r.key); err != nil {
				panic("record: no randomness for the redactor's hash key: " + err.Error())
			}
		}
	})
	return r.key
}

// isMask reports whether s is a recorded credential, Redacted or a mask:
// the regular expression ^\[redacted(?::len=\d+:h=[0-9a-f]{8})?\]$,
// checked by hand (every credential header of every record is checked;
// TestIsMaskMatchesRegexp compares the two).
func isMask(s string) bool {
	const head, tail = "[redacted", "]"
	if len(s) < len(head)+len(tail) || s[:len(head)] != head || s[len(s)-1] != ']' {
		return false
	}
	s = s[len(head) : len(s)-1]
	if s == "" {
		return true
	}
	const lenKey, hashKey = ":len=", ":h="
	if len(s) < len(lenKey) || s[:len(lenKey)] != lenKey {
		return false
	}
	s = s[len(lenKey):]
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return false
	}
	s = s[digits:]
	return len(s) == len(hashKey)+8 && s[:len(hashKey)] == hashKey && isLowerHex(s[len(hashKey):])
}

// isLowerHex reports whether s is made of the digits 0-9 and a-f only.
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Mask returns the recorded form of the credential v:
// "[redacted:len=N:h=HHHHHHHH]", N its length in bytes and H the first 8 hex
// digits of its HMAC-SHA256 under the redactor's key. The length and hash
// tell a diagnosis whether two exchanges carried the same credential, or an
// empty or truncated one, without the value; the key keeps a guessable
// value (a password) from being confirmed offline. A value that is already
// redacted is returned unchanged.
func (r *Redactor) Mask(v string) string {
	if r == nil {
		r = Default
	}
	if isMask(v) || maskAmidBlanks(v) {
		// A mask already; one with the blanks an escaped pass read
		// beside it ("[redacted…]+", maskAmidBlanks) too, in whichever
		// pass reads it as a value.
		return v
	}
	m := hmac.New(sha256.New, r.hashKey())
	m.Write([]byte(v))
	return "[redacted:len=" + strconv.Itoa(len(v)) + ":h=" + hex.EncodeToString(m.Sum(nil)[:4]) + "]"
}

// IsRedacted reports whether a recorded value is redacted: Redacted, a
// mask, or an authorization scheme followed by one ("Bearer [redacted:…]").
func IsRedacted(s string) bool {
	if isMask(s) {
		return true
	}
	_, rest, ok := strings.Cut(s, " ")
	return ok && isMask(rest)
}

// AddSecret registers a secret to be masked wherever it appears in a string
// of a record, also in its URL-query-escaped and JSON-escaped forms.
// Surrounding white space is ignored; an empty secret is a no-op; a secret
// shorter than MinSecretLen is refused with ErrShortSecret.
func (r *Redactor) AddSecret(sec string) error {
	sec = strings.TrimSpace(sec)
	if sec == "" {
		return nil
	}
	if len(sec) < MinSecretLen {
		return ErrShortSecret
	}
	variants := []string{sec, url.QueryEscape(sec), url.PathEscape(sec)}
	var b bytes.Buffer
	writeJSONString(&b, sec)
	variants = append(variants, b.String()[1:b.Len()-1])
	// A line escapes a bidi, C1 or other invisible character as \u (the
	// encoder's visible.JSON): checkLine reads the line so written.
	variants = append(variants, string(visible.JSON([]byte(variants[len(variants)-1]))))
	r.mu.Lock()
	defer r.mu.Unlock()
	list := slices.Clone(r.secretList())
	for _, v := range variants {
		if !slices.ContainsFunc(list, func(s secret) bool { return s.variant == v }) {
			list = append(list, secret{variant: v, raw: sec})
		}
	}
	slices.SortStableFunc(list, func(a, b secret) int { return len(b.variant) - len(a.variant) })
	r.secrets.Store(&list)
	return nil
}

// AddSecret registers a secret with the Default redactor.
func AddSecret(secret string) error { return Default.AddSecret(secret) }

func (r *Redactor) secretList() []secret {
	if r == nil {
		return nil
	}
	if p := r.secrets.Load(); p != nil {
		return *p
	}
	return nil
}

// minHeaderSecret is the shortest credential header value taken as a
// secret of its own record: shorter ones would mask ordinary text.
const minHeaderSecret = 8

// withHeaderSecrets returns a redactor that also knows, as secrets, the
// values of the credential headers in hs (the credential after an auth
// scheme, each cookie's value), so that a server quoting the request's own
// API key or token in its body or error message ("invalid API key: sk-…")
// is masked too, in the proxy and the server log, which were never told
// the secret. r itself is returned when there are none.
func (r *Redactor) withHeaderSecrets(hs ...http.Header) *Redactor {
	var fs [][]headerField
	for _, h := range hs {
		fs = append(fs, readHeaders(nil, h))
	}
	return r.withFieldSecrets(fs...)
}

// withFieldSecrets is withHeaderSecrets for headers read by readHeaders.
func (r *Redactor) withFieldSecrets(hs ...[]headerField) *Redactor {
	var extra []string
	for _, h := range hs {
		for _, f := range h {
			rule := f.rule
			if rule != headerMask && rule != headerMeasure && rule != headerAuth && rule != headerCookie {
				continue
			}
			for _, v := range f.values {
				if IsRedacted(v) || rule == headerMeasure && isNumber(strings.TrimSpace(v)) {
					continue // a time or a count is no secret to mask elsewhere
				}
				switch rule {
				case headerAuth:
					if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
						v = strings.TrimSpace(cred)
					}
					extra = append(extra, v)
				case headerCookie:
					for _, c := range strings.Split(v, ";") {
						if _, val, ok := strings.Cut(c, "="); ok {
							extra = append(extra, strings.TrimSpace(val))
						}
					}
				default:
					extra = append(extra, strings.TrimSpace(v))
				}
			}
		}
	}
	extra = slices.DeleteFunc(extra, func(v string) bool { return len(v) < minHeaderSecret || isMask(v) })
	if len(extra) == 0 {
		return r
	}
	if r == nil {
		r = Default
	}
	d := &Redactor{key: r.hashKey()}
	d.keyOnce.Do(func() {})
	list := slices.Clone(r.secretList())
	d.secrets.Store(&list)
	for _, v := range extra {
		_ = d.AddSecret(v)
	}
	return d
}

// replaceSecrets masks every registered secret in s.
func (r *Redactor) replaceSecrets(s string) string {
	for _, sec := range r.secretList() {
		if strings.Contains(s, sec.variant) {
			s = strings.ReplaceAll(s, sec.variant, r.Mask(sec.raw))
		}
	}
	return s
}

// The text patterns, compiled on first use (lazyRegexp): the gate
// (redact_gate.go) keeps nearly every string of a proxy's records from
// them.
var (
	// "Bearer <token68>", "Basic <token68>" and "DPoP <token68>", but not
	// an auth-param such as `Bearer realm="x"` or `Bearer error=invalid_token`.
	// A credential may end at a closing quote (`header "Bearer abc"`,
	// `"Basic dXNlcg=="`); schemeCredential tells that quote from the one
	// that opens an auth-param's quoted value.
	bearerRE = lazyRegexp(`(?i)\b(bearer|basic|dpop)(\s+)([A-Za-z0-9\-._~+/]+=*)([^A-Za-z0-9\-._~+/=]|$)`)
	// "name": in JSON text that could not be parsed (cut, or an SSE
	// stream); the value may end at the cut.
	jsonNameRE = lazyRegexp(`"((?:[^"\\\n]|\\.){1,200})"\s*:\s*`)
	// \"name\": inside a JSON string.
	jsonEscNameRE = lazyRegexp(`\\+"([^"\\]{1,200})\\+"\s*:\s*`)
	// name= after a start of text, white space, ?, &, ; or # (a fragment
	// written as a query: "#access_token=…"); the name may hold
	// percent-escapes ("client%5Fsecret=", judged decoded).
	formNameRE = lazyRegexp(`(?:^|[?&;#\s])([A-Za-z0-9_.\-\[\]%]{1,200})=`)
	// queryNameRE is a name in a URL query written in text: after "?",
	// "&" or an HTML-escaped "&amp;".
	queryNameRE = lazyRegexp(`[?&](?:amp;)?([A-Za-z0-9_.\-\[\]%]{1,200})=`)
	// A PEM block, to its END line or to the end of the text (a cut
	// capture).
	pemRE = lazyRegexp(`-----BEGIN ([A-Z0-9 ]{1,64})-----([\s\S]*?)(-----END [A-Z0-9 ]{1,64}-----|\z)`)
	// A JWT (JWS or JWE compact): 3 to 5 base64url segments whose first
	// decodes to a JSON object (checked in maskJWTs), after a start of
	// text, a byte that cannot be in it, or an escape ("\n" in JSON text,
	// "%2F" in a URL). Its dots may be written "\u002e" (JSON text whose
	// encoder escaped them, read as text: redact20).
	jwtRE = lazyRegexp(`(?:^|[^A-Za-z0-9_\-.]|\\[A-Za-z]|%[0-9A-Fa-f]{2})(e[w-z0-9_-][A-Za-z0-9_-]*(?:(?:\.|\\u002[eE])[A-Za-z0-9_-]*){2,4})`)
	// A .netrc entry's password ("machine h login u password p", "default
	// login u password p"): after the machine's name, or "default" at the
	// start of a line (not "the default password policy"), and any other
	// of its tokens, to the next blank (maskNetrc).
	// curl's user and password ("curl -u bob:hunter2 https://…",
	// "-ubob:hunter2", "--user 'bob:hunter2'", "-u :hunter2", the key as
	// the user "-u sk_…:"): the user (group 1) and the password after its
	// ":" (group 2), each to a blank or a quote (maskCurlUser).
	curlUserRE = lazyRegexp(`(?:^|[\s"'(])(?:-u(?:[ \t]+|=)?|--user(?:[ \t]+|=))['"]?([^\s:'"]*):([^\s'"]*)`)
	netrcRE    = lazyRegexp(`(?im)(?:\bmachine[ \t\r\n]+\S+|^[ \t]*default)(?:[ \t\r\n]+(?:login|account|port|protocol|macdef)[ \t\r\n]+\S+)*[ \t\r\n]+password[ \t\r\n]+(\S+)`)

	// A JSON string value (possibly cut) or a bare scalar, after "name":.
	jsonValueRE = lazyRegexp(`^(?:"(?:[^"\\]|\\.)*"?|[^\s",}\]]+)`)
	// After "name": in text, also an object with no object in it
	// ("password": {"v": "Hunter2…"}, to its "}" or the text's end) and
	// an array of strings ("password": ["Hunter2…"]), which the bare
	// pattern would end at their "{" or "[".
	jsonMemberValueRE = lazyRegexp(`^(?:\{[^{}]*\}?|\[\s*"(?:[^"\\]|\\.)*"?(?:\s*,\s*"(?:[^"\\]|\\.)*"?)*\s*\]?|"(?:[^"\\]|\\.)*"?|[^\s",}\]]+)`)
	jsonEscValueRE    = lazyRegexp(`^(?:\\+"(?:[^\\]|\\[^"])*(?:\\+"|$)|[^\s\\",}\]]+)`)
	// A form value: bare, or in single quotes ("token='a b'" in a log
	// line), to its closing quote or the end of the line.
	formValueRE = lazyRegexp(`^(?:'(?:[^'\\\r\n]|\\.)*'?|[^&;\s#"]*)`)

	// 'name': in text, a Python dict's repr (what a pydantic validation
	// error echoes as input_value), and its value: a string in single or
	// double quotes (possibly cut) or a bare scalar.
	pyNameRE  = lazyRegexp(`'((?:[^'\\\n]|\\.){1,200})'\s*:\s*`)
	pyValueRE = lazyRegexp(`^(?:'(?:[^'\\\r\n]|\\.)*'?|"(?:[^"\\\r\n]|\\.)*"?|[^\s,}\]]+)`)
	// name = value and name="value" (TOML, a .env file, a shell line):
	// the name after a start of text or a byte that cannot be in it, the
	// "=" with or without blanks around it (see maskAssignments), and the
	// value in quotes (possibly cut) or bare.
	assignNameRE  = lazyRegexp(`(?:^|[^A-Za-z0-9_.\-\[\]%])([A-Za-z0-9_.\-\[\]%]{1,200})([ \t]*=[ \t]*)`)
	assignValueRE = lazyRegexp(`^(?:"(?:[^"\\\r\n]|\\.)*"?|'(?:[^'\\\r\n]|\\.)*'?|[^\s"'=&;#,})\]>][^\s&;#,})\]>"]*)`)
	// A command-line flag in text ("--password VALUE", "--api-key VALUE"):
	// the flag after a start of text, a blank or a quote, and its value,
	// one word that is no flag.
	flagNameRE  = lazyRegexp(`(?:^|[\s"'(\[=,])--([A-Za-z][A-Za-z0-9_\-]{0,200})[ \t]+`)
	flagValueRE = lazyRegexp(`^[^\s"'\-][^\s"',)]*`)
	// The same in an argument list written as JSON text that could not
	// be parsed (["--api-key", "v"], a command's args in a cut body):
	// the flag in quotes, a comma, and a string that is no flag, or a
	// number (mask22).
	jsonFlagRE      = lazyRegexp(`"--([A-Za-z][A-Za-z0-9_\-]{0,200})"\s*,\s*`)
	jsonFlagValueRE = lazyRegexp(`^(?:"(?:[^"\\\-]|\\.)(?:[^"\\]|\\.)*"?|-?[0-9][0-9.eE+\-]*)`)
	// A name/value pair in JSON text that could not be parsed: a pair
	// array (["X-Api-Key", "v"]) and a HAR-style object ({"name":
	// "X-Api-Key", "value": "v"}, either member first).
	pairArrayRE = lazyRegexp(`\[\s*"((?:[^"\\\n]|\\.){1,200})"\s*,\s*`)
	harNameRE   = lazyRegexp(`"(?:name|key)"\s*:\s*"((?:[^"\\\n]|\\.){1,200})"\s*,\s*"value"\s*:\s*`)
	harValueRE  = lazyRegexp(`"value"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"(?:name|key)"\s*:\s*"((?:[^"\\\n]|\\.){1,200})"`)
	// The user information of a URL written in text ("postgres://u:pw@
	// host", "https://TOKEN@host"): to the last "@" before the host.
	userinfoRE = lazyRegexp(`[A-Za-z][A-Za-z0-9+.\-]{0,30}://([^\s/?#"'<>\\]+)@`)
)

// nameHints are lower-case substrings without which no name pattern can
// match; they let Scrub skip the regular expressions for most strings.
var nameHints = append([]string{"key", "auth", "pass", "pw",
	// pinWord's names, where a name ends (not "ping", "mapping"); "pin&"
	// before a character reference ("&quot;pin&quot;:", "pin&equals;").
	`pin"`, "pin'", "pin:", "pin=", "pin ", "pin\t", `pin\`, "pin%", "pin&", "pins", "pincode", "pin_code", "pin-code",
	// A PIN's number or a form of it after a separator or in camelCase
	// (pin_number, pin.hash, pinNo, pinValue; heldFormWord, redact20).
	"pin_", "pin-", "pin.", "pinnum", "pinno", "pinhash", "pindigest", "pinval", "pinenc",
	// The stems of two words written with a separator between them
	// (access_code, code-verifier; access.code and "access code", which
	// nameWords splits too: review19), which the stems themselves miss in
	// text (redact19: "code_verifier=…" in text was kept).
	"access_code", "access-code", "access.code", "access code", "verifier",
	// curl's user option, "curl -u user:password" (redact20).
	"curl",
	// A one-time password's word (otpWord: otp, totp, hotp; names21).
	"otp"},
	credentialStems...)

// Scrub removes credentials from free text (error messages, notes, a
// client's stderr, header values): the registered secrets; PEM blocks; JWTs;
// "Bearer …", "Basic …" and "DPoP …" credentials; and the values under a
// credential name written as a header or log field ("X-Api-Key: …", to the
// end of the line), as JSON ("apiSecret": "…", also inside an escaped JSON
// string) or as name=value. Each becomes a mask (Mask).
func (r *Redactor) Scrub(s string) string {
	if s == "" {
		return s
	}
	s = r.replaceSecrets(s)
	if isCleanWord(s) {
		return s // the patterns leave it as it is (cleanWords)
	}
	return r.scrubPatterns(s, ctxJSON)
}

// scrubPatterns applies the text patterns; ctx decides the name=value rule
// (ctxForm adds code, state and sig).
func (r *Redactor) scrubPatterns(s string, ctx nameContext) string {
	if !patternsMayApply(s, ctx) {
		return s // no pattern's condition holds (redact_gate.go)
	}
	if strings.IndexByte(s, '@') >= 0 && strings.Contains(s, "://") {
		s = r.maskUserinfo(s)
	}
	lower := strings.ToLower(s)
	if strings.Contains(lower, "-----begin") {
		s = r.maskPEM(s)
	}
	if strings.Contains(lower, "bearer") || strings.Contains(lower, "basic") || strings.Contains(lower, "dpop") {
		s = r.maskSchemeCredentials(s)
	}
	hints := lower
	if hasLetterEscape(s) {
		// A name may be escaped ("p\u0061ssword", "p%61ssword"): the
		// hints are looked for in the text decoded too.
		hints = lower + "\n" + strings.ToLower(decodeName(lower))
	}
	if hasAny(hints, nameHints) || ctx == ctxForm && hasAny(hints, formHints) {
		if strings.IndexByte(s, ':') >= 0 {
			s = r.maskFieldLines(s)
			if strings.IndexByte(s, '"') >= 0 {
				s = r.maskAfterNames(s, jsonNameRE, jsonMemberValueRE, jsonTextName, countValue)
				if strings.IndexByte(s, '\\') >= 0 {
					s = r.maskAfterNames(s, jsonEscNameRE, jsonEscValueRE, func(n string) bool { return sensitiveName(n, ctxJSON) }, countValueEscaped)
				}
			}
			if strings.IndexByte(s, '\'') >= 0 {
				s = r.maskAfterNames(s, pyNameRE, pyValueRE, jsonTextName, countValue)
			}
		}
		if strings.IndexByte(s, '"') >= 0 {
			s = r.maskTextPairs(s)
		}
		if strings.Contains(s, "--") {
			s = r.maskAfterNames(s, flagNameRE, flagValueRE, jsonTextName)
			if strings.Contains(s, `"--`) {
				s = r.maskAfterNames(s, jsonFlagRE, jsonFlagValueRE, jsonTextName) // ["--api-key", "v"] (mask22)
			}
		}
		if strings.IndexByte(s, '=') >= 0 {
			s = r.maskAfterNames(s, formNameRE, formValueRE, func(n string) bool { return sensitiveName(n, ctx) }, measureNumber)
			s = r.maskAssignments(s, ctx)
			s = r.maskEnclosedAssignments(s, ctx)
		}
		if strings.Contains(lower, "password") && (strings.Contains(lower, "machine") || strings.Contains(lower, "default")) {
			s = r.maskNetrc(s) // a .netrc entry, its password after a blank (redact20)
		}
		if strings.ContainsAny(s, " \t") {
			s = r.maskBlankSeparated(s) // "client_secret VALUE" wherever it stands (names21, collide21)
		}
	}
	if strings.Contains(lower, "curl") && strings.Contains(s, "-u") {
		s = r.maskCurlUser(s) // curl -u user:password (redact20)
	}
	if ctx != ctxForm && strings.ContainsAny(s, "?&") && hasAny(lower, queryHints) {
		// A URL's query inside text (the HTML body of an authorization
		// server's redirect, "<a href=…?code=…&amp;state=…>"): its
		// names are judged as a form's, so code, state and sig count.
		s = r.maskAfterNames(s, queryNameRE, formValueRE, func(n string) bool { return sensitiveName(n, ctxForm) })
	}
	// A name or separator escaped in text ("p\u0061ssword: …",
	// "password%3D…", "p&#97;ssword=…"): redact_escaped.go.
	s = r.maskEscapedText(s, ctx)
	if hasProviderHint(lower) {
		s = r.maskProviderKeys(s) // redact_provider.go
		s = r.maskWebhookURLs(s)  // redact_webhook.go
	}
	if strings.Count(s, ".") >= 2 || strings.Contains(s, `\u002`) {
		s = r.maskJWTs(s) // "\u002e" for a dot: the gate opens on "\u" (escapeHints)
	}
	return s
}

// queryHints are the form-only names (see ctxForm) that make Scrub look
// for a URL query in text.
var queryHints = []string{"code=", "state=", "sig="}

func hasAny(s string, subs []string) bool {
	for _, h := range subs {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}

// textFieldWords are the single words that, followed by a colon in text,
// name a credential field ("password: …", "Cookie: …"), in any case.
// "Authorization" counts only capitalized as in a header dump, not in
// "step-up authorization: ask for …". Other single words are more often
// prose ("Unauthorized: the token is missing", "session: expired") and
// are left alone; a name of several words ("X-Api-Key:", "api_key:",
// "clientSecret:") is judged by its name.
var textFieldWords = map[string]bool{
	"cookie": true, "dpop": true, "password": true, "passwd": true, "pwd": true,
	"secret": true, "passphrase": true, "apikey": true, "jwt": true, "passcode": true, "pin": true,
}

// maskFieldLines masks the value of every credential field written as
// "Name: value" in text (a header dump, YAML, a log field): the name is
// letters, digits, "_" and "-" after a start of text or a character that
// is none of those; the value runs to the end of the line or a quote. It
// scans the colons rather than running a regular expression over the text.
func (r *Redactor) maskFieldLines(s string) (out string) {
	var b strings.Builder
	last := 0
	credExc := false
	defer func() {
		if credExc {
			out = r.maskExceptionMessages(out)
		}
	}()
	for i := 0; i < len(s); i++ {
		if s[i] != ':' || i < last {
			continue
		}
		j := i
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		k := j
		for k > 0 && (isFieldNameByte(s[k-1]) || s[k-1] == '%') {
			k--
		}
		if k == j || j-k > 200 || !isLetter(s[k]) {
			continue
		}
		name := decodeName(s[k:j]) // "api%2Dkey: …" is judged as api-key
		if exceptionName(name) && exceptionProse(s[i+1:]) {
			// A credential's exception ("PasswordMismatchError:
			// expected …", "AuthenticationError: Incorrect API key
			// provided: …"): its message's credential-shaped words are
			// masked after this pass (maskExceptionMessages, mask22).
			credExc = credExc || sensitiveName(name, ctxJSON)
			// "InvalidTokenError: …", "jwt.exceptions.InvalidTokenError:
			// …": an exception's class and its message, prose that the
			// other rules read (names21). A message of one word or one
			// string in quotes is no prose but a value, read as a field
			// line's: Python's KeyError prints the key it missed
			// ("KeyError: 'tok_…'", a session looked up by its token),
			// and "InvalidTokenError: <the token>" prints the token
			// (review21).
			continue
		}
		dotted := false
		if k >= 2 && s[k-1] == '.' {
			// A dotted name ("db.password:", "access.code:", a
			// property key): a field, not prose (dottedFieldName).
			name, dotted = dottedFieldName(s, k, name)
		}
		if !mayBeSensitive(name, ctxHeader) {
			continue
		}
		start := i + 1
		for start < len(s) && (s[start] == ' ' || s[start] == '\t') {
			start++
		}
		if startsNested(s[start:]) && sensitiveName(name, ctxJSON) {
			// An object or an array ("secret: {x: {y: …}}") is no
			// prose: masked whole, to any depth (redact_nested.go), and
			// to the end of its line at least, as any other value of a
			// field line.
			n, closed := nestedValueEnd(s[start:], `"'`)
			for start+n < len(s) && s[start+n] != '\r' && s[start+n] != '\n' {
				n++
			}
			b.WriteString(s[last:start])
			b.WriteString(r.maskNested(s[start:start+n], closed))
			last = start + n
			i = last - 1
			continue
		}
		quoted := start < len(s) && (s[start] == '"' || s[start] == '\'')
		if quoted || escapedQuotedLen(s[start:]) > 0 {
			// A value in quotes ("password: \"…\"" in YAML) is no prose:
			// any credential name counts, a single word too ("token"); in
			// escaped quotes too ("Acookie: \x27v\x27", review14).
			if !sensitiveName(name, ctxJSON) {
				continue
			}
		} else if !dotted && !headerTextName(name) && !authorizationDump(s, k, j, start) {
			// A single credential word ("Token:", "Session:") is more
			// often prose; its value is masked only when it is one word
			// shaped like a credential ("Token: a1b2c3d4e5").
			// A value in escaped quotes that holds masks alone
			// ("%22[redacted…]%22", as maskEscapedText writes one) is
			// masked already: not one word to mask again.
			if w := credentialWord(s, start); w > 0 && sensitiveName(name, ctxJSON) && !escapedBlanksOnly(s[start:start+w], s[start:], s) && !escapedQuotedMask(s[start:]) &&
				!(onlyDigits(s[start:start+w]) && countName(name) == countAlways) { // "Tokens: 1500"
				b.WriteString(s[last:start])
				b.WriteString(r.Mask(s[start : start+w]))
				last = start + w
				i = last - 1
			}
			continue
		}
		end := start
		if quoted {
			end = quotedEnd(s, start)
			end = start + len(unfinishedValue(s[start:end], s[end:]))
		} else {
			for end < len(s) && s[end] != '\r' && s[end] != '\n' && s[end] != '"' {
				end++
			}
			if escapedQuotedMask(s[start:]) {
				continue // a value in escaped quotes masked already
			}
			if n := escapedQuotedLen(s[start:]); n > end-start {
				// In escaped quotes (redact_escaped.go), and on to the
				// line's end: masked, the quotes are gone, and a second
				// pass reads a field line's value to its end.
				for end = start + n; end < len(s) && s[end] != '\r' && s[end] != '\n' && s[end] != '"'; end++ {
				}
			} else if escapedBlanksOnly(strings.TrimRight(s[start:end], " \t"), s[start:], s) {
				continue // the separator's blanks, escaped: maskEscapedText reads what follows
			}
		}
		v := s[start:end]
		if tv := strings.TrimRight(v, " \t"); !quoted && (measureNumber(name, tv, "", "") ||
			dotted && strings.EqualFold(name, "pass") && onlyDigits(tv) && len(tv) < 4) {
			// "client_secret_expires_at: 0": a time, not the secret;
			// "test.pass: 5": a count of passes, as "Pass: 5" is read
			// (a number of four digits or more is a PIN's; names21).
			continue
		}
		if v == "" || IsRedacted(unquoteValue(v)) || quoted && IsRedacted(strings.Trim(v, `'`)) || onlyMasks(strings.TrimRight(v, " \t")) ||
			maskAmidBlanks(strings.TrimRight(v, " \t")) { // "[redacted…]+": the escaped pass's blank kept after its mask
			continue
		}
		b.WriteString(s[last:start])
		if quoted {
			b.WriteString(r.maskValue(v))
		} else {
			b.WriteString(r.Mask(v))
		}
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// quotedEnd returns the end of the string in quotes that starts at
// s[start] (a double or a single quote): just after its closing quote, or, when the
// line or the text ends first, there.
func quotedEnd(s string, start int) int {
	q := s[start]
	for i := start + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i + 1
		case '\n', '\r': // a line of the text ends (not an event stream's: wire's test looks for that shape)
			return i
		}
	}
	return len(s)
}

// dottedFieldName judges the name of a field line written with dots
// ("db.password: …", "spring.datasource.password: …", "access.code: …"),
// whose last segment, last, starts at s[k] after a ".". It returns the
// name to judge and whether the line is a credential field, masked to the
// end of its line as a name of several words is. The last segment is
// judged alone when it holds a stem ("client.secret", "auth.token",
// "api.key"; "gen_ai.usage.input_tokens" is none). When it holds none,
// the last two segments are judged together ("access.code",
// "code.verifier", "pin.code"), unless the one before the dot is a
// credential name on its own: "jwt.ParseWithClaims: token is expired",
// "session.Close: …" and "auth.Login: …" are Go's and Python's qualified
// names in error messages, read as before, by their last segment
// (docs/decisions.md, redact20).
func dottedFieldName(s string, k int, last string) (string, bool) {
	q := k - 1
	for q > 0 && (isFieldNameByte(s[q-1]) || s[q-1] == '%') {
		q--
	}
	if q == k-1 || !isLetter(s[q]) {
		return last, false
	}
	prev := decodeName(s[q : k-1])
	pair := prev + "." + last
	if mayBeSensitive(pair, ctxJSON) && !sensitiveName(pair, ctxJSON) && mayBeSensitive(last, ctxJSON) {
		// The two segments spell an exempt name together
		// ("progress.token" is MCP's progressToken, "signing.key_id" a
		// key's id): read as that name is (names21).
		return pair, false
	}
	if mayBeSensitive(last, ctxJSON) && sensitiveName(last, ctxJSON) {
		return last, true
	}
	if mayBeSensitive(last, ctxJSON) {
		// A stem of its own, and no credential name
		// ("gen_ai.usage.input_tokens", "auth.token_endpoint"): the
		// segment before it cannot make it one.
		return last, false
	}
	if !mayBeSensitive(pair, ctxJSON) || !sensitiveName(pair, ctxJSON) {
		return last, false
	}
	if sensitiveName(prev, ctxJSON) && !pinWord(nameWords(pair)) && qualifiedName(prev, last) {
		// "jwt.Parse", "session.Close": the credential word is the
		// package's, the name after it a function's or a type's. A
		// lower-case last segment is a property ("secret.value",
		// "auth.code": names21, review20), a field; "pin.Code" is one
		// name in any case.
		return last, false
	}
	return pair, true
}

// qualifiedName reports whether prev.last reads as a Go or Python
// qualified name, a package or module and a function or type in it
// ("jwt.ParseWithClaims", "session.Close", "auth.Login"): prev has no
// upper-case letter and last starts with one. A property path
// ("secret.value", "Secret.Value", "password.hash") is none (names21).
func qualifiedName(prev, last string) bool {
	if last == "" || last[0] < 'A' || last[0] > 'Z' {
		return false
	}
	for i := 0; i < len(prev); i++ {
		if prev[i] >= 'A' && prev[i] <= 'Z' {
			return false
		}
	}
	return true
}

// exceptionName reports whether the name of a "Name: …" line of text is
// an exception's class, as Python, Java and JavaScript print one before
// its message ("InvalidTokenError: Signature has expired",
// "BadCredentialsException: …", "jwt.exceptions.InvalidTokenError: …"):
// its last segment starts with an upper-case letter, is written in
// letters and digits only (no "_" or "-": not a header or a field), and
// its last word is Error, Exception or Warning. The message is prose,
// read by the other rules (a Bearer credential, a JWT, name=value in it
// are masked as anywhere; names21).
func exceptionName(name string) bool {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && (c < '0' || c > '9') {
			return false
		}
	}
	for _, w := range []string{"Error", "Exception", "Warning"} {
		if strings.HasSuffix(name, w) && len(name) > len(w) {
			return true
		}
	}
	return false
}

// maskExceptionMessages masks the credential-shaped words in the message
// of every exception whose class names a credential ("PasswordMismatchError:
// expected hunter2-Secret", "AuthenticationError: Incorrect API key
// provided: abcd1234efgh5678"; mask22): a message of more than one word
// is prose (exceptionProse), and a developer's message about a password,
// a key or a token often quotes it. A word is credential-shaped, once the
// punctuation around it is taken off, when it has 8 bytes or more with a
// letter and a digit (as a field line's single word, credentialWord), or
// is 6 digits or more and nothing else (a one-time code: shorter numbers
// in prose are counts, ports, years, statuses); a URL or a path, an
// e-mail address, a time, a date, a version or an address (digits and
// "-:.+TZ" alone) and a word holding "=" (left to the assignment rules)
// are none. The message runs to its line's end or a double quote.
func (r *Redactor) maskExceptionMessages(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ':' || i < last {
			continue
		}
		k := i
		for k > 0 && (isLetter(s[k-1]) || s[k-1] >= '0' && s[k-1] <= '9') {
			k--
		}
		if k == i || k > 0 && (isFieldNameByte(s[k-1]) || s[k-1] == '%') || !exceptionName(s[k:i]) ||
			!sensitiveName(s[k:i], ctxJSON) || !exceptionProse(s[i+1:]) {
			continue
		}
		end := messageEnd(s, i+1)
		for w := i + 1; w < end; {
			for w < end && (s[w] == ' ' || s[w] == '\t') {
				w++
			}
			e := w
			for e < end && s[e] != ' ' && s[e] != '\t' {
				e++
			}
			lo, hi := w, e
			for lo < hi && strings.IndexByte("'`([{<\"\\", s[lo]) >= 0 {
				lo++
			}
			for hi > lo && strings.IndexByte("'`.,;:!?)]}>\"\\", s[hi-1]) >= 0 {
				hi--
			}
			if lo < hi && messageCredential(s[lo:hi]) {
				b.WriteString(s[last:lo])
				b.WriteString(r.Mask(s[lo:hi]))
				last = hi
			}
			w = e
		}
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// messageEnd returns where the message of an exception that starts at
// from ends: at its line's end or at a double quote (the end of the JSON
// string that holds it, "\"" in JSON text), except a quoted word's quotes:
// a quote after a blank opens a word, and the next quote on the line closes
// it when a blank, punctuation, a quote or the line's end follows
// (PasswordMismatchError: expected "hunter2-Secret" for bob; review22: the
// message was cut at the word's opening quote).
func messageEnd(s string, from int) int {
	end := from
	for end < len(s) && !isLineBreak(s[end]) {
		if s[end] != '"' {
			end++
			continue
		}
		q := end
		if q > from && s[q-1] == '\\' {
			q--
		}
		if q == from || s[q-1] != ' ' && s[q-1] != '\t' {
			return end
		}
		c := end + 1
		for c < len(s) && !isLineBreak(s[c]) && s[c] != '"' {
			c++
		}
		if c >= len(s) || s[c] != '"' || c+1 < len(s) && !isLineBreak(s[c+1]) && strings.IndexByte(" \t.,;:!?)]}\"'\\", s[c+1]) < 0 {
			return end
		}
		end = c + 1
	}
	return end
}

// messageCredential reports whether w, a word of an exception's message
// without the punctuation around it, is shaped like a credential (see
// maskExceptionMessages).
func messageCredential(w string) bool {
	if strings.Contains(w, "[redacted") || strings.Contains(w, "://") || messagePath(w) || messageEmail(w) {
		return false
	}
	if eq := strings.IndexByte(w, '='); eq >= 0 && strings.TrimRight(w[eq:], "=") != "" {
		return false // name=value: the assignment rules'
	}
	letter, digit, timeish := false, false, true
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case isLetter(c):
			letter = true
			timeish = timeish && (c == 'T' || c == 'Z')
		default:
			timeish = timeish && strings.IndexByte("-:.+", c) >= 0
		}
	}
	if timeish {
		return len(w) >= 6 && onlyDigits(w) // a one-time code; a time, a date, a version, a count, a port: none
	}
	return len(w) >= 8 && letter && digit
}

// messagePath reports whether w, a word of an exception's message, is a
// path: it starts with "/" and holds another "/" or a "." (/etc/app.conf,
// /v1/tokens). One segment and nothing else (/abcd1234efgh5678, a key
// behind a slash: review22) is no path.
func messagePath(w string) bool {
	return w[0] == '/' && strings.ContainsAny(w[1:], "/.")
}

// messageEmail reports whether w, a word of an exception's message, is an
// e-mail address: a "@" after its first byte, and after it a domain ending
// in "." and two letters or more (bob@example.com). P@ssw0rd2024 is none
// (review22: any "@" was read as an address).
func messageEmail(w string) bool {
	at := strings.IndexByte(w, '@')
	if at <= 0 {
		return false
	}
	dom := w[at+1:]
	dot := strings.LastIndexByte(dom, '.')
	if dot <= 0 || len(dom)-dot-1 < 2 {
		return false
	}
	for i := dot + 1; i < len(dom); i++ {
		if !isLetter(dom[i]) {
			return false
		}
	}
	return true
}

// exceptionProse reports whether the rest of a line after an exception's
// "Name:" (rest, up to its line end) is a message of more than one word:
// not one word, and not one string in quotes ("KeyError: 'a b'").
func exceptionProse(rest string) bool {
	e := 0
	for e < len(rest) && rest[e] != '\n' && rest[e] != '\r' {
		e++
	}
	t := strings.Trim(rest[:e], " \t")
	if t == "" || !strings.ContainsAny(t, " \t") {
		return false
	}
	if q := t[0]; (q == '"' || q == '\'') && quotedEnd(t, 0) == len(t) && t[len(t)-1] == q {
		return false
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isFieldNameByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// headerTextName decides whether "Name:" in text is a credential field.
func headerTextName(n string) bool {
	if len(nameWords(n)) < 2 && !textFieldWords[strings.ToLower(n)] && n != "Authorization" && n != "AUTHORIZATION" {
		return false
	}
	switch classifyHeader(n) {
	case headerMask, headerMeasure, headerAuth, headerCookie, headerHash:
		return true
	}
	return false
}

// credentialWord returns the length of the value at s[start:] when it is
// the only word to the end of its line (or a quote) and looks like a
// credential: 8 bytes or more with a letter and a digit, or 4 digits or
// more and nothing else (a numeric code), not a mask. 0 otherwise
// ("expired", "2026-12-06", "5", "see the docs").
func credentialWord(s string, start int) int {
	end := start
	letter, digit := false, false
	for end < len(s) && s[end] != ' ' && s[end] != '\t' && s[end] != '\r' && s[end] != '\n' && s[end] != '"' {
		c := s[end]
		letter = letter || isLetter(c)
		digit = digit || c >= '0' && c <= '9'
		end++
	}
	rest := end
	for rest < len(s) && (s[rest] == ' ' || s[rest] == '\t') {
		rest++
	}
	shaped := end-start >= 8 && letter && digit || // "a1b2c3d4e5"
		end-start >= 4 && digit && onlyDigits(s[start:end]) // a numeric PIN, code or password (redact12, redact14)
	if !shaped || rest < len(s) && s[rest] != '\r' && s[rest] != '\n' && s[rest] != '"' || IsRedacted(s[start:end]) {
		return 0
	}
	return end - start
}

// isNumber reports whether s is a JSON number ("0", "-1.5", "1e9",
// "1700000000"): the value a time or a count is written as.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	d := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == d || s[d] == '0' && i-d > 1 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == f {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		e := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == e {
			return false
		}
	}
	return i == len(s)
}

// measureNumber is the keep rule of name=value and "Name: value" in
// text: a number under a name that says when or how many
// (client_secret_expires_at=0, session_count=4; countMeasure) or counts
// tokens (tokens=1500) is that time or count, not a credential.
func measureNumber(name, v, _, _ string) bool {
	if !isNumber(v) {
		return false
	}
	c := countName(name)
	return c == countMeasure || c == countAlways
}

// onlyDigits reports whether s is made of the digits 0-9 only.
func onlyDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// authorizationDump decides whether "authorization:" in lower case at
// s[k:j], its value at s[start:], is a header as HTTP/2 prints it
// ("authorization: token …", "proxy-authorization: bearer …"): at the
// start of a line, or followed by a scheme and one word of 8 bytes or
// more. Prose ("step-up authorization: ask for the scope") is neither.
func authorizationDump(s string, k, j, start int) bool {
	n := s[k:j]
	if n != "authorization" && n != "proxy-authorization" {
		return false
	}
	if k == 0 {
		return true
	}
	switch s[k-1] {
	case '\n', '\r': // a text's line, not an event stream's
		return true
	}
	end := start
	for end < len(s) && s[end] != '\r' && s[end] != '\n' {
		end++
	}
	f := strings.Fields(s[start:end])
	return len(f) == 2 && isToken(f[0]) && len(f[1]) >= 8
}

// countValue is maskAfterNames' check for JSON and Python names in text:
// true, false and null (Python's True, False, None) are kept, as in a JSON
// document; a number under a name that may count (countName) is kept when
// it is a count: always under "tokens", and under "pass"
// when a count of another kind is a member of the same object ({"pass":
// 5, "fail": 0}), looked for in the text from the object's "{" before the
// name to its "}" after the value (512 bytes each way at most).
func countValue(name, v, before, rest string) bool {
	if v == "" || v[0] == '"' || v[0] == '\'' || v[0] == '[' || v[0] == '{' {
		return false
	}
	switch v {
	case "true", "false", "null", "True", "False", "None":
		return true // no credential, as in a JSON document (redactJSON)
	}
	switch countName(name) {
	case countAlways:
		return true
	case countMeasure:
		return isNumber(v) // when or how many (measureWord)
	case countBeside:
		const window = 512
		if len(before) > window {
			before = before[len(before)-window:]
		}
		if i := strings.LastIndexAny(before, "{}"); i >= 0 {
			before = before[i+1:]
		}
		if len(rest) > window {
			rest = rest[:window]
		}
		if i := strings.IndexAny(rest, "{}"); i >= 0 {
			rest = rest[:i]
		}
		return hasCountSiblingText(before) || hasCountSiblingText(rest)
	}
	return false
}

// countValueEscaped is countValue for a name inside a JSON string
// ({\"pass\": 5, \"fail\": 0}, JSON quoted in an error message): the
// text around it is read with its backslashes dropped, so that \"fail\":
// is a sibling's name as "fail": is.
func countValueEscaped(name, v, before, rest string) bool {
	const window = 2048 // countValue reads 512 bytes each way of what is left
	if len(before) > window {
		before = before[len(before)-window:]
	}
	if len(rest) > window {
		rest = rest[:window]
	}
	return countValue(name, v, strings.ReplaceAll(before, `\`, ""), strings.ReplaceAll(rest, `\`, ""))
}

// hasCountSiblingText reports whether text holds a quoted member name
// that is a count's ("fail": or 'fail':, isCountSibling).
func hasCountSiblingText(text string) bool {
	for i := 0; i < len(text); i++ {
		q := text[i]
		if q != '"' && q != '\'' {
			continue
		}
		j := i + 1
		for j < len(text) && isLetter(text[j]) {
			j++
		}
		if j == len(text) || text[j] != q || j == i+1 {
			continue
		}
		k := j + 1
		for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
			k++
		}
		if k < len(text) && text[k] == ':' && isCountSibling(text[i+1:j]) {
			return true
		}
		i = j
	}
	return false
}

// jsonTextName decides whether "name": in text is a credential member; the
// name is still JSON-escaped.
func jsonTextName(n string) bool { return sensitiveName(n, ctxJSON) }

// maskAfterNames finds every name matched by nameRE (group 1), and when
// sensitive(name) masks the value that valueRE matches right after it.
//
// An object or an array is masked whole, to any depth (nestedValueEnd).
// With keep, any other value is kept when keep(name, value, the text
// before the name, the text after the value) holds.
func (r *Redactor) maskAfterNames(s string, nameRE, valueRE *lazyRE, sensitive func(string) bool, keep ...func(name, v, before, rest string) bool) string {
	idx := nameRE.get().FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		if m[0] < last {
			continue // inside a value already masked
		}
		if !sensitive(s[m[2]:m[3]]) {
			continue
		}
		end := m[1]
		if quotes, ok := nestQuotes(valueRE); ok && startsNested(s[end:]) {
			// An object or an array, to any depth (redact_nested.go).
			n, closed := nestedValue(s[end:], quotes)
			b.WriteString(s[last:end])
			b.WriteString(r.maskNested(s[end:end+n], closed))
			last = end + n
			continue
		}
		v := valueRE.get().FindString(s[end:])
		v = unfinishedValue(v, s[end+len(v):])
		if n, whole := maskedValueAt(s[end:]); whole {
			continue
		} else if n > len(v) {
			v = s[end : end+n] // a credential behind a mask (see maskedValueAt)
		}
		plain := true // v's quotes, if any, are written as themselves
		if escapedQuotedMask(s[end:]) {
			continue // a value in escaped quotes masked already
		}
		if n := escapedQuotedLen(s[end:]); n > 0 && n >= len(v) {
			v, plain = s[end:end+n], false // in escaped quotes (redact_escaped.go)
		} else if escapedBlanksOnly(v, s[end:], s) {
			continue // the separator's blanks, escaped: maskEscapedText reads what follows
		}
		if singleQuotedMask(s[end:]) {
			continue // '[redacted]', as maskValue writes a value in single quotes
		}
		if n := refRunLen(s[end:], len(v)); n > len(v) {
			v, plain = s[end:end+n], false // a character reference in it (redact_escaped.go)
		}
		if v == "" || IsRedacted(unquoteValue(v)) || len(keep) > 0 && keep[0](s[m[2]:m[3]], v, s[:m[0]], s[end+len(v):]) {
			continue
		}
		b.WriteString(s[last:end])
		if plain {
			b.WriteString(r.maskValue(v))
		} else {
			b.WriteString(r.Mask(v))
		}
		last = end + len(v)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// maskedValueAt looks at a bare value at the start of s that starts with
// a mask: a bare-value pattern that stops at "]" sees only part of it, and
// a value already masked is not masked again. It returns the length of the
// value (the mask and the bytes of a bare value that follow it, up to a
// blank, a quote or a delimiter) and whether it is the mask alone. A mask
// followed by more ("[redacted]Sup3rSecret", a value that only starts like
// a mask) is no mask: the whole value is to be masked, or the text after
// the mask would be recorded in the clear. n is 0 when s starts with no
// mask.
func maskedValueAt(s string) (n int, whole bool) {
	const head = "[redacted"
	masks := 0
	for strings.HasPrefix(s[masks:], head) {
		// Masks one after the other (a value masked whole, then the
		// mark of a cut behind it: "[redacted][redacted]") are one.
		i := strings.IndexByte(s[masks:], ']')
		if i <= 0 || !isMask(s[masks:masks+i+1]) {
			break
		}
		masks += i + 1
	}
	if masks == 0 {
		return 0, false
	}
	n = masks
	for n < len(s) && strings.IndexByte(maskedValueEnds, s[n]) < 0 {
		n++
	}
	return n, n == masks
}

// maskedValueEnds are the bytes that end a bare value after a mask
// (maskedValueAt): blanks (\s, as formValueRE's), quotes and delimiters.
const maskedValueEnds = " \t\r\n\f\v\"',;&#)}]<>"

// onlyMasks reports whether v is masks one after the other and nothing
// else ("[redacted:len=6:h=…][redacted]": a value masked before a cut's
// mark).
func onlyMasks(v string) bool {
	n, whole := maskedValueAt(v)
	return whole && n == len(v)
}

// singleQuotedMask reports whether s starts with masks in single quotes
// ('[redacted]', '[redacted:len=…]'), as maskValue writes a value in
// single quotes: a bare-value pattern that stops at "]" would read
// "'[redacted" and mask it again (FuzzEscapedPairMetamorphic: a second
// Scrub of "\"access_token\":\t'v'0" wrote "'[redacted]']'").
func singleQuotedMask(s string) bool {
	if len(s) < 2 || s[0] != '\'' {
		return false
	}
	n, whole := maskedValueAt(s[1:])
	return whole && 1+n < len(s) && s[1+n] == '\''
}

// unquoteValue strips the quotes (escaped or not) around a matched value.
func unquoteValue(v string) string {
	t := strings.TrimLeft(v, `\"`)
	if len(t) == len(v) {
		return v
	}
	return strings.TrimRight(t, `\"`)
}

// maskValue masks a value matched in text, keeping its quoting. A quoted
// value that was cut (no closing quote) gets Redacted: its length would
// mislead.
func (r *Redactor) maskValue(v string) string {
	if v[0] == '\'' {
		inner := v[1:]
		if len(inner) == 0 || inner[len(inner)-1] != '\'' {
			return "'" + Redacted + "'"
		}
		return "'" + r.Mask(inner[:len(inner)-1]) + "'"
	}
	// The quote: `"`, or backslashes and a `"` (escaped JSON's \", \\\").
	// A backslash that is no quote's ("\x20v", a "\u0041" after the
	// quote) is the value's (redact14: "\[redacted]\" was written).
	lead := 0
	if v[0] == '"' {
		lead = 1
	} else if t := strings.TrimLeft(v, `\`); t != "" && t[0] == '"' {
		lead = len(v) - len(t) + 1
	}
	if lead == 0 {
		return r.Mask(v)
	}
	q := v[:lead]
	inner := v[lead:]
	closed := strings.HasSuffix(inner, `"`)
	inner = strings.TrimRight(inner, `\"`)
	if !closed {
		return q + Redacted + q
	}
	return q + r.Mask(inner) + q
}

// maskTextPairs masks the value of a name/value pair whose name is a
// credential name, in JSON text that could not be parsed (a cut body, an
// error message quoting JSON): a pair array (["X-Api-Key", "v"]) and a
// HAR-style object ({"name": "X-Api-Key", "value": "v"}, either member
// first). redactJSON does the same for JSON it parses.
func (r *Redactor) maskTextPairs(s string) string {
	// A pair array's value counts when the array ends after it (or the
	// text does): ["token", "count", "x"] is a list, not a pair.
	// A member holding "=" is an assignment ("DB_PASSWORD=…", a
	// container's environment), not a name: ["DB_PASSWORD=x", "PATH=/bin"]
	// is a list, and its second member no credential.
	// An array under a member whose name says it lists kinds of things
	// (grant_types, scopes_supported: listMember) is that list when its
	// second string is a registered name too (registeredName).
	s = r.maskAfterNames(s, pairArrayRE, jsonValueRE, func(n string) bool { return !strings.Contains(n, "=") && jsonTextName(n) }, func(_, v, before, rest string) bool {
		rest = strings.TrimLeft(rest, " \t\r\n")
		return rest != "" && rest[0] != ']' || registeredName(strings.Trim(v, `\"`)) && listMember(memberBefore(before))
	})
	s = r.maskAfterNames(s, harNameRE, jsonValueRE, jsonTextName)
	if !strings.Contains(s, `"value"`) {
		return s
	}
	return r.replaceMatches(s, harValueRE, func(m []string) string {
		if !jsonTextName(m[2]) || IsRedacted(unquoteValue(m[1])) {
			return m[0]
		}
		i := strings.Index(m[0], m[1])
		return m[0][:i] + r.maskValue(m[1]) + m[0][i+len(m[1]):]
	})
}

// memberBefore returns the name of the JSON member whose value starts
// right after before ("grant_types" in `{"grant_types": `, also with
// its quotes escaped, as JSON text held in a JSON string is written), or
// "" when before does not end in a member's name and ":".
func memberBefore(before string) string {
	b := strings.TrimRight(before, " \t\r\n")
	if !strings.HasSuffix(b, ":") {
		return ""
	}
	b = strings.TrimRight(b[:len(b)-1], " \t\r\n")
	if !strings.HasSuffix(b, `"`) {
		return ""
	}
	b = strings.TrimSuffix(b[:len(b)-1], `\`)
	i := len(b)
	for i > 0 && (isLetter(b[i-1]) || b[i-1] >= '0' && b[i-1] <= '9' || b[i-1] == '_' || b[i-1] == '-' || b[i-1] == '.') {
		i--
	}
	if i == 0 || b[i-1] != '"' && b[i-1] != '\\' {
		return ""
	}
	return b[i:]
}

// maskAssignments masks the value of every credential name written as
// name = value or name="value" (TOML, a .env file, a shell line, a
// Python keyword argument). The form name=value, no blank and no quote,
// is formNameRE's (its own names and values); a bare value after "=" with
// no blank is left to it.
func (r *Redactor) maskAssignments(s string, ctx nameContext) string {
	idx := assignNameRE.get().FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		if m[0] < last || !sensitiveName(s[m[2]:m[3]], ctx) {
			continue
		}
		end := m[1]
		if startsNested(s[end:]) {
			// An object or an array, to any depth (redact_nested.go).
			n, closed := nestedValue(s[end:], `"'`)
			b.WriteString(s[last:end])
			b.WriteString(r.maskNested(s[end:end+n], closed))
			last = end + n
			continue
		}
		v := assignValueRE.get().FindString(s[end:])
		v = unfinishedValue(v, s[end+len(v):])
		if n, whole := maskedValueAt(s[end:]); whole {
			continue
		} else if n > len(v) {
			v = s[end : end+n] // a credential behind a mask (see maskedValueAt)
		}
		escQuoted := false
		if escapedQuotedMask(s[end:]) {
			continue // a value in escaped quotes masked already
		}
		if n := escapedQuotedLen(s[end:]); n > 0 && n >= len(v) {
			// In escaped quotes (redact_escaped.go): quoted, so that the
			// form rule below does not leave it to formNameRE, which
			// reads no name after "!" ("!cookie=\x22v\x22").
			v, escQuoted = s[end:end+n], true
		} else if escapedBlanksOnly(v, s[end:], s) {
			continue // the separator's blanks, escaped: maskEscapedText reads what follows
		} else if n > 0 {
			// The bare read runs on past the closing escaped quote
			// ("!cookie=\x22v\x22'"): in escaped quotes still, masked as
			// read, not left to formNameRE (review14).
			escQuoted = true
		}
		if n := refRunLen(s[end:], len(v)); n > len(v) {
			v = s[end : end+n] // a character reference in it (redact_escaped.go)
		}
		quoted := v != "" && (v[0] == '"' || v[0] == '\'')
		if v == "" || !quoted && !escQuoted && m[5]-m[4] == 1 || IsRedacted(unquoteValue(v)) || IsRedacted(strings.Trim(v, `'`)) ||
			measureNumber(s[m[2]:m[3]], v, "", "") {
			continue
		}
		b.WriteString(s[last:end])
		if quoted {
			b.WriteString(r.maskValue(v))
		} else {
			b.WriteString(r.Mask(v))
		}
		last = end + len(v)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isAssignNameByte reports whether c may be part of a name in name=value
// (formNameRE's name bytes, brackets left out: they open a list).
func isAssignNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '%'
}

// enclosedCloser returns, for the byte before a name, what ends the value of
// name=value there: the closing quote or bracket, the list's separator, the
// next tag after an element's ">", or 0 when only a blank, a control byte,
// "&", ";", "#", a quote or a backslash ends it (after ":", "/", "$", "@",
// "!", "~", "^"); ok is false for any other byte (a start of text, a blank,
// "?", "&", ";", "#": formNameRE or maskAssignments read those; a name
// byte).
func enclosedCloser(c byte) (closer byte, ok bool) {
	switch c {
	case '"', '\'', '`', ',', '|':
		return c, true
	case '(':
		return ')', true
	case '[':
		return ']', true
	case '{':
		return '}', true
	case '>':
		// The text of an HTML or XML element ("<p>password=…</p>", an
		// error page): the value runs to the next tag.
		return '<', true
	case '*':
		return '*', true // Markdown emphasis ("**password=…**")
	case ':', '/', '$', '@', '!', '~', '^':
		// A label, a path or a variable with no blank before the name
		// ("error:password=…", "/set/api_key=…", "$DB_PASSWORD=…"):
		// nothing closes the value but what ends any (review22).
		return 0, true
	}
	return 0, false
}

// maskEnclosedAssignments masks the value of every credential name written
// name=value, no blank, right after a quote, an opening bracket, a comma or
// a pipe: an assignment inside a JSON or Python string or list
// ("DB_PASSWORD=…" in a container's environment shown as text,
// ['API_KEY=…']), in parentheses or in a comma-separated list, which
// formNameRE (after a start of text, a blank, ?, &, ; or #) does not read;
// and right after an element's ">" (an HTML error page's
// "<p>password=…</p>"), "*", ":", "/", "$", "@", "!", "~" or "^", which
// no rule read before review22 (enclosedCloser).
// The value runs to a blank or a control byte, to what closes what opened before the name (a
// quote, a bracket, the list's next item), to a backslash (an escaped quote)
// or to &, ; or #. Before, such a value was recorded in the clear:
// server-everything's echo of {"Env": ["DB_PASSWORD=…"]} through proxy
// --stdio kept the password (outsider20). A scanner, not a pattern: no
// allocation at init (TestInitHeap).
func (r *Redactor) maskEnclosedAssignments(s string, ctx nameContext) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' || i < last {
			continue
		}
		j := i
		for j > 0 && i-j < 200 && isAssignNameByte(s[j-1]) {
			j--
		}
		if j == i || j == 0 || j < last {
			continue
		}
		closer, ok := enclosedCloser(s[j-1])
		if !ok || !sensitiveName(s[j:i], ctx) {
			continue
		}
		end := i + 1
		if _, whole := maskedValueAt(s[end:]); whole || strings.HasPrefix(s[end:], "[redacted") {
			continue
		}
		n := 0
		for end+n < len(s) {
			c := s[end+n]
			if c <= ' ' || c == '&' || c == ';' || c == '#' || c == '"' || c == '\\' || c == closer {
				break
			}
			n++
		}
		if k := refRunLen(s[end:], n); k > n {
			// An HTML character reference in it ("it&#39;s-…", as an
			// error page writes "it's-…"): the value runs past it, up
			// to what closes what opened before the name (review22).
			if c := strings.IndexByte(s[end+n:end+k], closer); closer != 0 && c >= 0 {
				k = n + c
			}
			n = k
		}
		if n == 0 || countValue(s[j:i], s[end:end+n], s[:j], s[end+n:]) {
			continue
		}
		b.WriteString(s[last:end])
		b.WriteString(r.Mask(s[end : end+n]))
		last = end + n
		i = last - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// maskUserinfo masks the user information of every URL in text
// ("postgres://admin:pw@db", "https://TOKEN@host"), as URL does for a
// URL on its own.
func (r *Redactor) maskUserinfo(s string) string {
	return r.replaceMatches(s, userinfoRE, func(m []string) string {
		if IsRedacted(m[1]) {
			return m[0]
		}
		return m[0][:len(m[0])-len(m[1])-1] + r.Mask(m[1]) + "@"
	})
}

// replaceMatches replaces every match of re in s by repl(submatches).
func (r *Redactor) replaceMatches(s string, re *lazyRE, repl func([]string) string) string {
	idx := re.get().FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		sub := make([]string, len(m)/2)
		for i := range sub {
			if m[2*i] >= 0 {
				sub[i] = s[m[2*i]:m[2*i+1]]
			}
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(repl(sub))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// maskSchemeCredentials masks the credential of every "Bearer …",
// "Basic …" and "DPoP …" in s (bearerRE), keeping the scheme. A match that
// ends in `name="` (or `name=\"` in JSON text held in a string) followed by
// more text is an auth-param with a quoted value (`Bearer realm="mcp"`,
// `Bearer error="invalid_token"`: a challenge) and is kept; a token68 the
// quote closes (`"Bearer abc"`, a base64 credential with its padding,
// `"Basic dXNlcg=="`) is masked.
func (r *Redactor) maskSchemeCredentials(s string) string {
	idx := bearerRE.get().FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		tok, term, rest := s[m[6]:m[7]], s[m[8]:m[9]], s[m[1]:]
		if term == `\` && strings.HasPrefix(rest, `"`) {
			// An escaped quote, in JSON text held in a string.
			term, rest = `"`, rest[1:]
		}
		if IsRedacted(tok) || term == `"` && authParamQuote(tok, rest) {
			continue
		}
		b.WriteString(s[last:m[6]])
		b.WriteString(r.Mask(tok))
		last = m[7]
	}
	b.WriteString(s[last:])
	return b.String()
}

// authParamQuote reports whether tok, matched by bearerRE before a `"`
// that rest follows, is an auth-param's name and `=` (`realm` in
// `realm="mcp"`): tok ends in one `=` (two or more are base64 padding)
// and the quote opens a value, so text other than a closing delimiter
// follows it (`realm=""` too). A quote followed by the end of the text, a
// blank, a closing delimiter or `.:!?'` closes a credential instead
// (`"Basic dXNlcjE="`, `was "Basic dXNlcjE=".`).
func authParamQuote(tok, rest string) bool {
	if !strings.HasSuffix(tok, "=") || strings.HasSuffix(tok, "==") {
		return false
	}
	if rest == "" {
		return false
	}
	switch rest[0] {
	case ' ', '\t', '\r', '\n', ',', ';', ')', ']', '}', '>', '\\', '.', ':', '!', '?', '\'':
		// A blank, a closing delimiter or the punctuation that ends a
		// sentence or clause: what follows a quoted value, not what
		// begins one.
		return false
	}
	return true
}

// maskPEM masks the body of every PEM block, keeping its BEGIN and END
// lines (what kind of key or certificate it was).
func (r *Redactor) maskPEM(s string) string {
	return r.replaceMatches(s, pemRE, func(m []string) string {
		body := m[2]
		if m[3] == "" {
			return "-----BEGIN " + m[1] + "-----" + Redacted
		}
		return "-----BEGIN " + m[1] + "-----" + r.Mask(body) + m[3]
	})
}

// maskCurlUser masks the password of every curl user option in s
// ("curl -u bob:hunter2 …", "-ubob:hunter2", "--user=bob:hunter2"),
// keeping the user: a command a tool prints or quotes in an error. With
// no password after the ":" the user is the credential ("-u sk_live_…:",
// how Stripe's and others' API keys are sent) and is masked. The text
// must name curl (the gate's hint "curl"): "-u" is another option
// elsewhere ("docker run -u 1000:1000", "git push -u").
func (r *Redactor) maskCurlUser(s string) string {
	return r.maskSpans(s, curlUserRE.get().FindAllStringSubmatchIndex(s, -1), func(m []int) (int, int) {
		if strings.HasPrefix(s[m[2]:], "[redacted:") {
			return 0, 0 // a user masked before: its mask holds ":"
		}
		if m[4] == m[5] {
			return m[2], m[3] // no password: the user is the key
		}
		return m[4], m[5]
	})
}

// maskSpans masks in s, for each match m of idx (a regexp's submatch
// indexes, in order), the span span(m) gives, unless it is empty or a mask
// already (so that a second pass changes nothing).
func (r *Redactor) maskSpans(s string, idx [][]int, span func(m []int) (lo, hi int)) string {
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		lo, hi := span(m)
		v := s[lo:hi]
		if v == "" {
			continue
		}
		if n, whole := maskedValueAt(v); whole && n == len(v) {
			continue
		}
		b.WriteString(s[last:lo])
		b.WriteString(r.Mask(v))
		last = hi
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// maskBlankSeparated masks the value after every credential name of two
// words or more that blanks and a value follow, wherever the name stands
// in s ("client_secret VALUE", "Echo: client_secret   VALUE", "api_key
// 'VALUE' was used": a directive of a config file that takes no "=" or ":",
// as nginx's, ssh's or a .netrc-like file's, and the same echoed inside a
// line). A single word before a blank is prose more often ("password
// reset", "token expired") and is left to the other rules; so is a value
// that is a word of prose (blankProseWord: "api_key missing from the
// request"). Until collide21 the name had to start its line and the value
// to end it, and "Echo: client_secret VALUE" was kept in the clear. A
// scanner: no pattern to compile.
func (r *Redactor) maskBlankSeparated(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if !isLetter(c) || i > 0 && (isFieldNameByte(s[i-1]) || s[i-1] == '.') {
			i++
			continue
		}
		lo, hi, next := blankSeparatedValue(s, i)
		if hi == 0 {
			i = next
			continue
		}
		v := s[lo:hi]
		masked := r.Mask(v)
		if v[0] == '"' || v[0] == '\'' {
			masked = r.maskValue(v)
		}
		b.WriteString(s[last:lo])
		b.WriteString(masked)
		last = hi
		i = hi
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// blankSeparatedValue reads the name that starts at ns in s: when it is a
// credential name of several words followed by blanks (not a line's end)
// and one value (a word, or a string in quotes), it returns the value's
// span; otherwise hi is 0. next is where the caller looks on (past the
// name) (maskBlankSeparated).
func blankSeparatedValue(s string, ns int) (lo, hi, next int) {
	i := ns
	for i < len(s) && (isFieldNameByte(s[i]) || s[i] == '.') {
		i++
	}
	next = i
	if i == len(s) || s[i] != ' ' && s[i] != '\t' {
		return 0, 0, next
	}
	name := s[ns:i]
	if !multiWordName(name) {
		return 0, 0, next
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	lo = i
	if lo == len(s) || isLineBreak(s[lo]) {
		return 0, 0, next
	}
	if q := s[lo]; q == '"' || q == '\'' {
		hi = quotedEnd(s, lo)
	} else {
		for hi = lo; hi < len(s) && s[hi] != ' ' && s[hi] != '\t' && !isLineBreak(s[hi]); hi++ {
		}
	}
	if hi <= lo {
		return 0, 0, next
	}
	v := s[lo:hi]
	if v[0] == '(' {
		return 0, 0, next // a remark opens: prose ("AUTH_FAILED (transport layer)", an outcome's name)
	}
	for _, d := range [2]string{v, decodedValue(v)} {
		if d == "" {
			continue
		}
		if d[0] == '=' || d[0] == ':' {
			// A separator after a blank: the other rules' ("api_key =
			// …"), also escaped ("DPoP \x3D \"v\"": maskEscapedText's;
			// the escape alone was masked and the value kept, mask22's
			// fuzzing).
			return 0, 0, next
		}
		if k := strings.IndexByte(d, '='); k > 0 && strings.TrimRight(d[k:], "=") != "" {
			return 0, 0, next // an assignment (a challenge's algs="…"), the other rules'; base64's padding ends a value
		}
	}
	if blankProseWord(v) || len(nameWords(name)) < 2 || !mayBeSensitive(name, ctxJSON) || !sensitiveName(name, ctxJSON) ||
		IsRedacted(unquoteValue(v)) || IsRedacted(strings.Trim(v, `'`)) || onlyMasks(v) || measureNumber(name, v, "", "") {
		return 0, 0, next
	}
	return lo, hi, next
}

// decodedValue returns v with its escapes decoded (decodeEscapes, twice:
// an escape escaped again), or "" when it holds none.
func decodedValue(v string) string {
	if strings.IndexAny(v, `%\&`) < 0 {
		return ""
	}
	d, changed := v, false
	for range 2 {
		b, _, any := decodeEscapes(d, false)
		if !any {
			break
		}
		d, changed = string(b), true
	}
	if !changed {
		return ""
	}
	return d
}

// multiWordName reports, cheaply, whether name may be of several words
// (a separator, or a capital after a small letter): the gate before
// nameWords, which maskBlankSeparated would call at every word of a text.
func multiWordName(name string) bool {
	for i := 1; i < len(name); i++ {
		switch c := name[i]; {
		case c == '_' || c == '-' || c == '.':
			return true
		case c >= 'A' && c <= 'Z' && name[i-1] >= 'a' && name[i-1] <= 'z':
			return true
		}
	}
	return false
}

// isLineBreak reports whether c ends a line of text (LF or CR).
func isLineBreak(c byte) bool { return c == '\n' || c == 13 }

// blankProseWord reports whether v, without trailing punctuation, is one
// of the words that, after a credential name and a blank, begin prose
// about it rather than give its value ("api_key missing from the
// request", "client_secret is required"), in any case: maskBlankSeparated
// keeps them. A credential that is one of these words is no secret. A
// switch, not a map: no allocation at init (TestInitHeap).
func blankProseWord(v string) bool {
	v = strings.TrimRight(v, ".,;:!?)")
	if len(v) > 9 {
		return false
	}
	switch strings.ToLower(v) {
	case "a", "an", "the", "is", "was", "are", "were", "be", "been",
		"not", "no", "missing", "required", "invalid", "expired", "revoked",
		"empty", "unset", "must", "should", "cannot", "can", "will", "has",
		"have", "had", "does", "did", "and", "or", "for", "from", "in",
		"of", "to", "with", "at", "on", "by", "after", "when", "rejected", "accepted", "provided", "found", "needed":
		return true
	}
	return false
}

// maskNetrc masks the password of every .netrc entry in s (netrcRE):
// "machine api.example.com login bob password hunter2" in a tool's text,
// where no "=" or ":" follows the name.
func (r *Redactor) maskNetrc(s string) string {
	return r.maskSpans(s, netrcRE.get().FindAllStringSubmatchIndex(s, -1), func(m []int) (int, int) { return m[2], m[3] })
}

// maskJWTs masks every JWT-shaped value: base64url segments joined by dots
// (or "\u002e") whose first segment decodes to the start of a JSON object.
func (r *Redactor) maskJWTs(s string) string {
	return r.replaceMatches(s, jwtRE, func(m []string) string {
		tok := m[1]
		lead := m[0][:len(m[0])-len(tok)]
		head := tok
		if i := strings.IndexAny(tok, `.\`); i >= 0 {
			head = tok[:i]
		}
		if len(head) < 4 || !jsonObjectStart(head) {
			return m[0]
		}
		return lead + r.Mask(tok)
	})
}

// jsonObjectStart reports whether a base64url segment decodes to "{" and
// then a quote, white space or "}".
func jsonObjectStart(seg string) bool {
	b, err := base64.RawURLEncoding.DecodeString(seg[:4])
	if err != nil || len(b) < 2 || b[0] != '{' {
		return false
	}
	switch b[1] {
	case '"', ' ', '\t', '\r', '\n', '}':
		return true
	}
	return false
}

// Scrub removes credentials from free text with the Default redactor.
func Scrub(s string) string { return Default.Scrub(s) }

// HashSession returns the recorded form of a session id: "sha256:" and the
// first 16 hex digits of its SHA-256. A value already in that form is
// returned unchanged, so hashing twice is harmless. Session ids are random,
// so the short hash still tells sessions apart without revealing them.
func HashSession(id string) string {
	if id == "" || isSessionHash(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// isSessionHash reports whether id is already HashSession's form: the
// regular expression ^sha256:[0-9a-f]{16}$, checked by hand.
func isSessionHash(id string) bool {
	const prefix = "sha256:"
	return len(id) == len(prefix)+16 && id[:len(prefix)] == prefix && isLowerHex(id[len(prefix):])
}

// Headers returns a redacted copy of h (nil for nil). Names are kept as
// given. Authorization and Proxy-Authorization keep their scheme and mask
// the credential ("Bearer [redacted:len=…]"); Cookie and Set-Cookie keep
// the cookie names and attributes and mask the values; any other header
// whose name is a credential name (it contains token, secret, passw, pwd,
// key, auth, credential, assertion, jwt, dpop, cookie, signature, passcode
// or access-code; see docs/security.md) is masked, except WWW-Authenticate,
// Proxy-Authenticate, Idempotency-Key and the Access-Control-* headers.
// Mcp-Session-Id and other headers naming only a session are hashed with
// HashSession. Location, Content-Location and Referer are redacted as URLs.
// Every other value is scrubbed with Scrub.
func (r *Redactor) Headers(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, values := range h {
		rule := classifyHeader(name)
		vs := make([]string, len(values))
		for i, v := range values {
			vs[i] = r.headerValue(rule, v)
		}
		out[name] = vs
	}
	return out
}

// headerValue redacts one value of a header whose rule is rule.
func (r *Redactor) headerValue(rule headerRule, v string) string {
	switch rule {
	case headerMask:
		return r.Mask(v)
	case headerMeasure:
		if isNumber(strings.TrimSpace(v)) {
			return v // a time or a count (X-Client-Secret-Expires-At: 0)
		}
		return r.Mask(v)
	case headerAuth:
		return r.maskAuthorization(v)
	case headerCookie:
		return r.maskCookie(v)
	case headerHash:
		return HashSession(v)
	case headerURL:
		return r.URL(v)
	}
	return r.Scrub(v)
}

// headersShared redacts h as Headers does, but returns h itself when no
// value changes, and otherwise a new map that shares the value slices of
// the headers that did not change (a changed header gets a new slice).
// For the encoder's copy of a record, which is read and dropped.
func (r *Redactor) headersShared(h http.Header) http.Header {
	var out http.Header
	for name, values := range h {
		rule := classifyHeader(name)
		var vs []string
		for i, v := range values {
			rv := r.headerValue(rule, v)
			if rv != v && vs == nil {
				vs = slices.Clone(values)
			}
			if vs != nil {
				vs[i] = rv
			}
		}
		if vs != nil {
			if out == nil {
				out = maps.Clone(h)
			}
			out[name] = vs
		}
	}
	if out == nil {
		return h
	}
	return out
}

// maskAuthorization keeps the auth scheme of an Authorization value and
// masks the rest ("Bearer abc" → "Bearer [redacted:len=3:h=…]").
func (r *Redactor) maskAuthorization(v string) string {
	if IsRedacted(v) {
		return v
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !isToken(scheme) {
		return r.Mask(v)
	}
	return scheme + " " + r.Mask(strings.TrimSpace(cred))
}

// maskCookie keeps the cookie names (and a Set-Cookie's attributes after
// the first pair) and masks every value.
func (r *Redactor) maskCookie(v string) string {
	parts := strings.Split(v, ";")
	for i, p := range parts {
		name, val, ok := strings.Cut(p, "=")
		if !ok {
			if i == 0 {
				parts[i] = r.Mask(p)
			}
			continue
		}
		if i > 0 && isCookieAttribute(name) {
			continue
		}
		parts[i] = name + "=" + r.Mask(val)
	}
	return strings.Join(parts, ";")
}

func isCookieAttribute(name string) bool {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "path", "domain", "expires", "max-age", "samesite", "priority", "partitioned":
		return true
	}
	return false
}

// isToken reports whether s is an RFC 9110 token (an auth scheme).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// RedactHeaders returns a redacted copy of h using the Default redactor.
func RedactHeaders(h http.Header) http.Header { return Default.Headers(h) }

// URL redacts a URL: userinfo becomes a mask, and the values of credential
// query parameters (every credential name, plus code, state and sig) become
// masks, in the query and in a fragment written as a query. Other parts are
// scrubbed as text (a JWT in the path is masked). Text that is not a URL is
// scrubbed as text.
func (r *Redactor) URL(raw string) string {
	if raw == "" {
		return raw
	}
	if !strings.ContainsAny(raw, "?#@") {
		// No query, fragment or userinfo: the text as a whole is what is
		// scrubbed below, whether url.Parse takes it or not.
		return r.Scrub(raw)
	}
	return r.urlParsed(raw)
}

// urlParsed is URL by url.Parse, for any raw text.
func (r *Redactor) urlParsed(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return r.Scrub(raw)
	}
	rest, frag, hasFrag := strings.Cut(raw, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if u.User != nil {
		if j := strings.Index(base, "//"); j >= 0 {
			auth := base[j+2:]
			if k := strings.IndexAny(auth, "/?#"); k >= 0 {
				auth = auth[:k]
			}
			if i := strings.LastIndex(auth, "@"); i >= 0 {
				base = base[:j+2] + r.Mask(auth[:i]) + base[j+2+i:]
			}
		}
	}
	var b strings.Builder
	b.WriteString(r.Scrub(base))
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(r.redactQuery(query))
	}
	if hasFrag {
		b.WriteByte('#')
		if strings.Contains(frag, "=") {
			b.WriteString(r.redactQuery(frag))
		} else {
			b.WriteString(r.Scrub(frag))
		}
	}
	return b.String()
}

func (r *Redactor) redactQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, v, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && sensitiveName(name, ctxForm) {
			parts[i] = k + "=" + r.Mask(v)
			continue
		}
		if hasValue && strings.ContainsAny(v, "%+") {
			// An escaped value (JSON in a query, as in serve's
			// ?params=…): scrubbed decoded, escaped again when changed.
			if dv, err := url.QueryUnescape(v); err == nil {
				clean := dv
				if isJSONDoc([]byte(dv)) {
					// JSON in a query (serve's ?params=…): redacted as
					// JSON, so that a string's escaped quotes are read
					// as the string's own.
					clean = string(r.redactJSON([]byte(dv)))
				} else {
					clean = r.Scrub(dv)
				}
				if clean != dv {
					parts[i] = r.Scrub(k) + "=" + url.QueryEscape(clean)
					continue
				}
			}
		}
		parts[i] = r.Scrub(p)
	}
	return strings.Join(parts, "&")
}

// Args returns a command line as outputs show it (matrix's client, probe's
// stdio server): each argument scrubbed as text, a URL redacted as a URL,
// and the value after a flag with a credential name ("--api-key VALUE")
// masked as the name=value rule masks "--api-key=VALUE" (issue 11).
func (r *Redactor) Args(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Scrub(a)
		if strings.Contains(a, "://") && !strings.ContainsAny(a, " \t\n") {
			out[i] = r.Scrub(r.URL(a))
		}
		if i == 0 {
			continue
		}
		if p := args[i-1]; strings.HasPrefix(p, "-") && !strings.Contains(p, "=") && !strings.HasPrefix(a, "-") {
			joined := p + "=" + a
			if s := r.Scrub(joined); s != joined && strings.HasPrefix(s, p+"=") {
				out[i] = s[len(p)+1:]
			}
		}
	}
	return out
}

// RedactURL redacts a URL with the Default redactor.
func RedactURL(raw string) string { return Default.URL(raw) }

// Body returns a redacted excerpt of a body of at most limit bytes
// (DefaultBodyLimit when limit is 0; no text at all when limit < 0) and
// whether it was cut. The whole of b is redacted before it is cut:
//   - a JSON document: every member whose name is an OAuth or credential
//     name (access_token, refresh_token, id_token, client_secret,
//     client_assertion, code_verifier, password, api_key, token, secret,
//     authorization, … in any case and with "_", "-" or camelCase) has its
//     value replaced by "[redacted]" at any depth; every string is scrubbed
//     as text (so JSON held inside a string is redacted too); all other
//     bytes are kept as they were;
//   - an event stream or other text: each "data:" line holding JSON is
//     redacted as JSON, every other line is scrubbed as text;
//   - a form-encoded body: the values of those names and of code and state.
//
// The excerpt is cut at a UTF-8 boundary, and a trailing prefix (4 bytes or
// more) of a registered secret is cut too, so a body captured up to a limit
// cannot leak part of a secret. Each byte that is not part of UTF-8 becomes
// U+FFFD, as encoding/json decodes it, so that a member name or string of
// the excerpt reads as it did in the body. To
// bound the work, a body larger than 4×limit is first cut to 4×limit and is
// then redacted as text, not as JSON.
func (r *Redactor) Body(b []byte, limit int) (excerpt string, truncated bool) {
	if limit == 0 {
		limit = DefaultBodyLimit
	}
	if limit < 0 {
		return "", len(b) > 0
	}
	precut := false
	if max := 4 * limit; len(b) > max {
		// Bound the work by the limit: a body this much larger than the
		// excerpt is cut first (and, no longer being JSON, redacted as
		// text); the slack keeps a credential that straddles the limit
		// whole, so the patterns still see it.
		b, precut = b[:max], true
		// The cut may leave the start of a token the patterns cannot
		// judge: dropped (redact_cut.go), unless it is one of more than
		// 3×limit bytes, of which the excerpt can only hold a prefix
		// judged on 3×limit bytes or more.
		if t, ok := trimUnfinished(string(b)); ok && len(t) >= limit {
			b = []byte(t)
		}
	}
	var out []byte
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		out = b
	case isJSONDoc(b):
		out = r.redactJSON(b)
	case looksLikeForm(b):
		out = []byte(r.scrubForm(string(b)))
	default:
		out = r.redactText(b)
	}
	s := validUTF8(out)
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, truncated = s[:cut], true
	}
	return r.trimSecretPrefix(s), truncated || precut
}

// validUTF8 returns b as a string with each byte that is not part of a
// UTF-8 sequence replaced by U+FFFD: one replacement per byte, as
// encoding/json decodes them (strings.ToValidUTF8 would make one of a run,
// and a decoder of the excerpt would read another member name).
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out)
}

// RedactBody returns a redacted excerpt of b with the Default redactor.
func RedactBody(b []byte, limit int) (excerpt string, truncated bool) { return Default.Body(b, limit) }

func (r *Redactor) scrubForm(s string) string {
	return r.scrubPatterns(r.replaceSecrets(s), ctxForm)
}

// trimSecretPrefix cuts a tail of s that is the beginning of a registered
// secret (at least MinSecretLen bytes of it).
func (r *Redactor) trimSecretPrefix(s string) string {
	for _, sec := range r.secretList() {
		for k := len(sec.variant) - 1; k >= MinSecretLen; k-- {
			if strings.HasSuffix(s, sec.variant[:k]) {
				s = s[:len(s)-k]
				break
			}
		}
	}
	return s
}

func isJSONDoc(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[' || t[0] == '"') && json.Valid(t)
}

// looksLikeForm reports whether b is one line of key=value pairs.
func looksLikeForm(b []byte) bool {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || bytes.IndexByte(t, '=') <= 0 || bytes.ContainsAny(t, " \t\r\n{}\"<>") {
		return false
	}
	return true
}

// netrcAcrossLines reports whether b may hold a .netrc entry over more
// than one line: a line end, "password" in any case (holdsPassword: a
// body without a "w" costs two fast searches), and "machine" or "default"
// in any case.
func netrcAcrossLines(b []byte) bool {
	if bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0 {
		return false
	}
	if !holdsPassword(b) {
		return false
	}
	return containsFold(b, "machine") || containsFold(b, "default")
}

// maskNetrcInData masks the password of a .netrc entry split over an
// event stream's data lines ("data: machine h\ndata: login u\ndata:
// password p": a tool's output streamed line by line; mask22): netrcRE
// reads a copy of b whose lines' "data:" and the blank after it are
// blanks, so that each match's place is the same in b. "data:" itself is
// then no machine's name ("data: the machine\ndata: password policy" is
// no entry).
func (r *Redactor) maskNetrcInData(b []byte) []byte {
	var view []byte
	var sc wire.SSEScanner
	sc.Feed(b)
	sc.Close()
	for t := sc.Next(); t != nil; t = sc.Next() {
		if t.Kind != wire.SSEField || t.Field != wire.FieldData || !t.Last {
			continue
		}
		start := int(t.Line)
		n := int(t.End) - start - len(t.Value) // "data:" and its blank
		if n <= 0 {
			continue
		}
		if view == nil {
			view = bytes.Clone(b)
		}
		for i := start; i < start+n; i++ {
			view[i] = ' '
		}
	}
	if view == nil {
		return []byte(r.maskNetrc(string(b)))
	}
	idx := netrcRE.get().FindAllSubmatchIndex(view, -1)
	if idx == nil {
		return b
	}
	return []byte(r.maskSpans(string(b), idx, func(m []int) (int, int) { return m[2], m[3] }))
}

// holdsPassword reports whether b holds "password" in any case ("PassWord",
// "PASSword": curl reads .netrc's keywords in any case; mask22). It looks
// at each "w" and "W" (bytes.IndexByte), not at every byte.
func holdsPassword(b []byte) bool {
	for _, w := range []byte{'w', 'W'} {
		for i := 4; i < len(b); {
			j := bytes.IndexByte(b[i:], w)
			if j < 0 {
				break
			}
			p := i + j
			if p+4 <= len(b) && hasFoldPrefix(string(b[p-4:p+4]), "password") {
				return true
			}
			i = p + 1
		}
	}
	return false
}

// containsFold reports whether b holds w (lower-case ASCII) in any case.
func containsFold(b []byte, w string) bool {
	for i := 0; i+len(w) <= len(b); i++ {
		if lowerASCII(b[i]) == w[0] && hasFoldPrefix(string(b[i:i+len(w)]), w) {
			return true
		}
	}
	return false
}

// redactText redacts an event stream or other text line by line.
func (r *Redactor) redactText(b []byte) []byte {
	if bytes.Contains(b, []byte("-----BEGIN ")) {
		// A PEM block spans lines: mask it across them first.
		b = []byte(r.maskPEM(string(b)))
	}
	if netrcAcrossLines(b) {
		// A .netrc entry spans lines too ("machine h\nlogin u\npassword
		// p"): a line alone ("password p") is no entry (names21).
		// In an event stream, the entry's lines are data lines (mask22).
		if bytes.Contains(b, []byte("data:")) {
			b = r.maskNetrcInData(b)
		} else {
			b = []byte(r.maskNetrc(string(b)))
		}
	}
	// The lines are those of an event stream (CR, LF or CRLF end them, a
	// BOM may lead): wire.SSEScanner finds them, and what lies between
	// them (line ends, blank lines, the BOM) is kept as it is.
	var out bytes.Buffer
	out.Grow(len(b))
	var sc wire.SSEScanner
	sc.Feed(b)
	sc.Close()
	pos := 0
	for t := sc.Next(); t != nil; t = sc.Next() {
		if t.Kind == wire.SSEEnd || !t.Last {
			continue // fed whole, every line is one piece
		}
		start, end := int(t.Line), int(t.End)
		out.Write(b[pos:start])
		line := b[start:end]
		if t.Kind == wire.SSEField && t.Field == wire.FieldData && isJSONDoc(t.Value) {
			out.Write(line[:len(line)-len(t.Value)]) // "data:" and its space
			out.Write(r.redactJSON(t.Value))
		} else if t.Kind == wire.SSEField && t.Field == wire.FieldData && len(t.Value) > 0 && len(t.Value) < len(line) {
			// A data line of text is scrubbed as the text it carries, so
			// that a rule reading a line from its start reads the data's
			// ("data: client_secret VALUE"; names21).
			out.Write(line[:len(line)-len(t.Value)])
			out.WriteString(r.Scrub(string(t.Value)))
		} else {
			out.WriteString(r.Scrub(string(line)))
		}
		pos = end
	}
	out.Write(b[pos:])
	return out.Bytes()
}
