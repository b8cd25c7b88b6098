package judge

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// The probe rules judge a server from the records of an mcpdiag probe run
// (Trace.Probe): each probe exchange carries its kind (record.Probe), so a
// rule knows what the answer must be. The kinds are package probe's; the
// judge keeps their names here, as data, and imports no prober.
var argumentKinds = map[string]bool{
	"required-missing": true, "wrong-type": true, "outside-enum": true, "below-minimum": true, "above-maximum": true,
	"too-long": true, "too-short": true, "pattern-mismatch": true, "extra-property": true, "null-value": true,
	"empty-arguments": true,
}

// mustFail reports a probe kind whose answer must be an error of some kind.
func mustFail(kind string) bool {
	return argumentKinds[kind] || kind == "unknown-tool" || kind == "missing-name" || kind == "arguments-not-object"
}

var probeRules = []Rule{
	{
		ID:      "probe.answered",
		Title:   "the server answers every probe (no timeout, no dropped connection, no cut stream)",
		Cite:    "MCP basic/transports §Streamable HTTP: the server MUST return a response (or 202 to a notification); JSON-RPC 2.0 §Response: a request gets a response",
		Probe:   true,
		Applies: anyProbe(isProbe, isProbe),
		Check: func(t *Trace) (bool, string) {
			// A server that asks a question answers: on 2025-11-25 with a
			// request on the stream (the probe answers it, declining an
			// elicitation, and the server then finishes), on 2026-07-28
			// with an input_required result. Neither is a failure to answer.
			ok, ev := eachProbe(isProbe, func(x *Exchange) string {
				switch {
				case x.Probe.Answer == record.ProbeAnswerNone:
					s := fmt.Sprintf("%s: no answer (%s)", probeLabel(x), orOutcome(x))
					if x.ServerRequests > 0 {
						s += askedNote(x)
					}
					return s
				case x.Outcome == classify.StreamIncomplete || x.Outcome == classify.EmptyResponse && !isNotification(x):
					s := fmt.Sprintf("%s: %s", probeLabel(x), x.Outcome)
					if x.Status != 0 {
						s = fmt.Sprintf("%s: HTTP %d, %s", probeLabel(x), x.Status, x.Outcome)
					}
					if x.ServerRequests > 0 {
						s += askedNote(x)
					}
					return s
				}
				return ""
			})(t)
			if !ok {
				return ok, ev
			}
			asked, forbidden, mrtr := 0, 0, 0
			for _, x := range probes(t, isProbe) {
				switch {
				case x.Outcome == classify.InputRequired:
					mrtr++
				case x.ServerRequests > 0 && x.Protocol == wire.Protocol2026:
					forbidden++
				case x.ServerRequests > 0:
					asked++
				}
			}
			if forbidden > 0 {
				ev += fmt.Sprintf("; %d got server requests first, which 2026-07-28 forbids (not answered; the records warn %s), then the server answered", forbidden, classify.WarnServerRequestOnStream)
			}
			if asked > 0 {
				ev += fmt.Sprintf("; %d asked the client (%s), the probe answered the least committal way (an elicitation declined; docs/probe.md), then the server answered", asked, strings.Join(answeredMethods(t), ", "))
			}
			if mrtr > 0 {
				ev += fmt.Sprintf("; %d answered with a question (input_required): an answer, not judged by the argument rules", mrtr)
			}
			return ok, ev
		},
		Severity: SeverityMust,
	},
	{
		ID:      "probe.answer-shape",
		Title:   "every answer is well-formed JSON-RPC with a valid result shape",
		Cite:    "JSON-RPC 2.0 §Response object; MCP schema (CallToolResult, ListToolsResult; resultType on 2026-07-28)",
		Probe:   true,
		Applies: anyProbe(isProbe, gotAnswer),
		Check: eachProbe(gotAnswer, func(x *Exchange) string {
			if x.Outcome == classify.InvalidEnvelope && !x.ResponseID.IsZero() {
				return "" // an id that does not match: probe.id-type's finding
			}
			switch x.Outcome {
			case classify.MalformedJSON, classify.InvalidEnvelope, classify.InvalidToolResult, classify.InvalidResult, classify.UnexpectedContentType:
				return fmt.Sprintf("%s: %s", probeLabel(x), x.Outcome)
			}
			return ""
		}),
		Severity: SeverityMust,
	},
	{
		ID:      "probe.result-type",
		Title:   "on 2026-07-28 every result carries resultType",
		Cite:    "MCP 2026-07-28 basic §ResultType: servers MUST include resultType (clients read an absent one as \"complete\")",
		Probe:   true,
		Applies: resultTypeApplies,
		Check: eachProbe(isModernResult, func(x *Exchange) string {
			if slices.Contains(x.Warnings, classify.WarnMissingResultType) {
				return fmt.Sprintf("%s: %s without resultType", probeLabel(x), x.Outcome)
			}
			return ""
		}),
		Severity: SeverityMust,
	},
	{
		ID:    "probe.invalid-arguments",
		Title: "arguments that break the tool's inputSchema get an error: a tool execution error (isError true), or a JSON-RPC error",
		Cite: "MCP 2025-11-25 server/tools §Error Handling (SEP-1303): input validation errors are tool execution errors (isError true) " +
			"the model can correct; a JSON-RPC -32602 is the older answer, still allowed; server/tools §Security: servers MUST validate all tool inputs",
		Probe:   true,
		Applies: anyProbe(ofKinds(argumentKinds), isArgumentProbe),
		Check: func(t *Trace) (bool, string) {
			var bad []string
			tool, rpc := 0, 0
			for _, x := range probes(t, isArgumentProbe) {
				switch {
				case x.Outcome == classify.ToolError:
					tool++
				case x.ErrorCode != nil:
					rpc++
				case x.Outcome == classify.ToolSuccess:
					what := "accepted as a success"
					if readsAsError(x.ResponseBody) != "" {
						what = "an error dressed as success (probe.is-error-missing)"
					}
					bad = append(bad, fmt.Sprintf("%s: %s", probeLabel(x), what))
				case x.Status >= 400:
					bad = append(bad, fmt.Sprintf("%s: HTTP %d with no JSON-RPC error (%s)", probeLabel(x), x.Status, x.Outcome))
				}
			}
			ok := fmt.Sprintf("%d answered isError true, %d a JSON-RPC error", tool, rpc)
			if rpc > 0 {
				ok += " (allowed; SEP-1303 prefers isError true, which the model sees)"
			}
			return verdict(bad, ok)
		},
		Severity: SeverityMust,
	},
	{
		ID:    "probe.is-error-missing",
		Title: "a probe that must fail never gets a success whose content reads as an error",
		Cite: "MCP server/tools §Error Handling: tool execution errors are reported in the result with isError true; " +
			"without it the client and the model take the error text for a result",
		Probe:   true,
		Applies: anyProbe(func(x *Exchange) bool { return mustFail(x.Probe.Kind) }, isMustFail),
		Check: eachProbe(isMustFail, func(x *Exchange) string {
			if !mustFail(x.Probe.Kind) || x.Outcome != classify.ToolSuccess {
				return ""
			}
			if why := readsAsError(x.ResponseBody); why != "" {
				return fmt.Sprintf("%s: TOOL_SUCCESS, isError missing, yet %s", probeLabel(x), why)
			}
			return ""
		}),
		// CallToolResult.isError: tool errors SHOULD be reported with isError true
		Severity: SeverityShould,
	},
	{
		ID:      "probe.unknown-tool",
		Title:   "a call of a tool the server does not have gets a JSON-RPC error (protocol error), not a tool result",
		Cite:    "MCP server/tools §Error Handling: protocol errors (JSON-RPC) for unknown tools; the spec's example is -32602",
		Probe:   true,
		Applies: anyProbe(ofKind("unknown-tool"), isUnknownTool),
		Check: eachProbe(isUnknownTool, func(x *Exchange) string {
			if x.Probe.Kind != "unknown-tool" || !gotAnswer(x) {
				return ""
			}
			if x.ErrorCode != nil {
				return ""
			}
			return fmt.Sprintf("%s: %s, not a JSON-RPC error", probeLabel(x), orOutcome(x))
		}),
		// CallToolResult.isError: errors finding the tool "should be reported as an MCP error response"; server/tools §Error Handling names no key word
		Severity: SeverityShould,
	},
	{
		ID:    "probe.malformed-call",
		Title: "a tools/call that breaks the CallToolRequest schema (no params.name; arguments not an object) gets a JSON-RPC error",
		Cite: "MCP server/tools §Error Handling: protocol errors for malformed requests (requests that fail to satisfy the CallToolRequest schema); " +
			"a tool execution error is tolerated for non-object arguments (the request names a tool)",
		Probe:   true,
		Applies: anyProbe(ofKinds(malformedKinds), isMalformedCall),
		Check: eachProbe(isMalformedCall, func(x *Exchange) string {
			k := x.Probe.Kind
			if k != "missing-name" && k != "arguments-not-object" || !gotAnswer(x) || x.ErrorCode != nil {
				return ""
			}
			if k == "arguments-not-object" && x.Outcome == classify.ToolError {
				return ""
			}
			return fmt.Sprintf("%s: %s, not a JSON-RPC error", probeLabel(x), orOutcome(x))
		}),
		// server/tools §Error Handling lists malformed requests under protocol errors, with no key word
		Severity: SeverityShould,
	},
	{
		ID:      "probe.id-type",
		Title:   "every answer carries the request's id back with its JSON type (a string stays a string, a number a number)",
		Cite:    "JSON-RPC 2.0 §Response object: id MUST be the same as the value of the id member in the Request; MCP basic §Responses",
		Probe:   true,
		Applies: anyProbe(func(x *Exchange) bool { return !isNotification(x) }, isAnsweredRequest),
		Check: eachProbe(isAnsweredRequest, func(x *Exchange) string {
			// An HTTP error may carry a JSON-RPC error with no id (null:
			// refused before the body was read); one with an id carries
			// the request's.
			if isNotification(x) || x.ResponseID.IsZero() || x.Status >= 400 && x.ResponseID.IsNull() {
				return ""
			}
			return fmt.Sprintf("%s: sent id %s (%s), the answer's id is %s (%s)", probeLabel(x), x.ID, idType(x.ID.Raw()), x.ResponseID, idType(x.ResponseID.Raw()))
		}),
		Severity: SeverityMust,
	},
	{
		ID:    "probe.origin",
		Title: "a request with a foreign Origin is refused with HTTP 403",
		Cite: "MCP 2025-11-25 basic/transports §Security Warning: servers MUST validate the Origin header on all incoming connections " +
			"to prevent DNS rebinding; if it is present and invalid, they MUST respond with HTTP 403 Forbidden",
		Probe:   true,
		Applies: originApplies,
		Check: eachProbe(serverOrigin, func(x *Exchange) string {
			if x.Status == 403 {
				return ""
			}
			return fmt.Sprintf("%s: HTTP %d (%s), not 403", probeLabel(x), x.Status, x.Outcome)
		}),
		Severity: SeverityMust,
	},
	{
		ID:    "probe.protocol-version",
		Title: "a request with an MCP-Protocol-Version no revision has is refused with HTTP 400",
		Cite: "MCP basic/transports §Protocol Version Header: a server that receives an invalid or unsupported MCP-Protocol-Version " +
			"MUST respond with 400 Bad Request (on 2026-07-28 with UnsupportedProtocolVersion -32022 or HeaderMismatch -32020)",
		Probe:   true,
		Applies: anyProbe(ofKind("bad-protocol-version"), isKind("bad-protocol-version")),
		Check: eachProbe(isKind("bad-protocol-version"), func(x *Exchange) string {
			if x.Status == 400 {
				return ""
			}
			return fmt.Sprintf("%s: HTTP %d (%s), not 400", probeLabel(x), x.Status, x.Outcome)
		}),
		Severity: SeverityMust,
	},
	{
		ID: "probe.protocol-version-missing",
		Title: "a request without MCP-Protocol-Version gets one of the answers its era allows " +
			"(2025-11-25: served, or 400; 2026-07-28: 400 HeaderMismatch -32020, or the answer to a 2025-03-26 request)",
		Cite: "MCP 2025-11-25 basic/transports §Protocol Version Header: with no header and no other way to identify the version " +
			"(such as the session's negotiated one) the server SHOULD assume 2025-03-26, and an unsupported version MUST get 400; " +
			"MCP 2026-07-28 basic/transports/streamable-http §Protocol Version Header: every POST MUST carry it; a server that supports " +
			"clients older than 2025-06-18 MAY read its absence as 2025-03-26, one that does not MUST reject it per §Server Validation " +
			"(400 Bad Request with HeaderMismatch -32020)",
		Probe:   true,
		Applies: anyProbe(ofKind("no-protocol-version"), isKind("no-protocol-version")),
		Check:   eachAnswer(isKind("no-protocol-version"), missingVersionAnswer),
		// A failure breaks at least a SHOULD (2025-11-25: assume
		// 2025-03-26), and a MUST on 2026-07-28 (reject it per §Server
		// Validation): the rule weighs what always holds.
		Severity: SeverityShould,
	},
	{
		ID:    "probe.accept",
		Title: "a POST whose Accept lacks text/event-stream gets 406 Not Acceptable or 400, or an answer",
		Cite: "MCP basic/transports §Sending Messages (2025-11-25 and 2026-07-28): the client MUST list application/json and " +
			"text/event-stream in Accept; the spec says nothing of the server's answer to one that does not, so HTTP's rule holds: " +
			"RFC 9110 §12.5.1, the server may honor Accept with 406 Not Acceptable (§15.5.7) or disregard it; a 400 refuses a " +
			"request that breaks the transport's MUST",
		Probe:   true,
		Applies: anyProbe(ofKind("accept-json-only"), isKind("accept-json-only")),
		Check:   eachAnswer(isKind("accept-json-only"), acceptAnswer),
		// No key word names the server's answer: a 5xx or a 404 for the
		// client's Accept is another answer than HTTP prescribes (406).
		Severity: SeverityShould,
	},
	{
		ID:    "probe.notification-202",
		Title: "a notification gets no response: over HTTP 202 Accepted with no body (or a 4xx), over stdio no line",
		Cite: "MCP basic/transports §Streamable HTTP, sending messages: for a notification the server MUST return 202 Accepted with no body (or a 4xx when it does not accept it); " +
			"MCP basic §Notifications: a one-way message, the receiver MUST NOT send a response (over stdio: no line answers it); JSON-RPC 2.0 §4.1",
		Probe:   true,
		Applies: anyProbe(isNotification, isAnsweredNotification),
		Check: eachProbe(isAnsweredNotification, func(x *Exchange) string {
			if !isNotification(x) || x.Probe.Answer == record.ProbeAnswerSilent {
				return ""
			}
			if x.Status == 0 {
				// No HTTP status: a line of a stdio server answered it.
				return fmt.Sprintf("%s: a line answered it (%s): %s", probeLabel(x), orOutcome(x), excerpt(x.ResponseBody))
			}
			if x.Status == 202 && x.ResponseBytes == 0 {
				return ""
			}
			if x.Status >= 400 && x.Status < 500 {
				return ""
			}
			return fmt.Sprintf("%s: HTTP %d with %d body bytes", probeLabel(x), x.Status, x.ResponseBytes)
		}),
		Severity: SeverityMust,
	},
}

