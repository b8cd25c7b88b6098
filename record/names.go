package record

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// nameContext says where a name was found: the rules differ a little.
type nameContext int

const (
	// ctxJSON: a JSON member name, or "name": value in text. "code" and
	// "state" are not credentials there (JSON-RPC error codes, data).
	ctxJSON nameContext = iota
	// ctxForm: a form field or a URL query key, where OAuth puts the
	// authorization code and state, and signed URLs put "sig".
	ctxForm
	// ctxHeader: an HTTP header name.
	ctxHeader
)

// credentialStems are substrings of a name, lower-cased with "_", "-", "."
// and spaces removed, that make it a credential name (issue 11: redact by
// pattern, not by list). "key" and "auth" have their own rules (keyWord,
// authorWords); the exemptions are in exempt.
var credentialStems = []string{
	"token", "secret", "passw", "pwd", "passphrase", "passcode", "accesscode", "credential",
	"assertion", "jwt", "dpop", "session", "cookie", "signature", "codeverifier",
}

// englishKeyWords end in "key" without being keys.
var englishKeyWords = map[string]bool{
	"monkey": true, "donkey": true, "turkey": true, "hockey": true, "jockey": true, "whiskey": true,
	"lackey": true, "turnkey": true, "latchkey": true, "hotkey": true, "hotkeys": true, "flunkey": true,
	"malarkey": true, "smokey": true, "hokey": true, "pokey": true, "jokey": true, "mickey": true,
}

// authorWords contain "auth" without being about authentication.
var authorWords = map[string]bool{
	"author": true, "authors": true, "authored": true, "authoring": true, "authorship": true,
	"coauthor": true, "coauthors": true, "authority": true, "authorities": true,
}

// descriptorWords end names that describe a credential rather than hold
// one: OAuth metadata (token_endpoint, jwks_uri, authorization_servers,
// token_endpoint_auth_methods_supported), token_type, a scheme, an
// algorithm. A name ending in one is exempt only when what comes before it
// is no credential name once its kind endings are taken off, and a last
// word that only ends in one ("observer", "prototype", "authserver") is one
// only after kinds alone (descriptorName).
var descriptorWords = []string{
	"endpoints", "endpoint", "uris", "uri", "urls", "url", "servers", "server", "supported", "types", "type",
	"methods", "method", "algorithms", "algorithm", "algs", "alg", "schemes", "scheme",
}

// kindEndings end the words that name a kind of credential or the protocol
// that carries one (token, oauth, authorization, session, assertion, jwt,
// dpop, signature, credentials) rather than a credential a name holds: the
// subjects of OAuth's descriptors (token_endpoint, id_token_signing_alg_values_supported,
// subject_token_type, client_assertion_type). Longer first, so that
// "tokens" goes whole. "key", "secret", "password" and the other stems are
// no kind: a name holds one (key_type is masked; docs/decisions.md,
// redact19).
var kindEndings = []string{
	"authorizations", "authorization", "authentication", "credentials", "credential", "assertions", "assertion",
	"signatures", "signature", "sessions", "session", "tokens", "token", "authn", "authz", "auth", "dpop", "jwts", "jwt",
}

// tokenCountRE matches names that count language-model tokens (maxTokens,
// input_tokens, total_tokens, tokenCount, OpenInference's
// llm.token_count.prompt/completion/total): numbers a diagnosis needs.
// Each of its names holds "token", tested first, so that the header
// names classified at start-up (commonHeaderRules) do not compile it.
var tokenCountRE = lazyRegexp(`^(?:(?:max|min|num|total|input|output|prompt|completion|cached|cache|reasoning|remaining|used|budget)tokens?(?:count|limit|used)?|tokens?(?:count|limit|used|budget|usage)|(?:count|number)oftokens|(?:llm)?tokencount(?:prompt|completion|total))$`)

