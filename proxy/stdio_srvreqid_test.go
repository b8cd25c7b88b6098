package proxy_test

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestStdioServerRequestIDsAsAnswersPairThem: whether a server request
// takes the place of one still waiting is decided by the id rule answers
// are paired by (wire.ID.Key: a number by its exact value): 1 and then
// 1.0 are one id, so the first is recorded superseded and the second not
// answered; 9007199254740993 and then 9007199254740992 are two, each
// paired with the client's answer of its own id. A server request on a
// line longer than the proxy inspects (noted from its head) follows the
// same rule: before, it took the place of the waiting request of its id
// silently, and that one had no record (one record of two requests). Every
// record keeps the id as the server wrote it. Each want matches one record
// (two records of id "srv-1" both "not answered" do not pass).
func TestStdioServerRequestIDsAsAnswersPairThem(t *testing.T) {
	t.Parallel()
	type want struct {
		id       string
		outcome  classify.Outcome
		answered bool
		note     string
	}
	const superseded, left = "a later server request of the same id", "not answered: the client closed the server's stdin"
	for _, tc := range []struct {
		name    string
		ids     []string // the roots/list requests' ids, one call each
		big     []bool   // the request's line is past MaxLineSize
		answers []string // the client's answers' ids, after the calls
		want    []want   // the roots/list records, by id as written
	}{
		{name: "1 then 1.0", ids: []string{"1", "1.0"},
			want: []want{{"1", classify.NetworkError, false, superseded}, {"1.0", classify.HTTPSuccess, false, left}}},
		{name: "beyond 2^53, two ids", ids: []string{"9007199254740993", "9007199254740992"}, answers: []string{"9007199254740992", "9007199254740993"},
			want: []want{{"9007199254740993", classify.ResultSuccess, true, "answered by the client"}, {"9007199254740992", classify.ResultSuccess, true, "answered by the client"}}},
		{name: "a long line of the same id", ids: []string{`"srv-1"`, `"srv-1"`}, big: []bool{false, true},
			want: []want{{`"srv-1"`, classify.NetworkError, false, superseded}, {`"srv-1"`, classify.HTTPSuccess, false, left}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := startScripted(t, proxy.StdioOptions{MaxLineSize: 16 << 10}, nil)
			for i, id := range tc.ids {
				tool := "ask-roots-id:" + id
				if tc.big != nil && tc.big[i] {
					tool = "ask-roots-big-id:" + id
				}
				callID := string(rune('2' + i))
				if got := run.talk(t, scriptedCall(callID, tool)); got != scriptedAnswer(callID, tool) {
					t.Fatalf("call %d: the client received %d bytes, not the %d the server wrote", i, len(got), len(scriptedAnswer(callID, tool)))
				}
			}
			for _, id := range tc.answers {
				run.send(t, `{"jsonrpc":"2.0","id":`+id+`,"result":{"roots":[]}}`)
			}
			run.end(t)
			got := map[string][]string{} // by id: outcome, answered, note
			n := 0
			used := make([]bool, len(tc.want)) // each want matches one record
			for _, rec := range run.sink.records(t) {
				switch rec.Method {
				case "tools/call":
				case "roots/list":
					n++
					got[string(rec.JSONRPC.ID.Raw())] = append(got[string(rec.JSONRPC.ID.Raw())], rec.Note)
					ok := false
					for i, w := range tc.want {
						if !used[i] && w.id == string(rec.JSONRPC.ID.Raw()) && w.outcome == rec.Outcome && w.answered == rec.ClientAnswer &&
							strings.Contains(rec.Note, w.note) {
							used[i], ok = true, true
							break
						}
					}
					if !ok {
						t.Errorf("a roots/list record no want left matches: id %s, %s, clientAnswer %v, reason %q, note %q", rec.JSONRPC.ID.Raw(), rec.Outcome, rec.ClientAnswer, rec.Reason, rec.Note)
					}
				default:
					t.Errorf("a record of %q: id %s, %s, clientAnswer %v, reason %q", rec.Method, rec.JSONRPC.ID.Raw(), rec.Outcome, rec.ClientAnswer, rec.Reason)
				}
			}
			if n != len(tc.want) {
				t.Errorf("%d roots/list records, want %d (one per request the client got): %v", n, len(tc.want), got)
			}
		})
	}
}
