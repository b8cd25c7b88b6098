package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Redacted replaces a credential value.
const Redacted = "[redacted]"

// MinSecretLen is the shortest secret AddSecret accepts: shorter strings
// would mangle unrelated text and are not secrets anyway.
const MinSecretLen = 4

// ErrShortSecret is returned by AddSecret for a secret shorter than
// MinSecretLen.
var ErrShortSecret = errors.New("record: secret too short to scrub safely")

// Redactor removes credentials from records. Its rules are fixed (see
// docs/records.md); callers add the secrets they know, such as the bearer
// token given on the command line, with AddSecret. A Redactor is safe for
// concurrent use; the zero value has no extra secrets and is ready to use.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // raw secrets and their encoded variants, longest first
}

// Default is the redactor used by the package-level helpers and by encoders
// that name none. The CLI registers its secrets here.
var Default = &Redactor{}

// NewRedactor returns a redactor with no extra secrets.
func NewRedactor() *Redactor { return &Redactor{} }

// AddSecret registers a secret to be replaced by "[redacted]" wherever it
// appears in a string of a record, also in its URL-query-escaped and
// JSON-escaped forms. Surrounding white space is ignored; an empty secret is
// a no-op; a secret shorter than MinSecretLen is refused with
// ErrShortSecret.
func (r *Redactor) AddSecret(secret string) error {
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return nil
	}
	if len(secret) < MinSecretLen {
		return ErrShortSecret
	}
	variants := []string{secret, url.QueryEscape(secret), url.PathEscape(secret)}
	var b bytes.Buffer
	writeJSONString(&b, secret)
	variants = append(variants, b.String()[1:b.Len()-1])
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range variants {
		if !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
		}
	}
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return nil
}

// AddSecret registers a secret with the Default redactor.
func AddSecret(secret string) error { return Default.AddSecret(secret) }

func (r *Redactor) secretList() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.secrets
}

// sensitiveNames are the JSON member names (and form and query keys) whose
// values are credentials. Each entry lists the words of a name; a name
// matches when it equals the words joined, ignoring case and "_"/"-"
// between words (access_token, accessToken, Access-Token).
var sensitiveNames = [][]string{
	{"access", "token"}, {"refresh", "token"}, {"id", "token"}, {"subject", "token"}, {"actor", "token"},
	{"session", "token"}, {"x", "auth", "token"}, {"auth", "token"}, {"bearer", "token"},
	{"client", "secret"}, {"client", "assertion"}, {"code", "verifier"},
	{"api", "key"}, {"x", "api", "key"}, {"private", "key"},
	{"password"}, {"passwd"}, {"secret"}, {"token"}, {"assertion"},
	{"authorization"}, {"proxy", "authorization"}, {"cookie"}, {"set", "cookie"},
	{"credential"}, {"credentials"},
}

// formOnlyNames are sensitive in form bodies and URL queries (OAuth
// authorization responses and token requests) but not in JSON, where "code"
// is usually a JSON-RPC error code and "state" ordinary data.
var formOnlyNames = [][]string{{"code"}, {"state"}}

// queryOnlyNames are URL query keys that carry signatures or keys
// (OpenTelemetry's url.full redaction list, plus Google's "key").
var queryOnlyNames = [][]string{
	{"x", "amz", "signature"}, {"x", "amz", "credential"}, {"x", "amz", "security", "token"},
	{"aws", "access", "key", "id"}, {"signature"}, {"sig"}, {"x", "goog", "signature"},
	{"x", "goog", "credential"}, {"key"},
}

func normalizeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-':
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func nameSet(lists ...[][]string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, words := range l {
			m[strings.Join(words, "")] = true
		}
	}
	return m
}

func namePattern(lists ...[][]string) string {
	var alts []string
	for _, l := range lists {
		for _, words := range l {
			alts = append(alts, strings.Join(words, "[_-]?"))
		}
	}
	// Longest first: Go's alternation is leftmost-first.
	slices.SortStableFunc(alts, func(a, b string) int { return len(b) - len(a) })
	return "(?:" + strings.Join(alts, "|") + ")"
}