// missingVersionAnswer judges the answer to a request without
// MCP-Protocol-Version by its era: a failure, or "" and a note that says
// which of the allowed answers it was.
func missingVersionAnswer(x *Exchange) (bad, note string) {
	rpc := ""
	if x.ErrorCode != nil {
		rpc = fmt.Sprintf(" %d", *x.ErrorCode)
	}
	ok2xx := x.Status/100 == 2
	if x.Protocol == wire.Protocol2026 {
		switch {
		case x.Status == 400 && rpc == " -32020":
			return "", "400 HeaderMismatch -32020 (the MUST of a server that does not read a missing header as 2025-03-26)"
		case x.Status == 400:
			return "", fmt.Sprintf("400 (%s): allowed as the answer to a 2025-03-26 request "+
				"(one outside a session); a server that does not read a missing header as 2025-03-26 MUST say HeaderMismatch -32020", rpcWords(x))
		case ok2xx && rpc == " -32020":
			return fmt.Sprintf("%s: HeaderMismatch -32020 in HTTP %d: §Server Validation wants 400 Bad Request", probeLabel(x), x.Status), ""
		case ok2xx && x.ErrorCode != nil:
			return "", fmt.Sprintf("JSON-RPC error%s in HTTP %d: allowed as the answer to a 2025-03-26 request", rpc, x.Status)
		case ok2xx && x.Outcome == classify.ResultSuccess && !slices.Contains(x.Warnings, classify.WarnMissingResultType):
			return fmt.Sprintf("%s: HTTP %d, served as a 2026-07-28 request (its result has resultType) although the header is missing: "+
				"the era allows a 400 HeaderMismatch -32020, or the answer to a 2025-03-26 request", probeLabel(x), x.Status), ""
		case ok2xx && x.Outcome == classify.ResultSuccess:
			return "", "served without resultType: allowed as the answer to a 2025-03-26 request (MAY)"
		case ok2xx:
			return "", "" // not a result nor an error: probe.answer-shape or probe.answered judges it
		}
		return fmt.Sprintf("%s: HTTP %d (%s): the era allows a 400 HeaderMismatch -32020, or the answer to a 2025-03-26 request", probeLabel(x), x.Status, x.Outcome), ""
	}
	switch {
	case ok2xx && x.Outcome == classify.ResultSuccess:
		return "", "served (the session's version, or 2025-03-26: the SHOULD)"
	case x.Status == 400:
		return "", fmt.Sprintf("400 (%s): allowed for a server that does not support 2025-03-26, the version it SHOULD assume; "+
			"a 2025-03-26 client, which sends no header, is refused", rpcWords(x))
	case ok2xx && x.ErrorCode != nil:
		return fmt.Sprintf("%s: JSON-RPC error%s in HTTP %d: the era wants the request served (as the session's version, or 2025-03-26) "+
			"or refused with 400", probeLabel(x), rpc, x.Status), ""
	case ok2xx:
		return "", ""
	}
	return fmt.Sprintf("%s: HTTP %d (%s): the era wants the request served (as the session's version, or 2025-03-26) or refused with 400", probeLabel(x), x.Status, x.Outcome), ""
}

