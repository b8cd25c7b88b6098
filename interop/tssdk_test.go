package interop_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestTypeScriptSDK has the TypeScript SDK v2 client
// (@modelcontextprotocol/client, interop/node/ts-client.mjs) call the
// baseline, tool-error, JSON-RPC-error and elicitation scenarios of
// `mcpdiag serve` through a recording `mcpdiag proxy`, pinned to 2026-07-28
// and in its 'legacy' (2025-11-25) mode, and holds what its API surfaced
// against the classifier's record of the same exchange.
func TestTypeScriptSDK(t *testing.T) {
	t.Parallel()
	const peer = "TS SDK v2 client 2.4.0"
	eras := []string{"2026-07-28", "2025-11-25"}
	var rows []row
	for i, era := range eras {
		for j, s := range serveScenarios {
			rows = append(rows, row{Section: 1, Order: i*10 + j, Peer: peer, Direction: "peer → mcpdiag serve",
				Era: era, Scenario: s.name, Route: "via mcpdiag proxy"})
		}
	}
	results.expect(t, rows)
	skipShort(t, "the TypeScript SDK runs on node", rows...)
	nt := needNode(t, rows...)
	if v := nt.packages["@modelcontextprotocol/client"]; v != "2.4.0" {
		t.Fatalf("@modelcontextprotocol/client %s installed, want the pinned 2.4.0", v)
	}
	px := startProxy(t, "ts-sdk", serveBase(t)+"/mcp")

	type tsCase struct {
		Name   string         `json:"name"`
		Era    string         `json:"era"`
		URL    string         `json:"url"`
		Tool   string         `json:"tool"`
		Args   map[string]any `json:"args"`
		Elicit map[string]any `json:"elicit,omitempty"`
	}
	var plan struct {
		Cases []tsCase `json:"cases"`
	}
	for _, era := range eras {
		for _, s := range serveScenarios {
			c := tsCase{Name: era + " " + s.name, Era: era, URL: px.base + s.endpoint("ts", era), Tool: s.tool, Args: s.args}
			if s.elicit {
				c.Elicit = map[string]any{"action": "accept", "content": elicitAnswer}
			}
			plan.Cases = append(plan.Cases, c)
		}
	}
	in, _ := json.Marshal(plan)
	out := runNode(t, nt, 90*time.Second, "ts-client.mjs", in)

	type tsLine struct {
		Name         string `json:"name"`
		Connected    bool   `json:"connected"`
		Protocol     string `json:"protocolVersion"`
		Elicitations int    `json:"elicitations"`
		Result       *struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"result"`
		Thrown *struct {
			Class   string `json:"class"`
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"thrown"`
	}
	views := map[string]peerView{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var l tsLine
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("ts-client.mjs printed %q: %v", line, err)
		}
		v := peerView{Connected: l.Connected, Protocol: l.Protocol, Elicitations: l.Elicitations}
		if l.Result != nil {
			v.Result, v.IsError, v.Text = true, l.Result.IsError, l.Result.Text
		}
		if l.Thrown != nil {
			v.ErrClass, v.ErrMessage = l.Thrown.Class, l.Thrown.Message
			if code, ok := l.Thrown.Code.(float64); ok { // ProtocolError: a number; SdkError: a string
				v.ErrCode = int(code)
			} else if l.Thrown.Code != nil {
				v.ErrClass += fmt.Sprintf("(%v)", l.Thrown.Code)
			}
		}
		views[l.Name] = v
	}
	recs := px.records(t)
	for i, era := range eras {
		for j, s := range serveScenarios {
			r := rows[i*len(serveScenarios)+j]
			v, ok := views[era+" "+s.name]
			if !ok {
				r.Want, r.Got = "a line from ts-client.mjs", "none"
				results.add(t, r)
				continue
			}
			calls := toolCalls(recs, s.endpoint("ts", era))
			for _, c := range calls {
				if c.Client != "mcpdiag-interop-ts-sdk@2.4.0" {
					t.Errorf("%s: the record names the client %q", r.Scenario, c.Client)
				}
			}
			r.Want, r.Got, r.Pass = judge(s, era, v, calls)
			results.add(t, r)
		}
	}
}
