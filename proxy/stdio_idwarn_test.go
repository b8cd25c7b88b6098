package proxy_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestStdioUnclassifiedRecordsWarnOnIDs: the stdio records the proxy makes
// without the classifier carry the id warning a classified record of the
// same id has (docs/outcomes.md: id-not-mcp for 2.5, id-beyond-safe-integer
// for 9007199254740993, none for "s-1"), naming whose id it is: a
// subscription the server ended, a server request the client left
// unanswered, a response line over the inspection limit, a client's answer
// to no server request, a server's response to no request. Before, none of
// them had one (the same ids in a classified record do:
// TestStdioIDsMCPForbids).
func TestStdioUnclassifiedRecordsWarnOnIDs(t *testing.T) {
	t.Parallel()
	ids := []struct{ id, warning string }{
		{"2.5", classify.WarnIDNotMCP},
		{"9007199254740993", classify.WarnIDBeyondSafeInteger},
		{`"s-1"`, ""},
	}
	cases := []struct {
		name  string
		which string // whose id the warning names
		// send writes the client's side; the record of id is the one pick
		// accepts.
		send func(t *testing.T, run *stdioRun, id string)
		pick func(r *record.Record) bool
	}{
		{"subscription ended by the server", "request", func(t *testing.T, run *stdioRun, id string) {
			io.WriteString(run.in, `{"jsonrpc":"2.0","id":`+id+`,"method":"subscriptions/listen","params":{}}`+"\n")
			conversation(t, run.in, run.out, []string{scriptedCall("2", "end-listen")})
		}, func(r *record.Record) bool { return r.Method == "subscriptions/listen" }},
		{"server request not answered", "request", func(t *testing.T, run *stdioRun, id string) {
			conversation(t, run.in, run.out, []string{scriptedCall("2", "ask-roots-id:"+id)})
		}, func(r *record.Record) bool { return r.Method == "roots/list" }},
		{"response over the line limit", "request", func(t *testing.T, run *stdioRun, id string) {
			conversation(t, run.in, run.out, []string{scriptedCall(id, "big-id-first")})
		}, func(r *record.Record) bool { return r.Tool == "big-id-first" }},
		{"client's answer to no server request", "response", func(t *testing.T, run *stdioRun, id string) {
			io.WriteString(run.in, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`+"\n")
			conversation(t, run.in, run.out, []string{scriptedCall("2", "echo")})
		}, func(r *record.Record) bool { return r.ClientAnswer }},
		{"server's response to no request", "response", func(t *testing.T, run *stdioRun, id string) {
			conversation(t, run.in, run.out, []string{scriptedCall("2", "stray-id:"+id)})
		}, func(r *record.Record) bool { return r.Method == "" && r.Outcome == classify.InvalidEnvelope }},
	}
	for _, c := range cases {
		for _, x := range ids {
			t.Run(c.name+"/"+x.id, func(t *testing.T) {
				t.Parallel()
				run := startStdio(t, proxy.StdioOptions{MaxLineSize: 64 << 10, Env: append(os.Environ(), stdioScriptEnv+"=1")})
				c.send(t, run, x.id)
				go io.Copy(io.Discard, run.out)
				run.in.Close()
				run.wait(t)
				var got *record.Record
				for _, r := range run.sink.exchanges(t) {
					if c.pick(r) {
						if got != nil {
							t.Fatalf("two records: %s %q and %s %q", got.Outcome, got.Reason, r.Outcome, r.Reason)
						}
						got = r
					}
				}
				if got == nil {
					t.Fatal("no record")
				}
				if got.JSONRPC.ID.String() != x.id {
					t.Errorf("the record's id %s, want %s as sent", got.JSONRPC.ID, x.id)
				}
				var codes []string
				for _, w := range got.Warnings {
					if w.Code == classify.WarnIDNotMCP || w.Code == classify.WarnIDBeyondSafeInteger {
						codes = append(codes, w.Code)
						if !strings.Contains(w.Message, "the "+c.which+"'s id "+x.id+" ") {
							t.Errorf("warning %q does not name the %s's id %s", w.Message, c.which, x.id)
						}
					}
				}
				want := []string{}
				if x.warning != "" {
					want = []string{x.warning}
				}
				if fmt.Sprint(codes) != fmt.Sprint(want) {
					t.Errorf("%s %q: id warnings %v, want %v", got.Outcome, got.Reason, codes, want)
				}
			})
		}
	}
}
