package classify

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestServerRequestAfterResponseNamed (truth16): a server request sent after
// the response on the same stream was counted only as an event after it:
// the record said "event 2 arrived after the response" and "requests": 0,
// while the recorder's request watch noted the request, so a client's
// answer to it was recorded as the answer to a request this exchange's
// record did not show. The warning now names it as a server request that
// is no part of the answer; requests still counts only those before the
// response (part of the exchange), and the verdict is unchanged.
func TestServerRequestAfterResponseNamed(t *testing.T) {
	const (
		resp  = `data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}` + "\n\n"
		req   = `data: {"jsonrpc":"2.0","id":"late-1","method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object","properties":{}}}}` + "\n\n"
		req2  = `data: {"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n\n"
		note  = `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n\n"
		named = `a server request ("elicitation/create", id "late-1"), which is no part of this answer; a client reading on may still answer it`
	)
	for _, c := range []struct {
		name, stream string
		after        int
		want         []string
	}{
		{"a request after the response", resp + req, 1, []string{"event 2 arrived after the response: " + named}},
		{"a notification, then a request", resp + note + req, 2, []string{"event 2 arrived after the response", "event 3, after the response, is " + named}},
		{"two requests: the first named", resp + req + req2, 2, []string{"event 2 arrived after the response: " + named}},
		{"a notification only", resp + note, 1, []string{"event 2 arrived after the response"}},
		{"a request of another event type is no request", resp + "event: other\n" + req, 1, []string{"event 2 arrived after the response"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var handed int
			cl := &Classifier{OnServerRequest: func([]byte) { handed++ }}
			r, err := cl.Classify(&Exchange{Method: "tools/call", ID: wire.IntID(1), ProtocolVersion: Protocol2026,
				Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: strings.NewReader(c.stream)})
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != ToolSuccess || r.SSE() == nil || r.SSE().TerminalEvent != 1 || r.SSE().Requests != 0 || r.SSE().AfterTerminal != c.after || handed != 0 {
				t.Errorf("%s, sse %+v, %d handed on; want TOOL_SUCCESS, the response in event 1, no request before it, %d after, none handed on", r.Outcome, r.SSE(), handed, c.after)
			}
			var got []string
			for _, w := range r.Warnings() {
				if w.Code == WarnMessageAfterTerminal {
					got = append(got, w.Message)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("message-after-terminal warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
