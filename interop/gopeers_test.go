package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdiag/mcpdiag/client"
)

const (
	mcpGo = "mcp-go v1.2.1"
	goSDK = "go-sdk v1.8.0"

	toServe  = "peer → mcpdiag serve" // the peer's client calls `mcpdiag serve`
	fromDiag = "mcpdiag → peer"       // mcpdiag's client calls the peer's server

	era26 = "2026-07-28"
	era25 = "2025-11-25"
)

// goPeerCase is one row of the Go peers' table. Rows toServe name one of
// serveScenarios and are judged like every client peer (agree_test.go);
// rows fromDiag name a tool of the peer's server (see goPeerTools) and say
// what mcpdiag's client must conclude.
type goPeerCase struct {
	peer, direction, era, scenario string
	// fromDiag only:
	tool    string
	outcome string // the call's outcome
	code    int    // the JSON-RPC error code, for JSONRPC_ERROR (and HTTP_ERROR with a JSON-RPC body)
	status  int    // the HTTP status, when not 200
	text    string // in the result text (or the error message)
	rounds  int    // input rounds: MRTR rounds, or answers to a 2025-11-25 server request (client.Call.Rounds)
}

// goPeerTable is peer × direction × era × scenario for mcp-go and go-sdk.
var goPeerTable = []goPeerCase{
	// mcp-go's client against `mcpdiag serve`: unpinned (it negotiates
	// 2026-07-28 through server/discover), and pinned to 2025-11-25 with
	// client.WithProtocolVersion (ecosystem-notes §9: unpinned against a
	// stateful server it believes 2026-07-28 regardless).
	{peer: mcpGo, direction: toServe, era: era26, scenario: "baseline"},
	{peer: mcpGo, direction: toServe, era: era26, scenario: "errors.tool_error"},
	{peer: mcpGo, direction: toServe, era: era26, scenario: "errors.jsonrpc_error (-32602)"},
	{peer: mcpGo, direction: toServe, era: era26, scenario: "elicitation.approval (accept)"},
	{peer: mcpGo, direction: toServe, era: era25, scenario: "baseline"},
	{peer: mcpGo, direction: toServe, era: era25, scenario: "errors.tool_error"},
	{peer: mcpGo, direction: toServe, era: era25, scenario: "errors.jsonrpc_error (-32602)"},
	{peer: mcpGo, direction: toServe, era: era25, scenario: "elicitation.approval (accept)"},
	// go-sdk's client against `mcpdiag serve`, ClientSessionOptions.ProtocolVersion set to the era.
	{peer: goSDK, direction: toServe, era: era26, scenario: "baseline"},
	{peer: goSDK, direction: toServe, era: era26, scenario: "errors.tool_error"},
	{peer: goSDK, direction: toServe, era: era26, scenario: "errors.jsonrpc_error (-32602)"},
	{peer: goSDK, direction: toServe, era: era26, scenario: "elicitation.approval (accept)"},
	{peer: goSDK, direction: toServe, era: era25, scenario: "baseline"},
	{peer: goSDK, direction: toServe, era: era25, scenario: "errors.tool_error"},
	{peer: goSDK, direction: toServe, era: era25, scenario: "errors.jsonrpc_error (-32602)"},
	{peer: goSDK, direction: toServe, era: era25, scenario: "elicitation.approval (accept)"},

	// mcpdiag's client against mcp-go's server (one endpoint, both eras).
	{peer: mcpGo, direction: fromDiag, era: era26, scenario: "success", tool: "echo", outcome: "TOOL_SUCCESS", text: "echo: hi"},
	{peer: mcpGo, direction: fromDiag, era: era26, scenario: "tool error (NewToolResultError)", tool: "fail", outcome: "TOOL_ERROR", text: "failed on purpose"},
	{peer: mcpGo, direction: fromDiag, era: era26, scenario: "handler returns a Go error", tool: "boom", outcome: "JSONRPC_ERROR", code: -32603, text: "boom"},
	// On 2026-07-28 an unknown tool is HTTP 400 with the -32602 error
	// (the spec's status mapping); a status outside 2xx is HTTP_ERROR
	// whatever the body says (docs/outcomes.md), the code kept.
	{peer: mcpGo, direction: fromDiag, era: era26, scenario: "unknown tool", tool: "no-such-tool", outcome: "HTTP_ERROR", code: -32602, status: 400},
	{peer: mcpGo, direction: fromDiag, era: era26, scenario: "form elicitation (MRTR)", tool: "confirm", outcome: "TOOL_SUCCESS", text: "confirmed: accept", rounds: 1},
	{peer: mcpGo, direction: fromDiag, era: era25, scenario: "success", tool: "echo", outcome: "TOOL_SUCCESS", text: "echo: hi"},
	{peer: mcpGo, direction: fromDiag, era: era25, scenario: "tool error (NewToolResultError)", tool: "fail", outcome: "TOOL_ERROR", text: "failed on purpose"},
	{peer: mcpGo, direction: fromDiag, era: era25, scenario: "handler returns a Go error", tool: "boom", outcome: "JSONRPC_ERROR", code: -32603, text: "boom"},
	{peer: mcpGo, direction: fromDiag, era: era25, scenario: "unknown tool", tool: "no-such-tool", outcome: "JSONRPC_ERROR", code: -32602, text: "not found"},
	{peer: mcpGo, direction: fromDiag, era: era25, scenario: "form elicitation (server request, legacy bridge)", tool: "confirm", outcome: "TOOL_SUCCESS", text: "confirmed: accept", rounds: 1},
	// mcpdiag's client against go-sdk's server: stateless for 2026-07-28,
	// stateful for 2025-11-25 (go-sdk speaks 2026-07-28 only stateless).
	{peer: goSDK, direction: fromDiag, era: era26, scenario: "success", tool: "echo", outcome: "TOOL_SUCCESS", text: "echo: hi"},
	{peer: goSDK, direction: fromDiag, era: era26, scenario: "tool error (SetError)", tool: "fail", outcome: "TOOL_ERROR", text: "failed on purpose"},
	{peer: goSDK, direction: fromDiag, era: era26, scenario: "handler returns a Go error (typed AddTool)", tool: "boom", outcome: "TOOL_ERROR", text: "boom"},
	{peer: goSDK, direction: fromDiag, era: era26, scenario: "unknown tool", tool: "no-such-tool", outcome: "HTTP_ERROR", code: -32602, status: 400},
	{peer: goSDK, direction: fromDiag, era: era26, scenario: "form elicitation (MRTR)", tool: "confirm", outcome: "TOOL_SUCCESS", text: "confirmed: accept", rounds: 1},
	{peer: goSDK, direction: fromDiag, era: era25, scenario: "success", tool: "echo", outcome: "TOOL_SUCCESS", text: "echo: hi"},
	{peer: goSDK, direction: fromDiag, era: era25, scenario: "tool error (SetError)", tool: "fail", outcome: "TOOL_ERROR", text: "failed on purpose"},
	{peer: goSDK, direction: fromDiag, era: era25, scenario: "handler returns a Go error (typed AddTool)", tool: "boom", outcome: "TOOL_ERROR", text: "boom"},
	{peer: goSDK, direction: fromDiag, era: era25, scenario: "unknown tool", tool: "no-such-tool", outcome: "JSONRPC_ERROR", code: -32602, text: "unknown tool"},
	{peer: goSDK, direction: fromDiag, era: era25, scenario: "form elicitation (server request, SDK shim)", tool: "confirm", outcome: "TOOL_SUCCESS", text: "confirmed: accept", rounds: 1},
}

