package classify

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// streamVerdict is what the metamorphic tests compare of two verdicts: the
// outcome (and so the layer), the reason, the warnings' codes but the
// request-id-null one, and the event stream's counts and end.
type streamVerdict struct {
	Outcome  Outcome
	Layer    Layer
	Reason   string
	Warnings []string
	SSE      SSEDetails
	NC       string
}

func verdictOf(r *Result) streamVerdict {
	v := streamVerdict{Outcome: r.Outcome, Layer: r.Layer(), Reason: r.Reason}
	for _, w := range r.Warnings() {
		if w.Code != WarnRequestIDNull {
			v.Warnings = append(v.Warnings, w.Code)
		}
	}
	if s := r.SSE(); s != nil {
		v.SSE = *s
	}
	if nc := r.NotClassified(); nc != nil {
		v.NC = fmt.Sprintf("%+v", *nc)
	}
	return v
}

// nullIDStreams are event streams with the answer to the request at {A}
// (its id {ID}), in every path of stream.go: read and judged, after an
// event read through unparsed (skipped for its size), unterminated, after
// another id's response, with events after it. judged marks the streams
// whose verdict is the answer's own.
func nullIDStreams() []struct {
	name, body string
	judged     bool
} {
	big := strings.Repeat("x", 600)
	return []struct {
		name, body string
		judged     bool
	}{
		{"answer", "data: {A}\n\n", true},
		{"progress then answer", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n\ndata: {A}\n\n", true},
		{"answer then event", "data: {A}\n\n" + `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"late"}}` + "\n\n", true},
		{"answer then unterminated", "data: {A}\n\ndata: {\"jsonrpc\"", true},
		{"other id then answer", `data: {"jsonrpc":"2.0","id":7,"result":{}}` + "\n\ndata: {A}\n\n", true},
		{"other id only", `data: {"jsonrpc":"2.0","id":7,"result":{}}` + "\n\n", false},
		{"big notification then answer", `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}` + "\n\ndata: {A}\n\n", true},
		{"big other id then answer", `data: {"jsonrpc":"2.0","id":7,"result":{"x":"` + big + `"}}` + "\n\ndata: {A}\n\n", true},
		{"unread then answer", `data: {"result":{"x":"` + big + `"}}` + "\n\ndata: {A}\n\n", false},
		{"unread then answer then event", `data: {"result":{"x":"` + big + `"}}` + "\n\ndata: {A}\n\n" + `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"late"}}` + "\n\n", false},
		{"unread then unterminated answer", `data: {"result":{"x":"` + big + `"}}` + "\n\ndata: {A}", false},
		{"unterminated answer", "data: {A}", false},
		{"progress then unterminated answer", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n\ndata: {A}", false},
	}
}

// nullIDAnswers are the answers put at {A}: a tool result and a JSON-RPC
// error, under the id {ID}.
var nullIDAnswers = []struct{ name, msg string }{
	{"result", `{"jsonrpc":"2.0","id":{ID},"result":{"content":[{"type":"text","text":"ok"}]}}`},
	{"error", `{"jsonrpc":"2.0","id":{ID},"error":{"code":-32602,"message":"bad arguments"}}`},
}

// classifyStreamFor classifies body as the event stream answering a
// tools/call of id reqID ("null": a request of id null, as the recorder
// passes it). A NOT_CLASSIFIED verdict's error is its details, which the
// result holds too.
func classifyStreamFor(t *testing.T, reqID, ct, body string, stop bool) *Result {
	t.Helper()
	c := &Classifier{MaxEventSize: 512, StopAtTerminal: stop}
	r, err := c.Classify(&Exchange{Method: "tools/call", ID: wire.IDFromRaw([]byte(reqID)), Notification: reqID == "null",
		Status: 200, Header: http.Header{"Content-Type": {ct}}, Body: strings.NewReader(body)})
	var nc *NotClassifiedError
	if err != nil && !(errors.As(err, &nc) && r.Outcome == NotClassified) {
		t.Fatalf("%s: %v", body, err)
	}
	return r
}

// TestNullIDStreamMetamorphic: the same stream answering a request of id
// null under id null, and a request of id 1 under id 1, gets the same
// verdict, layer, reason (but the id it names), warnings (but
// request-id-null) and stream counts, in every path of the stream; where
// the verdict is the answer's own, a result under id null is judged as in
// a JSON body (INVALID_ENVELOPE: no request can be paired by a null id).
// The answer under no id is, for the request of id null, the same as under
// id null.
func TestNullIDStreamMetamorphic(t *testing.T) {
	for _, s := range nullIDStreams() {
		for _, a := range nullIDAnswers {
			for _, stop := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/stop=%v", s.name, a.name, stop)
				body := func(id string) string {
					msg := strings.ReplaceAll(a.msg, "{ID}", id)
					if id == "" {
						msg = strings.Replace(a.msg, `"id":{ID},`, "", 1)
					}
					return strings.ReplaceAll(s.body, "{A}", msg)
				}
				one := verdictOf(classifyStreamFor(t, "1", "text/event-stream", body("1"), stop))
				null := classifyStreamFor(t, "null", "text/event-stream", body("null"), stop)
				if !null.HasWarning(WarnRequestIDNull) {
					t.Errorf("%s: id null: no %s warning: %v", name, WarnRequestIDNull, null.Warnings())
				}
				nv := verdictOf(null)
				want := one
				if s.judged {
					// The answer's own verdict, and the warnings
					// it brings, are the JSON body's: a result
					// under id null is INVALID_ENVELOPE (no request
					// can be paired by a null id), an error under
					// id null is warned error-without-id.
					j1 := verdictOf(classifyStreamFor(t, "1", "application/json", strings.ReplaceAll(a.msg, "{ID}", "1"), false))
					jn := verdictOf(classifyStreamFor(t, "null", "application/json", strings.ReplaceAll(a.msg, "{ID}", "null"), false))
					want.Outcome, want.Layer, want.Reason = jn.Outcome, jn.Layer, jn.Reason
					want.Warnings = nil
					for _, w := range one.Warnings {
						if !slices.Contains(j1.Warnings, w) {
							want.Warnings = append(want.Warnings, w)
						}
					}
					want.Warnings = append(want.Warnings, jn.Warnings...)
					slices.Sort(want.Warnings)
				}
				slices.Sort(nv.Warnings)
				nv.Reason = strings.ReplaceAll(nv.Reason, "id null", "id 1")
				if !reflect.DeepEqual(nv, want) {
					t.Errorf("%s:\nid 1:    %+v\nid null: %+v", name, want, nv)
				}
				absent := verdictOf(classifyStreamFor(t, "null", "text/event-stream", body(""), stop))
				absent.Reason = strings.ReplaceAll(absent.Reason, "id null", "id 1")
				slices.Sort(absent.Warnings)
				if !reflect.DeepEqual(absent, nv) {
					t.Errorf("%s:\nid null: %+v\nno id:   %+v", name, nv, absent)
				}
				if a.name == "error" {
					// An error under no id answers the request of
					// id 1 too, in every path alike (warned
					// error-without-id where it is judged).
					noID := verdictOf(classifyStreamFor(t, "1", "text/event-stream", body(""), stop))
					noID.Warnings = slices.DeleteFunc(noID.Warnings, func(w string) bool { return w == WarnErrorWithoutID })
					if len(noID.Warnings) == 0 {
						noID.Warnings = nil
					}
					if !reflect.DeepEqual(noID, one) {
						t.Errorf("%s:\nid 1:  %+v\nno id: %+v", name, one, noID)
					}
				}
			}
		}
	}
}
