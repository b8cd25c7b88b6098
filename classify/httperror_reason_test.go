package classify

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestHTTPErrorReasonNamesTheJSONRPCError: an HTTP error whose body is a
// JSON-RPC error says the code, its name when it has one, and the message,
// in the same words as a JSON-RPC error under 200 (no stray space when the
// code has no name).
func TestHTTPErrorReasonNamesTheJSONRPCError(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   string
	}{
		{500, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}`,
			"HTTP 500 Internal Server Error, JSON-RPC error -32000: boom"},
		{400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad args"}}`,
			"HTTP 400 Bad Request, JSON-RPC error -32602 InvalidParams: bad args"},
		{404, `{"jsonrpc":"2.0","id":null,"error":{"code":7,"message":""}}`,
			"HTTP 404 Not Found, JSON-RPC error 7: "},
	}
	for _, tt := range tests {
		ex := &Exchange{
			Method: "tools/call", ID: wire.IntID(1), Status: tt.status,
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   strings.NewReader(tt.body),
		}
		r, err := Classify(ex)
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != HTTPError || r.Reason != tt.want {
			t.Errorf("HTTP %d: %s %q, want HTTP_ERROR %q", tt.status, r.Outcome, r.Reason, tt.want)
		}
	}
}
