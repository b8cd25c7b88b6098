package faults

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// This file holds the server.* scenarios: the healthy fixture made to
// commit one failure-reporting mistake of a server on purpose, so that each
// rule of `mcpdiag probe` has a server it fails on (docs/probe.md). They
// judge servers, not clients: their entries are marked ServerMistake and the
// matrix skips them.

// UnknownToolAsToolError answers a tools/call that names a tool and gets a
// JSON-RPC error (an unknown tool, above all) with an isError result whose
// text is the error, as a server that wraps every failure in a tool result
// does ("MCP error -32602: …"). The spec wants a protocol error for an
// unknown tool.
type UnknownToolAsToolError struct {
	Rules
}

// Validate implements Scenario.
func (s *UnknownToolAsToolError) Validate() error { return nil }

// Wrap implements Scenario.
func (s *UnknownToolAsToolError) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		c := capture(next, r)
		evs := c.events()
		i := responseIndex(evs, req.ID)
		if req.Name == "" || i < 0 {
			env.PassThrough(r, "no named tool call answered with a JSON-RPC error; passed through unchanged")
			c.replay(w)
			return
		}
		e, ok := wire.Field(evs[i].data, "error")
		var rpcErr struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if !ok || json.Unmarshal(e, &rpcErr) != nil {
			env.PassThrough(r, "the server did not answer with a JSON-RPC error; passed through unchanged")
			c.replay(w)
			return
		}
		text := fmt.Sprintf("MCP error %d: %s", rpcErr.Code, rpcErr.Message)
		env.Note(r, "JSON-RPC error %d (HTTP %d) turned into an isError result", rpcErr.Code, c.status)
		answer(w, http.StatusOK, resultMessage(req.ID, textResult(text, true, req.Protocol == Protocol2025)))
	})
}

// ValidationAsSuccess answers a tools/call whose arguments are an object and
// whose result is a tool execution error (isError true: the fixture's answer
// to arguments that fail the schema) with a success carrying the same error
// text: isError missing, the error only in the content, as a server that
// catches its exception and returns its message does.
type ValidationAsSuccess struct {
	Rules
}

// Validate implements Scenario.
func (s *ValidationAsSuccess) Validate() error { return nil }

// Wrap implements Scenario.
func (s *ValidationAsSuccess) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		if len(req.Args) > 0 && wire.Kind(req.Args) != '{' {
			// A call whose arguments are not an object breaks the
			// CallToolRequest schema: that is probe.malformed-call's
			// mistake, not this one.
			env.PassThrough(r, "arguments are not an object; passed through unchanged")
			next.ServeHTTP(w, r)
			return
		}
		editResult(w, r, next, env, func(res map[string]json.RawMessage) error {
			if string(bytes.TrimSpace(res["isError"])) != "true" {
				return fmt.Errorf("the result is no tool error")
			}
			var blocks []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(res["content"], &blocks)
			text := "Error:"
			for _, b := range blocks {
				if b.Type == "text" {
					text += " " + b.Text
				}
			}
			res["content"] = mustJSON([]any{map[string]string{"type": "text", "text": text}})
			delete(res, "isError")
			delete(res, "structuredContent")
			env.Note(r, "tool error answered as a success: isError removed")
			return nil
		})
	})
}

// NoResultType removes resultType from the results of the matching
// 2026-07-28 requests (the era requires it on every result).
type NoResultType struct {
	Rules
}

// Validate implements Scenario.
func (s *NoResultType) Validate() error { return nil }

// Wrap implements Scenario.
func (s *NoResultType) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		editResult(w, r, next, env, func(res map[string]json.RawMessage) error {
			if _, ok := res["resultType"]; !ok {
				return fmt.Errorf("the result has no resultType")
			}
			delete(res, "resultType")
			env.Note(r, "resultType removed")
			return nil
		})
	})
}

// IDAsString answers a request whose id is a number of at least MinID, in
// plain digits (1000007.0 passes, and its note says why), with
// the server's response under the same number as a string (1000007 as
// "1000007"): the value is right, the JSON type is not. Smaller ids pass,
// so a client's ordinary ids still work.
type IDAsString struct {
	Rules
	// MinID is the smallest number id that comes back as a string.
	MinID int64 `json:"minId"`
}