// nameWords splits a name into lower-cased words at "_", "-", ".", spaces
// and other punctuation, and at camelCase boundaries ("apiKey" → api, key;
// "APIKey" → api, key).
func nameWords(name string) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	isUpper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	isLower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isUpper(c):
			// A new word at lower→Upper, and at the last capital of a run
			// followed by a lower-case letter (APIKey: API|Key).
			if i > 0 && (isLower(name[i-1]) || name[i-1] >= '0' && name[i-1] <= '9' ||
				isUpper(name[i-1]) && i+1 < len(name) && isLower(name[i+1])) {
				flush()
			}
			cur = append(cur, c)
		case isLower(c) || c >= '0' && c <= '9' || c >= 0x80:
			cur = append(cur, c)
		default:
			flush()
		}
	}
	flush()
	return words
}

// keyWord reports whether a word names a key: "key", "keys", or a compound
// ending in "key" ("apikey", "accesskey", "privatekey", "sortkey") that is
// not an English word (monkey, hotkey). Words that only start with "key"
// (keyword, keyboard) are not keys.
func keyWord(w string) bool {
	if w == "key" || w == "keys" {
		return true
	}
	base := strings.TrimSuffix(w, "s")
	return strings.HasSuffix(base, "key") && !englishKeyWords[w] && !englishKeyWords[base]
}

// sensitiveName reports whether values under name are credentials. Names
// longer than 256 bytes are judged by their first 256, with their escapes
// decoded (decodeName).
func sensitiveName(name string, ctx nameContext) bool {
	if len(name) > 256 {
		name = name[:256]
	}
	name = decodeName(name)
	if !mayBeSensitive(name, ctx) {
		return false
	}
	words := nameWords(name)
	if len(words) == 0 {
		return false
	}
	norm := strings.Join(words, "")
	if exemptName(norm, words, ctx) {
		return false
	}
	for _, s := range credentialStems {
		if strings.Contains(norm, s) {
			return true
		}
	}
	var rest strings.Builder
	for _, w := range words {
		if keyWord(w) {
			return true
		}
		if !authorWords[w] {
			rest.WriteString(w)
		}
	}
	if strings.Contains(rest.String(), "auth") {
		return true
	}
	if passWord(words) || pinWord(words) || otpWord(words) {
		return true
	}
	if ctx == ctxForm {
		switch norm {
		case "code", "state", "sig":
			return true
		}
	}
	return false
}

// passWord reports whether a name's last word is "pass" or "pw" (pass,
// db_pass, smtpPass, user_pw), not a word holding it (bypass, compass,
// passage), or is a form of the password after one of them (pw_hash,
// pass_digest, pwValue: heldFormWord). Such a name holds a password, as
// a string or a number ({"db_pass": 123456}); only the name "pass" alone,
// beside a count such as "fail", counts passes ({"pass": 5, "fail": 0};
// countName). A "pass" before other words is no password
// (db_pass_endpoint, pass_rate, pass_through: redact20).
func passWord(words []string) bool {
	n := len(words)
	if last := words[n-1]; last == "pass" || last == "pw" {
		return true
	}
	return n > 1 && heldFormWord(words[n-1]) && (words[n-2] == "pass" || words[n-2] == "pw")
}

// pinWord reports whether a name holds a PIN: its last word is "pin",
// "pins" or "pincode", or its last two are "pin" and "code", a form of it
// (heldFormWord: pin_hash) or its number (pin_number, pinNo); not a word
// holding it (ping, spinner, mapping, pinned), nor a name that goes on
// (pin_count, pin_mode).
func pinWord(words []string) bool {
	n := len(words)
	last := words[n-1]
	if last == "pin" || last == "pins" || last == "pincode" {
		return true
	}
	if n < 2 || words[n-2] != "pin" {
		return false
	}
	switch last {
	case "code", "number", "num", "no":
		return true
	}
	return heldFormWord(last)
}

// otpWord reports whether a name holds a one-time password: one of its
// words is "otp", "totp" or "hotp" (otp, user.otp, otp_code, mfaOtp,
// TOTP), not a word holding the letters (hotplug, footprint). A one-time
// password is short-lived but a credential while it lives, and the
// record outlives it only if the code is replayed within its window,
// which is what a record must not make possible (names21). A number
// under an otp name is masked as a PIN's is, unless the name says when
// or how many (otp_expires_at, otp_length: measureWord).
func otpWord(words []string) bool {
	for _, w := range words {
		switch w {
		case "otp", "totp", "hotp", "otps":
			return true
		}
	}
	return false
}

