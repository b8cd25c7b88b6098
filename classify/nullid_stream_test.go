package classify

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestNullIDRequestStreamAsJSON: the answer to a request of id null is
// judged alike in a JSON body and in an event stream: a result under id
// null (or none) is INVALID_ENVELOPE because it cannot be paired, not "a
// response for id null, not null", and an error is JSONRPC_ERROR.
func TestNullIDRequestStreamAsJSON(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":null,"result":{"content":[{"type":"text","text":"ok"}]}}`,
		`{"jsonrpc":"2.0","id":null,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`,
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"ok"}]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`,
	} {
		var got [2]*Result
		for i, ct := range []string{"application/json", "text/event-stream"} {
			body := msg
			if i == 1 {
				body = "data: " + msg + "\n\n"
			}
			r, err := Classify(&Exchange{Method: "tools/call", ID: wire.IDFromRaw([]byte("null")), Notification: true,
				Status: 200, Header: http.Header{"Content-Type": {ct}}, Body: strings.NewReader(body)})
			if err != nil {
				t.Fatalf("%s %s: %v", ct, msg, err)
			}
			got[i] = r
		}
		j, s := got[0], got[1]
		if j.Outcome != s.Outcome || j.Reason != s.Reason || s.HasWarning(WarnResponseForOtherID) || !s.HasWarning(WarnRequestIDNull) {
			t.Errorf("%s:\njson: %s %q %v\nsse:  %s %q %v", msg, j.Outcome, j.Reason, j.Warnings(), s.Outcome, s.Reason, s.Warnings())
		}
	}
}