// Validate implements Scenario.
func (s *IDAsString) Validate() error {
	if s.MinID < 0 {
		return fmt.Errorf("param minId: %d: want 0 or more", s.MinID)
	}
	return nil
}

// Wrap implements Scenario.
func (s *IDAsString) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		n, err := strconv.ParseInt(req.ID.String(), 10, 64)
		if !req.ID.IsNumber() || err != nil || n < s.MinID {
			env.PassThrough(r, "the id is not a number of at least %d in plain digits; passed through unchanged", s.MinID)
			next.ServeHTTP(w, r)
			return
		}
		msg := serverResponse(next, r, env)
		env.Note(r, "id %d answered as the string %q", n, req.ID.String())
		answer(w, http.StatusOK, withID(msg, wire.StringID(req.ID.String())))
	})
}

// NotificationAnswered answers a matching notification with HTTP 200 and a
// JSON body, where the transport wants 202 Accepted and no body. The
// notification still reaches the server.
type NotificationAnswered struct {
	Rules
}

// Validate implements Scenario.
func (s *NotificationAnswered) Validate() error { return nil }

// Wrap implements Scenario.
func (s *NotificationAnswered) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		if !req.ID.IsZero() {
			env.PassThrough(r, "a request, not a notification; passed through unchanged")
			next.ServeHTTP(w, r)
			return
		}
		c := capture(next, r)
		env.Note(r, "the server's HTTP %d replaced by 200 with a JSON body", c.status)
		answer(w, http.StatusOK, []byte(`{"jsonrpc":"2.0","result":{}}`))
	})
}

// NoOriginCheck serves requests whatever their Origin: the fixture's
// DNS-rebinding check (403 for an Origin that is neither loopback nor the
// server's own) is turned off by removing the Origin header before the
// fixture sees it.
type NoOriginCheck struct {
	Rules
}

// Validate implements Scenario.
func (s *NoOriginCheck) Validate() error { return nil }

// Wrap implements Scenario.
func (s *NoOriginCheck) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := r.Header.Get("Origin")
		if o == "" {
			next.ServeHTTP(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.Header.Del("Origin")
		env.Note(r, "Origin %q not checked", o)
		next.ServeHTTP(w, r2)
	})
}

// knownVersions are the MCP revisions: a MCP-Protocol-Version header that
// names none of them is unknown (AnyProtocolVersion serves it anyway).
var knownVersions = []string{Protocol2026, Protocol2025, "2025-06-18", "2025-03-26", "2024-11-05"}

// metaVersion returns params._meta's protocol version ("" when none).
func metaVersion(req *Request) string {
	if req == nil || req.Message == nil {
		return ""
	}
	raw, ok := req.Message.MetaField(wire.MetaProtocolVersion)
	var v string
	if !ok || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v
}

// withHeader returns r with its header name set to v ("" removes it).
func withHeader(r *http.Request, name, v string) *http.Request {
	r2 := r.Clone(r.Context())
	if v == "" {
		r2.Header.Del(name)
	} else {
		r2.Header.Set(name, v)
	}
	return r2
}

// AnyProtocolVersion serves a request whose MCP-Protocol-Version names no
// MCP revision, where the transport wants 400: the header is replaced by
// the version of the body's _meta (2026-07-28), or removed when the body has
// none (a 2025-11-25 request in its session, which the fixture then serves
// as the session's), before the fixture sees it.
type AnyProtocolVersion struct {
	Rules
}

// Validate implements Scenario.
func (s *AnyProtocolVersion) Validate() error { return nil }

// Wrap implements Scenario.
func (s *AnyProtocolVersion) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get("Mcp-Protocol-Version")
		if v == "" || slices.Contains(knownVersions, v) {
			next.ServeHTTP(w, r)
			return
		}
		mv := metaVersion(RequestOf(r))
		env.Note(r, "unknown MCP-Protocol-Version %q served as %s", v, cmp.Or(mv, "the session's version"))
		next.ServeHTTP(w, withHeader(r, "Mcp-Protocol-Version", mv))
	})
}

// MissingVersionServed serves a POST without MCP-Protocol-Version whose
// body's _meta names a protocol version (a 2026-07-28 request that lost its
// header), where the era wants 400 HeaderMismatch (or a 2025-03-26 answer):
// the header is taken from _meta before the fixture sees it. A request
// without _meta's version (2025-11-25) passes unchanged.
type MissingVersionServed struct {
	Rules
}

