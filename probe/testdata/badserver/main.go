// Command badserver is an MCP server (Streamable HTTP, 2026-07-28 only,
// plain net/http) that makes one failure-reporting mistake on purpose, so
// that each probe rule has a server it fails on:
//
//	badserver -listen 127.0.0.1:0 -mode MODE
//
// It prints "listening on http://ADDR/mcp" once it accepts connections.
// Modes (one mistake each; "healthy" makes none):
//
//	healthy           validates arguments (isError true), unknown tool -32602, ids echoed, 202 to notifications,
//	                  400 -32020 without MCP-Protocol-Version, JSON whatever the Accept
//	dressed           a bad argument gets a success whose text is a Python traceback (isError missing)
//	accepts           a bad argument gets a plain success ("ok"): not validated at all
//	unknown-as-tool   an unknown tool gets a tool result with isError true
//	malformed-ok      a tools/call without params.name, or with arguments not an object, gets a success
//	id-type           a number id of more than 6 digits comes back as a string (1000007 as "1000007")
//	sse-id-type       id-type, every answer an event stream (one event)
//	cursor-loop       every tools/list page names the same nextCursor (a list that never ends)
//	error-id-type     a JSON-RPC error to a tools/call comes in HTTP 400 with the request's number id as a string
//	notification-200  a notification gets 200 with a JSON body
//	any-origin        a request with a foreign Origin is served (no DNS-rebinding check)
//	any-version       a request with an unknown MCP-Protocol-Version is served
//	no-version-ok     a request without MCP-Protocol-Version is served (as 2026-07-28)
//	accept-500        a POST whose Accept lacks text/event-stream gets HTTP 500
//	no-result-type    a tool result carries no resultType (2026-07-28 requires it)
//	crash             the process exits on the first bad argument, without an answer
//	hang              a bad argument gets no answer until the client gives up
//	bad-shape         a bad argument gets a result whose content is not an array
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

var mode string

const tools = `{"tools":[{"name":"lookup","description":"Looks a word up. Read-only.",` +
	`"inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":5},"n":{"type":"integer","minimum":1,"maximum":3},` +
	`"lang":{"type":"string","enum":["en","fr"]}},"required":["q"],"additionalProperties":false},` +
	`"annotations":{"readOnlyHint":true}},` +
	`{"name":"drop_table","description":"Destructive.","inputSchema":{"type":"object","properties":{"t":{"type":"string"}},"required":["t"]},` +
	`"annotations":{"destructiveHint":true}}],"resultType":"complete"}`

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address")
	flag.StringVar(&mode, "mode", "healthy", "the mistake to make")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "badserver:", err)
		os.Exit(2)
	}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	http.HandleFunc("/mcp", handle)
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, "badserver:", err)
		os.Exit(1)
	}
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && mode != "any-origin" && !strings.HasPrefix(o, "http://127.0.0.1") && !strings.HasPrefix(o, "http://localhost") {
		http.Error(w, "Origin not allowed", http.StatusForbidden)
		return
	}
	if a := r.Header.Get("Accept"); mode == "accept-500" && !strings.Contains(a, "text/event-stream") {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if r.Header.Get("Mcp-Protocol-Version") == "" && mode != "no-version-ok" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"MCP-Protocol-Version header is required"}}`)
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && mode != "any-version" && v != "2026-07-28" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28"],"requested":`+strconv.Quote(v)+`}}}`)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req request
	if json.Unmarshal(body, &req) != nil {
		reply(w, json.RawMessage("null"), "", `{"code":-32700,"message":"parse error"}`)
		return
	}
	if len(req.ID) == 0 {
		if mode == "notification-200" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","result":{}}`)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := req.ID
	if (mode == "id-type" || mode == "sse-id-type") && id[0] != '"' && len(id) > 6 {
		id = json.RawMessage(strconv.Quote(string(id)))
	}
	switch req.Method {
	case "tools/list":
		if mode == "cursor-loop" {
			reply(w, id, strings.Replace(tools, `"resultType"`, `"nextCursor":"again","resultType"`, 1), "")
			return
		}
		reply(w, id, tools, "")
	case "tools/call":
		call(w, r, id, &req)
	default:
		reply(w, id, "", `{"code":-32601,"message":"method not found"}`)
	}
}