// TestGoPeers runs goPeerTable: the Go SDKs' clients against `mcpdiag
// serve` through a recording `mcpdiag proxy`, and mcpdiag's client against
// the Go SDKs' servers on 127.0.0.1.
func TestGoPeers(t *testing.T) {
	t.Parallel()
	rows := make([]row, len(goPeerTable))
	for i, c := range goPeerTable {
		rows[i] = row{Section: 3, Order: i, Peer: c.peer, Direction: c.direction, Era: c.era, Scenario: c.scenario, Route: "direct"}
		if c.direction == toServe {
			rows[i].Route = "via mcpdiag proxy"
		}
	}
	results.expect(t, rows)
	byName := map[string]serveScenario{}
	for _, s := range serveScenarios {
		byName[s.name] = s
	}
	px := startProxy(t, "go-peers", serveBase(t)+"/mcp")
	servers := map[string]string{
		mcpGo + " " + era26: startHandler(t, mcpGoHandler()),
		mcpGo + " " + era25: "", // the same endpoint serves both eras
		goSDK + " " + era26: startHandler(t, goSDKHandler(true)),
		goSDK + " " + era25: startHandler(t, goSDKHandler(false)),
	}
	servers[mcpGo+" "+era25] = servers[mcpGo+" "+era26]

	type pending struct {
		i int
		r row
		s serveScenario
		v peerView
	}
	var mu sync.Mutex
	var toJudge []pending
	t.Run("table", func(t *testing.T) {
		for i, c := range goPeerTable {
			r := rows[i]
			name := strings.NewReplacer(" ", "_", "→", "to").Replace(c.peer + "/" + c.direction + "/" + c.era + "/" + c.scenario)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				if c.direction == toServe {
					s, ok := byName[c.scenario]
					if !ok {
						t.Fatalf("no serve scenario %q", c.scenario)
					}
					url := px.base + s.endpoint(c.peer, c.era)
					var v peerView
					if c.peer == mcpGo {
						v = mcpGoCall(url, c.era, s)
					} else {
						v = goSDKCall(url, c.era, s)
					}
					mu.Lock()
					toJudge = append(toJudge, pending{i, r, s, v})
					mu.Unlock()
					return
				}
				call := callOnce(t, servers[c.peer+" "+c.era], c.era, c.tool, `{"text":"hi"}`, client.MapInputs{
					"approval":           json.RawMessage(`{"action":"accept","content":{"ok":true}}`),
					"elicitation/create": json.RawMessage(`{"action":"accept","content":{"ok":true}}`),
				})
				r.Want = c.outcome
				if c.code != 0 {
					r.Want += fmt.Sprintf(" %d", c.code)
				}
				if c.status != 0 {
					r.Want += fmt.Sprintf(" (HTTP %d)", c.status)
				}
				r.Want += " on " + c.era
				if c.text != "" {
					r.Want += fmt.Sprintf(", text containing %q", c.text)
				}
				if c.rounds > 0 {
					r.Want += fmt.Sprintf(", %d input round(s)", c.rounds)
				}
				if call == nil {
					r.Got = "the call did not run"
					results.add(t, r)
					return
				}
				r.Got, r.Pass = judgeCall(c, call)
				results.add(t, r)
			})
		}
	})
	// The client rows are judged once the proxy has written every record.
	recs := px.records(t)
	for _, p := range toJudge {
		p.r.Want, p.r.Got, p.r.Pass = judge(p.s, p.r.Era, p.v, toolCalls(recs, p.s.endpoint(p.r.Peer, p.r.Era)))
		results.add(t, p.r)
	}
}

