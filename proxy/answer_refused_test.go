package proxy_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestClientAnswerRefusedIn200: a server that answers the client's answer
// with HTTP 200 and a JSON-RPC error (it refused it) is not recorded as
// having accepted it: only a 202, or a 2xx with no body, is (review13;
// the refusal itself is not yet read from the 200's body: the record says
// NOTIFICATION_ACCEPTED as before the answer was judged).
func TestClientAnswerRefusedIn200(t *testing.T) {
	t.Parallel()
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unknown request id"}}`)
	}))
	u, _, sink, stop := startProxy(t, up+"/mcp", proxy.Options{})
	hdr := map[string]string{"Mcp-Session-Id": "s-1", "MCP-Protocol-Version": "2025-11-25"}
	if st, _, _, err := post(t, http.DefaultClient, u, `{"jsonrpc":"2.0","id":"srv-9","result":{"roots":[]}}`, hdr); err != nil || st != http.StatusOK {
		t.Fatalf("answer: %d %v", st, err)
	}
	stop()
	recs := sink.records(t)
	for _, r := range recs {
		t.Logf("record: clientAnswer %v status %d outcome %s reason %s", r.ClientAnswer, r.Status, r.Outcome, r.Reason)
		if r.Outcome == "RESULT_SUCCESS" {
			t.Errorf("the server's refusal (200, JSON-RPC error) recorded as %s", r.Outcome)
		}
	}
}
