package faults

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
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

// ProtocolReporter answers a tool call with what the request said about the
// protocol: the revision (header, _meta or initialize), whether MRTR
// applies, the session id, every MCP-* header and the _meta keys. It works
// in front of any server, so it also tells what a gateway forwarded.
type ProtocolReporter struct {
	Rules
	Tool string `json:"tool"`
}

// Validate implements Scenario.
func (s *ProtocolReporter) Validate() error {
	if s.Tool == "" {
		return fmt.Errorf("param tool: empty: name the tool that reports")
	}
	return nil
}

// Matches implements Matcher: calls of Tool.
func (s *ProtocolReporter) Matches(req *Request) (bool, string) {
	if req.Method != "tools/call" || req.Name != s.Tool {
		return false, "not a call of " + s.Tool
	}
	return true, ""
}

// Wrap implements Scenario.
func (s *ProtocolReporter) Wrap(_ http.Handler, _ *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		headers := map[string]string{}
		var names []string
		for k := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "mcp-") {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		for _, k := range names {
			headers[k] = strings.Join(r.Header.Values(k), ", ")
		}
		report := map[string]any{
			"negotiatedVersion": req.Protocol,
			"isJuly2026OrLater": req.Protocol >= Protocol2026,
			"isMrtrSupported":   req.Protocol >= Protocol2026,
			"sessionId":         req.Session,
			"headers":           headers,
			"metaKeys":          req.Meta,
			"client":            req.Client,
		}
		answer(w, http.StatusOK, resultMessage(req.ID, textResult(string(mustJSON(report)), false, req.Protocol < Protocol2026)))
	})
}
