package classify

import (
	"fmt"
	"strings"

	"github.com/mcpdiag/mcpdiag/internal/visible"
)

// Guide is the human explanation of an outcome: what it means, the spec rule
// behind it, and what a careful client does next.
type Guide struct {
	Meaning string
	Spec    string
	Action  string
}

// Guides explains every outcome. docs/outcomes.md is generated from it.
var Guides = map[Outcome]Guide{
	NetworkError: {
		Meaning: "No complete HTTP response arrived: the connection failed, was reset or timed out before the headers, or the body was cut after them.",
		Spec:    "Transport failure below MCP. Whether the server did the work depends on whether the request was fully sent.",
		Action:  "Retry freely only if the request never left the client; otherwise retry only a read-only or idempotent call (or one with an Idempotency-Key).",
	},
	HTTPError: {
		Meaning: "The server (or something in front of it) answered with a status outside 2xx. Transport wins over the body: a success body under a 5xx is still a failure.",
		Spec:    "Streamable HTTP assigns 400 to -32020/-32021/-32022 and missing _meta, 404 to -32601, 401/403 to authorization, 405 to legacy GET/DELETE.",
		Action:  "401: re-authorize (resource_metadata); 403 insufficient_scope: step-up; 400 -32022: pick a supported version; 429/503: honour Retry-After; other 5xx: retry only a safe call.",
	},
	EmptyResponse: {
		Meaning: "A 2xx with no body (202, 204 or zero bytes) to a request that needs a JSON-RPC response.",
		Spec:    "Streamable HTTP: 202 Accepted with no body is only for notifications; a request MUST be answered with application/json or text/event-stream.",
		Action:  "Treat as a server bug; the outcome of the call is unknown, so retry only a safe call.",
	},
	UnexpectedContentType: {
		Meaning: "A 2xx whose body is neither application/json nor text/event-stream, such as an HTML page from a proxy or a login portal.",
		Spec:    "Streamable HTTP §Sending: the server MUST reply with Content-Type application/json or text/event-stream.",
		Action:  "Check what sits between client and server (proxy, gateway, captive portal, wrong URL); do not parse the body as MCP.",
	},
	StreamIncomplete: {
		Meaning: "The SSE stream ended (EOF, reset, timeout) before a JSON-RPC response with the request's id, including a final event without its blank line.",
		Spec:    "2026-07-28 changelog: a broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new id. Closing the stream cancels the request.",
		Action:  "Re-issue with a new id only if the tool is read-only, idempotent or carries an Idempotency-Key; otherwise report that it is unknown whether the tool ran.",
	},
	NotificationAccepted: {
		Meaning: "A notification POST was accepted (202, no body).",
		Spec:    "Streamable HTTP §Sending: an accepted notification MUST get 202 Accepted with no body.",
		Action:  "Nothing to do.",
	},
	MalformedJSON: {
		Meaning: "The JSON body, or the data of an SSE event, is not valid JSON.",
		Spec:    "JSON-RPC 2.0 messages are JSON; Streamable HTTP bodies carry one JSON-RPC message.",
		Action:  "A server or intermediary bug (stray log line, truncated write). The call's outcome is unknown: retry only a safe call.",
	},
	InvalidEnvelope: {
		Meaning: "The body is JSON but not a single JSON-RPC 2.0 response for this request: a batch, jsonrpc not \"2.0\", both or neither of result and error, a malformed error object, or another request's id.",
		Spec:    "JSON-RPC 2.0 §5; MCP basic: responses MUST carry the id of the request they answer; batches are not allowed.",
		Action:  "A server bug. Do not use the body; the call's outcome is unknown.",
	},
	JSONRPCError: {
		Meaning: "A well-formed JSON-RPC error: the server refused or failed the request at the protocol level (often inside HTTP 200).",
		Spec:    "MCP tools §Error Handling: unknown tools, malformed requests and server errors are protocol errors; clients MAY show them to the model.",
		Action:  "Branch on the code: -32022 renegotiate, -32021 add capabilities, -32020 fix headers (re-read tools/list), -32602 fix the request, -32601 the method is absent; do not retry unchanged.",
	},
	InvalidToolResult: {
		Meaning: "The response is a valid JSON-RPC result, but the tools/call result is not a valid CallToolResult, InputRequiredResult or CreateTaskResult.",
		Spec:    "MCP 2026-07-28 schema CallToolResult (content array of content blocks, boolean isError); an unrecognized resultType MUST be considered invalid.",
		Action:  "A server bug; the tool may have run. Do not show a half-parsed result to the model as success.",
	},
	InvalidResult: {
		Meaning: "The result of a method other than tools/call is not an object, or has a resultType that is unknown or not allowed for the method.",
		Spec:    "MCP 2026-07-28 basic §ResultType; MRTR: only tools/call, prompts/get and resources/read may return input_required.",
		Action:  "A server bug; do not use the result.",
	},
	InputRequired: {
		Meaning: "The call is not finished: the server needs input (elicitation, sampling, roots) and may have sent requestState (MRTR).",
		Spec:    "MCP 2026-07-28 MRTR: answer inputRequests, echo requestState exactly, and send a new request with a new id and the same method and arguments.",
		Action:  "Answer the input requests and send the next round (it is not a retry); bound the rounds.",
	},
	TaskCreated: {
		Meaning: "The server created a task for the call (tasks extension declared for this request).",
		Spec:    "io.modelcontextprotocol/tasks: CreateTaskResult; the final result comes from tasks/get.",
		Action:  "Poll tasks/get (respecting pollIntervalMs) or listen for task notifications.",
	},
	ToolError: {
		Meaning: "The tool ran and reported a failure (result.isError: true) inside a valid result.",
		Spec:    "MCP tools §Error Handling: clients SHOULD provide tool execution errors to the model so it can self-correct.",
		Action:  "Show the error text to the model; never retry automatically.",
	},
	ToolSuccess: {
		Meaning: "A valid CallToolResult without isError: true. An absent resultType is read as \"complete\".",
		Spec:    "MCP 2026-07-28 schema CallToolResult; basic §ResultType compatibility rule.",
		Action:  "Use the result.",
	},
	ResultSuccess: {
		Meaning: "A method other than tools/call (tools/list, server/discover, initialize, …) returned a valid result object.",
		Spec:    "MCP 2026-07-28 basic: Result = {resultType, _meta?, …}.",
		Action:  "Use the result.",
	},
	NotClassified: {
		Meaning: "mcpdiag did not classify the exchange: an SSE event or a JSON body that may hold the response is larger than the classifier's limit (--max-event-size), or holding it would take the proxy past its classification memory budget (--classify-memory). The response itself may be complete and correct; notClassified gives the cause, the size and the limit.",
		Spec:    "None: this is a limit of mcpdiag, not a rule of MCP. It says nothing about the server, the stream or the tool.",
		Action:  "Raise the limit named in notClassified and classify the capture again. The outcome of the call is unknown to mcpdiag, which is not a reason to send the request again.",
	},
}

