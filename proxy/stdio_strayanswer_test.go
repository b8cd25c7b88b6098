package proxy_test

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestStdioStrayClientAnswer: a response the client writes that answers no
// pending server request (the scripted server asks roots/list with id
// "srv-1") has a record of its own, the client's answer with its id as
// written (type kept), INVALID_ENVELOPE, its reason naming the server
// request that was pending; the id-null error a client writes for a line it
// could not read is its JSON-RPC error. The server request keeps its own
// record: answered by a matching answer, left unanswered by a stray one.
// Before, such a line was passed on and recorded nowhere: a client that
// answers 1 for "srv-1" (or "1" for 1, as server-everything's elicitation
// answered by hand showed) left no trace of its answer, while over HTTP
// the same answer's POST has its record.
func TestStdioStrayClientAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		answers []string // the client's lines after roots/list reached it
		strays  []string // the ids (as written; null when absent, as a record keeps none) of the stray answers' records, in order
		outcome []classify.Outcome
		reason  string // in the first stray's reason
		roots   classify.Outcome
	}{
		{"answered", []string{`{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`}, nil, nil, "", classify.ResultSuccess},
		{"wrong id", []string{`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`}, []string{`1`}, []classify.Outcome{classify.InvalidEnvelope},
			`a response for id 1 (a number) to the server's stdin, and no server request of that id is pending`, classify.HTTPSuccess},
		{"twice", []string{`{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`, `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`}, []string{`"srv-1"`}, []classify.Outcome{classify.InvalidEnvelope},
			`no server request was pending then`, classify.ResultSuccess},
		{"null id error", []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`}, []string{`null`}, []classify.Outcome{classify.JSONRPCError},
			`error response of id null`, classify.HTTPSuccess},
		{"no id", []string{`{"jsonrpc":"2.0","result":{}}`}, []string{`null`}, []classify.Outcome{classify.InvalidEnvelope},
			`a response without an id`, classify.HTTPSuccess},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
			got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("2", "ask-roots")}), "")
			if !strings.Contains(got, `"method":"roots/list"`) {
				t.Fatalf("the client received %q, want the server's roots/list first", got)
			}
			for _, a := range c.answers {
				if _, err := io.WriteString(run.in, a+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			run.in.Close()
			run.wait(t)
			var strays []*record.Record
			var roots *record.Record
			for _, r := range run.sink.records(t) {
				switch {
				case r.Method == "roots/list":
					roots = r
				case r.ClientAnswer:
					strays = append(strays, r)
				}
			}
			if roots == nil || roots.Outcome != c.roots {
				t.Errorf("roots/list record %+v, want %s", roots, c.roots)
			}
			if len(strays) != len(c.strays) {
				t.Fatalf("%d records of stray answers, want %d", len(strays), len(c.strays))
			}
			for i, r := range strays {
				if got := string(r.JSONRPC.ID.Raw()); got != c.strays[i] {
					t.Errorf("stray %d: id %s, want %s (as written)", i, got, c.strays[i])
				}
				if r.Outcome != c.outcome[i] || r.Layer != c.outcome[i].Layer() || r.Method != "" || r.URL == "" {
					t.Errorf("stray %d: %s (%s) method %q url %q, want %s with no method", i, r.Outcome, r.Layer, r.Method, r.URL, c.outcome[i])
				}
				if !strings.HasPrefix(r.Note, "the client's response (client → server)") {
					t.Errorf("stray %d: note %q", i, r.Note)
				}
			}
			if len(strays) > 0 && !strings.Contains(strays[0].Reason, c.reason) {
				t.Errorf("reason %q, want it to say %q", strays[0].Reason, c.reason)
			}
			if c.name == "wrong id" && !strings.Contains(strays[0].Reason, `server requests pending then: "srv-1" (roots/list)`) {
				t.Errorf("reason %q does not name the pending server request", strays[0].Reason)
			}
			if c.name == "null id error" && (strays[0].JSONRPC.ErrorCode == nil || *strays[0].JSONRPC.ErrorCode != -32700) {
				t.Errorf("error code %v, want -32700", strays[0].JSONRPC.ErrorCode)
			}
		})
	}
}

// answerAtOnce is the client's stdout: it passes the server's lines on to
// out and, the moment the server's roots/list reaches it (inside the
// proxy's write), writes the answer to the proxy's stdin and waits until
// the proxy has a record of a client's answer (paired or stray): the
// fastest client there can be, with no timing in the test.
// trigger and answer, when set, are the request it answers (a part of its
// line) and its answer line; roots/list's "srv-1" when empty.
type answerAtOnce struct {
	t               *testing.T
	out             io.Writer
	in              io.Writer
	sink            *memSink
	trigger, answer string
	done            bool
}

func (a *answerAtOnce) Write(p []byte) (int, error) {
	n, err := a.out.Write(p)
	trigger, answer := a.trigger, a.answer
	if trigger == "" {
		trigger, answer = `"method":"roots/list"`, `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`
	}
	if !a.done && strings.Contains(string(p), trigger) {
		a.done = true
		if _, err := io.WriteString(a.in, answer+"\n"); err != nil {
			a.t.Error(err)
		}
		testwait.Until(a.t, "a record of the client's answer", func() bool {
			for _, r := range a.sink.records(a.t) {
				if r.ClientAnswer {
					return true
				}
			}
			return false
		})
	}
	return n, err
}

// TestStdioServerRequestNotedBeforeForwarded: a client that answers a
// server request the moment it reads it finds the request pending: the
// roots/list record is the answered one (RESULT_SUCCESS, clientAnswer), and
// no answer is stray; on a line of its own and inside a batch line. Before,
// the proxy noted the server request only after it had written the line to
// the client, so such an answer matched nothing and roots/list was recorded
// as never answered ("the client ended the session … without answering"),
// as a Python client driving server-everything through the proxy showed for
// its roots/list; after outsider20 (380fd38) a batch line's request still
// was (mend21: a stray answer and an unanswered roots/list).
func TestStdioServerRequestNotedBeforeForwarded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, tool, note string }{
		{"own line", "ask-roots", ""},
		{"batch line", "ask-roots-batch", "message 2 of a JSON-RPC batch of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := startScripted(t, proxy.StdioOptions{}, &answerAtOnce{})
			if got, want := run.talk(t, scriptedCall("2", tc.tool)), scriptedAnswer("2", tc.tool); got != want {
				t.Fatalf("the client received %q, want %q", got, want)
			}
			run.end(t)
			var roots []*record.Record
			for _, rec := range run.sink.records(t) {
				if rec.ClientAnswer && rec.Method != "roots/list" {
					t.Errorf("a stray answer: %s %s", rec.Outcome, rec.Reason)
				}
				if rec.Method == "roots/list" {
					roots = append(roots, rec)
				}
			}
			if len(roots) != 1 || roots[0].Outcome != classify.ResultSuccess || !roots[0].ClientAnswer || string(roots[0].JSONRPC.ID.Raw()) != `"srv-1"` ||
				!strings.Contains(roots[0].Note, tc.note) {
				for _, rec := range roots {
					t.Logf("roots/list: %s %s (%s)", rec.Outcome, rec.Reason, rec.Note)
				}
				t.Fatalf("%d records of roots/list, want one: answered (RESULT_SUCCESS, clientAnswer, id \"srv-1\", note with %q)", len(roots), tc.note)
			}
		})
	}
}

// endClient closes the client's side of a stdio proxy under test (its
// stdin, inW), drains what the proxy still writes to it (r), and waits,
// bounded, for the proxy's run to end with no error (done).
func endClient(t *testing.T, inW io.Closer, r io.Reader, done <-chan error) {
	t.Helper()
	inW.Close()
	go io.Copy(io.Discard, r)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testwait.Bound):
		t.Fatalf("the stdio proxy did not end within %s", testwait.Bound)
	}
}
