package judge

import (
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestClientAnswerNotAFailure: the record of a client's answer to a server
// request POSTed over HTTP (clientAnswer; method the server request's, id
// the server's; outcome the answer's) is no request of the client's and,
// accepted by the server, no failure of the server's, whatever the client
// answered: the verdicts read from records stay what they were when such a
// record was NOTIFICATION_ACCEPTED with no method. A refused answer is the
// server's failure still, by its status or, in a 2xx, by answerRefused
// (never by the reason's words); over stdio, the record of a server request the
// client answered with an error keeps failing as before.
func TestClientAnswerNotAFailure(t *testing.T) {
	t.Parallel()
	code := int64(-32601)
	for _, c := range []struct {
		name          string
		url           string
		status        int
		outcome       classify.Outcome
		failed, isReq bool
		method        string
		refused       bool // answerRefused
	}{
		{"HTTP result", "http://127.0.0.1/mcp", http.StatusAccepted, classify.ResultSuccess, false, false, "", false},
		{"HTTP error", "http://127.0.0.1/mcp", http.StatusAccepted, classify.JSONRPCError, false, false, "", false},
		{"HTTP refused", "http://127.0.0.1/mcp", http.StatusBadRequest, classify.HTTPError, true, false, "", false},
		// The same outcome and status as the client's error answer
		// accepted with a 200 body: only the typed fact tells them apart.
		{"HTTP refused in a 200", "http://127.0.0.1/mcp", http.StatusOK, classify.JSONRPCError, true, false, "", true},
		{"HTTP error, 200 with no body", "http://127.0.0.1/mcp", http.StatusOK, classify.JSONRPCError, false, false, "", false},
		{"stdio error", "stdio:server", 0, classify.JSONRPCError, true, false, "roots/list", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &record.Record{
				Kind: record.KindExchange, HTTPMethod: http.MethodPost, URL: c.url, Method: "roots/list",
				Status: c.status, Outcome: c.outcome, ClientAnswer: true, AnswerRefused: c.refused,
				JSONRPC: record.JSONRPC{ID: wire.IDFromRaw([]byte(`"srv-1"`)), ErrorCode: &code},
			}
			if c.url == "stdio:server" {
				r.HTTPMethod = ""
			}
			x := FromRecord(r, "")
			if x.Failed != c.failed || x.Method != c.method || x.IsRequest() != c.isReq && c.url != "stdio:server" {
				t.Errorf("failed %v (%s), method %q, request %v; want failed %v, method %q, request %v", x.Failed, x.What, x.Method, x.IsRequest(), c.failed, c.method, c.isReq)
			}
		})
	}
}
