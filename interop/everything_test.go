package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestServerEverything starts @modelcontextprotocol/server-everything
// (pinned; TS SDK v1, the 2025-11-25 era) in streamableHttp mode on
// 127.0.0.1 with a scrubbed environment, and has mcpdiag's client call its
// tools directly and through `mcpdiag proxy`: a success, a tool error, an
// unknown tool and arguments that fail its schema. The last two come back
// as isError results whose text reads "MCP error -32602": the classifier
// must say TOOL_ERROR in the client and in the proxy's record alike, and
// warn protocol-error-as-tool-error for the unknown tool only (SEP-1303
// makes an input validation error a tool execution error).
func TestServerEverything(t *testing.T) {
	t.Parallel()
	const peer = "server-everything 2026.8.31"
	type everyCase struct {
		name    string
		era     string // the --protocol of the call
		tool    string
		args    string
		outcome classify.Outcome
		warn    bool   // protocol-error-as-tool-error
		text    string // in the result
	}
	cases := []everyCase{
		{"echo (success)", client.Protocol2025, "echo", `{"message":"hi"}`, classify.ToolSuccess, false, "Echo: hi"},
		{"get-resource-reference resourceId 0 (tool error)", client.Protocol2025, "get-resource-reference", `{"resourceId":0}`, classify.ToolError, false, "Invalid resourceId"},
		{"unknown tool", client.Protocol2025, "no-such-tool", `{}`, classify.ToolError, true, "MCP error -32602"},
		{"arguments failing the input schema", client.Protocol2025, "get-resource-reference", `{"resourceType":"video"}`, classify.ToolError, false, "MCP error -32602: Input validation error"},
		{"echo, era auto (falls back to initialize)", client.ProtocolAuto, "echo", `{"message":"hi"}`, classify.ToolSuccess, false, "Echo: hi"},
	}
	routes := []string{"direct", "via mcpdiag proxy"}
	var rows []row
	for i, c := range cases {
		for j, route := range routes {
			era := c.era
			if era == client.ProtocolAuto {
				era = "auto → 2025-11-25"
			}
			rows = append(rows, row{Section: 2, Order: i*2 + j, Peer: peer, Direction: "mcpdiag → peer", Era: era, Scenario: c.name, Route: route})
		}
	}
	envRow := row{Section: 2, Order: 100, Peer: peer, Direction: "mcpdiag → peer", Era: "2025-11-25",
		Scenario: "get-env: the environment is scrubbed", Route: "direct"}
	// A TS SDK client cancels a long call through the proxy (v1: a
	// notifications/cancelled only; v2: also closes the stream).
	cancels := []struct {
		sdk string
		row row
	}{
		{"v1", row{Section: 2, Order: 101, Peer: "TS SDK v1 client 1.32.2 → " + peer, Direction: "peer → peer", Era: "2025-11-25",
			Scenario: "trigger-long-running-operation cancelled by its client after 700 ms", Route: "via mcpdiag proxy"}},
		{"v2", row{Section: 2, Order: 102, Peer: "TS SDK v2 client 2.4.0 → " + peer, Direction: "peer → peer", Era: "2025-11-25",
			Scenario: "trigger-long-running-operation cancelled by its client after 700 ms", Route: "via mcpdiag proxy"}},
	}
	samplingRow := row{Section: 2, Order: 103, Peer: peer, Direction: "mcpdiag → peer", Era: "2025-11-25",
		Scenario: "trigger-sampling-request answered from an --input file", Route: "direct"}
	all := append(rows, envRow, samplingRow)
	for _, c := range cancels {
		all = append(all, c.row)
	}
	results.expect(t, all)
	skipShort(t, "server-everything runs on node", all...)
	nt := needNode(t, all...)

	// server-everything listens on every interface (app.listen(PORT), no
	// host); startEverything binds it to 127.0.0.1 with an environment of
	// nothing but PATH, HOME and PORT: get-env returns the whole
	// environment to any caller.
	direct := startEverything(t, nt)
	px := startProxy(t, "everything", direct)
	proxied := px.base + "/mcp"

	calls := make([]*client.Call, len(rows))
	for i, c := range cases {
		for j, url := range []string{direct, proxied} {
			calls[i*2+j] = callOnce(t, url, c.era, c.tool, c.args, nil)
		}
	}
	// The environment the tool reports: only the variables we gave (Node
	// adds none); the values are not logged.
	envCall := callOnce(t, direct, client.Protocol2025, "get-env", `{}`, nil)
	// An --input file with a sampling answer: the client declares sampling
	// (server-everything lists trigger-sampling-request only to a client
	// that does) and answers the server's sampling/createMessage with it.
	samplingInputs, err := client.ReadInputs(strings.NewReader(`{"sampling/createMessage":{"role":"assistant","content":{"type":"text","text":"sampled by mcpdiag-interop"},"model":"interop-model"}}`))
	if err != nil {
		t.Fatal(err)
	}
	samplingCall := callOnce(t, direct, client.Protocol2025, "trigger-sampling-request", `{"prompt":"hi","maxTokens":10}`, samplingInputs)
	// The TS SDK clients cancel a long call through the proxy: each sends
	// notifications/cancelled, the server ends the stream without a
	// response (as MCP asks), and the record says the client ended it.
	cancelOuts := make([][]byte, len(cancels))
	for i, c := range cancels {
		plan, _ := json.Marshal(map[string]any{"sdk": c.sdk, "url": proxied, "tool": "trigger-long-running-operation",
			"args": map[string]any{"duration": 5, "steps": 5}, "cancelAfterMs": 700})
		cancelOuts[i] = runNode(t, nt, 45*time.Second, "ts-cancel.mjs", plan)
	}
	recs := px.records(t)
	for i, c := range cancels {
		holdCancel(t, c.row, c.sdk, cancelOuts[i], recs)
	}
	var proxyCalls []exchangeRecord
	for _, r := range recs {
		if r.Method == "tools/call" {
			proxyCalls = append(proxyCalls, r)
		}
	}

	for i, c := range cases {
		for j := range routes {
			r := rows[i*2+j]
			call := calls[i*2+j]
			r.Want = fmt.Sprintf("%s, text containing %q", c.outcome, c.text)
			if c.warn {
				r.Want += ", warning " + classify.WarnProtocolErrorAsTool
			} else {
				r.Want += ", no " + classify.WarnProtocolErrorAsTool + " warning"
			}
			if call == nil {
				r.Got = "the call did not run"
				results.add(t, r)
				continue
			}
			warns := callWarnings(call)
			r.Got = fmt.Sprintf("%s on %s", call.Outcome, call.Protocol)
			if len(warns) > 0 {
				r.Got += ", warnings " + strings.Join(warns, ", ")
			}
			text := resultText(call.Result)
			r.Got += fmt.Sprintf(", %q", trimTo(text, 70))
			r.Pass = call.Outcome == c.outcome && call.Protocol == client.Protocol2025 &&
				slices.Contains(warns, classify.WarnProtocolErrorAsTool) == c.warn && strings.Contains(text, c.text)
			if j == 1 {
				// The proxy's record of the same tools/call: same outcome
				// and warnings as the client's own classification.
				r.Want += "; the proxy's record agrees"
				rec, ok := recordFor(proxyCalls, i, c.tool)
				switch {
				case !ok:
					r.Pass = false
					r.Got += "; no proxy record"
				default:
					rw := rec.warningCodes()
					sort.Strings(rw)
					r.Got += fmt.Sprintf("; record: %s", rec.Outcome)
					if len(rw) > 0 {
						r.Got += " " + strings.Join(rw, ", ")
					}
					if rec.Outcome != string(call.Outcome) || slices.Contains(rw, classify.WarnProtocolErrorAsTool) != c.warn {
						r.Pass = false
						r.Got += " (disagrees)"
					}
				}
			}
			results.add(t, r)
		}
	}

	envRow.Want = "TOOL_SUCCESS listing only HOME, PATH, PORT"
	if envCall == nil {
		envRow.Got = "the call did not run"
	} else {
		var env map[string]string
		_ = json.Unmarshal([]byte(resultText(envCall.Result)), &env)
		var keys []string
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		envRow.Got = fmt.Sprintf("%s listing %s", envCall.Outcome, strings.Join(keys, ", "))
		envRow.Pass = envCall.Outcome == classify.ToolSuccess && strings.Join(keys, ",") == "HOME,PATH,PORT"
	}
	results.add(t, envRow)

	samplingRow.Want = "TOOL_SUCCESS, one answer to sampling/createMessage POSTed, the result quoting the --input file's answer"
	if samplingCall == nil {
		samplingRow.Got = "the call did not run"
	} else {
		text := resultText(samplingCall.Result)
		answers := 0
		for _, ex := range samplingCall.Exchanges {
			if ex.ClientAnswer && ex.Method == "sampling/createMessage" && ex.Status == 202 {
				answers++
			}
		}
		samplingRow.Got = fmt.Sprintf("%s, %d answer(s) to sampling/createMessage, %q", samplingCall.Outcome, answers, trimTo(text, 90))
		samplingRow.Pass = samplingCall.Outcome == classify.ToolSuccess && answers == 1 &&
			strings.Contains(text, "sampled by mcpdiag-interop")
	}
	results.add(t, samplingRow)
}

