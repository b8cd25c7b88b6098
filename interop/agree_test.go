package interop_test

import (
	"fmt"
	"strings"
)

// Client peers against `mcpdiag serve`: each calls four scenarios through a
// recording `mcpdiag proxy`, and two things must hold for every call:
//
//  1. the peer's API surfaced what the scenario produces (docs/scenarios.md);
//  2. our classifier, in the proxy's record of the same exchange, agrees with
//     what the peer surfaced: a result without isError ↔ TOOL_SUCCESS, with
//     isError ↔ TOOL_ERROR, a JSON-RPC error with code C ↔ JSONRPC_ERROR
//     with errorCode C.

// serveScenario is one of the four scenarios every client peer calls.
type serveScenario struct {
	name     string // the row's scenario column
	id       string // the /s/{id}/mcp scenario
	tool     string
	args     map[string]any
	elicit   bool   // the client must answer a form elicitation
	outcome  string // the classifier's outcome for the final tools/call
	wantText string // the peer's result text must contain it
	wantCode int    // the JSON-RPC error code the peer must surface
}

var serveScenarios = []serveScenario{
	{name: "baseline", id: "baseline", tool: "echo", args: map[string]any{"text": "hi"}, outcome: "TOOL_SUCCESS", wantText: "hi"},
	{name: "errors.tool_error", id: "errors.tool_error", tool: "echo", args: map[string]any{"text": "hi"}, outcome: "TOOL_ERROR", wantText: "Tool-side failure"},
	{name: "errors.jsonrpc_error (-32602)", id: "errors.jsonrpc_error", tool: "echo", args: map[string]any{"text": "hi"}, outcome: "JSONRPC_ERROR", wantCode: -32602},
	{name: "elicitation.approval (accept)", id: "elicitation.approval", tool: "approve", args: map[string]any{"change": "x"}, elicit: true,
		outcome: "TOOL_SUCCESS", wantText: "approved"},
}

// elicitAnswer is every client peer's answer to the form: it suits both the
// scenario's form (reason, 2026-07-28 MRTR) and the fixture's own approve
// form (approve, reason; a server request on the 2025-11-25 stream, where the
// scenario matches only 2026-07-28 and lets the call through).
var elicitAnswer = map[string]any{"approve": true, "reason": "fine"}

// endpoint is the scenario's endpoint for one peer's run: its own run=…
// query, so counters are not shared and records are told apart.
func (s serveScenario) endpoint(peer, era string) string {
	run := strings.NewReplacer(" ", "-", ".", "-", "/", "-", "@", "-").Replace(peer + "-" + era + "-" + s.id)
	return "/s/" + s.id + "/mcp?run=" + run
}

// peerView is what a client peer's API surfaced for one call.
type peerView struct {
	Connected    bool
	Protocol     string // the version the peer says it negotiated
	Result       bool   // a result came back
	IsError      bool
	Text         string
	ErrClass     string // the error's type, when one was raised
	ErrCode      int    // its JSON-RPC code (0: the API gave none)
	ErrMessage   string
	Elicitations int // how often the peer's elicitation handler ran
}

func (v peerView) String() string {
	var s string
	switch {
	case !v.Connected:
		s = fmt.Sprintf("did not connect: %s %q", v.ErrClass, trimTo(v.ErrMessage, 200))
	case v.Result:
		s = fmt.Sprintf("result isError=%v %q", v.IsError, trimTo(v.Text, 80))
	default:
		s = fmt.Sprintf("raised %s", v.ErrClass)
		if v.ErrCode != 0 {
			s += fmt.Sprintf(" code %d", v.ErrCode)
		}
		s += fmt.Sprintf(" %q", trimTo(v.ErrMessage, 120))
	}
	if v.Elicitations > 0 {
		s += fmt.Sprintf(", elicitation answered %d×", v.Elicitations)
	}
	if v.Protocol != "" {
		s += " (negotiated " + v.Protocol + ")"
	}
	return s
}

// judge checks a client peer's call against the scenario and the proxy's
// records; it returns the row's Want, Got and Pass.
func judge(s serveScenario, era string, v peerView, calls []exchangeRecord) (want, got string, pass bool) {
	var problems []string
	switch {
	case s.wantCode != 0:
		want = fmt.Sprintf("the peer raises a JSON-RPC error %d; the record says %s %d", s.wantCode, s.outcome, s.wantCode)
		if v.Result || v.ErrCode != s.wantCode {
			problems = append(problems, "the peer did not surface the JSON-RPC error code")
		}
	default:
		want = fmt.Sprintf("a result, isError=%v, text containing %q; the record says %s", s.outcome == "TOOL_ERROR", s.wantText, s.outcome)
		if !v.Result || v.IsError != (s.outcome == "TOOL_ERROR") || !strings.Contains(v.Text, s.wantText) {
			problems = append(problems, "the peer did not surface that result")
		}
	}
	if v.Connected && v.Protocol != "" && v.Protocol != era {
		problems = append(problems, "the peer negotiated "+v.Protocol)
	}
	if s.elicit && v.Elicitations != 1 {
		problems = append(problems, fmt.Sprintf("the elicitation handler ran %d times, want once", v.Elicitations))
	}
	var seq []string
	for _, c := range calls {
		o := c.Outcome
		if c.JSONRPC.ErrorCode != nil {
			o += fmt.Sprintf(" %d", *c.JSONRPC.ErrorCode)
		}
		if c.SSE != nil && c.SSE.Requests > 0 {
			o += fmt.Sprintf(" (%d server request(s) on the stream)", c.SSE.Requests)
		}
		seq = append(seq, o)
	}
	record := "no tools/call record"
	if len(calls) > 0 {
		record = "record: " + strings.Join(seq, " → ")
	}
	got = v.String() + "; " + record
	if len(calls) == 0 {
		problems = append(problems, "the proxy recorded no tools/call")
		return want, got + "; " + strings.Join(problems, "; "), false
	}
	final := calls[len(calls)-1]
	// The classifier must agree with the peer's API, whatever the scenario.
	switch {
	case v.Result && !v.IsError && final.Outcome != "TOOL_SUCCESS",
		v.Result && v.IsError && final.Outcome != "TOOL_ERROR",
		!v.Result && v.ErrCode != 0 && (final.Outcome != "JSONRPC_ERROR" || final.JSONRPC.ErrorCode == nil || *final.JSONRPC.ErrorCode != v.ErrCode):
		problems = append(problems, "the classifier disagrees with the peer")
	}
	if final.Outcome != s.outcome {
		problems = append(problems, "the final outcome is not "+s.outcome)
	}
	if s.elicit && era == "2026-07-28" && (len(calls) != 2 || calls[0].Outcome != "INPUT_REQUIRED") {
		problems = append(problems, "want INPUT_REQUIRED then the answered round")
	}
	if len(problems) > 0 {
		return want, got + "; " + strings.Join(problems, "; "), false
	}
	return want, got, true
}
