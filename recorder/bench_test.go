package recorder_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// discard counts records and keeps none.
type discard struct{ n atomic.Int64 }

func (d *discard) Write(*record.Record) error { d.n.Add(1); return nil }

// sseEvents is a 64 KiB SSE response of 4 events: three notifications and
// the tools/call result, each about 16 KiB.
func sseEvents() [][]byte {
	pad := strings.Repeat("x", 16<<10-120)
	var evs [][]byte
	for i := 0; i < 3; i++ {
		evs = append(evs, fmt.Appendf(nil, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%q}}\n\n", pad))
	}
	evs = append(evs, fmt.Appendf(nil, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", pad))
	return evs
}

// BenchmarkRecorderSSE is one recorded exchange with a 64 KiB SSE response
// of 4 events, each written and flushed on its own (as the reverse proxy
// does), in the default body mode, over a real connection on 127.0.0.1.
// Sync makes each exchange's record finished within its request.
func BenchmarkRecorderSSE(b *testing.B) {
	recorder.SetPoisonRecycled(false)
	defer recorder.SetPoisonRecycled(true)
	evs := sseEvents()
	sink := &discard{}
	rc, err := recorder.New(recorder.Options{Records: sink, Sync: true})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range evs {
			_, _ = w.Write(ev)
			w.(http.Flusher).Flush()
		}
	})))
	defer srv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	b.ReportAllocs()
	n := 0
	for _, ev := range evs {
		n += len(ev)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.StopTimer()
	if sink.n.Load() != int64(b.N) {
		b.Fatalf("%d records for %d exchanges", sink.n.Load(), b.N)
	}
}