// acceptAnswer judges the answer to a POST whose Accept lists
// application/json but not text/event-stream.
func acceptAnswer(x *Exchange) (bad, note string) {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(x.ContentType, ";", 2)[0]))
	switch {
	case x.Status == 406:
		return "", "406 Not Acceptable (Accept honored)"
	case x.Status == 400:
		return "", "400 (the request breaks the transport's MUST)"
	case x.Status/100 == 2 && ct == "text/event-stream":
		return "", "answered text/event-stream, which the request's Accept does not list: allowed (RFC 9110 §12.5.1 lets a server " +
			"disregard Accept), but a client that sends this Accept cannot read it; a 406 or an application/json answer it can"
	case x.Status/100 == 2 && ct != "":
		return "", "answered " + ct
	case x.Status/100 == 2:
		return "", "answered with no Content-Type"
	}
	why := ""
	switch {
	case x.Status >= 500:
		why = ": a server error for the client's Accept"
	case x.Status == 404 || x.Status == 405:
		why = ": it says the endpoint or POST is missing, which the listing just used"
	case x.Status == 415:
		why = ": 415 is about the request's Content-Type, which is application/json"
	}
	return fmt.Sprintf("%s: HTTP %d (%s), not 406 Not Acceptable, 400 or an answer%s", probeLabel(x), x.Status, x.Outcome, why), ""
}