// Explain renders a short human explanation of r: which layer failed, the
// evidence, what the spec says and what a client should do. What the
// response said (the reason's and the warnings' quotes of it, the content
// type, Retry-After) is rendered with visible.String: a control or bidi
// character is shown as an escape, never sent to the terminal.
func Explain(r *Result) string {
	var b strings.Builder
	g := Guides[r.Outcome]
	if r.Layer() == LayerNone {
		fmt.Fprintf(&b, "%s (no layer judged)", r.Outcome)
	} else {
		fmt.Fprintf(&b, "%s (%s layer)", r.Outcome, r.Layer())
	}
	if r.Status != 0 {
		fmt.Fprintf(&b, " — HTTP %d", r.Status)
	}
	if r.ContentType() != "" {
		fmt.Fprintf(&b, ", %s", visible.String(r.ContentType()))
	}
	b.WriteString("\n")
	if r.Reason != "" {
		fmt.Fprintf(&b, "  what:   %s\n", visible.String(r.Reason))
	}
	if r.SSE() != nil {
		response := "never arrived"
		switch {
		case r.SSE().Terminal:
			response = fmt.Sprintf("in event %d", r.SSE().TerminalEvent)
		case r.NotClassified() != nil:
			response = "not read"
		}
		fmt.Fprintf(&b, "  stream: %d event(s), %d notification(s), response %s, ended: %s\n",
			r.SSE().Events, r.SSE().Notifications, response, r.SSE().End)
	}
	if nc := r.NotClassified(); nc != nil {
		what := "the JSON body"
		if nc.Event > 0 {
			what = fmt.Sprintf("event %d", nc.Event)
		}
		fmt.Fprintf(&b, "  limit:  %s is %d bytes; %s\n", what, nc.Size, limitText(nc))
	}
	if r.HTTP() != nil && r.HTTP().RetryAfter != nil {
		fmt.Fprintf(&b, "  retry-after: %s (%s)\n", visible.String(r.HTTP().RetryAfter.Raw), r.HTTP().RetryAfter.Delay)
	}
	if r.HTTP() != nil && r.HTTP().WWWAuthenticate != nil {
		w := r.HTTP().WWWAuthenticate
		b.WriteString("  auth:   " + visible.String(w.Scheme))
		// A parameter the challenge did not carry is not printed (as
		// the JSON omits it): error="" would say it carried one.
		for _, p := range [...]struct{ name, value string }{
			{"error", w.Error}, {"error_description", w.ErrorDescription}, {"scope", w.Scope}, {"resource_metadata", w.ResourceMetadata},
		} {
			if p.value != "" {
				fmt.Fprintf(&b, " %s=%q", p.name, p.value)
			}
		}
		b.WriteString("\n")
	}
	if g.Meaning != "" {
		fmt.Fprintf(&b, "  means:  %s\n  spec:   %s\n  do:     %s\n", g.Meaning, g.Spec, g.Action)
	}
	for i := range r.NumWarnings() {
		w := r.Warning(i)
		fmt.Fprintf(&b, "  warning %s: %s\n    rule: %s\n", w.Code, visible.String(w.Message), w.Rule)
	}
	return b.String()
}

// limitText names the limit a NOT_CLASSIFIED result reached and how to
// raise it.
func limitText(nc *NotClassifiedDetails) string {
	if nc.Cause == CauseMemoryBudget {
		return fmt.Sprintf("the classification memory budget is %d bytes, %d of them in use (--classify-memory)", nc.Limit, nc.InUse)
	}
	return fmt.Sprintf("the classifier holds at most %d bytes (--max-event-size)", nc.Limit)
}
