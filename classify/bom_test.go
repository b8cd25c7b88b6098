package classify_test

import (
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestJSONBodyAfterABOM: a JSON body that starts with a UTF-8 byte order
// mark is MALFORMED_JSON (RFC 8259 §8.1: a networked JSON text must not
// start with one; Go's and Python's readers refuse it), and the reason says
// so: before, it said "the response body is not valid JSON" of a body whose
// JSON is valid, which sent a user looking for a syntax error that is not
// there (found by newuser8 feeding classify re-encoded corpus responses).
// A body that is not JSON after the BOM either keeps the plain reason.
func TestJSONBodyAfterABOM(t *testing.T) {
	const bomReason = "the response body is JSON after a UTF-8 byte order mark (EF BB BF), which JSON sent over a network must not start with (RFC 8259 §8.1): " +
		"a reader that drops it (fetch's Response.json()) takes the body, one that does not (Go's encoding/json, Python's json.loads) refuses it"
	for _, tt := range []struct {
		name, body string
		reason     string
	}{
		{"BOM then a result", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`, bomReason},
		{"BOM then an error", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, bomReason},
		{"BOM then not JSON", "\xef\xbb\xbf" + `{"jsonrpc":"2.0",`, "the response body is not valid JSON"},
		{"BOM alone", "\xef\xbb\xbf", "the response body is not valid JSON"},
		{"two BOMs", "\xef\xbb\xbf\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"result":{}}`, "the response body is not valid JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := classify.Classify(&classify.Exchange{
				Method: "tools/call", ID: wire.IntID(1), ProtocolVersion: classify.Protocol2026, Status: http.StatusOK,
				Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(tt.body),
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != classify.MalformedJSON || r.Layer() != classify.LayerProtocol || r.Reason != tt.reason {
				t.Errorf("%s, %s, %q\nwant MALFORMED_JSON, protocol, %q", r.Outcome, r.Layer(), r.Reason, tt.reason)
			}
		})
	}
}