// eachAnswer is eachProbe for rules that allow more than one answer: f
// returns a failure, or a note naming the allowed answer, and the pass
// evidence lists the notes (each distinct one once).
func eachAnswer(which func(*Exchange) bool, f func(*Exchange) (bad, note string)) func(*Trace) (bool, string) {
	return func(t *Trace) (bool, string) {
		var bad, notes []string
		n := 0
		for _, x := range t.Exchanges {
			if x.Probe == nil || !which(x) {
				continue
			}
			n++
			b, note := f(x)
			if b != "" {
				bad = append(bad, b)
			}
			if note != "" && !slices.Contains(notes, note) {
				notes = append(notes, note)
			}
		}
		ok := fmt.Sprintf("%d %s checked", n, plural(n, "probe", "probes"))
		if len(notes) > 0 {
			ok += ": " + strings.Join(notes, "; ")
		}
		return verdict(bad, ok)
	}
}

// rpcWords names the answer's JSON-RPC error: "JSON-RPC error -32020", or
// "no JSON-RPC error".
func rpcWords(x *Exchange) string {
	if x.ErrorCode == nil {
		return "no JSON-RPC error"
	}
	return fmt.Sprintf("JSON-RPC error %d", *x.ErrorCode)
}

// askedNote explains a probe whose stream held server requests but no
// response.
func askedNote(x *Exchange) string {
	if x.Protocol == wire.Protocol2026 {
		return fmt.Sprintf(" after %d server request(s), which 2026-07-28 forbids (the probe does not answer them there)", x.ServerRequests)
	}
	return fmt.Sprintf(" after %d server request(s) (the probe answers each on 2025-11-25: its records show them)", x.ServerRequests)
}