// measureWord reports whether a name's last word (or its last two)
// says when a credential expires or was made, or how many or how long
// it is, rather than holding it: client_secret_expires_at (RFC 7591
// §3.2.1), expires_in, issued_at, session_count, password_length,
// token_ttl. A number under such a name is that time or count, and is
// kept (countMeasure); a string under it is masked as before (names21).
func measureWord(words []string) bool {
	n := len(words)
	if n < 2 {
		return false
	}
	switch words[n-1] {
	case "count", "length", "len", "size", "ttl", "lifetime", "expiry", "expiration", "expires", "expiresat", "expiresin", "issuedat", "createdat":
		return true
	case "at", "in":
		// A time: expires_at, issued_at, created_at, expires_in; after a
		// verb's past or a word that names a moment, not "sign_in".
		switch words[n-2] {
		case "expires", "expired", "issued", "created", "updated", "rotated", "revoked", "refreshed", "used", "last":
			return true
		}
	}
	return false
}

// heldFormWord reports whether a word names a form of the secret before
// it (pw_hash, pass_digest, pin_value, pw_enc): after "pass", "pw" or
// "pin" it makes a credential name, as the word alone does (redact20). A
// password's or a PIN's hash is as secret as the value: a short one is
// found from it by trying every value. A switch, not a map: nothing
// allocated at init (TestInitHeap).
func heldFormWord(w string) bool {
	switch w {
	case "hash", "hashed", "digest", "value", "val", "enc", "encrypted":
		return true
	}
	return false
}

// heldFormEndings are heldFormWord's words, and a PIN's number, as
// endsInHeldForm reads them.
var heldFormEndings = [...]struct {
	form  string
	pinNo bool // after "pin" only
}{
	{"hash", false}, {"hashed", false}, {"digest", false}, {"value", false}, {"val", false}, {"enc", false},
	{"encrypted", false}, {"number", true}, {"num", true}, {"no", true},
}

// endsInHeldForm is passWord and pinWord on a name lower-cased without
// separators (mayBeSensitive's fast path): it ends in "pass", "pw" or
// "pin" and one of heldFormWord's words, or in "pin" and "number", "num" or "no".
// Most names hold none of "pw", "pass" or "pin" and cost one scan each.
func endsInHeldForm(norm []byte) bool {
	if !bytes.Contains(norm, []byte("pw")) && !bytes.Contains(norm, []byte("pass")) && !bytes.Contains(norm, []byte("pin")) {
		return false
	}
	for _, f := range heldFormEndings {
		h, ok := bytes.CutSuffix(norm, []byte(f.form))
		if ok && (bytes.HasSuffix(h, []byte("pin")) ||
			!f.pinNo && (bytes.HasSuffix(h, []byte("pass")) || bytes.HasSuffix(h, []byte("pw")))) {
			return true
		}
	}
	return false
}

// What a number under a credential name is (countName).
const (
	// countNone: a credential (a numeric password, PIN or secret).
	countNone = iota
	// countAlways: a count of tokens ("tokens", "cached_tokens"): the
	// name is a credential name only by its last word "tokens", and a
	// number, true, false or null under it is kept.
	countAlways
	// countMeasure: a name that says when a credential expires or was
	// made, or how many or how long it is (measureWord):
	// a number under it is kept, a string masked.
	countMeasure
	// countBeside: the name "pass" alone, a count of passes when a
	// count of another kind is its sibling ({"pass": 5, "fail": 0},
	// probe's grades); a password otherwise ({"user": "bob", "pass":
	// 123456}).
	countBeside
)

// countName says whether a number, true, false or null under name (a
// credential name) may be a count rather than a credential. A string, an
// array or an object under any credential name is masked.
func countName(name string) int {
	words := nameWords(decodeName(name))
	if len(words) == 0 {
		return countNone
	}
	switch last := words[len(words)-1]; {
	case len(words) == 1 && last == "pass":
		return countBeside
	case last == "tokens":
		if len(words) == 1 || !sensitiveName(strings.Join(words[:len(words)-1], "_"), ctxJSON) {
			return countAlways
		}
	case measureWord(words):
		return countMeasure
	}
	return countNone
}

