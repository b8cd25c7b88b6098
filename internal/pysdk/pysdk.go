// Package pysdk replays, byte for byte, what the Python MCP SDK v1's
// Streamable HTTP server sends, for tests of how mcpdiag reads a peer it did
// not write. PyPI is not reachable where these tests run, so the bytes are
// written out from the SDK's code paths instead of recorded from it.
package pysdk

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Server replays, byte for byte, what the Python MCP SDK v1's
// Streamable HTTP server (StreamableHTTPSessionManager, stateful, the
// default SSE responses, FastMCP tools) sends, on a 127.0.0.1 socket. PyPI
// is not reachable here, so the bytes are written out from the SDK's code
// paths (mcp/server/streamable_http.py, lowlevel/server.py):
//
//   - a POST without Mcp-Session-Id that is not initialize: the manager makes
//     a new transport, whose header check answers 400, application/json,
//     {"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}
//     with that new transport's mcp-session-id header;
//   - initialize: 200 text/event-stream, "event: message\r\ndata: …\r\n\r\n",
//     protocolVersion 2025-11-25, mcp-session-id;
//   - tools/call of a tool FastMCP does not have: 200, the result
//     {"content":[{"type":"text","text":"Unknown tool: X"}],"isError":true}
//     (ToolError caught by the low-level server), not a JSON-RPC error.
//
// json selects json_response=True (application/json bodies).
type Server struct {
	// URL is the endpoint, http://127.0.0.1:PORT/mcp.
	URL  string
	json bool

	mu       sync.Mutex
	sessions int
	posts    []string // method of each POST, as received
}

// Start serves on a 127.0.0.1 port until the test ends. Its tools, as
// FastMCP lists them: get_forecast (succeeds) and divide (its function
// raises: isError with FastMCP's "Error executing tool" wording).
func Start(tb testing.TB, jsonResponse bool) *Server {
	p := &Server{json: jsonResponse}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(srv.Close)
	p.URL = srv.URL + "/mcp"
	return p
}

func (p *Server) newSession() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions++
	return fmt.Sprintf("%032x", p.sessions)
}

func (p *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusMethodNotAllowed)
		io.WriteString(w, `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Method Not Allowed"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	p.mu.Lock()
	p.posts = append(p.posts, msg.Method)
	p.mu.Unlock()
	session := r.Header.Get("Mcp-Session-Id")
	if session == "" {
		if msg.Method != "initialize" {
			w.Header().Set("content-type", "application/json")
			w.Header().Set("mcp-session-id", p.newSession())
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`)
			return
		}
		session = p.newSession()
	}
	if len(msg.ID) == 0 {
		w.Header().Set("mcp-session-id", session)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch msg.Method {
	case "initialize":
		result = `{"protocolVersion":"2025-11-25","capabilities":{"experimental":{},"prompts":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false},"tools":{"listChanged":false}},"serverInfo":{"name":"weather","version":"1.26.0"}}`
	case "tools/list":
		result = `{"tools":[{"name":"get_forecast","description":"Get weather forecast for a location.","inputSchema":{"properties":{"latitude":{"title":"Latitude","type":"number"},"longitude":{"title":"Longitude","type":"number"}},"required":["latitude","longitude"],"title":"get_forecastArguments","type":"object"}},` +
			`{"name":"divide","description":"","inputSchema":{"properties":{"a":{"title":"A","type":"integer"},"b":{"title":"B","type":"integer"}},"required":["a","b"],"title":"divideArguments","type":"object"}}]}`
	case "tools/call":
		switch msg.Params.Name {
		case "get_forecast":
			result = `{"content":[{"type":"text","text":"Sunny, 21°C"}],"isError":false}`
		case "divide":
			// A listed tool whose function raised: FastMCP's own wording.
			result = `{"content":[{"type":"text","text":"Error executing tool divide: division by zero"}],"isError":true}`
		default:
			result = `{"content":[{"type":"text","text":"Unknown tool: ` + msg.Params.Name + `"}],"isError":true}`
		}
	default:
		result = `{}`
	}
	line := `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":` + result + `}`
	w.Header().Set("mcp-session-id", session)
	if p.json {
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, line)
		return
	}
	w.Header().Set("cache-control", "no-cache, no-transform")
	w.Header().Set("connection", "keep-alive")
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("x-accel-buffering", "no")
	io.WriteString(w, "event: message\r\ndata: "+line+"\r\n\r\n")
}

// Methods lists the method of each POST received, comma-separated.
func (p *Server) Methods() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.posts, ",")
}
