package proxy_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestRecordKeepsIDAfterTerminal: through the proxy, on real sockets, the
// record of a stream whose response for id 1 is followed by other events
// names id 1, a number (issue 10, defects 1 and 2: the id aliased the
// classifier's event buffer, so the record said 7, or failed to encode and
// was lost).
func TestRecordKeepsIDAfterTerminal(t *testing.T) {
	t.Parallel()
	result := `data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}` + "\n\n"
	after := map[string]string{
		"/then-777":          `data: {"jsonrpc":"2.0","id":777,"result":{}}` + "\n\n",
		"/then-notification": `data: {"method":"notifications/message","jsonrpc":"2.0","params":{"level":"info","data":"x"}}` + "\n\n",
		"/then-request":      ": keep-alive\n\n" + `data: {"method":"ping","id":"p","jsonrpc":"2.0"}` + "\n\n",
	}
	mux := http.NewServeMux()
	for path, ev := range after {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, result)
			w.(http.Flusher).Flush()
			io.WriteString(w, ev)
		})
	}
	base := serve(t, mux)
	base = base[:len(base)-len("/mcp")]
	for path := range after {
		t.Run(path[1:], func(t *testing.T) {
			t.Parallel()
			purl, _, sink, stop := startProxy(t, base+path, proxy.Options{})
			direct := fetch(t, base+path, callBody(1, "echo", ""), modernHeaders("echo"))
			via := fetch(t, purl, callBody(1, "echo", ""), modernHeaders("echo"))
			if direct.String() != via.String() {
				t.Errorf("through the proxy the client received something else\ndirect: %s\nproxy:  %s", direct, via)
			}
			stop()
			recs := sink.exchanges(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1 (a record that fails to encode is lost)", len(recs))
			}
			r := recs[0]
			if r.Outcome != classify.ToolSuccess || string(r.JSONRPC.ID.Raw()) != "1" || !r.JSONRPC.ResponseID.IsZero() {
				t.Fatalf("record %s, id %s, responseId %s; want TOOL_SUCCESS for id 1 (a number)", r.Outcome, r.JSONRPC.ID, r.JSONRPC.ResponseID)
			}
		})
	}
}
