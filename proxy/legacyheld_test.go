package proxy_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestLegacySSEHeldWrittenWhenWaitRunsOut: a proxy whose Wait runs out
// while an exchange is still in flight (here the legacy GET stream, still
// open) still writes, before Wait returns, the records it held for an
// answer on that stream (notSeen "shutdown"): their exchanges finished, the
// sink is closed next, and nothing else would write them. A POST finishing
// after that is written at once, not held past the sink's close. Before,
// Wait returned at the recorder's error and the held record was never
// handed to the sink before its close.
func TestLegacySSEHeldWrittenWhenWaitRunsOut(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	up := serve(t, srv)
	purl, p, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{})
	c := &http.Client{Timeout: 30 * time.Second}
	endpoint, _, resp := legacySession(t, c, purl)
	postAll(t, c, endpoint, call(`20`, "hold"))
	deadline := time.Now().Add(testwait.Bound)
	for p.Stats().Exchanges < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the POST's exchange did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := p.Wait(ctx); err == nil {
		t.Fatal("Wait returned nil with the GET stream still in flight")
	}
	posts, _ := byID(t, sink)
	checkPost(t, posts, `20`, answerWant{outcome: classify.RequestAccepted, tool: "hold", notSeen: record.AnswerShutdown})

	// A request finishing after the shutdown began is not held.
	postAll(t, c, endpoint, call(`21`, "never"))
	// Stats counts the exchange just before its record is written: wait
	// for the record itself.
	waitFor(t, sink, "the second POST's record", func(recs []*record.Record) bool {
		for _, r := range recs {
			if r.JSONRPC.ID.String() == "21" {
				return true
			}
		}
		return false
	})
	posts, _ = byID(t, sink)
	checkPost(t, posts, `21`, answerWant{outcome: classify.RequestAccepted, tool: "never", notSeen: record.AnswerShutdown})

	resp.Body.Close()
	stop()
	if posts, _ = byID(t, sink); len(posts) != 2 {
		t.Errorf("%d POST records, want 2", len(posts))
	}
	// The proxy's count of what its shutdown cut is report's: the records
	// record.Record.CutByShutdown counts (the two POSTs the stop left
	// unanswered), and the other SD ones closed (small22; before, the
	// held POSTs were not counted).
	var cut, closed int64
	for _, r := range sink.exchanges(t) {
		switch {
		case r.CutByShutdown():
			cut++
		case r.Flags.Has(record.FlagSD):
			closed++
		}
	}
	if st := p.Stats(); cut != 2 || st.CutByShutdown != cut || st.ClosedByShutdown != closed {
		t.Errorf("the records: %d cut by shutdown, %d closed; the proxy's stats: %d, %d; want 2 cut, and the same counts", cut, closed, st.CutByShutdown, st.ClosedByShutdown)
	}
}