// isCountSibling reports whether a member name makes "pass" beside it a
// count (countBeside): fail, failed, failures, skip, skipped, total,
// error(s), notApplicable, passed, warn(ings), todo, pending, in any case.
// It runs for every member of every object redactJSON walks: a switch
// over the name folded in a buffer on the stack, no hashing.
func isCountSibling(name string) bool {
	var buf [16]byte
	if len(name) < 4 || len(name) > len(buf) {
		return false
	}
	switch name[0] | 0x20 {
	case 'f', 's', 't', 'e', 'n', 'p', 'w':
	default:
		return false
	}
	for i := 0; i < len(name); i++ {
		buf[i] = lowerASCII(name[i])
	}
	switch string(buf[:len(name)]) {
	case "fail", "failed", "fails", "failure", "failures", "skip", "skipped", "total", "error", "errors",
		"notapplicable", "passed", "warn", "warning", "warnings", "todo", "pending":
		return true
	}
	return false
}

// mayBeSensitive is sensitiveName's fast path, without allocation: false
// when the name, lower-cased without separators, holds no stem at all.
func mayBeSensitive(name string, ctx nameContext) bool {
	var buf [256]byte
	n := 0
	for i := 0; i < len(name) && n < len(buf); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			buf[n] = c + 'a' - 'A'
			n++
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80:
			buf[n] = c
			n++
		}
	}
	norm := buf[:n]
	for _, s := range credentialStems {
		if bytes.Contains(norm, []byte(s)) {
			return true
		}
	}
	if bytes.Contains(norm, []byte("key")) || bytes.Contains(norm, []byte("auth")) ||
		bytes.HasSuffix(norm, []byte("pass")) || bytes.HasSuffix(norm, []byte("pw")) ||
		bytes.HasSuffix(norm, []byte("pin")) || bytes.HasSuffix(norm, []byte("pins")) || bytes.HasSuffix(norm, []byte("pincode")) ||
		endsInHeldForm(norm) || bytes.Contains(norm, []byte("otp")) {
		return true
	}
	if ctx == ctxForm {
		switch string(norm) {
		case "code", "state", "sig":
			return true
		}
	}
	return false
}

// exemptName lists the names that contain a stem but are not credentials,
// because a diagnosis needs their values: MCP's progressToken (it ties
// progress notifications to their request), token counts, idempotency keys
// (they decide whether a retry is safe), and descriptors such as
// token_endpoint or authorization_servers; and a challenge under its
// header's name (wwwAuthenticate, a HAR pair's "WWW-Authenticate"), kept as
// the header itself is (classifyHeaderName): the evidence for a 401 or 403.
// That name exactly: a longer one ending in it (x_www_authenticate,
// X-Secret-WWW-Authenticate) is judged as any other name. An exemption
// covers an idempotency key or a descriptor, not a credential name with
// its words appended: what comes before them is judged by the same rules
// (cutTail, descriptorName), so that api_key_idempotency_key and
// client_secret_token_endpoint are credential names (redact19).
func exemptName(norm string, words []string, ctx nameContext) bool {
	switch {
	case norm == "progresstoken", strings.Contains(norm, "token") && tokenCountRE.get().MatchString(norm),
		norm == "wwwauthenticate", norm == "proxyauthenticate":
		return true
	}
	if head, ok := cutTail(words, "idempotencykey"); ok {
		return len(head) == 0 || !sensitiveName(strings.Join(head, "_"), ctx)
	}
	if head, ok := cutTail(words, "keyid"); ok {
		// A key's identifier (key_id, keyId, signing_key_id; a JWK's
		// "kid", RFC 7517 §4.5, published in the JWKS) names the key,
		// as an idempotency key names a request; what comes before it
		// is judged alone, so that session_key_id and
		// client_secret_key_id stay credential names (names21).
		return len(head) == 0 || !sensitiveName(strings.Join(head, "_"), ctx)
	}
	return descriptorName(words, ctx)
}