// Validate implements Scenario.
func (s *MissingVersionServed) Validate() error { return nil }

// Wrap implements Scenario.
func (s *MissingVersionServed) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mv := metaVersion(RequestOf(r))
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Protocol-Version") != "" || mv == "" {
			next.ServeHTTP(w, r)
			return
		}
		env.Note(r, "no MCP-Protocol-Version: served as %s, _meta's version", mv)
		next.ServeHTTP(w, withHeader(r, "Mcp-Protocol-Version", mv))
	})
}

// NotAcceptable500 answers a POST whose Accept does not list
// text/event-stream with HTTP 500 and a text/plain body, as a server whose
// check of Accept throws does, where a 406 Not Acceptable (or a 400) says
// what is wrong.
type NotAcceptable500 struct {
	Rules
}

// Validate implements Scenario.
func (s *NotAcceptable500) Validate() error { return nil }

// Wrap implements Scenario.
func (s *NotAcceptable500) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Accept")
		if r.Method != http.MethodPost || strings.Contains(strings.ToLower(a), "text/event-stream") {
			next.ServeHTTP(w, r)
			return
		}
		env.Note(r, "Accept %q without text/event-stream answered 500", a)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
	})
}

// MalformedCallAsSuccess answers a tools/call that breaks the
// CallToolRequest schema (no params.name, or arguments that are not an
// object) with a success ("done") itself, as a server that never checks the
// request does, where the spec wants a protocol error.
type MalformedCallAsSuccess struct {
	Rules
}

// Validate implements Scenario.
func (s *MalformedCallAsSuccess) Validate() error { return nil }

// Wrap implements Scenario.
func (s *MalformedCallAsSuccess) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		noName := req.Message != nil && !hasMember(req.Params, "name")
		notObject := len(req.Args) > 0 && wire.Kind(req.Args) != '{'
		if !noName && !notObject {
			env.PassThrough(r, "a well-formed tools/call; passed through unchanged")
			next.ServeHTTP(w, r)
			return
		}
		env.Note(r, "malformed tools/call (no name: %v, arguments not an object: %v) answered as a success", noName, notObject)
		answer(w, http.StatusOK, resultMessage(req.ID, textResult("done", false, req.Protocol != Protocol2026)))
	})
}

// hasMember reports an object with the member name.
func hasMember(obj json.RawMessage, name string) bool {
	_, ok := wire.Field(obj, name)
	return ok
}

// ErrorStreamCut answers a tools/call whose answer is a JSON-RPC error (an
// unknown tool, a call without a name) with an event stream that ends
// before any response: HTTP 200 text/event-stream, no event, as a server
// whose error path fails after the stream started. The client never gets
// an answer.
type ErrorStreamCut struct {
	Rules
}

// Validate implements Scenario.
func (s *ErrorStreamCut) Validate() error { return nil }

// Wrap implements Scenario.
func (s *ErrorStreamCut) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := RequestOf(r)
		c := capture(next, r)
		evs := c.events()
		i := responseIndex(evs, req.ID)
		if i < 0 {
			env.PassThrough(r, "no response to cut; passed through unchanged")
			c.replay(w)
			return
		}
		if _, ok := wire.Field(evs[i].data, "error"); !ok {
			env.PassThrough(r, "the answer is no JSON-RPC error; passed through unchanged")
			c.replay(w)
			return
		}
		env.Note(r, "JSON-RPC error (HTTP %d) replaced by an event stream that ends without it", c.status)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		flush(w)
	})
}

