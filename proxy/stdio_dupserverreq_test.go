package proxy_test

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestStdioServerRequestSameIDTwice: two server requests of one id reach
// the client while the first is still unanswered (a server that reuses the
// id of a request it still waits for). Each request line the client got
// has its record: the first one not answered (NETWORK_ERROR, as a server
// request the client had not answered when the server ended, without UX),
// its reason and note saying a later request of its id took its place; the
// second not answered as the client closed stdin; both with the id as
// written, no client answer. (stdio.garbage's request-shaped line written
// before each of two calls' answers was a case here; since collide21 the
// second is not written: TestStdioInjectedIDCollision.) Before, the
// second took the first's place in the proxy's table and the first had no
// record at all: two requests, one record.
func TestStdioServerRequestSameIDTwice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tool, method, id string
	}{
		{"server's own", "ask-roots", "roots/list", `"srv-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := startScripted(t, proxy.StdioOptions{}, nil)
			want := scriptedAnswer("2", tc.tool) + scriptedAnswer("3", tc.tool)
			if got := run.talk(t, scriptedCall("2", tc.tool), scriptedCall("3", tc.tool)); got != want {
				t.Fatalf("the client received %q, want %q", got, want)
			}
			run.end(t)
			var reqs, superseded, left, calls int
			for _, rec := range run.sink.records(t) {
				switch {
				case rec.Method == tc.method:
					reqs++
					if string(rec.JSONRPC.ID.Raw()) != tc.id || rec.ClientAnswer {
						t.Errorf("a %s record: id %s, clientAnswer %v; want id %s, no client answer", tc.method, rec.JSONRPC.ID.Raw(), rec.ClientAnswer, tc.id)
					}
					switch {
					case strings.Contains(rec.Note, "a later server request of the same id"):
						superseded++
						if rec.Outcome != classify.NetworkError || rec.Flags.Has(record.FlagFI) || rec.Flags.Has(record.FlagUX) {
							t.Errorf("the superseded request's record: %s, flags %v; want NETWORK_ERROR, no FI, no UX", rec.Outcome, rec.Flags)
						}
						if rec.Reason != "no answer line from the client after the server sent its request: another server request with the same id "+tc.id+" reached the client before this one was answered" {
							t.Errorf("the superseded request's reason: %q", rec.Reason)
						}
					case strings.Contains(rec.Note, "not answered: the client closed the server's stdin"):
						left++
					default:
						t.Errorf("a %s record: %s, reason %q, note %q", tc.method, rec.Outcome, rec.Reason, rec.Note)
					}
				case rec.Method == "tools/call":
					calls++
				default:
					t.Errorf("a record of %q: %s, reason %q", rec.Method, rec.Outcome, rec.Reason)
				}
			}
			if reqs != 2 || superseded != 1 || left != 1 || calls != 2 {
				t.Errorf("%d records of %s (%d superseded, %d not answered) and %d of tools/call; want 2 (1, 1) and 2", reqs, tc.method, superseded, left, calls)
			}
		})
	}
}
