package classify_test

import (
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestErrorWithoutIDWords: an error response whose id is null (JSON-RPC 2.0
// §5: the answer to a request whose id could not be read) and one with no
// id member at all (which §5 does not allow) are told apart in the
// warning's words; before, both said "the error response has no id".
func TestErrorWithoutIDWords(t *testing.T) {
	for _, tc := range []struct {
		name, body, msg string
	}{
		{"null", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, "the error response's id is null: the server could not read the request id"},
		{"absent", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`, "the error response has no id member (JSON-RPC 2.0 §5 requires one, null when the request id could not be read)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := (&classify.Classifier{}).Classify(&classify.Exchange{Method: "tools/call", ID: wire.IntID(4), Status: http.StatusOK,
				Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(tc.body)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range res.Warnings() {
				if w.Code == classify.WarnErrorWithoutID {
					got = append(got, w.Message)
				}
			}
			if res.Outcome != classify.JSONRPCError || len(got) != 1 || got[0] != tc.msg {
				t.Errorf("%s, error-without-id warnings %q; want JSONRPC_ERROR and %q", res.Outcome, got, tc.msg)
			}
		})
	}
}