// holdCancel checks a cancel row: the TS SDK client's call threw (it
// cancelled it) on 2025-11-25, and the proxy's record of that tools/call
// is what arrived (STREAM_INCOMPLETE: no response, as MCP asks of a
// cancelled request) and says that the client ended it. v1 only sends
// notifications/cancelled: the note must say so. v2 also closes the stream,
// which may reach the proxy before the cancel does: the note says the
// cancel or the client's disconnect (flag DC), which is how 2026-07-28
// cancels.
func holdCancel(t *testing.T, r row, sdk string, out []byte, recs []exchangeRecord) {
	t.Helper()
	const cancelled = "the client cancelled the request (notifications/cancelled) after "
	r.Want = "the client's call threw (cancelled) on 2025-11-25; record: STREAM_INCOMPLETE, note \"" + cancelled + "…\""
	if sdk == "v2" {
		r.Want += " or \"client disconnected (DC) …\""
	}
	var got struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Result          json.RawMessage `json:"result"`
		Thrown          *struct{ Class, Message string }
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		r.Got = fmt.Sprintf("ts-cancel.mjs printed %q: %v", trimTo(string(out), 200), err)
		results.add(t, r)
		return
	}
	switch {
	case got.Thrown != nil:
		r.Got = fmt.Sprintf("threw %s %q on %s", got.Thrown.Class, got.Thrown.Message, got.ProtocolVersion)
	default:
		r.Got = fmt.Sprintf("resolved %s on %s", trimTo(string(got.Result), 80), got.ProtocolVersion)
	}
	var rec *exchangeRecord
	for i := range recs {
		if recs[i].Client == "mcpdiag-interop-cancel-"+sdk+"@0" && recs[i].Method == "tools/call" {
			rec = &recs[i]
		}
	}
	if rec == nil {
		r.Got += "; no proxy record of the tools/call"
		results.add(t, r)
		return
	}
	r.Got += fmt.Sprintf("; record: %s, note %q", rec.Outcome, trimTo(rec.Note, 90))
	saysClient := strings.HasPrefix(rec.Note, cancelled) ||
		sdk == "v2" && strings.HasPrefix(rec.Note, "client disconnected (DC) ")
	r.Pass = got.Thrown != nil && got.ProtocolVersion == client.Protocol2025 &&
		rec.Outcome == string(classify.StreamIncomplete) && rec.Tool == "trigger-long-running-operation" && saysClient
	results.add(t, r)
}

