package judge

import (
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

var specRules = []Rule{
	{
		ID: "spec.accept", Title: "every POST's Accept lists application/json and text/event-stream",
		Cite:   `MCP 2026-07-28 (and 2025-11-25) Transports › Streamable HTTP › Sending messages: "The client MUST include an Accept header, listing both application/json and text/event-stream"`,
		Active: true, Passive: true, HTTPOnly: true,
		Applies: func(t *Trace) (bool, string) {
			if ok, why := anyPost(t); !ok {
				return ok, why
			}
			for _, x := range t.Exchanges {
				if !x.Legacy {
					return true, ""
				}
			}
			return false, "every POST went over the 2024-11-05 HTTP+SSE transport (answered on the GET event stream), which asks no Accept of a POST"
		},
		Check: func(t *Trace) (bool, string) {
			// The 2024-11-05 HTTP+SSE transport's POSTs have no Accept
			// rule: skipped, and not counted as checked.
			var bad []string
			checked, legacy := 0, 0
			for _, x := range t.Exchanges {
				if x.Legacy {
					legacy++
					continue
				}
				checked++
				if json, sse := acceptLists(x.Header.Values("Accept")); !json || !sse {
					bad = append(bad, fmt.Sprintf("%s: Accept %s", x.Label(), quoteHeader(x.Header, "Accept")))
				}
			}
			ok := fmt.Sprintf("%d POST(s) checked", checked)
			if legacy > 0 {
				ok += fmt.Sprintf(" (%d over the 2024-11-05 HTTP+SSE transport not judged)", legacy)
			}
			return verdict(bad, ok)
		},
	},
	{
		ID: "spec.protocol-header", Title: "MCP-Protocol-Version equals _meta's protocolVersion (and is sent on every request of a 2025-11-25 session)",
		Cite:   `MCP 2026-07-28 Transports › Streamable HTTP › Request metadata headers: MCP-Protocol-Version MUST equal params._meta["io.modelcontextprotocol/protocolVersion"] (else 400 -32020 HeaderMismatch); MCP 2025-11-25 Transports › Protocol version header: sent on every request after initialization`,
		Active: true, Passive: true, HTTPOnly: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.MetaProtocol != "" || x.Session != "" || x.Header.Get("MCP-Protocol-Version") != "" {
					return true, ""
				}
			}
			return false, "no POST carried a protocol version (header or _meta) or a session"
		},
		Check: eachPost(func(_ *Trace, x *Exchange) string {
			h := x.Header.Get("MCP-Protocol-Version")
			switch {
			case x.MetaProtocol != "" && h != x.MetaProtocol:
				return fmt.Sprintf("%s: MCP-Protocol-Version %s but _meta says %q", x.Label(), quoteHeader(x.Header, "MCP-Protocol-Version"), x.MetaProtocol)
			case x.MetaKnown && x.MetaProtocol == "" && h >= wire.Protocol2026 && x.Method != "":
				return fmt.Sprintf("%s: MCP-Protocol-Version %q but no _meta protocolVersion in the body", x.Label(), h)
			case x.Session != "" && h == "" && x.Method != "initialize":
				// initialize opens the session: it carries its version in
				// params.protocolVersion, and the header is sent on the
				// requests after it (2025-11-25 Transports › Protocol
				// version header).
				return fmt.Sprintf("%s: a 2025-11-25 session request without MCP-Protocol-Version", x.Label())
			}
			return ""
		}),
	},
	{
		ID: "spec.method-headers", Title: "Mcp-Method and Mcp-Name are present and equal the body's method and name",
		Cite:   `MCP 2026-07-28 Transports › Streamable HTTP › Request metadata headers: Mcp-Method (every request) and Mcp-Name (tools/call, prompts/get: params.name) carry the body's values; a missing or different one is 400 -32020 HeaderMismatch`,
		Active: true, Passive: true, HTTPOnly: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if modern(x) && x.Method != "" {
					return true, ""
				}
			}
			return false, "no 2026-07-28 request (the headers are defined from 2026-07-28 on)"
		},
		Check: eachPost(func(_ *Trace, x *Exchange) string {
			if !modern(x) || x.Method == "" {
				return ""
			}
			if m := x.Header.Get("Mcp-Method"); m != x.Method {
				return fmt.Sprintf("%s: Mcp-Method %s, the body's method is %q", x.Label(), quoteHeader(x.Header, "Mcp-Method"), x.Method)
			}
			if x.Method == "tools/call" || x.Method == "prompts/get" {
				if n := decodeHeaderValue(x.Header.Get("Mcp-Name")); n != x.Tool || x.Header.Get("Mcp-Name") == "" {
					return fmt.Sprintf("%s: Mcp-Name %s, the body's params.name is %q", x.Label(), quoteHeader(x.Header, "Mcp-Name"), x.Tool)
				}
			}
			return ""
		}),
	},
	{
		ID: "spec.mrtr-new-id", Title: "an MRTR round uses a new JSON-RPC id",
		Cite:   `MCP 2026-07-28 Multi-round tool calls › Client retry: "The JSON-RPC id MUST be different between the initial request and the retry"`,
		Active: true, Passive: true,
		Applies: someRound,
		Check: func(t *Trace) (bool, string) {
			var bad []string
			n := 0
			for _, x := range t.Exchanges {
				if !x.IsRequest() || !t.IsRound(x) {
					continue
				}
				n++
				for _, a := range t.attempts(x.Key()) {
					if a == x {
						break
					}
					if a.ID.Equal(x.ID) {
						bad = append(bad, fmt.Sprintf("%s is an MRTR round that reuses the id of %s", x.Label(), a.Label()))
						break
					}
				}
			}
			return verdict(bad, fmt.Sprintf("%d MRTR round(s), each with a new id", n))
		},
	},
	{
		ID: "spec.mrtr-same-call", Title: "an MRTR round repeats the same tool and arguments",
		Cite:   `MCP 2026-07-28 Multi-round tool calls › Client retry: the retry repeats the original request (method, name, arguments) with inputResponses and requestState added; requestState applies only to the retry of that request`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.State != "" && issuer(t, x) != nil {
					return true, ""
				}
			}
			return false, "no request echoed a requestState the server issued"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			for _, x := range t.Exchanges {
				if x.State == "" {
					continue
				}
				if i := issuer(t, x); i != nil && i.Key() != x.Key() {
					bad = append(bad, fmt.Sprintf("%s carries the requestState issued to %s (arguments %s), with arguments %s",
						x.Label(), i.Label(), short(i.ArgsHash), short(x.ArgsHash)))
				}
			}
			return verdict(bad, "every round repeated its call's tool and arguments")
		},
	},
	{
		ID: "spec.mrtr-echo-state", Title: "requestState is echoed exactly on the next round (not changed, not dropped)",
		Cite:   `MCP 2026-07-28 Multi-round tool calls › Client retry: "If requestState is present, the client MUST echo it back exactly"`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.IssuedAny {
					return true, ""
				}
			}
			return false, "no answer carried a requestState"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			n := 0
			for _, x := range t.Exchanges {
				if !x.IssuedAny {
					continue
				}
				y := t.after(x)
				switch {
				case y == nil || !y.StateKnown:
				case y.State == "":
					bad = append(bad, fmt.Sprintf("%s dropped the requestState %s issued to %s", y.Label(), stateName(x.Issued), x.Label()))
				case x.Issued != "" && y.State != x.Issued:
					bad = append(bad, fmt.Sprintf("%s sent requestState %s, but %s was issued %s", y.Label(), y.State, x.Label(), x.Issued))
				default:
					n++
				}
			}
			return verdict(bad, fmt.Sprintf("%d requestState(s) echoed exactly", n))
		},
	},
	{
		ID: "spec.mrtr-no-invented-state", Title: "no requestState the server did not issue",
		Cite:   `MCP 2026-07-28 Multi-round tool calls › Client retry: if the result has no requestState, "the client MUST NOT send one"`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			for _, x := range t.Exchanges {
				if x.Method == "tools/call" && x.StateKnown {
					return true, ""
				}
			}
			return false, "no tools/call whose params could be read"
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			for _, x := range t.Exchanges {
				if x.State == "" || issuer(t, x) != nil || earlierIssue(t, x) {
					continue // echoed, or changed (spec.mrtr-echo-state judges that)
				}
				bad = append(bad, fmt.Sprintf("%s carries requestState %s, which no earlier answer issued", x.Label(), x.State))
			}
			return verdict(bad, "no requestState was sent that the server had not issued")
		},
	},
	{
		ID: "spec.reissue-new-id", Title: "a request sent again after a failure (a broken stream, no answer) has a new id",
		Cite:   `MCP 2026-07-28 changelog: "A broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new request ID"; Base protocol › Requests: the ID MUST NOT have been used before by the requestor in the same session`,
		Active: true, Passive: true,
		Applies: func(t *Trace) (bool, string) {
			if len(t.Retries()) == 0 {
				return false, "no request was sent again after a failure"
			}
			return true, ""
		},
		Check: func(t *Trace) (bool, string) {
			var bad []string
			rs := t.Retries()
			for _, r := range rs {
				for _, a := range t.attempts(r.Next.Key()) {
					if a == r.Next {
						break
					}
					if a.ID.Equal(r.Next.ID) {
						bad = append(bad, fmt.Sprintf("%s re-sent the request of %s (%s) with the same id", r.Next.Label(), a.Label(), r.Prev.What))
						break
					}
				}
			}
			return verdict(bad, fmt.Sprintf("%d re-sent request(s), each with a new id", len(rs)))
		},
	},
	{
		ID: "spec.era-fallback", Title: "no fall back to an older protocol era (initialize, 2025-11-25) on an answer that is not a version signal (401, 403, 429, 5xx, a reset)",
		Cite:   `MCP 2026-07-28 Transports › Streamable HTTP › Backward compatibility (mcp-spec-notes §1.8): a dual-era client sends a 2026-07-28 request first and, on a 400, inspects the body: a modern error (-32020, -32021, -32022 listing 2026-07-28) means a modern server, an empty or unrecognised one means fall back to initialize; 401/403 ask for authorization, 408, 429 and 5xx for a later retry, a reset or a cut stream for a retry: none says the server is older (docs/decisions.md, issue 10)`,
		Active: true,
		Applies: func(t *Trace) (bool, string) {
			if len(fallbacks(t)) == 0 {
				return false, "the client did not fall back from 2026-07-28 to an older era"
			}
			return true, ""
		},
		Check: func(t *Trace) (bool, string) {
			var bad, good []string
			for _, f := range fallbacks(t) {
				if versionSignal(f.Prev) {
					good = append(good, fmt.Sprintf("%s fell back after %s got %s", f.Next.Label(), f.Prev.Label(), f.Prev.What))
					continue
				}
				what := f.Prev.What
				if !f.Prev.Failed {
					what = fmt.Sprintf("HTTP %d, a complete answer", f.Prev.Status)
				}
				bad = append(bad, fmt.Sprintf("%s fell back to %s after %s got %s, which is not a version signal (only a 400 or 404 without a modern error, or -32022 listing older versions, is)",
					f.Next.Label(), eraOf(f.Next), f.Prev.Label(), what))
			}
			return verdict(bad, strings.Join(good, "; "))
		},
	},
}

