package faults

import (
	"fmt"
	"net/http"
	"sync"
)

// SessionExpired expires 2025-11-25 sessions: each session id may be used
// for After requests; later requests with it get 404 Not Found, as after a
// server restart or an idle timeout. A client must initialize a new session
// (whose own count starts at zero).
type SessionExpired struct {
	Rules
	After int `json:"after"`
}

// Validate implements Scenario.
func (s *SessionExpired) Validate() error {
	if s.After < 0 {
		return fmt.Errorf("param after: %d: must not be negative", s.After)
	}
	return nil
}

// Matches implements Matcher: requests that carry a session id.
func (s *SessionExpired) Matches(req *Request) (bool, string) {
	if req.Session == "" {
		return false, "no Mcp-Session-Id"
	}
	return true, ""
}

// Wrap implements Scenario.
func (s *SessionExpired) Wrap(next http.Handler, env *Env) http.Handler {
	var mu sync.Mutex
	used := map[string]int{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := RequestOf(r).Session
		mu.Lock()
		used[sid]++
		n := used[sid]
		mu.Unlock()
		if n <= s.After {
			next.ServeHTTP(w, r)
			return
		}
		env.Note(r, "request %d with this session id; the session expired after %d", n, s.After)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("session not found\n"))
	})
}
