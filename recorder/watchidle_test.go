package recorder

import (
	"strings"
	"testing"
)

// TestRequestWatchHoldsNoDataBetweenEvents: once an event has ended, the
// request watch holds no data buffer, whatever the events before were
// (small, kept whole; of several KiB; a request; a response ruled out by
// its head), so an idle event stream holds none; and it still notes the
// request. Before idle18 the watch kept its buffer up to 4 KiB between
// events: 1,024 bytes after a small event, 4,096 after one of 3 KiB (one
// of 5 KiB, in an 8 KiB chunk, it gave back).
func TestRequestWatchHoldsNoDataBetweenEvents(t *testing.T) {
	events := []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + strings.Repeat("x", 3000) + "\"}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + strings.Repeat("y", 5000) + "\"}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + strings.Repeat("z", 2000) + "\"}]}}\n\n",
		": a comment\n\n",
	}
	var s serverRequests
	w := newRequestWatch()
	defer w.release()
	for i, ev := range events {
		// In two writes, the second with the event's end.
		w.feed([]byte(ev[:len(ev)/2]), &s, "s")
		w.feed([]byte(ev[len(ev)/2:]), &s, "s")
		if cap(w.data) != 0 {
			t.Errorf("after event %d (%d bytes) the watch holds a data buffer of %d bytes, want none", i+1, len(ev), cap(w.data))
		}
	}
	if got := s.answered("s", idOf([]byte("7"))); got != "roots/list" {
		t.Errorf("the request was noted as %q, want roots/list", got)
	}
}
