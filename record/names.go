package record

import (
	"bytes"
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

// descriptorSuffixes end names that describe a credential rather than hold
// one: OAuth metadata (token_endpoint, jwks_uri, authorization_servers,
// token_endpoint_auth_methods_supported), token_type, key_alg.
var descriptorSuffixes = []string{
	"endpoint", "endpoints", "uri", "uris", "url", "urls", "server", "servers", "supported",
	"type", "types", "method", "methods", "alg", "algs", "algorithm", "algorithms", "scheme", "schemes",
}

// tokenCountRE matches names that count language-model tokens (maxTokens,
// input_tokens, total_tokens, tokenCount): numbers a diagnosis needs.
// Each of its names holds "token", tested first, so that the header
// names classified at start-up (commonHeaderRules) do not compile it.
var tokenCountRE = lazyRegexp(`^(?:(?:max|min|num|total|input|output|prompt|completion|cached|cache|reasoning|remaining|used|budget)tokens?(?:count|limit|used)?|tokens?(?:count|limit|used|budget|usage)|(?:count|number)oftokens)$`)

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
// longer than 256 bytes are judged by their first 256.
func sensitiveName(name string, ctx nameContext) bool {
	if len(name) > 256 {
		name = name[:256]
	}
	if !mayBeSensitive(name, ctx) {
		return false
	}
	words := nameWords(name)
	if len(words) == 0 {
		return false
	}
	norm := strings.Join(words, "")
	if exemptName(norm, words) {
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
	if passWord(words) {
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
// passage). Such a name holds a password as a string; a number under it
// is a count of passes ({"pass": 5, "fail": 0}) and is kept
// (passCountName).
func passWord(words []string) bool {
	last := words[len(words)-1]
	return last == "pass" || last == "pw"
}

// passCountName reports whether name is a credential name only by
// passWord: a value under it that is no string is a count, not a
// password.
func passCountName(name string) bool {
	words := nameWords(name)
	if len(words) == 0 || !passWord(words) {
		return false
	}
	return !sensitiveName(strings.Join(words[:len(words)-1], "_"), ctxJSON)
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
		bytes.HasSuffix(norm, []byte("pass")) || bytes.HasSuffix(norm, []byte("pw")) {
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
// token_endpoint or authorization_servers.
func exemptName(norm string, words []string) bool {
	switch {
	case norm == "progresstoken", strings.HasSuffix(norm, "idempotencykey"), strings.Contains(norm, "token") && tokenCountRE.get().MatchString(norm):
		return true
	}
	if len(words) > 1 || len(norm) > 8 {
		for _, s := range descriptorSuffixes {
			if strings.HasSuffix(norm, s) && norm != s {
				return true
			}
		}
	}
	return false
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
)

// IsCredentialHeader reports whether the values of the header name are
// credentials that records mask (Authorization, Cookie, X-Api-Key, DPoP, …;
// see Redactor.Headers). A producer that sends such a header can register
// its value with AddSecret, so that the value is masked wherever else it
// appears (a server that quotes it in an error message).
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
	// A header that names a session and nothing else (X-Session-Id) is
	// hashed like Mcp-Session-Id, so that sessions stay traceable.
	words := nameWords(name)
	norm := strings.Join(words, "")
	if strings.Contains(norm, "session") {
		stripped := strings.ReplaceAll(norm, "session", "")
		if !sensitiveName(stripped, ctxHeader) && !strings.Contains(norm, "token") {
			return headerHash
		}
	}
	return headerMask
}