// listMember reports whether a JSON member's name says that its array
// lists kinds of things, not a name and its value (mask22): its last word
// is a plural descriptor word (grant_types, response_types,
// token_endpoint_auth_methods_supported, redirect_uris: OAuth's and
// OpenID's metadata, whose arrays hold registered names), scope or scopes
// (RFC 6749 §3.3: a scope is a permission's name), or it is JSON Schema's
// required (property names, as a tool's inputSchema lists them). A
// credential name is none: its value is masked whole.
func listMember(key string) bool {
	if !listSuffix(key) {
		return false // most arrays' members ("content", "tools"): no allocation
	}
	words := nameWords(key)
	if len(words) == 0 {
		return false
	}
	switch words[len(words)-1] {
	case "endpoints", "uris", "urls", "servers", "supported", "types", "methods", "algorithms", "algs", "schemes",
		"scope", "scopes":
	case "required":
		if len(words) > 1 {
			return false
		}
	default:
		return false
	}
	return !sensitiveName(key, ctxJSON)
}

// registeredName reports whether s is written as the registered names a
// list member's array holds (refresh_token, none, client_secret_basic):
// lower-case letters in words joined by "_", no digit, no capital. A pair
// array under a list member ({"auth_methods": ["password", "Hx7q2Lm9Pz"]})
// whose second string is anything else stays a name and its value, masked
// (review22: the member's name alone kept such values in the clear).
func registeredName(s string) bool {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '_' && s[i-1] != '_') {
			return false
		}
	}
	return true
}

// listWords are the last words of listMember's names.
var listWords = [...]string{"endpoints", "uris", "urls", "servers", "supported", "types", "methods", "algorithms", "algs",
	"schemes", "scope", "scopes", "required"}

// listSuffix reports whether key ends in one of listWords, in any case:
// listMember's test before it splits the name into words.
func listSuffix(key string) bool {
	for _, w := range listWords {
		if len(key) >= len(w) && hasFoldPrefix(key[len(key)-len(w):], w) {
			return true
		}
	}
	return false
}

// cutTail returns words without the tail at their end (tail lower-case,
// without separators, as words are joined in norm), and whether they end
// in it. The tail may span words (idempotency, key) or end one
// (x_idempotencykey, "authserver"): the word's start is kept as a word of
// its own.
func cutTail(words []string, tail string) ([]string, bool) {
	n := len(words)
	for n > 0 && tail != "" {
		w := words[n-1]
		switch {
		case len(w) <= len(tail) && strings.HasSuffix(tail, w):
			tail, n = tail[:len(tail)-len(w)], n-1
		case strings.HasSuffix(w, tail):
			head := append(slices.Clip(words[:n-1]), w[:len(w)-len(tail)])
			return head, true
		default:
			return nil, false
		}
	}
	return words[:n], tail == ""
}

// descriptorName reports whether words name a descriptor: they end in a
// descriptor word (descriptorWords), and what comes before it, with the
// kind endings (kindEndings) taken off its words, holds no credential name
// (each run of words between two kind endings judged alone).
// token_endpoint, token_endpoint_auth_methods_supported,
// id_token_signing_alg_values_supported, subject_token_type,
// access_token_url, client_assertion_type and authserver are descriptors;
// client_secret_token_endpoint (client_secret), api_key_type (api_key),
// key_type (key), password_auth_type (password), secrettype and
// token_observer ("observer" is no descriptor word) are not.
func descriptorName(words []string, ctx nameContext) bool {
	last := words[len(words)-1]
	if len(words) == 1 && len(last) <= 8 {
		// One short word ("tokenuri", "authurl"): no descriptor, as
		// before redact19, so that no name masked before is kept now.
		return false
	}
	for _, d := range descriptorWords {
		head, ok := cutTail(words, d)
		if !ok || len(head) == 0 {
			continue
		}
		if last != d && trimKind(head[len(head)-1]) != "" {
			// A word that ends in the descriptor word is one only when
			// what comes before it in the word is kinds alone
			// ("authserver", "tokenendpoint"): "observer",
			// "prototype" and "secrettype" are none.
			return false
		}
		// The words between kind endings, run by run: taking "token"
		// out of access_token_code must not make "access_code".
		run := make([]string, 0, len(head))
		for _, w := range head {
			k := trimKind(w)
			if k != "" {
				run = append(run, k)
			}
			if k != w {
				if len(run) > 0 && sensitiveName(strings.Join(run, "_"), ctx) {
					return false
				}
				run = run[:0]
			}
		}
		return len(run) == 0 || !sensitiveName(strings.Join(run, "_"), ctx)
	}
	return false
}

