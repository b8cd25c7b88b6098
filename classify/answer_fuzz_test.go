package classify_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// judgeAnswerPOST judges the POST of the client's answer answer (its id
// the answer's, method the server request's), to which the server replied
// status with body ack (ackCT its content type), as the recorder does
// (classifyAnswerAck, then classify.JudgeClientAnswer). res is the
// response's verdict before the judgment.
func judgeAnswerPOST(method string, answer []byte, id wire.ID, status int, ack []byte, ackCT string) (res, out *classify.Result, refused, answered bool) {
	var cl classify.Classifier
	cx := &classify.Exchange{ID: id, Notification: true, ProtocolVersion: classify.Protocol2025, Status: status,
		Header: http.Header{}, BodyBytes: ack}
	if ackCT != "" {
		cx.Header.Set("Content-Type", ackCT)
	}
	if status >= 200 && status <= 299 && strings.HasPrefix(ackCT, "application/json") && len(ack) <= classify.MaxAnswerAck {
		res, refused = cl.AnswerRefusal(cx, id, ack)
	}
	if !refused {
		res, _ = cl.Classify(cx)
	}
	a := &classify.ClientAnswer{Method: method, ID: id, Answer: answer, Protocol: classify.Protocol2025, Status: status, ResponseBytes: int64(len(ack))}
	out, answered = classify.JudgeClientAnswer(a, res, refused)
	return res, out, refused, answered
}

// FuzzJudgeClientAnswer: the one judgment of a client's answer to a server
// request is total (never panics, always a verdict), leaves the response's
// verdict as it was, echoes what it was given (an accepted answer's
// verdict carries the answer's id, with its JSON type, and the server
// request's method), judges an answer accepted only when the server
// accepted it (202, or a 2xx with no body), and calls a refusal exactly
// what the record then calls answerRefused: the server's JSON-RPC error in
// a 2xx's body.
func FuzzJudgeClientAnswer(f *testing.F) {
	f.Add("elicitation/create", `"srv-1"`, `"result":{"action":"accept"}`, uint16(202), []byte(nil), "")
	f.Add("roots/list", `7`, `"result":{"roots":[]}`, uint16(200), []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unknown request id"}}`), "application/json")
	f.Add("", `1.0`, `"error":{"code":-32601,"message":"no"}`, uint16(200), []byte(nil), "")
	f.Add("sampling/createMessage", `"\u0031"`, `"result":{}`, uint16(200), []byte(`{"ok":true}`), "application/json")
	f.Add("roots/list", `-0`, `"result":{"roots":[]}`, uint16(400), []byte(`{"jsonrpc":"2.0","id":-0,"error":{"code":-32602,"message":"bad"}}`), "application/json")
	f.Add("roots/list", `"a"`, `"result":{"roots":[]}`, uint16(200), []byte("event: message\ndata: {}\n\n"), "text/event-stream")
	f.Fuzz(func(t *testing.T, method, idText, tail string, st uint16, ack []byte, ackCT string) {
		answer := []byte(`{"jsonrpc":"2.0","id":` + idText + `,` + tail + `}`)
		m := wire.ParseMessage(answer)
		if m.Kind != wire.MessageResponse || !m.ID.IsString() && !m.ID.IsNumber() {
			return // the recorder judges only a JSON-RPC response POSTed as an answer
		}
		status := 100 + int(st)%500
		res, out, refused, answered := judgeAnswerPOST(method, answer, m.ID, status, ack, ackCT)
		if res == nil || out == nil {
			t.Fatalf("no verdict: res %v, out %v", res, out)
		}
		before := *res
		res2, out2, refused2, answered2 := judgeAnswerPOST(method, answer, m.ID, status, ack, ackCT)
		if res2.Outcome != res.Outcome || out2.Outcome != out.Outcome || out2.Reason != out.Reason || refused2 != refused || answered2 != answered {
			t.Fatalf("two judgments differ: %s %q, %s %q", out.Outcome, out.Reason, out2.Outcome, out2.Reason)
		}
		if res.Outcome != before.Outcome || res.Reason != before.Reason || res.Method() != before.Method() {
			t.Fatalf("the response's verdict was changed: %s %q", res.Outcome, res.Reason)
		}
		accepted := status == http.StatusAccepted || status >= 200 && status <= 299 && len(ack) == 0
		switch {
		case refused:
			if answered || out.Outcome != classify.JSONRPCError || !strings.HasPrefix(out.Reason, "the server refused the client's answer") {
				t.Fatalf("a refusal judged %s (answered %v): %q", out.Outcome, answered, out.Reason)
			}
		case answered:
			if !accepted {
				t.Fatalf("judged as the answer after HTTP %d with %d bytes", status, len(ack))
			}
			wantMethod := method
			if wantMethod == "" {
				wantMethod = classify.UnseenServerRequest
			}
			if out.Method() != wantMethod {
				t.Fatalf("method %q, want %q", out.Method(), wantMethod)
			}
			if out.JSONRPC() != nil && !out.JSONRPC().ID.IsZero() && !bytes.Equal(out.JSONRPC().ID.Raw(), m.ID.Raw()) {
				t.Fatalf("the verdict's id %s, the answer's %s", out.JSONRPC().ID.Raw(), m.ID.Raw())
			}
			if !strings.HasPrefix(out.Reason, "the server accepted the client's answer") {
				t.Fatalf("an accepted answer's reason %q", out.Reason)
			}
			_, isErr := wire.Field(answer, "error")
			// (An error object that is not well formed is the answer's
			// INVALID_ENVELOPE.)
			if isErr && out.Outcome != classify.JSONRPCError && out.Outcome != classify.InvalidEnvelope || !isErr && out.Outcome == classify.JSONRPCError {
				t.Fatalf("the answer (error member %v) judged %s", isErr, out.Outcome)
			}
		default:
			if out.Outcome != res.Outcome || out.Method() != res.Method() {
				t.Fatalf("neither refused nor answered, but the verdict is %s %q, not the response's %s %q", out.Outcome, out.Method(), res.Outcome, res.Method())
			}
		}
		// What the record says, through its line: answerRefused exactly
		// when the judge called the answer refused, with the server's
		// error; the answer's id with its JSON type, the method as given.
		rec := &record.Record{Kind: record.KindExchange, ClientAnswer: true}
		rec.SetRequest(answer)
		rec.SetResult(out)
		rec.Method, rec.AnswerRefused = method, refused
		line, err := record.Marshal(rec)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := record.Decode(line)
		if err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		judgedRefused := strings.HasPrefix(out.Reason, "the server refused the client's answer")
		if back.AnswerRefused != judgedRefused || back.AnswerRefused && back.Outcome != classify.JSONRPCError {
			t.Fatalf("the record says answerRefused %v (%s), the judge %v: %q", back.AnswerRefused, back.Outcome, judgedRefused, out.Reason)
		}
		if !utf8.ValidString(method) || !utf8.Valid(m.ID.Raw()) {
			return // recorded with U+FFFD, and warned (id-not-utf8)
		}
		if back.Method != method || !back.JSONRPC.ID.Equal(m.ID) || back.JSONRPC.ID.IsString() != m.ID.IsString() {
			t.Fatalf("the record's method %q id %s, given %q %s", back.Method, back.JSONRPC.ID.Raw(), method, m.ID.Raw())
		}
	})
}
