package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// LegacyResult lets the request through and drops resultType from the
// result, as a server written before 2026-07-28 answers.
type LegacyResult struct {
	Rules
}

// Validate implements Scenario.
func (s *LegacyResult) Validate() error { return nil }

// Wrap implements Scenario.
func (s *LegacyResult) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		editResult(w, r, next, env, func(res map[string]json.RawMessage) error {
			delete(res, "resultType")
			return nil
		})
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
