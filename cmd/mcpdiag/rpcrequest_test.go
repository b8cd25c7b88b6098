package main

import (
	"encoding/json"
	"io"
	"net/http"
)

// rpcRequest is what the tests' small MCP servers read of a JSON-RPC
// request: its id as sent (nil when absent), its method and params.name
// (the tool of a tools/call).
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// parseRPCRequest decodes one request; ok is false when b is not a JSON
// object of that shape (the request is then what was read of it).
func parseRPCRequest(b []byte) (m rpcRequest, ok bool) {
	return m, json.Unmarshal(b, &m) == nil
}

// readRPCRequest reads r's body and decodes it with parseRPCRequest.
func readRPCRequest(r *http.Request) (rpcRequest, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return rpcRequest{}, false
	}
	return parseRPCRequest(body)
}