// answeredMethods lists the methods of the server requests the probe
// answered, from the records of its answers (ClientAnswer, the method they
// answer), in order of first appearance.
func answeredMethods(t *Trace) []string {
	var out []string
	for _, x := range t.Exchanges {
		if !x.ClientAnswer || x.Probe != nil {
			continue
		}
		m := x.AnswerTo
		if m == "" {
			m = "a server request"
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		out = []string{"a server request"}
	}
	return out
}

// isModernResult selects the 2026-07-28 answers that are results. The
// answer to a request without MCP-Protocol-Version is not one: the era
// lets a server answer it as a 2025-03-26 request (no resultType).
func isModernResult(x *Exchange) bool {
	return x.Protocol == wire.Protocol2026 && x.ErrorCode == nil && x.Probe.Kind != "no-protocol-version" &&
		(x.Outcome == classify.ToolSuccess || x.Outcome == classify.ToolError || x.Outcome == classify.ResultSuccess)
}

// resultTypeApplies is probe.result-type's Applies: a run of an era
// without resultType (2025-11-25) says so, rather than that no probe was
// answered.
func resultTypeApplies(t *Trace) (bool, string) {
	ok, why := anyProbe(isProbe, isModernResult)(t)
	if ok {
		return ok, why
	}
	answered := probes(t, probeAnswered)
	if len(answered) > 0 && !slices.ContainsFunc(answered, func(x *Exchange) bool { return x.Protocol == wire.Protocol2026 }) {
		return false, fmt.Sprintf("not applicable on %s: resultType is a 2026-07-28 field", answered[0].Protocol)
	}
	return ok, why
}

// isKind selects the answered probes of one kind.
func isKind(kind string) func(*Exchange) bool {
	return func(x *Exchange) bool { return x.Probe.Kind == kind && probeAnswered(x) }
}

// The probes each rule judges.
func isProbe(*Exchange) bool           { return true }
func isArgumentProbe(x *Exchange) bool { return argumentKinds[x.Probe.Kind] && decidable(x) }
func isMustFail(x *Exchange) bool      { return mustFail(x.Probe.Kind) && decidable(x) }
func isUnknownTool(x *Exchange) bool   { return x.Probe.Kind == "unknown-tool" && decidable(x) }
func isMalformedCall(x *Exchange) bool { return malformedKinds[x.Probe.Kind] && decidable(x) }
func isAnsweredRequest(x *Exchange) bool {
	// A refused Origin or protocol version may answer without an id, or
	// without a JSON-RPC body at all: an HTTP error is judged when it
	// carries a JSON-RPC error (a 2026-07-28 server answers many errors
	// in a 4xx, with the request's id).
	return !isNotification(x) && gotAnswer(x) && (x.Status < 400 || x.ErrorCode != nil)
}

// isAnsweredNotification selects the notifications the probe knows the fate
// of: an HTTP answer, a stdio line that answered it, or no line before the
// answer to the request after it (ProbeAnswerSilent).
func isAnsweredNotification(x *Exchange) bool {
	return isNotification(x) && (probeAnswered(x) || x.Probe.Answer == record.ProbeAnswerSilent)
}

// decidable reports an answer that says success or error in a form the
// rules can read: a tool result, a JSON-RPC error, an HTTP error status.
// An answer that is not well-formed (probe.answer-shape's finding) says
// neither, so the rules about what a probe must get do not judge it.
func decidable(x *Exchange) bool {
	return x.Outcome == classify.ToolError || x.Outcome == classify.ToolSuccess || x.ErrorCode != nil || x.Status >= 400
}

func isNotification(x *Exchange) bool { return x.Probe != nil && x.Probe.Kind == "notification" }

// probeAnswered reports a probe that got something back (record.Probe.Answer,
// set by the probe for HTTP and stdio alike; FromRecord fills it in for a
// record written before the fact existed).
func probeAnswered(x *Exchange) bool {
	return x.Probe != nil && x.Probe.Answer == record.ProbeAnswerResponse
}

// gotAnswer reports an exchange that got a JSON-RPC answer (a result or an
// error), or, for a notification, any answer.
func gotAnswer(x *Exchange) bool {
	if !probeAnswered(x) {
		return false
	}
	if isNotification(x) || x.ErrorCode != nil {
		return true
	}
	switch x.Outcome {
	case classify.ToolSuccess, classify.ToolError, classify.ResultSuccess, classify.JSONRPCError, classify.InputRequired,
		classify.TaskCreated, classify.InvalidToolResult, classify.InvalidResult, classify.InvalidEnvelope, classify.MalformedJSON,
		classify.UnexpectedContentType, classify.HTTPError:
		return true
	}
	return false
}

func probes(t *Trace, f func(*Exchange) bool) []*Exchange {
	var out []*Exchange
	for _, x := range t.Exchanges {
		if x.Probe != nil && f(x) {
			out = append(out, x)
		}
	}
	return out
}

// anyProbe is a rule's Applies: true when a probe that judged selects
// (one of kind, with an answer the rule can read) is in the trace. The n/a
// evidence says which is missing: no probe at all, no probe of the kind
// (a tool with no property has no argument probe: outsider22, where it
// said "no probe of this kind was answered" of probes never sent), or no
// answer to the ones sent.
func anyProbe(kind, judged func(*Exchange) bool) func(*Trace) (bool, string) {
	return func(t *Trace) (bool, string) {
		if len(probes(t, judged)) > 0 {
			return true, ""
		}
		if len(probes(t, func(*Exchange) bool { return true })) == 0 {
			return false, "no probe was sent"
		}
		if len(probes(t, kind)) == 0 {
			return false, "no probe of this kind was sent"
		}
		return false, "no probe of this kind was answered"
	}
}

// ofKind selects the probes of one kind, answered or not.
func ofKind(kind string) func(*Exchange) bool {
	return func(x *Exchange) bool { return x.Probe.Kind == kind }
}

// ofKinds selects the probes of the kinds in set, answered or not.
func ofKinds(set map[string]bool) func(*Exchange) bool {
	return func(x *Exchange) bool { return set[x.Probe.Kind] }
}

// malformedKinds are the probes of probe.malformed-call.
var malformedKinds = map[string]bool{"missing-name": true, "arguments-not-object": true}

// eachProbe fails with the probes (of those which selects) f objects to;
// its pass evidence counts the probes judged.
func eachProbe(which func(*Exchange) bool, f func(*Exchange) string) func(*Trace) (bool, string) {
	return func(t *Trace) (bool, string) {
		var bad []string
		n := 0
		for _, x := range t.Exchanges {
			if x.Probe == nil || !which(x) {
				continue
			}
			n++
			if s := f(x); s != "" {
				bad = append(bad, s)
			}
		}
		return verdict(bad, fmt.Sprintf("%d %s checked", n, plural(n, "probe", "probes")))
	}
}

// probeLabel names a probe in evidence: "probe 3 wrong-type echo.text (id 4)".
func probeLabel(x *Exchange) string {
	p := x.Probe
	s := fmt.Sprintf("probe %d %s", p.Index, p.Kind)
	switch {
	case x.Tool != "" && p.Property != "":
		s += " " + x.Tool + "." + p.Property
	case x.Tool != "":
		s += " " + x.Tool
	}
	if !x.ID.IsZero() && !x.ID.IsNull() {
		s += fmt.Sprintf(" (id %s)", x.ID)
	}
	return s
}

func orOutcome(x *Exchange) string {
	if x.What != "" {
		return x.What
	}
	if x.Outcome != "" {
		return string(x.Outcome)
	}
	return fmt.Sprintf("HTTP %d", x.Status)
}

func idType(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "":
		return "absent"
	case s[0] == '"':
		return "string"
	case s == "null":
		return "null"
	case s[0] == '-' || s[0] >= '0' && s[0] <= '9':
		return "number"
	}
	return "not a string or number"
}

