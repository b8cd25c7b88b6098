package classify

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// TestStreamEndAllocs: the clean end of an event stream costs no
// allocation. streamError looked for a skipped and an unterminated event
// with errors.As before it looked at io.EOF, and the targets of errors.As
// escape: two allocations (16 bytes) at the end of every stream classified
// (the proxy's 64 KiB SSE exchange among them). A stream of a notification
// and the result, read by the classifier's own reader, is classified with
// 5 allocations; 7 before.
func TestStreamEndAllocs(t *testing.T) {
	body := []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"isError\":false}}\n\n")
	rd := bytes.NewReader(body)
	ex := &Exchange{Method: "tools/call", ID: wire.IntID(1), Status: 200,
		Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: rd}
	c := &Classifier{}
	var r *Result
	run := func() {
		rd.Reset(body)
		var err error
		if r, err = c.Classify(ex); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if r.Outcome != ToolSuccess || r.SSE() == nil || r.SSE().End != "eof" || r.SSE().Events != 2 {
		t.Fatalf("outcome %s (%s), sse %+v", r.Outcome, r.Reason, r.SSE())
	}
	if n := testing.AllocsPerRun(200, run); n > 5 {
		t.Errorf("%v allocations per stream, want at most 5", n)
	}
}
