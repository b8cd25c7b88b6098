package proxy_test

import (
	"crypto/sha256"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestClassifyMemoryBudget: many large events at once through the proxy,
// on real sockets (issue 11, hole 8: 20 concurrent 50 MB events took
// 261 MB, with no overall bound). With a budget far below what the events
// would need, every client still gets every byte, each record is either a
// verdict or NOT_CLASSIFIED with cause memory-budget (never a cut), and
// what the classifiers reserved never passed the budget. (That the
// reservations cover the buffers a reader holds, and bound its
// allocations, is TestSSEReaderHeldCoversBuffers in package wire: no
// process measure is taken here, which would flake on a loaded machine.)
func TestClassifyMemoryBudget(t *testing.T) {
	t.Parallel()
	const (
		clients = 12
		budget  = 8 << 20
		half    = 1 << 20 // each event: two halves of about 1 MiB
	)
	text := strings.Repeat("x", 2*half)
	event := "data: " + `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"` + text + `"}]}}` + "\n\n"
	want := sha256.Sum256([]byte(event))
	// Every handler sends its first half (about 1 MiB), then waits until
	// the budget has refused at least clients-8 of them: 12 partial events
	// of 1 MiB cannot all be held in 8 MiB at once, so this happens once
	// the classifiers have read what was sent, however slowly; the wait is
	// bounded so that a broken budget fails the test instead of hanging it.
	refusedEnough := make(chan struct{})
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, event[:half])
		w.(http.Flusher).Flush()
		<-refusedEnough
		io.WriteString(w, event[half:])
	}))
	purl, p, sink, stop := startProxy(t, upstream, proxy.Options{ClassifyMemory: budget})
	go func() {
		defer close(refusedEnough)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if p.Stats().ClassifyMemoryRefused >= clients-8 {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, body, err := post(t, http.DefaultClient, purl, callBody(1, "echo", ""), modernHeaders("echo"))
			if err != nil || status != 200 || sha256.Sum256(body) != want {
				errs <- "a client did not receive the whole event"
			}
		}()
	}
	testwait.Wait(t, &wg, "the 12 clients' events through the proxy")
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	stop()
	recs := rawExchanges(t, sink)
	if len(recs) != clients {
		t.Fatalf("%d records, want %d", len(recs), clients)
	}
	refused := 0
	for _, r := range recs {
		if r["responseBytes"] != float64(len(event)) {
			t.Errorf("record responseBytes %v, want %d", r["responseBytes"], len(event))
		}
		switch r["outcome"] {
		case string(classify.ToolSuccess):
		case string(classify.NotClassified):
			nc, _ := r["notClassified"].(map[string]any)
			if r["layer"] != "none" || nc["cause"] != classify.CauseMemoryBudget || nc["limit"] != float64(budget) || nc["size"] != float64(len(event)) {
				t.Errorf("NOT_CLASSIFIED record %v: want cause memory-budget, limit %d, size %d", nc, budget, len(event))
			}
			if !strings.Contains(r["note"].(string), "forwarded to the client untouched") {
				t.Errorf("note %q does not say the response was forwarded", r["note"])
			}
			refused++
		default:
			t.Errorf("record %v (%v)", r["outcome"], r["reason"])
		}
	}
	st := p.Stats()
	if refused < clients-8 || st.NotClassified != int64(refused) || st.ClassifyMemoryRefused < int64(refused) {
		t.Errorf("%d of %d refused by the budget (stats: %d not classified, %d refusals); want at least %d", refused, clients, st.NotClassified, st.ClassifyMemoryRefused, clients-8)
	}
	if st.ClassifyMemory != budget || st.ClassifyMemoryPeak > budget || st.ClassifyMemoryPeak < half || st.ClassifyMemoryInUse != 0 {
		t.Errorf("budget %d, peak %d, in use at the end %d", st.ClassifyMemory, st.ClassifyMemoryPeak, st.ClassifyMemoryInUse)
	}
}
