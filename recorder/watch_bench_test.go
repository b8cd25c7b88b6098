package recorder

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// watchStream is an event stream as a 2025-11-25 server writes one through
// the proxy: progress and log notifications, a server request, a typed
// event and the tools/call result, in small events and one of 16 KiB.
func watchStream() [][]byte {
	pad := strings.Repeat("x", 16<<10-120)
	return [][]byte{
		[]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"),
		fmt.Appendf(nil, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%q}}\n\n", pad),
		[]byte("data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"elicitation/create\",\"params\":{\"message\":\"name?\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n"),
		[]byte("event: ping\ndata: {}\n\n"),
		[]byte("id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Echo: hi\"}]}}\n\n"),
	}
}

// BenchmarkRequestWatch is the request watch over one stream's writes (as
// the writer feeds it, one call per write), the server request noted and
// answered each time so that the table stays one entry: the cost every
// event-stream write through the proxy pays.
func BenchmarkRequestWatch(b *testing.B) {
	// The pools as in production: the tests' poisoning of recycled chunks
	// (capture_test.go) writes every chunk the watch gives back.
	poison := poisonRecycled
	poisonRecycled = false
	defer func() { poisonRecycled = poison }()
	evs := watchStream()
	n := 0
	for _, ev := range evs {
		n += len(ev)
	}
	var s serverRequests
	id := []byte("7")
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		w := newRequestWatch()
		for _, ev := range evs {
			w.feed(ev, &s, "session-1")
		}
		w.release()
		if s.answered("session-1", idOf(id)) != "elicitation/create" {
			b.Fatal("the request was not noted")
		}
	}
}

func idOf(raw []byte) wire.ID { return wire.IDFromRaw(raw) }
