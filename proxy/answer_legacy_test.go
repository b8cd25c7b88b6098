package proxy_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestLegacySSEClientAnswer: over the 2024-11-05 HTTP+SSE transport the
// server's roots/list travels on the GET stream and the client POSTs its
// answer to the endpoint, answered 202 "Accepted" with no Content-Type.
// The answer's record is the answer's, as over Streamable HTTP and stdio:
// clientAnswer, method roots/list, id "srv-1", RESULT_SUCCESS. Before
// (with the method named), the 202's body judged it and the legacy stream
// read it as a request accepted (REQUEST_ACCEPTED) whose answer was due.
func TestLegacySSEClientAnswer(t *testing.T) {
	t.Parallel()
	srv := &legacySSEServer{streams: map[string]chan []byte{}}
	up := serve(t, srv)
	purl, _, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{})
	base := strings.TrimSuffix(purl, "/sse")
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(purl)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	var endpoint string
	for endpoint == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the endpoint event: %v", err)
		}
		if after, ok := strings.CutPrefix(line, "data: "); ok {
			endpoint = strings.TrimSpace(after)
		}
	}
	srv.mu.Lock()
	ch := srv.streams["session-1"]
	srv.mu.Unlock()
	ch <- []byte(`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the server request: %v", err)
		}
		if strings.Contains(line, "roots/list") {
			break
		}
	}
	// The proxy reads the stream as the client does (an eager pipe), but
	// its GET's record, written at the stream's end, cannot be waited
	// for: give its reader the event before the answer, whose record
	// names the method the proxy saw. (Not a time asserted: a slower
	// reader fails the method, never passes a wrong verdict.)
	time.Sleep(500 * time.Millisecond)
	if status, _, _, err := post(t, c, base+endpoint, `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`, nil); err != nil || status != http.StatusAccepted {
		t.Fatalf("answer: %d %v", status, err)
	}
	resp.Body.Close()
	stop()
	var got *record.Record
	for _, r := range sink.exchanges(t) {
		if r.HTTPMethod == http.MethodPost {
			got = r
		}
	}
	if got == nil {
		t.Fatal("no record of the answer's POST")
	}
	if !got.ClientAnswer || got.Method != "roots/list" || string(got.JSONRPC.ID.Raw()) != `"srv-1"` || got.Outcome != classify.ResultSuccess || got.Status != http.StatusAccepted {
		t.Errorf("answer's record: clientAnswer %v, method %q, id %s, outcome %s, status %d, reason %q; want true, roots/list, \"srv-1\", RESULT_SUCCESS, 202",
			got.ClientAnswer, got.Method, got.JSONRPC.ID.Raw(), got.Outcome, got.Status, got.Reason)
	}
}