// errorWords are the signs of an error in a tool result's text: a stack
// trace, an exception, the word invalid, a text that starts with "error",
// an HTTP error status. They are compiled on first use, so that a process
// that never judges a tool result's text (mcpdiag proxy) does not hold
// their programs (docs/benchmarks.md, liveheap).
var errorWords = sync.OnceValue(func() []errorWord {
	return []errorWord{
		{regexp.MustCompile(`Traceback \(most recent call last\)`), `the text holds a Python traceback`},
		{regexp.MustCompile(`\b[A-Z][A-Za-z]*(Exception|Error)\b`), `the text names an exception`},
		{regexp.MustCompile(`\bException\b`), `the text says "Exception"`},
		{regexp.MustCompile(`(?i)\binvalid\b`), `the text says "invalid"`},
		{regexp.MustCompile(`(?i)^\s*(error|failed|failure)\b`), `the text starts with an error word`},
		{regexp.MustCompile(`(?i)\bHTTP[ /]?(?:1\.[01]|2)?\s*[45]\d\d\b|\b[45]\d\d (?:Bad Request|Unauthorized|Forbidden|Not Found|Internal Server Error|Bad Gateway|Service Unavailable|Unprocessable)`), `the text holds an HTTP error status`},
	}
})

// errorWord is one of errorWords: a pattern and what its match says.
type errorWord struct {
	re   *regexp.Regexp
	what string
}

