package classify_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// The bodies below are the bytes the seed article's Node.js test server
// writes (JSON.stringify of its fixtures, so compact and in the fixtures' key
// order). The article is /work/shared/seed/mcp-error-layers.es.txt; its eleven
// test(...) calls are the cases of TestSeedArticle.
const (
	seedGood      = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`
	seedRPCError  = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`
	seedToolError = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"failed"}],"isError":true}}`
	seedOutage    = `{"note":"synthetic outage"}`
	seedBoth      = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false},"error":{"code":-32602,"message":"synthetic invalid params"}}`
	seedWrongID   = `{"jsonrpc":"2.0","id":99,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`
	seedInput     = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`
	seedLegacy    = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`
	seedBadShape  = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":"not-an-array","isError":false}}`

	// seedRequest is the tools/call the article's onePost sends.
	seedRequest = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"synthetic","arguments":{}}}`
)

// seedReply is what the test server writes for one POST.
type seedReply struct {
	status int
	body   string
}

// seedWant is the article's expected classification of one POST's response.
type seedWant struct {
	outcome classify.Outcome
	layer   classify.Layer
	// status is asserted on HTTP_ERROR (the article's {status: 503}).
	status int
	// code is asserted on JSONRPC_ERROR (the article's {code: -32602}).
	code int64
	// warnings must all be present.
	warnings []string
}

func TestSeedArticle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// replies[n] answers POST n+1; the last one answers every later POST.
		replies []seedReply
		// posts[n] is what POST n+1 must classify as; the test sends exactly
		// len(posts) POSTs and checks the server's count after each.
		posts []seedWant
	}{
		{
			name:    "baseline complete is TOOL_SUCCESS",
			replies: []seedReply{{200, seedGood}},
			posts:   []seedWant{{outcome: classify.ToolSuccess, layer: classify.LayerApplication}},
		},
		{
			name:    "503 then 200 takes an explicit second POST",
			replies: []seedReply{{503, seedOutage}, {200, seedGood}},
			posts: []seedWant{
				{outcome: classify.HTTPError, layer: classify.LayerTransport, status: 503},
				{outcome: classify.ToolSuccess, layer: classify.LayerApplication},
			},
		},
		{
			name:    "HTTP 200 with a JSON-RPC error is JSONRPC_ERROR",
			replies: []seedReply{{200, seedRPCError}},
			posts:   []seedWant{{outcome: classify.JSONRPCError, layer: classify.LayerProtocol, code: -32602}},
		},
		{
			name:    "HTTP 200 with isError true is TOOL_ERROR",
			replies: []seedReply{{200, seedToolError}},
			posts:   []seedWant{{outcome: classify.ToolError, layer: classify.LayerApplication}},
		},
		{
			name:    "HTTP 500 with a success body is HTTP_ERROR",
			replies: []seedReply{{500, seedGood}},
			posts:   []seedWant{{outcome: classify.HTTPError, layer: classify.LayerTransport, status: 500}},
		},
		{
			name:    "malformed JSON is MALFORMED_JSON",
			replies: []seedReply{{200, `{unclosed`}},
			posts:   []seedWant{{outcome: classify.MalformedJSON, layer: classify.LayerProtocol}},
		},
		{
			name:    "result and error together is INVALID_ENVELOPE",
			replies: []seedReply{{200, seedBoth}},
			posts:   []seedWant{{outcome: classify.InvalidEnvelope, layer: classify.LayerProtocol}},
		},
		{
			name:    "wrong response id 99 is INVALID_ENVELOPE",
			replies: []seedReply{{200, seedWrongID}},
			posts:   []seedWant{{outcome: classify.InvalidEnvelope, layer: classify.LayerProtocol}},
		},
		{
			name:    "input_required is INPUT_REQUIRED, not a success",
			replies: []seedReply{{200, seedInput}},
			posts:   []seedWant{{outcome: classify.InputRequired, layer: classify.LayerInteraction}},
		},
		{
			name:    "legacy result without resultType is TOOL_SUCCESS with a warning",
			replies: []seedReply{{200, seedLegacy}},
			posts: []seedWant{{outcome: classify.ToolSuccess, layer: classify.LayerApplication,
				warnings: []string{classify.WarnMissingResultType}}},
		},
		{
			name:    "content not-an-array is INVALID_TOOL_RESULT",
			replies: []seedReply{{200, seedBadShape}},
			posts:   []seedWant{{outcome: classify.InvalidToolResult, layer: classify.LayerProtocol}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, posts := newSeedServer(t, tt.replies)
			for i, want := range tt.posts {
				r := seedPost(t, srv.URL+"/mcp")
				if got := posts.Load(); got != int64(i+1) {
					t.Fatalf("POST %d: the server counted %d POSTs, want %d (no automatic retry)", i+1, got, i+1)
				}
				if r.Outcome != want.outcome || r.Layer() != want.layer {
					t.Fatalf("POST %d: got %s/%s (%s), want %s/%s", i+1, r.Layer(), r.Outcome, r.Reason, want.layer, want.outcome)
				}
				if want.status != 0 && r.Status != want.status {
					t.Errorf("POST %d: status %d, want %d", i+1, r.Status, want.status)
				}
				if want.code != 0 {
					if code, ok := r.JSONRPC().ErrorCode(); !ok || code != want.code {
						t.Errorf("POST %d: JSON-RPC details %+v, want code %d", i+1, r.JSONRPC(), want.code)
					}
				}
				for _, w := range want.warnings {
					if !r.HasWarning(w) {
						t.Errorf("POST %d: warning %q missing; warnings: %+v", i+1, w, r.Warnings())
					}
				}
			}
		})
	}
}

// newSeedServer starts a loopback server that answers POST n with replies[n-1]
// (the last reply repeats) as application/json, like the article's withPeer,
// and returns it with its POST counter.
func newSeedServer(t *testing.T, replies []seedReply) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := int(posts.Add(1))
		reply := replies[min(n, len(replies))-1]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.status)
		_, _ = io.WriteString(w, reply.body)
	}))
	t.Cleanup(srv.Close)
	return srv, &posts
}

// seedPost sends the article's tools/call with id 1 to url and classifies the
// real *http.Response, reading the body as a stream.
func seedPost(t *testing.T, url string) *classify.Result {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(seedRequest))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	r, err := classify.Classify(&classify.Exchange{
		Method: "tools/call",
		ID:     wire.IntID(1),
		Status: resp.StatusCode,
		Header: resp.Header,
		Body:   resp.Body,
	})
	if err != nil {
		t.Fatalf("Classify: %v", err)
	}
	return r
}