// trimKind takes the kind endings off the end of a word, as often as they
// end it: "token" → "", "accesstoken" → "access", "sessiontoken" → "",
// "oauth" → "o", "secrettoken" → "secret".
func trimKind(w string) string {
	for {
		trimmed := false
		for _, k := range kindEndings {
			if strings.HasSuffix(w, k) {
				w, trimmed = w[:len(w)-len(k)], true
				break
			}
		}
		if !trimmed {
			return w
		}
	}
}

// headerRule is what happens to a header's values.
type headerRule int

const (
	headerScrub  headerRule = iota // keep, scrubbed as free text
	headerMask                     // a credential: masked
	headerHash                     // a session id: hashed with HashSession
	headerURL                      // redacted as a URL
	headerCookie                   // Cookie / Set-Cookie: names kept, values masked
	headerAuth                     // Authorization-like: the scheme kept, the credential masked
	// headerMeasure: a credential's name ending in a time or a count
	// (X-Client-Secret-Expires-At, countMeasure): a number is that time
	// or count, kept; any other value is masked (mask22).
	headerMeasure
)

// IsCredentialHeader reports whether the values of the header name are
// credentials that records mask (Authorization, Cookie, X-Api-Key, DPoP, …;
// see Redactor.Headers). A producer that sends such a header can register
// its value with AddSecret, so that the value is masked wherever else it
// appears (a server that quotes it in an error message). A credential's
// name ending in a time or a count (X-Client-Secret-Expires-At) is none:
// a number under it is that time or count, kept; another value is masked.
func IsCredentialHeader(name string) bool {
	switch classifyHeader(name) {
	case headerMask, headerAuth, headerCookie:
		return true
	}
	return false
}

// headerRules caches classifyHeader: header names repeat on every
// request. It stops growing at maxHeaderRules names, so that a client
// inventing names cannot grow it without bound.
var (
	headerRules     sync.Map // string → headerRule
	headerRuleCount atomic.Int64
)

const maxHeaderRules = 4096