var (
	jsonSensitive  = nameSet(sensitiveNames)
	formSensitive  = nameSet(sensitiveNames, formOnlyNames)
	querySensitive = nameSet(sensitiveNames, formOnlyNames, queryOnlyNames)

	keyPat     = namePattern(sensitiveNames)
	formKeyPat = namePattern(sensitiveNames, formOnlyNames)

	// "Bearer <token68>" and "Basic <token68>", but not an auth-param such
	// as `Bearer realm="x"` or `Bearer error=invalid_token`.
	bearerRE = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9\-._~+/]+=*([^A-Za-z0-9\-._~+/="]|$)`)
	// A credential header written as text ("Authorization: …" in an error
	// message or a raw HTTP dump): the rest of the line goes.
	headerLineRE = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|set-cookie|cookie|x-api-key|api-key|x-auth-token)(\s*:\s*)[^\r\n"]*`)
	// "key": value in JSON text that could not be parsed (cut, or an SSE
	// stream); the value may end at the cut.
	jsonKeyRE = regexp.MustCompile(`(?i)("` + keyPat + `"\s*:\s*)("(?:[^"\\]|\\.)*"?|[^\s",}\]]+)`)
	// The same inside a JSON string (\"key\": \"value\").
	jsonEscKeyRE = regexp.MustCompile(`(?i)(\\+"` + keyPat + `\\+"\s*:\s*)(\\+"(?:[^\\]|\\[^"])*(?:\\+"|$)|[^\s\\",}\]]+)`)
	// key=value in free text.
	formKeyRE = regexp.MustCompile(`(?i)(^|[?&;\s])(` + keyPat + `=)([^&;\s#"]*)`)
	// key=value in a form-encoded body, with the OAuth code and state.
	formBodyKeyRE = regexp.MustCompile(`(?i)(^|[?&;\s])(` + formKeyPat + `=)([^&;\s#"]*)`)

	sessionHashRE = regexp.MustCompile(`^sha256:[0-9a-f]{16}$`)
)

// patternHints are lower-case substrings without which no text pattern can
// match; they let Scrub skip the regular expressions for most strings.
var patternHints = []string{"bearer", "basic", "token", "secret", "passw", "key", "auth", "assertion", "verifier", "cookie", "credential"}

// Scrub removes credentials from free text: the registered secrets,
// "Bearer …"/"Basic …" credentials, credential headers written as text
// ("Authorization: …" up to the end of the line), and the values of OAuth and
// API-key members written as JSON ("access_token": "…", also inside an
// escaped JSON string) or as key=value.
func (r *Redactor) Scrub(s string) string {
	if s == "" {
		return s
	}
	for _, sec := range r.secretList() {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	if !hasPatternHint(s) {
		return s
	}
	return scrubPatterns(s, formKeyRE)
}

func hasPatternHint(s string) bool {
	lower := strings.ToLower(s)
	for _, h := range patternHints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

// scrubPatterns applies the text patterns, with form as the key=value
// pattern.
func scrubPatterns(s string, form *regexp.Regexp) string {
	s = bearerRE.ReplaceAllString(s, "${1}${2}"+Redacted+"${3}")
	s = headerLineRE.ReplaceAllString(s, "${1}${2}"+Redacted)
	s = jsonKeyRE.ReplaceAllString(s, `${1}"`+Redacted+`"`)
	s = jsonEscKeyRE.ReplaceAllString(s, "${1}"+Redacted)
	s = form.ReplaceAllString(s, "${1}${2}"+Redacted)
	return s
}

// Scrub removes credentials from free text with the Default redactor.
func Scrub(s string) string { return Default.Scrub(s) }

// HashSession returns the recorded form of a session id: "sha256:" and the
// first 16 hex digits of its SHA-256. A value already in that form is
// returned unchanged, so hashing twice is harmless. Session ids are random,
// so the short hash still tells sessions apart without revealing them.
func HashSession(id string) string {
	if id == "" || sessionHashRE.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// headerAction is what happens to a header's values.
type headerAction int

const (
	headerScrub  headerAction = iota // keep, scrubbed as free text
	headerRedact                     // replace with "[redacted]"
	headerHash                       // replace with HashSession
	headerURL                        // redact as a URL
)

// credentialHints are substrings of a lower-cased header name that mark a
// credential.
var credentialHints = []string{"auth", "token", "secret", "key", "passw", "cookie", "credential", "signature"}

func classifyHeader(name string) headerAction {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "www-authenticate", "proxy-authenticate":
		// Challenges, not credentials: the classifier's evidence for
		// 401/403 (resource_metadata, scope, error). Scrubbed as text.
		return headerScrub
	case "mcp-session-id":
		return headerHash
	case "location", "content-location", "referer":
		return headerURL
	}
	if strings.HasSuffix(n, "idempotency-key") {
		return headerScrub
	}
	for _, h := range credentialHints {
		if strings.Contains(n, h) {
			return headerRedact
		}
	}
	if strings.Contains(n, "session") {
		return headerHash
	}
	return headerScrub
}

// Headers returns a redacted copy of h (nil for nil). Names are kept as
// given. Credential headers (Authorization, Proxy-Authorization, Cookie,
// Set-Cookie, and any header whose lower-cased name contains "auth",
// "token", "secret", "key", "passw", "cookie", "credential" or "signature",
// except WWW-Authenticate, Proxy-Authenticate and Idempotency-Key) get the
// value "[redacted]". Mcp-Session-Id and other headers naming a session are
// hashed with HashSession. Location, Content-Location and Referer are
// redacted as URLs. Every other value is scrubbed with Scrub.
func (r *Redactor) Headers(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, values := range h {
		action := classifyHeader(name)
		vs := make([]string, len(values))
		for i, v := range values {
			switch action {
			case headerRedact:
				vs[i] = Redacted
			case headerHash:
				vs[i] = HashSession(v)
			case headerURL:
				vs[i] = r.URL(v)
			default:
				vs[i] = r.Scrub(v)
			}
		}
		out[name] = vs
	}
	return out
}

// RedactHeaders returns a redacted copy of h using the Default redactor.
func RedactHeaders(h http.Header) http.Header { return Default.Headers(h) }

// URL redacts a URL: userinfo becomes "[redacted]", and the values of
// credential query parameters (the OAuth members, code, state, and signature
// keys such as X-Amz-Signature, sig and key) become "[redacted]", in the
// query and in a fragment written as a query. Other parts are scrubbed as
// text. Text that is not a URL is scrubbed as text.
func (r *Redactor) URL(raw string) string {
	if raw == "" {
		return raw
	}
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
				base = base[:j+2] + Redacted + base[j+2+i:]
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
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && querySensitive[normalizeName(name)] {
			parts[i] = k + "=" + Redacted
			continue
		}
		parts[i] = r.Scrub(p)
	}
	return strings.Join(parts, "&")
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
// cannot leak part of a secret. Bytes that are not UTF-8 become U+FFFD. To
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
	s := strings.ToValidUTF8(string(out), "\uFFFD")
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, truncated = s[:cut], true
	}
	return r.trimSecretPrefix(s), truncated || precut
}

// RedactBody returns a redacted excerpt of b with the Default redactor.
func RedactBody(b []byte, limit int) (excerpt string, truncated bool) { return Default.Body(b, limit) }

func (r *Redactor) scrubForm(s string) string {
	for _, sec := range r.secretList() {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	return scrubPatterns(s, formBodyKeyRE)
}

// trimSecretPrefix cuts a tail of s that is the beginning of a registered
// secret (at least MinSecretLen bytes of it).
func (r *Redactor) trimSecretPrefix(s string) string {
	for _, sec := range r.secretList() {
		for k := len(sec) - 1; k >= MinSecretLen; k-- {
			if strings.HasSuffix(s, sec[:k]) {
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

// redactText redacts an event stream or other text line by line.
func (r *Redactor) redactText(b []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(b))
	for len(b) > 0 {
		line := b
		next := []byte(nil)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, next = b[:i+1], b[i+1:]
		}
		b = next
		body := bytes.TrimRight(line, "\r\n")
		eol := line[len(body):]
		if rest, ok := bytes.CutPrefix(body, []byte("data:")); ok {
			sp := []byte(nil)
			if len(rest) > 0 && rest[0] == ' ' {
				sp, rest = rest[:1], rest[1:]
			}
			if isJSONDoc(rest) {
				out.WriteString("data:")
				out.Write(sp)
				out.Write(r.redactJSON(rest))
				out.Write(eol)
				continue
			}
		}
		out.WriteString(r.Scrub(string(body)))
		out.Write(eol)
	}
	return out.Bytes()
}
