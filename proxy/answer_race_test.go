package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerSink is a memSink that closes answered when it is given the record
// of a client's answer.
type answerSink struct {
	memSink
	once     sync.Once
	answered chan struct{}
}

func (s *answerSink) Write(rec *record.Record) error {
	err := s.memSink.Write(rec)
	if rec.ClientAnswer {
		s.once.Do(func() { close(s.answered) })
	}
	return err
}

// answerSpy is the client's transport: it keeps the ids of the JSON-RPC
// responses the client POSTed (its answers), as written.
type answerSpy struct {
	mu  sync.Mutex
	ids []string
}

func (s *answerSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		if m := wire.ParseMessage(b); m.Kind == wire.MessageResponse {
			s.mu.Lock()
			s.ids = append(s.ids, string(m.ID.Raw()))
			s.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestClientAnswerNamesItsRequest: a go-sdk server asks the client an
// elicitation/create on an open stream during a tools/call; the go-sdk
// client answers it as soon as it reads the event; the answer's record
// through the proxy names elicitation/create and carries the answer's id
// with its JSON type. The tool returns only once the answer's record was
// written, so the tools/call's stream (a few hundred bytes, classified
// once the stream ends) is still open when the answer's record is
// finished: the request must have been noted before its bytes reached
// the client. Before, the recorder noted it while classifying the stream
// (after the bytes went out, and for a short stream only once it ended):
// the record had no method, every run (the reviewer's repro, without the
// wait, failed 2 in 10 under -race -count=10).
func TestClientAnswerNamesItsRequest(t *testing.T) {
	t.Parallel()
	sink := &answerSink{answered: make(chan struct{})}
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: objSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message:         "your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
			})
			if err != nil {
				return nil, err
			}
			// The answer's record is written before the tool's result
			// goes on the stream (bounded: a missing record fails below).
			select {
			case <-sink.answered:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(testwait.Bound):
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + res.Action}}}, nil
		})
	get := func(*http.Request) *mcp.Server { return s }
	up := serve(t, mcp.NewStreamableHTTPHandler(get, nil))
	u, _, _, stop := startProxy(t, up, proxy.Options{Records: sink})

	spy := &answerSpy{}
	c := mcp.NewClient(&mcp.Implementation{Name: "answers", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
		},
	})
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: u, HTTPClient: &http.Client{Transport: spy}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "hello accept" {
		t.Fatalf("tool result %+v, want hello accept", res.Content)
	}
	cs.Close()
	stop()

	spy.mu.Lock()
	ids := spy.ids
	spy.mu.Unlock()
	if len(ids) != 1 {
		t.Fatalf("the client POSTed %d answers (%v), want 1", len(ids), ids)
	}
	var answers []*record.Record
	for _, r := range sink.records(t) {
		if r.ClientAnswer {
			answers = append(answers, r)
		}
	}
	if len(answers) != 1 {
		t.Fatalf("%d records of a client's answer, want 1", len(answers))
	}
	a := answers[0]
	if a.Method != "elicitation/create" || string(a.JSONRPC.ID.Raw()) != ids[0] || a.Outcome != "RESULT_SUCCESS" {
		t.Errorf("the answer's record: method %q id %s outcome %s (%s); want elicitation/create, id %s, RESULT_SUCCESS",
			a.Method, a.JSONRPC.ID.Raw(), a.Outcome, a.Reason, ids[0])
	}
}
