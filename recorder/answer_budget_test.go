package recorder

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// budgetSink keeps every record.
type budgetSink struct {
	mu   sync.Mutex
	recs []*record.Record
}

func (s *budgetSink) Write(r *record.Record) error {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
	return nil
}

// heldReader returns first, then waits for gate, then returns rest, then
// io.EOF.
type heldReader struct {
	first, rest []byte
	gate        <-chan struct{}
	step        int
}

func (g *heldReader) Read(p []byte) (int, error) {
	g.step++
	switch g.step {
	case 1:
		return copy(p, g.first), nil
	case 2:
		<-g.gate
		return copy(p, g.rest), nil
	}
	return 0, io.EOF
}

// TestAnswerMethodWhenClassifierSkipsTheEvent: a server request in an
// event the classifier does not hold (over MaxEventSize, or refused by the
// classification memory budget) but under the request watch's
// maxWatchedEvent is still noted before the client can read it: the
// client's answer, POSTed while the stream waits, is recorded as the
// answer to elicitation/create with its id as sent. (fwd21-code's
// classification on the forwarding goroutine, which does the watch's work
// by the classifier's reading, lost the method here: review21.)
func TestAnswerMethodWhenClassifierSkipsTheEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"over the budget", Options{ClassifyMemory: 4 << 10}},
		{"over MaxEventSize", Options{MaxEventSize: 1 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &budgetSink{}
			opts := tc.opts
			opts.Records = s
			rc, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			elicit := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"" +
				strings.Repeat("x", 8<<10) + "\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n"
			final := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n\n"
			gate := make(chan struct{})
			srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if r.URL.Path == "/answer" {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				if err := forwardBody(From(r.Context()), &heldReader{first: []byte(elicit), rest: []byte(final), gate: gate}); err != io.EOF {
					t.Errorf("forwardBody: %v, want io.EOF", err)
				}
			})))
			defer srv.Close()
			post := func(path, body string) *http.Response {
				req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", "s-1")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			call := post("/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
			br := bufio.NewReader(call.Body)
			var got strings.Builder
			for !strings.HasSuffix(got.String(), "\n\n") {
				line, err := br.ReadString('\n')
				got.WriteString(line)
				if err != nil {
					t.Fatalf("the stream ended before the request (%q): %v", got.String(), err)
				}
			}
			if got.String() != elicit {
				t.Fatalf("the client read %d bytes, want the request's event (%d)", got.Len(), len(elicit))
			}
			ans := post("/answer", `{"jsonrpc":"2.0","id":"e1","result":{"action":"accept","content":{"name":"ada"}}}`)
			_, _ = io.Copy(io.Discard, ans.Body)
			ans.Body.Close()
			close(gate)
			rest, err := io.ReadAll(br)
			call.Body.Close()
			if err != nil || string(rest) != final {
				t.Errorf("the rest of the stream: %q (%v), want the result's event", rest, err)
			}
			if err := rc.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
			var answers int
			for _, r := range s.recs {
				if !r.ClientAnswer {
					continue
				}
				answers++
				if r.Method != "elicitation/create" || string(r.JSONRPC.ID.Raw()) != `"e1"` || r.Status != http.StatusAccepted {
					t.Errorf("the answer's record: method %q, id %s, status %d; want elicitation/create, \"e1\", 202", r.Method, r.JSONRPC.ID.Raw(), r.Status)
				}
			}
			if answers != 1 || len(s.recs) != 2 {
				t.Errorf("%d records, %d of a client's answer; want 2, 1", len(s.recs), answers)
			}
		})
	}
}