// serverEntries are the catalogue entries of the server.* scenarios.
func serverEntries() []Entry {
	return []Entry{
		{
			ID: "server.unknown_tool_as_tool_error", Title: "Unknown tool answered as a tool error (isError)", Layer: classify.LayerProtocol, ServerMistake: true,
			Description: "A tools/call that names a tool and gets a JSON-RPC error (an unknown tool, above all) is answered instead with HTTP 200 and an `isError: true` result whose text is the error (\"MCP error -32602: …\"), as @modelcontextprotocol/server-everything does. The spec wants a protocol error for an unknown tool. `mcpdiag probe` fails probe.unknown-tool.",
			New:         func() Scenario { return &UnknownToolAsToolError{Rules: everyCall()} },
			Example:     json.RawMessage(`{"match":{"method":"tools/call","protocol":"2025-11-25"}}`),
			Tool:        "no_such_tool", Args: noArgs,
			ExpectedOutcome: classify.ToolError, ExpectedPosts: 2,
			Why: "the unknown tool's -32602 comes back as a tool result with isError true: TOOL_ERROR (the classifier warns protocol-error-as-tool-error).",
		},
		{
			ID: "server.validation_as_success", Title: "Tool error answered as a success (isError missing)", Layer: classify.LayerApplication, ServerMistake: true,
			Description: "A tools/call whose arguments are an object and whose result is a tool execution error (`isError: true`, the fixture's answer to arguments that fail the schema) is answered with a success carrying the same text after \"Error:\", without `isError` or `structuredContent`. `mcpdiag probe` fails probe.invalid-arguments and probe.is-error-missing.",
			New:         func() Scenario { return &ValidationAsSuccess{Rules: everyCall()} },
			Example:     json.RawMessage(`{"match":{"method":"tools/call","tool":"search"}}`),
			Tool:        "fail", Args: noArgs,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 2,
			Why: "the fail tool's isError result loses its isError: the client sees a success whose text is an error.",
		},
		{
			ID: "server.no_result_type", Title: "2026-07-28 tool result without resultType", Layer: classify.LayerProtocol, ServerMistake: true,
			Description: "The `resultType` member is removed from the result of each matching 2026-07-28 request (tools/call by default; 2026-07-28 requires it on every result). `mcpdiag probe` fails probe.result-type.",
			New: func() Scenario {
				return &NoResultType{Rules: Rules{Match: Match{Method: "tools/call", Protocol: Protocol2026}}}
			},
			Example: json.RawMessage(`{"match":{"method":"tools/*","protocol":"2026-07-28"}}`),
			Tool:    "echo", Args: echoArgs, Protocol: Protocol2026,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 2,
			Why: "the result without resultType is read as complete.",
		},
		{
			ID: "server.id_as_string", Title: "Number id answered as a string", Layer: classify.LayerProtocol, ServerMistake: true,
			Description: "A request whose id is a number of at least `minId` (1000000) gets the server's response with the id as a string (1000007 as \"1000007\"), in HTTP 200 `application/json`: the value is right, the JSON type is not (JSON-RPC: the same id). Smaller ids pass, so ordinary clients work. `mcpdiag probe` fails probe.id-type.",
			New:         func() Scenario { return &IDAsString{MinID: 1_000_000} },
			Example:     json.RawMessage(`{"minId":0,"match":{"method":"tools/call"}}`),
			Tool:        "echo", Args: echoArgs,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 2,
			Why: "the client's ids are small: nothing changes for it.",
		},
		{
			ID: "server.notification_200", Title: "Notification answered with 200 and a body", Layer: classify.LayerTransport, ServerMistake: true,
			Description: "A notification reaches the server, and is answered with HTTP 200 `application/json` `{\"jsonrpc\":\"2.0\",\"result\":{}}`, where the transport wants 202 Accepted with no body. `mcpdiag probe` fails probe.notification-202.",
			New: func() Scenario {
				return &NotificationAnswered{Rules: Rules{Match: Match{Method: "notifications/*"}}}
			},
			Example: json.RawMessage(`{"match":{"method":"notifications/cancelled"}}`),
			Tool:    "echo", Args: echoArgs, Protocol: Protocol2025,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 4,
			Why: "initialize, notifications/initialized (answered 200 with a body, which the client ignores), tools/list, tools/call.",
		},
		{
			ID: "server.no_origin_check", Title: "Foreign Origin served (no DNS-rebinding check)", Layer: classify.LayerTransport, ServerMistake: true,
			Description: "The fixture's Origin check (403 for an Origin that is neither loopback nor the server's own) is turned off: the `Origin` header is removed before the fixture sees the request, so a page on any site could drive the server through a browser. `mcpdiag probe` fails probe.origin.",
			New:         func() Scenario { return &NoOriginCheck{} },
			Example:     json.RawMessage(`{"match":{"method":"tools/call"}}`),
			Tool:        "echo", Args: echoArgs,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 2,
			Why: "the client sends no foreign Origin: nothing changes for it.",
		},
		{
			ID: "server.any_protocol_version", Title: "Unknown MCP-Protocol-Version served", Layer: classify.LayerTransport, ServerMistake: true,
			Description: "A request whose `MCP-Protocol-Version` names no MCP revision is served, where the transport wants 400 Bad Request: the header is replaced by the body's `_meta` version (2026-07-28), or removed when there is none (a 2025-11-25 request in its session, then served as the session's), before the fixture sees it. `mcpdiag probe` fails probe.protocol-version.",
			New:         func() Scenario { return &AnyProtocolVersion{} },
			Example:     json.RawMessage(`{}`),
			Tool:        "echo", Args: echoArgs,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 2,
			Why: "the client sends a version the fixture knows: nothing changes for it.",
		},
		{
			ID: "server.missing_version_served", Title: "2026-07-28 request without MCP-Protocol-Version served", Layer: classify.LayerTransport, ServerMistake: true,
			Description: "A POST without `MCP-Protocol-Version` whose `_meta` names a protocol version (a 2026-07-28 request that lost its header) is served as that version, where the era wants 400 with HeaderMismatch -32020 (or the answer to a 2025-03-26 request): the header is taken from `_meta` before the fixture sees it. 2025-11-25 requests carry no `_meta` version and pass unchanged. `mcpdiag probe` fails probe.protocol-version-missing on 2026-07-28.",
			New:         func() Scenario { return &MissingVersionServed{} },
			Example:     json.RawMessage(`{}`),
			Tool:        "echo", Args: echoArgs,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 2,
			Why: "the client sends the header: nothing changes for it.",
		},
		{
			ID: "server.not_acceptable_500", Title: "Accept without text/event-stream answered 500", Layer: classify.LayerTransport, ServerMistake: true,
			Description: "A POST whose `Accept` does not list `text/event-stream` gets HTTP 500 `text/plain` \"Internal Server Error\", as a server whose Accept check throws, where 406 Not Acceptable (or 400) says what is wrong. `mcpdiag probe` fails probe.accept.",
			New:         func() Scenario { return &NotAcceptable500{} },
			Example:     json.RawMessage(`{}`),
			Tool:        "echo", Args: echoArgs,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 2,
			Why: "the client lists both types in Accept: nothing changes for it.",
		},
		{
			ID: "server.malformed_call_as_success", Title: "Malformed tools/call answered as a success", Layer: classify.LayerProtocol, ServerMistake: true,
			Description: "A tools/call that breaks the CallToolRequest schema (no `params.name`, or `arguments` that is not an object) is answered by the scenario with HTTP 200 and a success (text \"done\"), as a server that never checks the request does, where the spec wants a protocol error (JSON-RPC). Well-formed calls pass unchanged. `mcpdiag probe` fails probe.malformed-call.",
			New:         func() Scenario { return &MalformedCallAsSuccess{Rules: everyCall()} },
			Example:     json.RawMessage(`{"match":{"method":"tools/call","protocol":"2025-11-25"}}`),
			Tool:        "echo", Args: echoArgs,
			ExpectedOutcome: classify.ToolSuccess, ExpectedPosts: 2,
			Why: "the client's call is well-formed: nothing changes for it.",
		},
		{
			ID: "server.error_stream_cut", Title: "JSON-RPC error answer cut: a stream without the response", Layer: classify.LayerTransport, ServerMistake: true,
			Description: "A tools/call whose answer is a JSON-RPC error (an unknown tool, a call without a name) gets HTTP 200 `text/event-stream` that ends before any event, as a server whose error path fails after the stream started: the client never gets its answer. `mcpdiag probe` fails probe.answered (the probes that needed the error are left undecided).",
			New:         func() Scenario { return &ErrorStreamCut{Rules: everyCall()} },
			Example:     json.RawMessage(`{"match":{"method":"tools/call","tool":"no_such_tool"}}`),
			Tool:        "no_such_tool", Args: noArgs,
			ExpectedOutcome: classify.StreamIncomplete, ExpectedPosts: 2,
			Why: "the unknown tool's -32602 never arrives: the stream ends with no response, STREAM_INCOMPLETE.",
		},
	}
}
