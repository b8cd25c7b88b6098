package classify

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestNotClassifiedIsNoVerdict: over the classifier's own limits an
// exchange is NOT_CLASSIFIED, with the cause, the size and the limit; but a
// cut is still a cut, and the response after an oversized request or
// another id's response is still classified. The same in one read and in
// 1-byte reads.
func TestNotClassifiedIsNoVerdict(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 500) + `"}]}}`
	ok := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	js := http.Header{"Content-Type": {"application/json"}}
	reset := errors.New("connection reset by peer")
	tests := []struct {
		name    string
		header  http.Header
		body    string
		cut     bool // the body ends in a read error
		want    Outcome
		cause   string
		size    int64
		warning string
	}{
		{"sse event", sse, "data: " + big + "\n\n", false, NotClassified, CauseEventTooLarge, int64(len(big) + 8), ""},
		{"json body", js, big, false, NotClassified, CauseBodyTooLarge, int64(len(big)), ""},
		{"json body cut after the limit", js, big, true, NetworkError, "", 0, ""},
		{"stream cut inside the big event", sse, "data: " + big, false, StreamIncomplete, "", 0, ""},
		{"big event, then the stream breaks", sse, "data: " + big + "\n\n", true, NotClassified, CauseEventTooLarge, int64(len(big) + 8), ""},
		{"big request first, then the response", sse, `data: {"method":"sampling/createMessage","id":"s1","jsonrpc":"2.0","params":{"x":"` + strings.Repeat("y", 500) + `"}}` + "\n\ndata: " + ok + "\n\n", false, ToolSuccess, "", 0, WarnEventNotRead},
		{"big response for another id, then the response", sse, `data: {"jsonrpc":"2.0","id":9,"result":{"x":"` + strings.Repeat("y", 500) + `"}}` + "\n\ndata: " + ok + "\n\n", false, ToolSuccess, "", 0, WarnResponseForOtherID},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			name := tt.name
			if oneByte {
				name += "/1-byte reads"
			}
			t.Run(name, func(t *testing.T) {
				var body io.Reader = strings.NewReader(tt.body)
				if tt.cut {
					body = io.MultiReader(body, iotest.ErrReader(reset))
				}
				if oneByte {
					body = iotest.OneByteReader(body)
				}
				r, err := (&Classifier{MaxEventSize: 256}).Classify(&Exchange{ID: wire.IntID(1), Status: 200, Header: tt.header, Body: body})
				if r.Outcome != tt.want {
					t.Fatalf("%s (%s), want %s", r.Outcome, r.Reason, tt.want)
				}
				if tt.want != NotClassified {
					if err != nil || r.NotClassified() != nil {
						t.Fatalf("err %v, notClassified %+v on a verdict", err, r.NotClassified())
					}
					if tt.warning != "" && !r.HasWarning(tt.warning) {
						t.Errorf("warnings %+v lack %s", r.Warnings(), tt.warning)
					}
					return
				}
				var nc *NotClassifiedError
				if !errors.As(err, &nc) || !errors.Is(err, ErrTooLarge) || nc.Reason != r.Reason {
					t.Fatalf("err %v, want a NotClassifiedError", err)
				}
				d := r.NotClassified()
				if d == nil || d.Cause != tt.cause || d.Size != tt.size || d.Limit != 256 || r.Layer() != LayerNone {
					t.Fatalf("notClassified %+v layer %s, want %s size %d limit 256 layer none", d, r.Layer(), tt.cause, tt.size)
				}
				if _, hasIsError := r.IsError(); r.JSONRPC() != nil || hasIsError || r.SSE() != nil && r.SSE().Terminal {
					t.Errorf("a verdict's details on NOT_CLASSIFIED: %+v %v %+v", r.JSONRPC(), hasIsError, r.SSE())
				}
			})
		}
	}
}

// TestNotClassifiedByBudget: classifiers that share a budget hold no more
// than it; one it refuses reads the response through and is NOT_CLASSIFIED
// with cause memory-budget, naming the budget and its use; everything is
// given back afterwards.
func TestNotClassifiedByBudget(t *testing.T) {
	b := wire.NewBudget(4096)
	if !b.Reserve(3000) { // another exchange holds most of it
		t.Fatal("reserve")
	}
	event := "data: " + `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 2000) + `"}]}}` + "\n\n"
	for _, tc := range []struct {
		name, ct, body string
	}{
		{"sse", "text/event-stream", event},
		{"json", "application/json", strings.TrimSuffix(strings.TrimPrefix(event, "data: "), "\n\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Classifier{Budget: b}
			r, err := c.Classify(&Exchange{ID: wire.IntID(1), Status: 200, Header: http.Header{"Content-Type": {tc.ct}}, Body: strings.NewReader(tc.body)})
			d := r.NotClassified()
			if r.Outcome != NotClassified || d == nil || d.Cause != CauseMemoryBudget || d.Limit != 4096 || d.InUse < 3000 ||
				d.Size != int64(len(tc.body)) || !errors.Is(err, wire.ErrBudgetExhausted) {
				t.Fatalf("%s %+v (%v), want NOT_CLASSIFIED memory-budget of %d bytes", r.Outcome, d, err, len(tc.body))
			}
			if !strings.Contains(r.Reason, "--classify-memory") || r.BodyBytes != int64(len(tc.body)) {
				t.Errorf("reason %q, %d body bytes", r.Reason, r.BodyBytes)
			}
		})
	}
	b.Release(3000)
	if b.InUse() != 0 || b.Peak() > b.Limit() {
		t.Fatalf("in use %d, peak %d of %d", b.InUse(), b.Peak(), b.Limit())
	}
	// With the budget free, the same response is classified.
	r, err := (&Classifier{Budget: b}).Classify(&Exchange{ID: wire.IntID(1), Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: strings.NewReader(event)})
	if err != nil || r.Outcome != ToolSuccess || b.InUse() != 0 {
		t.Fatalf("%s %v, %d in use", r.Outcome, err, b.InUse())
	}
}

// TestNotClassifiedClientStops: a client (StopAtTerminal) whose stream had
// an unread event that may be the response stops at the response for its
// id, and still answers server requests on the way.
func TestNotClassifiedClientStops(t *testing.T) {
	big := `data: {"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 500) + `"}]},"jsonrpc":"2.0","id":1}` + "\n\n"
	stream := big + `data: {"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{}}` + "\n\n" +
		`data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n\n" + "data: after\n\n"
	var asked []string
	c := &Classifier{MaxEventSize: 256, StopAtTerminal: true, OnServerRequest: func(m []byte) { asked = append(asked, string(m)) }}
	r, _ := c.Classify(&Exchange{ID: wire.IntID(1), ProtocolVersion: Protocol2025, Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: strings.NewReader(stream)})
	if r.Outcome != NotClassified || r.SSE().End != "stopped-at-terminal" || len(asked) != 1 || r.SSE().Events != 3 {
		t.Fatalf("%s end %q, %d requests handed on, %d events", r.Outcome, r.SSE().End, len(asked), r.SSE().Events)
	}
}