// acceptLists reports whether Accept values list both media types.
func acceptLists(values []string) (json, sse bool) {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			json = json || mt == "application/json"
			sse = sse || mt == "text/event-stream"
		}
	}
	return json, sse
}

func quoteHeader(h http.Header, name string) string {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "absent"
	}
	return strconv.Quote(strings.Join(vs, ", "))
}

// modern reports a 2026-07-28 request (by header or _meta).
func modern(x *Exchange) bool {
	return x.Header.Get("MCP-Protocol-Version") >= wire.Protocol2026 || x.MetaProtocol >= wire.Protocol2026
}

// decodeHeaderValue undoes the =?base64?…?= encoding of MCP header values.
func decodeHeaderValue(v string) string {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		if b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-2]); err == nil {
			return string(b)
		}
	}
	return v
}

// issuer returns the earlier exchange whose answer issued x's requestState.
func issuer(t *Trace, x *Exchange) *Exchange {
	for _, e := range t.Exchanges {
		if e == x {
			return nil
		}
		if e.Issued != "" && e.Issued == x.State {
			return e
		}
	}
	return nil
}

// earlierIssue reports an earlier attempt of x's request whose answer
// carried a requestState: x then echoes it, changes it (the echo rule's
// business) or its value is unknown (records without bodies).
func earlierIssue(t *Trace, x *Exchange) bool {
	for _, a := range t.attempts(x.Key()) {
		if a == x {
			return false
		}
		if a.IssuedAny {
			return true
		}
	}
	return false
}

