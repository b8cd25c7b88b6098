package classify_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestJudgeClientAnswer: the one judgment of a client's answer POST that
// call and the recorder share. An accepted answer (202, or a 2xx with no
// body) is judged as the answer; a refusal stays the server's; anything
// else keeps its verdict; res itself is never changed.
func TestJudgeClientAnswer(t *testing.T) {
	result := []byte(`{"jsonrpc":"2.0","id":"e1","result":{"action":"decline"}}`)
	errAns := []byte(`{"jsonrpc":"2.0","id":"e1","error":{"code":-32601,"message":"no"}}`)
	accepted := &classify.Result{Outcome: classify.NotificationAccepted, Status: 202, Reason: "the notification was accepted"}
	for _, tc := range []struct {
		name      string
		answer    []byte
		status    int
		bytes     int64
		refused   bool
		want      classify.Outcome
		answered  bool
		reasonHas string
	}{
		{"202 result", result, http.StatusAccepted, 0, false, classify.ResultSuccess, true, "the server accepted the client's answer (HTTP 202)"},
		{"202 error", errAns, http.StatusAccepted, 0, false, classify.JSONRPCError, true, "as an answer"},
		{"200 no body", result, http.StatusOK, 0, false, classify.ResultSuccess, true, "(HTTP 200)"},
		{"200 with a body", result, http.StatusOK, 12, false, classify.NotificationAccepted, false, "the client's response to a server request"},
		{"not read whole", nil, http.StatusAccepted, 0, false, classify.NotificationAccepted, false, "the client's response"},
		{"refused", result, http.StatusOK, 80, true, classify.NotificationAccepted, false, "the server refused the client's answer (HTTP 200)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := *accepted
			a := &classify.ClientAnswer{Method: "elicitation/create", ID: wire.StringID("e1"), Answer: tc.answer, Protocol: "2025-11-25", Status: tc.status, ResponseBytes: tc.bytes}
			got, answered := classify.JudgeClientAnswer(a, accepted, tc.refused)
			if got.Outcome != tc.want || answered != tc.answered || !strings.Contains(got.Reason, tc.reasonHas) {
				t.Errorf("got %s answered %v %q, want %s answered %v, a reason with %q", got.Outcome, answered, got.Reason, tc.want, tc.answered, tc.reasonHas)
			}
			if answered && (got.Method() != "elicitation/create" || got.JSONRPC() == nil || !got.JSONRPC().ID.Equal(wire.StringID("e1"))) {
				t.Errorf("judged under %q id %v, want elicitation/create \"e1\"", got.Method(), got.JSONRPC())
			}
			if got.ContentType() != accepted.ContentType() {
				t.Errorf("content type %q, want the response's %q", got.ContentType(), accepted.ContentType())
			}
			if accepted.Reason != before.Reason || accepted.Outcome != before.Outcome {
				t.Errorf("res changed: %+v", accepted)
			}
		})
	}
	if got, answered := classify.JudgeClientAnswer(&classify.ClientAnswer{Status: 202, Answer: result}, nil, false); got != nil || answered {
		t.Errorf("no verdict judged as %+v", got)
	}
}
