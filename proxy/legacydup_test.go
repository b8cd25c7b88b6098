package proxy_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestLegacyDuplicateIDAmbiguous: two requests of one id POSTed to a
// 2024-11-05 HTTP+SSE stream's endpoint while the first waits for its
// answer: an answer of that id on the stream cannot tell which it answers
// (the server's answers may come in any order: here the second's, an
// isError result, comes first). Neither record takes an answer: both are
// REQUEST_ACCEPTED with streamAnswer.notSeen "ambiguous", and the stream's
// record counts the two answers ambiguous, not paired nor unpaired. Before,
// the first answer was paired with the first request by its id, so the
// first call's record had the second's TOOL_ERROR; the second's record had
// no streamAnswer at all, and the first's real answer was counted
// unpaired.
func TestLegacyDuplicateIDAmbiguous(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	up := serve(t, srv)
	purl, _, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{})
	c := &http.Client{Timeout: 30 * time.Second}
	endpoint, br, resp := legacySession(t, c, purl)
	postAll(t, c, endpoint, call(`5`, "hold"), call(`5`, "fail"), call(`6`, "echo"))
	readAnswers(t, br, 2) // the second 5's (fail) and 6's
	close(srv.release)
	readAnswers(t, br, 1) // the first 5's (hold)
	waitFor(t, sink, "the three records", func(recs []*record.Record) bool {
		n := 0
		for _, r := range recs {
			if r.HTTPMethod == http.MethodPost {
				n++
			}
		}
		return n == 3
	})
	resp.Body.Close()
	stop()
	var get *record.Record
	fives := map[string]*record.Record{}
	for _, r := range sink.exchanges(t) {
		switch {
		case r.HTTPMethod == http.MethodGet:
			get = r
		case r.JSONRPC.ID.String() == "5":
			fives[r.Tool] = r
		case r.JSONRPC.ID.String() == "6":
			if r.Outcome != classify.ToolSuccess || r.StreamAnswer == nil || !r.StreamAnswer.Seen {
				t.Errorf("id 6: %s (%s) streamAnswer %+v, want TOOL_SUCCESS seen", r.Outcome, r.Reason, r.StreamAnswer)
			}
		}
	}
	for _, tool := range []string{"hold", "fail"} {
		r := fives[tool]
		if r == nil {
			t.Errorf("id 5 (%s): no record", tool)
			continue
		}
		if r.Outcome != classify.RequestAccepted || r.StreamAnswer == nil || r.StreamAnswer.Seen || r.StreamAnswer.NotSeen != record.AnswerAmbiguous ||
			!strings.Contains(r.Reason, "another request of the same id") {
			t.Errorf("id 5 (%s): %s (%s) streamAnswer %+v; want REQUEST_ACCEPTED, notSeen %q", tool, r.Outcome, r.Reason, r.StreamAnswer, record.AnswerAmbiguous)
		}
	}
	if get == nil || get.StreamAnswers == nil {
		t.Fatalf("the stream's record: %+v", get)
	}
	if sa := *get.StreamAnswers; sa.Responses != 3 || sa.Paired != 1 || sa.Ambiguous != 2 || sa.Unpaired != 0 || sa.Late != 0 {
		t.Errorf("the stream's answers %+v, want 3 responses, 1 paired, 2 ambiguous", sa)
	}
}
