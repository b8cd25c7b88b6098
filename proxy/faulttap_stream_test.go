package proxy_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestFaultDecisionOnStreamedResponse: a response that streams past the
// recorder's lazy start (its finishing goroutine starts while the handler
// still runs) gets the fault layer's decision, which the layer's tap
// delivers only when its handler returns, in its record; and the finishing
// goroutine touches none of what the tap sets before the handler's end
// (run with -race: it reported the tap's write of the Exchange's rare
// fields racing with the finishing goroutine's first read of them).
func TestFaultDecisionOnStreamedResponse(t *testing.T) {
	event := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1,\"message\":\"" + strings.Repeat("p", 16<<10) + "\"}}\n\n"
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.URL.Query().Has("slow") {
			for range 3 {
				fmt.Fprint(w, event)
				w.(http.Flusher).Flush()
			}
			time.Sleep(50 * time.Millisecond) // the finishing goroutine reads the stream meanwhile
		} else {
			fmt.Fprint(w, strings.Repeat(event, 3)) // in one piece: the handler may end before the finishing goroutine runs
		}
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n")
	}))
	sel, err := faults.Select("errors.http_status_sequence", []byte(`{"statusCodes":[503],"match":{"tool":"other"}}`))
	if err != nil {
		t.Fatal(err)
	}
	purl, _, sink, stop := startProxy(t, up, proxy.Options{Faults: &proxy.FaultOptions{Selection: sel, Seed: 7}})
	const n = 40
	for i := range n {
		u := purl
		if i%4 == 0 {
			u += "?slow"
		}
		if _, _, b, err := post(t, http.DefaultClient, u, callBody(1, "echo", `{}`), modernHeaders("echo")); err != nil || len(b) < 3*16<<10 {
			t.Fatalf("%d bytes, %v", len(b), err)
		}
	}
	stop()
	recs := sink.exchanges(t)
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	for _, r := range recs {
		if f := r.Fault; f == nil || f.Seed != 7 || len(f.Decisions) != 1 || f.Decisions[0].Fired {
			t.Errorf("fault %+v, want the layer's decision (not fired, seed 7)", f)
		}
	}
}
