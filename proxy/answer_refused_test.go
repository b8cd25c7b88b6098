package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// refusalFacts are what the record of a client's answer says of the
// server's acknowledgement.
type refusalFacts struct {
	answerFacts
	Method        string
	AnswerRefused bool
}

// TestClientAnswerRefusedIn200: a server that answers the client's answer
// with HTTP 200 and a JSON-RPC error in the body refused it: the record
// says so by a typed fact (answerRefused), with the server's error code,
// under the server request's method and the answer's id with its JSON
// type, and it is no acceptance (RESULT_SUCCESS) nor the client's error
// answer (a JSONRPC_ERROR without answerRefused). Before, it was
// NOTIFICATION_ACCEPTED "accepted with HTTP 200" (review13, then the
// reviewer of answers13). The same answer accepted 202 with no body, the
// client's own JSON-RPC error accepted, and a 200 whose body is no
// JSON-RPC error are the controls.
func TestClientAnswerRefusedIn200(t *testing.T) {
	t.Parallel()
	result := `{"jsonrpc":"2.0","id":"srv-9","result":{"roots":[]}}`
	clientErr := `{"jsonrpc":"2.0","id":"srv-9","error":{"code":-32601,"message":"no roots"}}`
	for _, c := range []struct {
		name, answer string
		status       int
		ack          string // the body of the server's 200 (none with 202)
		want         refusalFacts
	}{
		{"refused, id null", result, http.StatusOK, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unknown request id"}}`,
			refusalFacts{answerFacts{"JSONRPC_ERROR", "protocol", `"srv-9"`, "-32600", true}, "roots/list", true}},
		{"refused, id echoed", result, http.StatusOK, `{"jsonrpc":"2.0","id":"srv-9","error":{"code":-32602,"message":"bad result"}}`,
			refusalFacts{answerFacts{"JSONRPC_ERROR", "protocol", `"srv-9"`, "-32602", true}, "roots/list", true}},
		{"client's error, refused", clientErr, http.StatusOK, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unknown request id"}}`,
			refusalFacts{answerFacts{"JSONRPC_ERROR", "protocol", `"srv-9"`, "-32600", true}, "roots/list", true}},
		{"accepted", result, http.StatusAccepted, "",
			refusalFacts{answerFacts{"RESULT_SUCCESS", "application", `"srv-9"`, "", true}, "roots/list", false}},
		{"client's error, accepted", clientErr, http.StatusAccepted, "",
			refusalFacts{answerFacts{"JSONRPC_ERROR", "protocol", `"srv-9"`, "-32601", true}, "roots/list", false}},
		{"200, no error in the body", result, http.StatusOK, `{"ok":true}`,
			refusalFacts{answerFacts{"NOTIFICATION_ACCEPTED", "transport", `"srv-9"`, "", true}, "roots/list", false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if strings.Contains(string(b), `"method":"tools/call"`) {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-9\",\"method\":\"roots/list\"}\n\n")
					io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n")
					return
				}
				if c.ack == "" {
					w.WriteHeader(c.status)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				io.WriteString(w, c.ack)
			}))
			u, _, sink, stop := startProxy(t, up+"/mcp", proxy.Options{})
			hdr := map[string]string{"Mcp-Session-Id": "s-1", "MCP-Protocol-Version": "2025-11-25"}
			if st, _, body, err := post(t, http.DefaultClient, u, scriptedCall("2", "ask-roots"), hdr); err != nil || st != http.StatusOK || !strings.Contains(string(body), "roots/list") {
				t.Fatalf("tools/call: %d %q %v", st, body, err)
			}
			if st, _, body, err := post(t, http.DefaultClient, u, c.answer, hdr); err != nil || st != c.status || string(body) != c.ack {
				t.Fatalf("answer: %d %q %v, want %d %q", st, body, err, c.status, c.ack)
			}
			stop()
			var got []refusalFacts
			for _, r := range sink.records(t) {
				if r.ClientAnswer {
					t.Logf("record: status %d outcome %s reason %s", r.Status, r.Outcome, r.Reason)
					got = append(got, refusalFacts{factsOf(r), r.Method, r.AnswerRefused})
				}
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("records of the answer: %+v, want one: %+v", got, c.want)
			}
		})
	}
}

// Keep the facts' printing readable in failures.
func (f refusalFacts) String() string {
	return fmt.Sprintf("{%s %s id %s code %q clientAnswer %v method %q answerRefused %v}", f.Outcome, f.Layer, f.ID, f.ErrorCode, f.ClientAnswer, f.Method, f.AnswerRefused)
}
