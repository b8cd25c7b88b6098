package record

import (
	"net/http"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// cleanWords are strings every exchange record carries (outcomes, layers,
// kinds, retry origins, HTTP methods, MCP methods, protocol revisions,
// content types, flags) that the text patterns leave as they are: Scrub
// returns such a string after replacing the registered secrets, without
// running the patterns over it. The set is what scrubPatterns itself
// leaves unchanged, computed once at start (the patterns are fixed; only
// the secrets, applied first, vary), so Scrub's result is the same.
var cleanWords = func() map[string]struct{} {
	var words []string
	for _, o := range classify.Outcomes {
		words = append(words, string(o), string(o.Layer()))
	}
	for _, k := range []Kind{KindExchange, KindCall, KindServer, KindDropped} {
		words = append(words, string(k))
	}
	for _, o := range []RetryOrigin{OriginNone, OriginPolicy, OriginMRTR, OriginUser} {
		words = append(words, string(o))
	}
	for _, f := range AllFlags() {
		words = append(words, string(f))
	}
	words = append(words,
		http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodPatch, http.MethodHead, http.MethodOptions,
		wire.Protocol2026, wire.Protocol2025,
		"tools/call", "tools/list", "initialize", "notifications/initialized", "prompts/get", "prompts/list",
		"resources/read", "resources/list", "ping", "subscriptions/listen", "complete",
		"application/json", "text/event-stream", "eof", "stopped-at-terminal")
	probe := &Redactor{}
	set := map[string]struct{}{}
	for _, w := range words {
		if w != "" && probe.scrubPatterns(w, ctxJSON) == w {
			set[w] = struct{}{}
		}
	}
	return set
}()

// cleanSet holds cleanWords for Scrub's look-up, which every string of
// every record makes: buckets by a hash of a word's length and its first
// and last bytes, a few instructions where a map hashes the whole string.
var cleanSet = func() (set [256][]string) {
	for w := range cleanWords {
		h := cleanHash(w)
		set[h] = append(set[h], w)
	}
	return
}()

func cleanHash(s string) uint8 {
	return uint8(uint(len(s))*37 + uint(s[0])*7 + uint(s[len(s)-1]))
}

// isCleanWord reports whether s is in cleanWords.
func isCleanWord(s string) bool {
	if s == "" {
		return false
	}
	for _, w := range cleanSet[cleanHash(s)] {
		if w == s {
			return true
		}
	}
	return false
}
