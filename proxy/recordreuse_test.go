package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// keepingObserver keeps every record it observes.
type keepingObserver struct {
	mu   sync.Mutex
	recs []*record.Record
}

func (o *keepingObserver) Observe(ob *proxy.Observation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.recs = append(o.recs, ob.Record)
}

// discardLines drops every line.
type discardLines struct{}

func (discardLines) WriteLine([]byte) error { return nil }
func (discardLines) Close() error           { return nil }

// TestObservedRecordsNotReused: the proxy lets the recorder reuse an
// exchange's record (record.Async keeps nothing of it) only without an
// observer, which may keep it: with one, each observed record still holds
// its own exchange's tool and id after the later exchanges (reusing them
// would give them a later exchange's).
func TestObservedRecordsNotReused(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id, _ := wire.Field(b, "id")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, id)
	}))
	obs := &keepingObserver{}
	sink := record.NewAsync(discardLines{}, record.AsyncOptions{Policy: record.QueueBlock})
	u, _, _, stop := startProxy(t, up, proxy.Options{Records: sink, Observer: obs})
	const n = 60
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tool-%d","arguments":{}}}`, i, i)
		if code, _, _, err := post(t, http.DefaultClient, u, body, nil); err != nil || code != 200 {
			t.Fatalf("exchange %d: %d, %v", i, code, err)
		}
	}
	stop()
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.recs) != n {
		t.Fatalf("%d observations of %d exchanges", len(obs.recs), n)
	}
	// Each exchange's record once, with its own tool (a record reused by a
	// later exchange would show that exchange's id and tool twice).
	seen := map[string]bool{}
	for _, r := range obs.recs {
		id := r.JSONRPC.ID.String()
		if seen[id] || r.Tool != "tool-"+id || r.Method != "tools/call" {
			t.Errorf("an observed record: id %s (seen before: %v), %s %q", id, seen[id], r.Method, r.Tool)
		}
		seen[id] = true
	}
}