// judgeCall holds a call of mcpdiag's client against the row.
func judgeCall(c goPeerCase, call *client.Call) (string, bool) {
	got := string(call.Outcome)
	code, status := 0, http.StatusOK
	if call.Final != nil {
		if n, ok := call.Final.JSONRPC().ErrorCode(); ok {
			code = int(n)
			got += fmt.Sprintf(" %d", code)
		}
	}
	if call.Final != nil && call.Final.Status != 0 && call.Final.Status != http.StatusOK {
		status = call.Final.Status
		got += fmt.Sprintf(" (HTTP %d)", status)
	}
	got += " on " + call.Protocol
	text := resultText(call.Result)
	if text != "" {
		got += fmt.Sprintf(", %q", trimTo(text, 70))
	}
	if call.Rounds > 0 {
		got += fmt.Sprintf(", %d input round(s)", call.Rounds)
	}
	if w := callWarnings(call); len(w) > 0 {
		got += ", warnings " + strings.Join(w, ", ")
	}
	want := c.status
	if want == 0 {
		want = http.StatusOK
	}
	pass := string(call.Outcome) == c.outcome && code == c.code && status == want && call.Protocol == c.era &&
		strings.Contains(text, c.text) && call.Rounds == c.rounds
	return got, pass
}

func startHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("test server is not on loopback: %s", ts.URL)
	}
	return ts.URL + "/mcp"
}

// --- the Go SDKs as clients of `mcpdiag serve` -----------------------------

// mcpGoElicitor answers every elicitation with elicitAnswer.
type mcpGoElicitor struct{ asked int }

func (e *mcpGoElicitor) Elicit(context.Context, mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	e.asked++
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept, Content: elicitAnswer}}, nil
}

