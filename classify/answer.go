package classify

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpdiag/mcpdiag/wire"
)

// AnswerAckMethod is the method a server's refusal of a client's answer to
// a server request is judged under (the client's message has none of its
// own).
const AnswerAckMethod = "(the client's answer)"

// UnseenServerRequest is the method the answer to a server request whose
// method is not known is judged under (the record's method stays empty).
const UnseenServerRequest = "(server request)"

// MaxAnswerAck bounds the body of a server's 2xx answer to a client's
// answer that is read for a refusal (a JSON-RPC error is a few hundred
// bytes).
const MaxAnswerAck = 64 << 10

// AnswerRefusal reads body, the whole 2xx JSON body a server answered a
// client's answer to a server request with (cx is that exchange, id the
// answer's id), for the server's refusal: a JSON-RPC error (an unknown id,
// say), judged as the answer to the client's message would be. ok is false
// when body is no refusal.
func (c *Classifier) AnswerRefusal(cx *Exchange, id wire.ID, body []byte) (res *Result, ok bool) {
	ax := *cx
	ax.Method, ax.ID, ax.Notification, ax.Body, ax.BodyBytes = AnswerAckMethod, id, false, nil, body
	if res, err := c.Classify(&ax); err == nil && res.Outcome == JSONRPCError {
		return res, true
	}
	return nil, false
}

// ClientAnswer is what is known of the POST of a client's answer to a
// server request (elicitation/create, sampling/createMessage, roots/list)
// once its response was classified: the one judgment of it that mcpdiag
// call (of its own answers) and the recorder (of the answers it passes on)
// share, so that connecting directly or through mcpdiag proxy gives one
// verdict.
type ClientAnswer struct {
	// Method is the server request's method ("" when not known).
	Method string
	// ID is the answer's id (the server request's).
	ID wire.ID
	// Answer is the POSTed JSON-RPC response, whole (nil when it was not
	// read whole).
	Answer []byte
	// Protocol is the exchange's protocol version.
	Protocol string
	// Status is the HTTP status the server answered the POST with.
	Status int
	// ResponseBytes is the length of the response body.
	ResponseBytes int64
}

// JudgeClientAnswer returns the verdict on the POST of a client's answer:
// res is the response's verdict, read as that of a message that expects no
// answer, or, with refused, the server's refusal in a 2xx's body
// (AnswerRefusal). A refusal stays the server's JSON-RPC error, its reason
// saying so. An accepted answer (a 202, the spec's acknowledgement, or
// another 2xx with no body) is judged as the answer it is, as the stdio
// proxy judges the answer line: the client's result RESULT_SUCCESS, its
// JSON-RPC error JSONRPC_ERROR, under Method; answered says so. Any other
// verdict is res's, its reason naming the client's response rather than a
// notification. The result is a copy: res is not changed.
func JudgeClientAnswer(a *ClientAnswer, res *Result, refused bool) (out *Result, answered bool) {
	if res == nil {
		return nil, false
	}
	r := *res
	switch {
	case refused:
		r.Reason = fmt.Sprintf("the server refused the client's answer (HTTP %d): %s", a.Status, r.Reason)
		return &r, false
	case a.Status == http.StatusAccepted || a.Status >= 200 && a.Status <= 299 && a.ResponseBytes == 0:
		if j, ok := judgeAnswer(a); ok {
			// The content type is the response's (none on a bare 202),
			// not the one the answer was judged under (Carries).
			j.setContentType(r.ContentType())
			j.Reason = fmt.Sprintf("the server accepted the client's answer (HTTP %d); as an answer: %s", a.Status, j.Reason)
			return j, true
		}
	}
	if r.Outcome == NotificationAccepted {
		// Classified as a message that expects no answer, which it is;
		// but it is no notification.
		r.Reason = strings.Replace(r.Reason, "the notification", "the client's response to a server request", 1)
	}
	return &r, false
}

// judgeAnswer judges the client's answer a: ok is false when its body was
// not read whole.
func judgeAnswer(a *ClientAnswer) (*Result, bool) {
	if len(a.Answer) == 0 {
		return nil, false
	}
	method := a.Method
	if method == "" {
		// Not known: judged as the answer to some request, not (as the
		// classifier reads no method) to a tools/call.
		method = UnseenServerRequest
	}
	cex := &Exchange{Method: method, ID: a.ID, ProtocolVersion: a.Protocol}
	cex.Carries(a.Answer)
	res, err := (&Classifier{}).Classify(cex)
	if err != nil {
		return nil, false
	}
	return res, true
}