// readsAsError says why a tool result's content reads as an error ("" when
// it does not): an "error" member in structuredContent or in a text that is
// a JSON object, or the error words in a text.
func readsAsError(body string) string {
	var msg struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if body == "" || json.Unmarshal([]byte(body), &msg) != nil {
		return ""
	}
	if hasErrorMember(msg.Result.StructuredContent) {
		return `structuredContent has an "error" member`
	}
	for _, c := range msg.Result.Content {
		if c.Type != "text" {
			continue
		}
		if hasErrorMember(json.RawMessage(c.Text)) {
			return `the text is a JSON object with an "error" member`
		}
		for _, w := range errorWords() {
			if w.re.MatchString(c.Text) {
				return w.what + ": " + excerpt(c.Text)
			}
		}
	}
	return ""
}

func hasErrorMember(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return false
	}
	for _, k := range []string{"error", "errors", "Error"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		switch strings.TrimSpace(string(v)) {
		case "null", "false", `""`, "[]", "{}":
			continue
		}
		return true
	}
	return false
}

func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return "“" + string(r[:60]) + "…”"
	}
	return "“" + s + "”"
}

// serverOrigin selects the foreign-origin probes the server itself answered:
// a proxy's own refusal (ProxyRefused) says nothing of the server's check.
func serverOrigin(x *Exchange) bool { return isKind("foreign-origin")(x) && !x.ProxyRefused }

// originApplies is probe.origin's Applies: not applicable when every
// foreign-origin probe was refused by a proxy in front of the server.
func originApplies(t *Trace) (bool, string) {
	if ok, why := anyProbe(ofKind("foreign-origin"), serverOrigin)(t); ok || len(probes(t, isKind("foreign-origin"))) == 0 {
		return ok, why
	}
	return false, "a proxy in front of the server refused the foreign Origin itself (Proxy-Status), so the server's own check was not reached: probe the server directly"
}