func mcpGoCall(url, era string, s serveScenario) (v peerView) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		return peerView{ErrClass: fmt.Sprintf("%T", err), ErrMessage: err.Error()}
	}
	el := &mcpGoElicitor{}
	var opts []mcpgoclient.ClientOption
	if era == era25 {
		opts = append(opts, mcpgoclient.WithProtocolVersion(era25))
	}
	if s.elicit {
		opts = append(opts, mcpgoclient.WithElicitationHandler(el))
	}
	c := mcpgoclient.NewClient(tr, opts...)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return peerView{ErrClass: fmt.Sprintf("%T", err), ErrMessage: err.Error()}
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "mcpdiag-interop-mcp-go", Version: "1.2.1"}
	if s.elicit {
		init.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{}
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		return peerView{ErrClass: fmt.Sprintf("%T", err), ErrMessage: err.Error()}
	}
	v.Connected, v.Protocol = true, c.ProtocolVersion()
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = s.tool, s.args
	res, err := c.CallTool(ctx, req)
	v.Elicitations = el.asked
	if err != nil {
		v.ErrClass, v.ErrMessage, v.ErrCode = fmt.Sprintf("%T", err), err.Error(), mcpGoCode(err)
		return v
	}
	v.Result, v.IsError = true, res.IsError
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	v.Text = strings.Join(parts, "\n")
	return v
}

// mcpGoCode recovers the JSON-RPC code from mcp-go's error sentinels (it
// keeps no number: ecosystem-notes §1.2); 0 when none matches.
func mcpGoCode(err error) int {
	for code, sentinel := range map[int]error{
		mcpgo.PARSE_ERROR: mcpgo.ErrParseError, mcpgo.INVALID_REQUEST: mcpgo.ErrInvalidRequest,
		mcpgo.METHOD_NOT_FOUND: mcpgo.ErrMethodNotFound, mcpgo.INVALID_PARAMS: mcpgo.ErrInvalidParams,
		mcpgo.INTERNAL_ERROR: mcpgo.ErrInternalError,
	} {
		if errors.Is(err, sentinel) {
			return code
		}
	}
	return 0
}

func goSDKCall(url, era string, s serveScenario) (v peerView) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	opts := &mcp.ClientOptions{}
	if s.elicit {
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			v.Elicitations++
			return &mcp.ElicitResult{Action: "accept", Content: elicitAnswer}, nil
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpdiag-interop-go-sdk", Version: "1.8.0"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		return peerView{ErrClass: fmt.Sprintf("%T", err), ErrMessage: err.Error()}
	}
	defer cs.Close()
	v.Connected = true
	if ir := cs.InitializeResult(); ir != nil {
		v.Protocol = ir.ProtocolVersion
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: s.args})
	if err != nil {
		v.ErrClass, v.ErrMessage = fmt.Sprintf("%T", err), err.Error()
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			v.ErrClass, v.ErrCode = "*jsonrpc.Error", int(we.Code)
		}
		return v
	}
	v.Result, v.IsError = true, res.IsError
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	v.Text = strings.Join(parts, "\n")
	return v
}

// --- the Go SDKs as servers for mcpdiag's client ----------------------------

// The peers' servers have the same tools:
//
//	echo     read-only, succeeds with "echo: <text>"
//	fail     reports a tool error the SDK's way
//	boom     its handler returns a Go error (go-sdk: typed AddTool)
//	confirm  asks for a form elicitation (MRTR; the SDK bridges it to a
//	         server request for 2025-11-25 clients)

func mcpGoHandler() http.Handler {
	s := mcpgoserver.NewMCPServer("interop-mcp-go", "1.2.1", mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithElicitation())
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithString("text")),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcpgo.NewTool("fail", mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithString("text")),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultError("the tool failed on purpose"), nil
		})
	s.AddTool(mcpgo.NewTool("boom", mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithString("text")),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return nil, errors.New("boom")
		})
	s.AddTool(mcpgo.NewTool("confirm", mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithString("text")),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if r := mcpgoserver.ElicitationResponse(req.Params.InputResponses, "approval"); r != nil {
				return mcpgo.NewToolResultText("confirmed: " + string(r.Action)), nil
			}
			return mcpgoserver.NewInputRequestBuilder("state-1").Elicit("approval", mcpgo.ElicitationParams{
				Message:         "Approve the change?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
			}).ToolResult(), nil
		})
	return mcpgoserver.NewStreamableHTTPServer(s)
}

func goSDKHandler(stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "interop-go-sdk", Version: "1.8.0"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := &mcp.CallToolResult{}
			r.SetError(errors.New("the tool failed on purpose"))
			return r, nil
		})
	type textIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "boom", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, textIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("boom")
		})
	s.AddTool(&mcp.Tool{Name: "confirm", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["approval"].(*mcp.ElicitResult); ok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "confirmed: " + r.Action}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"approval": &mcp.ElicitParams{
					Message:         "Approve the change?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
				}},
				RequestState: "state-1",
			}, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
}