func stateName(h string) string {
	if h == "" {
		return "(value not recorded)"
	}
	return h
}

// fallbacks returns each switch from a 2026-07-28 request to an older era:
// the last modern request before it, and the first older one after.
func fallbacks(t *Trace) []Repeat {
	var out []Repeat
	var lastModern *Exchange
	for _, x := range t.Exchanges {
		switch {
		case modern(x):
			lastModern = x
		case lastModern != nil && legacy(x):
			out = append(out, Repeat{lastModern, x})
			lastModern = nil
		}
	}
	return out
}

// legacy reports a request of an era before 2026-07-28: initialize, or an
// older MCP-Protocol-Version.
func legacy(x *Exchange) bool {
	h := x.Header.Get("MCP-Protocol-Version")
	return x.Method == "initialize" || h != "" && h < wire.Protocol2026
}

func eraOf(x *Exchange) string {
	if h := x.Header.Get("MCP-Protocol-Version"); h != "" {
		return h
	}
	return "the initialize handshake (2025-11-25 or older)"
}

// versionSignal reports an answer that may say the server is of an older
// era: a 4xx other than 401, 403, 408 and 429 (a 400 or 404 without a
// modern error, -32022 listing older versions), or a JSON-RPC error in a
// 2xx answer (a legacy server that does not know the method). 401 and 403
// ask for authorization, 408, 429 and 5xx for a later retry; a reset, a
// closed connection, no answer or a cut stream say nothing about versions;
// a complete answer says the server is modern.
func versionSignal(x *Exchange) bool {
	switch s := x.Status; {
	case !x.Failed:
		return false
	case s == 401 || s == 403 || s == 408 || s == 429:
		return false
	case s >= 400 && s < 500:
		return true
	case s >= 200 && s < 300:
		return x.Outcome == classify.JSONRPCError
	}
	return false
}
