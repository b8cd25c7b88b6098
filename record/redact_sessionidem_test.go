package record

import (
	"net/http"
	"testing"
)

// TestSessionIdempotencyKeyHeaderMasked: a session's idempotency key in a
// header (Session-Idempotency-Key) is masked with the redactor's key, as
// the JSON member session_idempotency_key is, not hashed unkeyed as a
// session id is: the client chooses it, and an unkeyed SHA-256 of a
// guessable value ("order-1234") is confirmed by hashing guesses
// (redact20; it was "sha256:…" before). A session id is still hashed and
// an idempotency key alone kept.
func TestSessionIdempotencyKeyHeaderMasked(t *testing.T) {
	t.Parallel()
	red := NewRedactorKey([]byte("session idempotency"))
	const v = "order-1234"
	for _, tc := range []struct {
		name string
		want func(string) bool
		what string
	}{
		{"Session-Idempotency-Key", isMask, "a mask"},
		{"X-Session-Idempotency-Key", isMask, "a mask"},
		{"Mcp-Session-Idempotency-Key", isMask, "a mask"},
		{"X-Session-Id", isSessionHash, "a session hash"},
		{"Mcp-Session-Id", isSessionHash, "a session hash"},
		{"Session", isSessionHash, "a session hash"},
		{"Idempotency-Key", func(s string) bool { return s == v }, "the value"},
		{"X-Idempotency-Key", func(s string) bool { return s == v }, "the value"},
	} {
		got := red.Headers(http.Header{tc.name: {v}})[tc.name][0]
		if !tc.want(got) {
			t.Errorf("%s: %q recorded as %q, want %s", tc.name, v, got, tc.what)
		}
	}
}