// recordFor finds the proxy record of case i's tools/call: the proxied
// calls were made in case order, one tools/call each.
func recordFor(recs []exchangeRecord, i int, tool string) (exchangeRecord, bool) {
	if i < len(recs) && recs[i].Tool == tool {
		return recs[i], true
	}
	return exchangeRecord{}, false
}

// callOnce is `mcpdiag call URL TOOL --args ARGS --protocol ERA --retries 0
// --timeout 10s`, through the client package.
func callOnce(t *testing.T, url, era, tool, args string, inputs client.InputProvider) *client.Call {
	t.Helper()
	c, err := client.New(client.Options{URL: url, Protocol: era, Timeout: 10 * time.Second, Inputs: inputs,
		ClientInfo: client.Implementation{Name: "mcpdiag-interop", Version: "0"}, Policy: noRetries()})
	if err != nil {
		t.Errorf("client.New: %v", err)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	call, err := c.CallTool(ctx, tool, json.RawMessage(args))
	if err != nil {
		t.Errorf("call %s at %s: %v", tool, url, err)
		return nil
	}
	return call
}

// noRetries is --retries 0: the default policy without automatic retries
// (renegotiation and MRTR rounds stay).
func noRetries() *retry.Policy {
	p := retry.DefaultPolicy()
	p.MaxRetries = 0
	return &p
}

// callWarnings lists the warning codes of the call's exchanges, sorted and
// without repeats.
func callWarnings(call *client.Call) []string {
	seen := map[string]bool{}
	for _, ex := range call.Exchanges {
		if ex.Result == nil {
			continue
		}
		for _, w := range ex.Result.Warnings() {
			seen[w.Code] = true
		}
	}
	var out []string
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// resultText joins the text blocks of a JSON-RPC response's result, or
// gives the error's message.
func resultText(msg json.RawMessage) string {
	var m struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return ""
	}
	if m.Error != nil {
		return m.Error.Message
	}
	var parts []string
	for _, c := range m.Result.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}
