package client

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/record"
)

// WriteReport prints the short human report of a call: the layer that
// failed (or the success), the evidence exchange by exchange, and the
// decision, in one screen. What the server sent (reasons quoting it, the
// result's text, content types, tool names) is rendered with
// visible.String: a control or bidi character is shown as an escape.
func (call *Call) WriteReport(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s layer) — tool %q", visible.String(string(call.Outcome)), call.Layer(), call.Tool)
	if call.Protocol != "" && call.LegacyTransport == "" {
		// A server of the 2024-11-05 HTTP+SSE transport speaks no era
		// the call tried (the era line says "none: …"): the header names
		// none either.
		fmt.Fprintf(&b, " on %s", call.Protocol)
	}
	b.WriteString("\n")
	if call.Final != nil && call.Final.Reason != "" {
		fmt.Fprintf(&b, "  what:      %s\n", visible.String(call.Final.Reason))
	}
	d := call.Decision
	fmt.Fprintf(&b, "  decision:  %s", d.Action)
	if d.Delay > 0 {
		fmt.Fprintf(&b, " after %s", d.Delay.Round(time.Millisecond))
	}
	if d.Reason != "" {
		fmt.Fprintf(&b, " — %s", visible.String(d.Reason))
	}
	b.WriteString("\n")
	if call.EraReason != "" {
		fmt.Fprintf(&b, "  era:       %s\n", visible.String(call.EraReason))
	}
	if call.Safety != "" {
		fmt.Fprintf(&b, "  safety:    %s (%s)\n", visible.String(string(call.Safety)), visible.String(string(call.SafetySource)))
	}
	if len(call.Unanswered) > 0 {
		fmt.Fprintf(&b, "  input:     no answer for %s (use --input FILE, or run on a terminal)\n", visible.String(strings.Join(call.Unanswered, ", ")))
	}
	for _, r := range call.Recoveries {
		fmt.Fprintf(&b, "  recovery:  %s\n", visible.String(r))
	}
	if f := call.Auth; f != nil {
		fmt.Fprintf(&b, "  auth:      failed at step %s: %s\n", f.Step, visible.String(f.Reason))
		if f.Rule != "" {
			fmt.Fprintf(&b, "  rule:      %s\n", visible.String(f.Rule))
		}
	}
	writeAuthChain(&b, call.Exchanges)
	authSteps := 0
	// Input rounds are the exchanges that answered the server's input
	// requests: MRTR rounds (2026-07-28) and the answers to a 2025-11-25
	// server request (elicitation/create on the stream), as the call
	// record's inputRounds counts them.
	rounds := 0
	// Each HTTP method is counted apart (POST, and the GETs that resume a
	// stream): an exchange without an HTTP response is an attempt, not a
	// request a server answered (a refused connection sent nothing at
	// all), and the words say which method's requests went unanswered and
	// whether each had been written whole (network.requestSent in its
	// record), as the records' httpStatuses (0) and network facts do.
	type tally struct{ n, unanswered, notSent int }
	var post, get tally
	for _, ex := range call.Exchanges {
		if ex.Origin == OriginMRTR {
			rounds++
		}
		if ex.isAuthStep() {
			authSteps++
			continue
		}
		t := &post
		if ex.HTTPMethod == "GET" {
			t = &get
		}
		t.n++
		if ex.Status == 0 {
			t.unanswered++
			if ex.Result == nil || ex.Result.Network() == nil || !ex.Result.Network().RequestSent {
				t.notSent++
			}
		}
	}
	count := func(t tally, name string) string {
		if t.unanswered > 0 {
			return fmt.Sprintf("%d %s attempt(s)", t.n, name)
		}
		return fmt.Sprintf("%d %s(s)", t.n, name)
	}
	requests := count(post, "POST")
	if get.n > 0 {
		requests += " and " + count(get, "GET")
	}
	var unanswered []string
	for _, m := range []struct {
		t    tally
		name string
	}{{post, "POST"}, {get, "GET"}} {
		t := m.t
		if t.unanswered == 0 {
			continue
		}
		var parts []string
		if t.notSent > 0 {
			parts = append(parts, fmt.Sprintf("%d never fully sent", t.notSent))
		}
		if sent := t.unanswered - t.notSent; sent > 0 {
			parts = append(parts, fmt.Sprintf("%d sent whole", sent))
		}
		what := fmt.Sprintf("%d %s(s)", t.unanswered, m.name)
		switch {
		case t.unanswered == 1 && t.n == 1:
			what = "the " + m.name
			parts = []string{"never fully sent"}
			if t.notSent == 0 {
				parts = []string{"sent whole"}
			}
		case t.unanswered == post.n+get.n:
			what = "any"
		case t.unanswered == t.n:
			what = "any " + m.name
		}
		unanswered = append(unanswered, what+": "+strings.Join(parts, ", "))
	}
	if len(unanswered) > 0 {
		requests += " (no HTTP response to " + strings.Join(unanswered, "; ") + ")"
	}
	if authSteps > 0 {
		requests += fmt.Sprintf(" to the MCP server (and %d in the auth chain above)", authSteps)
	}
	fmt.Fprintf(&b, "  exchanges: %s, %d retr%s, %d input round(s)\n", requests, call.Retries, map[bool]string{true: "y", false: "ies"}[call.Retries == 1], rounds)
	for _, ex := range call.Exchanges {
		if ex.isAuthStep() {
			continue
		}
		status := "---"
		if ex.Status != 0 {
			status = fmt.Sprint(ex.Status)
		}
		ct := ""
		if ex.Result.ContentType() != "" {
			ct = strings.SplitN(ex.Result.ContentType(), ";", 2)[0]
		}
		method := ex.Method
		if ex.ClientAnswer {
			method = "answer to " + method
		}
		if ex.Tool != "" {
			method += " " + ex.Tool
		}
		if ex.HTTPMethod != "" {
			method = ex.HTTPMethod + " " + method
		}
		fmt.Fprintf(&b, "    #%-2d %-28s %s %-18s %-22s %6s", ex.Seq, trim(visible.String(method), 28), status, trim(visible.String(ct), 18), ex.Result.Outcome, ex.Total.Round(time.Millisecond))
		if ex.Origin != OriginNone && ex.Origin != "" {
			fmt.Fprintf(&b, "  (%s)", ex.Origin)
		}
		if ex.Decision != nil && ex.Decision.Action != "done" && ex != call.Exchanges[len(call.Exchanges)-1] {
			fmt.Fprintf(&b, "  → %s", ex.Decision.Action)
			if ex.Decision.Delay > 0 {
				fmt.Fprintf(&b, " in %s", ex.Decision.Delay.Round(time.Millisecond))
			}
		}
		b.WriteString("\n")
	}
	// Warnings of the set-up exchanges (an excluded tool, a cursor loop)
	// name their exchange; the final answer's come last.
	for _, ex := range call.Exchanges {
		if ex.Result == nil || ex.Result == call.Final {
			continue
		}
		for i := range ex.Result.NumWarnings() {
			wn := ex.Result.Warning(i)
			if ex.Method == "tools/list" {
				fmt.Fprintf(&b, "  warning:   #%d %s: %s: %s\n", ex.Seq, ex.Method, wn.Code, visible.String(wn.Message))
			}
		}
	}
	if call.Final != nil {
		for i := range call.Final.NumWarnings() {
			wn := call.Final.Warning(i)
			fmt.Fprintf(&b, "  warning:   %s: %s\n", wn.Code, visible.String(wn.Message))
		}
	}
	if text := resultText(call.Result); text != "" && (call.Outcome == classify.ToolSuccess || call.Outcome == classify.ToolError) {
		// Scrubbed while its lines are still lines: joined, a value
		// that ends its line ("Token: …") would run on into the next,
		// and the caller's scrub of the whole report could not tell it;
		// and before it is cut, so that no part of a credential is kept.
		text = record.Scrub(text)
		fmt.Fprintf(&b, "  result:    %s\n", trim(visible.String(strings.ReplaceAll(text, "\n", " ")), 200))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// trim cuts s to n bytes, the last of them "…", at a character's start:
// never inside a UTF-8 sequence, which would print a stray byte.
func trim(s string, n int) string {
	if len(s) > n {
		i := n - 1
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		return s[:i] + "…"
	}
	return s
}

// resultText returns the text blocks of a tools/call result.
func resultText(msg json.RawMessage) string {
	var m struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return ""
	}
	var parts []string
	for _, c := range m.Result.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, " ")
}
