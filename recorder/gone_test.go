package recorder_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// TestAnswerAfterTheClientLeft: a handler that writes its terminal
// response only after its client's connection closed (go-sdk writes its
// cancellation error then, into a dead connection) did not answer the
// client: the record says the client left (DC) after the bytes it was
// sent before, not that it left after receiving the response, and does
// not blame the server with the JSON-RPC error nobody received
// (outsider19: JSONRPC_ERROR "context canceled", "after receiving the
// response (247 bytes)"). The converse, a response the client read whole
// before it left, stays the response's record.
func TestAnswerAfterTheClientLeft(t *testing.T) {
	progress := "data: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":5}}` + "\n\n"
	answer := "data: " + `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"context canceled"}}` + "\n\n"
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"steps":5,"intervalMs":800},"_meta":{"progressToken":1}}}`
	for _, tc := range []struct {
		name         string
		answerFirst  bool // the handler answers before the client leaves
		outcome      classify.Outcome
		dc           bool
		bytes        int64
		note, notNot string
	}{
		{"answer after the client left", false, classify.StreamIncomplete, true, int64(len(progress)),
			fmt.Sprintf("client disconnected (DC) after %d response bytes", len(progress)), "after receiving the response"},
		{"client left after the answer", true, classify.JSONRPCError, false, int64(len(progress) + len(answer)),
			fmt.Sprintf("the client closed the stream after receiving the response (%d bytes)", len(progress)+len(answer)), "DC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			rc, err := recorder.New(recorder.Options{Records: s})
			if err != nil {
				t.Fatal(err)
			}
			handlerWrote := make(chan error, 1)
			srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(progress))
				w.(http.Flusher).Flush()
				if tc.answerFirst {
					_, _ = w.Write([]byte(answer))
					w.(http.Flusher).Flush()
				}
				select {
				case <-r.Context().Done():
				case <-time.After(testwait.Bound):
					handlerWrote <- fmt.Errorf("the handler's context did not end within %v of the client's close", testwait.Bound)
					return
				}
				if !tc.answerFirst {
					// Written into the closed connection: not delivered.
					_, _ = w.Write([]byte(answer))
					w.(http.Flusher).Flush()
				}
				handlerWrote <- nil
			})))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(call))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", classify.Protocol2026)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(resp.Body)
			want := progress
			if tc.answerFirst {
				want += answer
			}
			got := make([]byte, len(want))
			if _, err := io.ReadFull(br, got); err != nil || string(got) != want {
				t.Fatalf("the client read %q, %v; want %q", got, err, want)
			}
			resp.Body.Close() // the client leaves
			http.DefaultClient.CloseIdleConnections()
			if err := <-handlerWrote; err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, "the exchange's record", func() bool {
				s.mu.Lock()
				defer s.mu.Unlock()
				return len(s.recs) > 0
			})
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.recs) != 1 {
				t.Fatalf("%d records, want 1", len(s.recs))
			}
			r := s.recs[0]
			if r.Outcome != tc.outcome || r.Flags.Has(record.FlagDC) != tc.dc || r.ResponseBytes != tc.bytes ||
				r.Method != "tools/call" || r.JSONRPC.ID.String() != "7" {
				t.Errorf("recorded %s, DC %v, %d response bytes, %s id %s (%s); want %s, DC %v, %d bytes, tools/call id 7",
					r.Outcome, r.Flags.Has(record.FlagDC), r.ResponseBytes, r.Method, r.JSONRPC.ID.String(), r.Note, tc.outcome, tc.dc, tc.bytes)
			}
			if !strings.Contains(r.Note, tc.note) || strings.Contains(r.Note, tc.notNot) {
				t.Errorf("note %q; want it to say %q and not %q", r.Note, tc.note, tc.notNot)
			}
			if late := fmt.Sprintf("the handler wrote %d more bytes after the client left", len(answer)); tc.dc != strings.Contains(r.Note, late) {
				t.Errorf("note %q; saying %q: %v, want %v", r.Note, late, !tc.dc, tc.dc)
			}
		})
	}
}