func call(w http.ResponseWriter, r *http.Request, id json.RawMessage, req *request) {
	if req.Params.Name == nil {
		if mode == "malformed-ok" {
			reply(w, id, text("done", false), "")
			return
		}
		reply(w, id, "", `{"code":-32602,"message":"params.name is required"}`)
		return
	}
	switch *req.Params.Name {
	case "lookup":
	case "drop_table":
		// The destructive tool: the probe must never call it.
		fmt.Fprintln(os.Stderr, "badserver: drop_table RAN")
		reply(w, id, text("dropped", false), "")
		return
	default:
		if mode == "unknown-as-tool" {
			reply(w, id, text("Unknown tool: "+*req.Params.Name, true), "")
			return
		}
		reply(w, id, "", `{"code":-32602,"message":"Unknown tool: `+*req.Params.Name+`"}`)
		return
	}
	if a := strings.TrimSpace(string(req.Params.Arguments)); a != "" && a[0] != '{' {
		if mode == "malformed-ok" {
			reply(w, id, text("found it", false), "")
			return
		}
		reply(w, id, "", `{"code":-32602,"message":"arguments must be an object"}`)
		return
	}
	problem := validate(req.Params.Arguments)
	if problem == "" {
		reply(w, id, text("found it", false), "")
		return
	}
	switch mode {
	case "dressed":
		reply(w, id, text("Traceback (most recent call last):\n  File \"lookup.py\", line 3, in lookup\nValueError: "+problem, false), "")
	case "accepts":
		reply(w, id, text("ok", false), "")
	case "crash":
		fmt.Fprintln(os.Stderr, "badserver: crashing on", problem)
		os.Exit(3)
	case "hang":
		<-r.Context().Done()
	case "bad-shape":
		reply(w, id, `{"content":"`+problem+`","resultType":"complete"}`, "")
	default:
		reply(w, id, text("invalid arguments: "+problem, true), "")
	}
}

// validate checks lookup's arguments against its schema by hand.
func validate(raw json.RawMessage) string {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil || args == nil {
		return "arguments must be an object"
	}
	for k := range args {
		if k != "q" && k != "n" && k != "lang" {
			return "unexpected property " + k
		}
	}
	var q *string
	if v, ok := args["q"]; !ok {
		return "q is required"
	} else if json.Unmarshal(v, &q) != nil || q == nil {
		return "q must be a string"
	} else if len([]rune(*q)) > 5 {
		return "q is longer than 5"
	}
	if v, ok := args["n"]; ok {
		var n *int
		if json.Unmarshal(v, &n) != nil || n == nil {
			return "n must be an integer"
		} else if *n < 1 || *n > 3 {
			return "n out of range"
		}
	}
	if v, ok := args["lang"]; ok {
		var l *string
		if json.Unmarshal(v, &l) != nil || l == nil || *l != "en" && *l != "fr" {
			return "lang must be en or fr"
		}
	}
	return ""
}

func text(s string, isError bool) string {
	b, _ := json.Marshal(s)
	r := `{"content":[{"type":"text","text":` + string(b) + `}]`
	if mode != "no-result-type" {
		r += `,"resultType":"complete"`
	}
	if isError {
		r += `,"isError":true`
	}
	return r + "}"
}

func reply(w http.ResponseWriter, id json.RawMessage, result, rpcErr string) {
	w.Header().Set("Content-Type", "application/json")
	if rpcErr != "" && mode == "error-id-type" {
		// A 2026-07-28 server may answer an error in a 4xx; its id must
		// still be the request's (JSON-RPC 2.0 §5).
		w.WriteHeader(http.StatusBadRequest)
		if id[0] != '"' && string(id) != "null" {
			id = json.RawMessage(strconv.Quote(string(id)))
		}
	}
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if rpcErr != "" {
		b.WriteString(`,"error":` + rpcErr + "}")
	} else {
		b.WriteString(`,"result":` + result + "}")
	}
	if mode == "sse-id-type" {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: "+b.String()+"\n\n")
		return
	}
	io.WriteString(w, b.String())
}