// commonHeaders are the header names most exchanges carry, as net/http
// canonicalizes them; commonHeaderRules their rules, computed once by
// classifyHeaderName. commonHeader finds a name's index with a switch (a
// few comparisons), so that classifyHeader needs no hashing for them.
var (
	commonHeaders     = []string{"Accept", "Accept-Encoding", "Accept-Language", "Authorization", "Cache-Control", "Connection", "Content-Encoding", "Content-Length", "Content-Type", "Cookie", "Date", "Host", "Last-Event-Id", "Location", "Mcp-Method", "Mcp-Name", "Mcp-Protocol-Version", "Mcp-Session-Id", "Origin", "Proxy-Status", "Referer", "Retry-After", "Server", "Set-Cookie", "Traceparent", "Transfer-Encoding", "User-Agent", "Vary", "Www-Authenticate", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Request-Id"}
	commonHeaderRules = func() []headerRule {
		rules := make([]headerRule, len(commonHeaders))
		for i, n := range commonHeaders {
			rules[i] = classifyHeaderName(n)
		}
		return rules
	}()
)

// commonHeader returns the index of name in commonHeaders, or -1.
func commonHeader(name string) int {
	i := -1
	switch name {
	case "Accept":
		i = 0
	case "Accept-Encoding":
		i = 1
	case "Accept-Language":
		i = 2
	case "Authorization":
		i = 3
	case "Cache-Control":
		i = 4
	case "Connection":
		i = 5
	case "Content-Encoding":
		i = 6
	case "Content-Length":
		i = 7
	case "Content-Type":
		i = 8
	case "Cookie":
		i = 9
	case "Date":
		i = 10
	case "Host":
		i = 11
	case "Last-Event-Id":
		i = 12
	case "Location":
		i = 13
	case "Mcp-Method":
		i = 14
	case "Mcp-Name":
		i = 15
	case "Mcp-Protocol-Version":
		i = 16
	case "Mcp-Session-Id":
		i = 17
	case "Origin":
		i = 18
	case "Proxy-Status":
		i = 19
	case "Referer":
		i = 20
	case "Retry-After":
		i = 21
	case "Server":
		i = 22
	case "Set-Cookie":
		i = 23
	case "Traceparent":
		i = 24
	case "Transfer-Encoding":
		i = 25
	case "User-Agent":
		i = 26
	case "Vary":
		i = 27
	case "Www-Authenticate":
		i = 28
	case "X-Forwarded-For":
		i = 29
	case "X-Forwarded-Host":
		i = 30
	case "X-Forwarded-Proto":
		i = 31
	case "X-Request-Id":
		i = 32
	}
	return i
}

func classifyHeader(name string) headerRule {
	if i := commonHeader(name); i >= 0 {
		return commonHeaderRules[i]
	}
	if v, ok := headerRules.Load(name); ok {
		return v.(headerRule)
	}
	rule := classifyHeaderName(name)
	if headerRuleCount.Load() < maxHeaderRules {
		if _, loaded := headerRules.LoadOrStore(name, rule); !loaded {
			headerRuleCount.Add(1)
		}
	}
	return rule
}

func classifyHeaderName(name string) headerRule {
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
	case "cookie", "set-cookie", "set-cookie2":
		return headerCookie
	case "authorization", "proxy-authorization":
		return headerAuth
	}
	if strings.HasPrefix(n, "access-control-") {
		// CORS: header names and "true", the evidence of a browser refusal.
		return headerScrub
	}
	if !sensitiveName(name, ctxHeader) {
		return headerScrub
	}
	if countName(name) == countMeasure {
		// A time or a count under a credential's name
		// (X-Client-Secret-Expires-At, X-Session-Count; mask22).
		return headerMeasure
	}
	// A header that names a session and nothing else (X-Session-Id) is
	// hashed like Mcp-Session-Id, so that sessions stay traceable. Not a
	// session's idempotency key (Session-Idempotency-Key): a value the
	// client chose, perhaps guessable, which an unkeyed hash would let
	// anyone confirm offline; masked (keyed), as the JSON member
	// session_idempotency_key is (redact20).
	words := nameWords(name)
	norm := strings.Join(words, "")
	if _, idem := cutTail(words, "idempotencykey"); strings.Contains(norm, "session") && !idem {
		stripped := strings.ReplaceAll(norm, "session", "")
		if !sensitiveName(stripped, ctxHeader) && !strings.Contains(norm, "token") {
			return headerHash
		}
	}
	return headerMask
}

// decodeName returns a name as it reads with its escapes decoded, for
// judging it (the name itself is recorded as written): JSON escapes
// ("p\u0061ssword" in JSON text that could not be parsed, "\/") and
// percent-escapes ("client%5Fsecret", "api%2Dkey" in free text or a form
// body), twice over for a name escaped twice ("%255F"). A name without
// "\" or "%" is returned as it is, without allocating; an escape that
// does not decode is kept as written.
func decodeName(name string) string {
	for range 2 {
		if strings.IndexByte(name, '\\') < 0 && strings.IndexByte(name, '%') < 0 {
			return name
		}
		d := decodeNameOnce(name)
		if d == name {
			return name
		}
		name = d
	}
	return name
}

func decodeNameOnce(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '%' && i+2 < len(name) && isHex(name[i+1]) && isHex(name[i+2]):
			b.WriteByte(unhex(name[i+1])<<4 | unhex(name[i+2]))
			i += 2
		case c == '\\' && i+5 < len(name) && name[i+1] == 'u' && isHex(name[i+2]) && isHex(name[i+3]) && isHex(name[i+4]) && isHex(name[i+5]):
			r := rune(unhex(name[i+2]))<<12 | rune(unhex(name[i+3]))<<8 | rune(unhex(name[i+4]))<<4 | rune(unhex(name[i+5]))
			b.WriteRune(r)
			i += 5
		case c == '\\' && i+1 < len(name) && strings.IndexByte(`"\/`, name[i+1]) >= 0:
			b.WriteByte(name[i+1])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
