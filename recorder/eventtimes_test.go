package recorder_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/recorder"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestEventTimesFromTheOneScan: the event stream's one scan (the
// classifier's event reader over the pipe's chunks, or the pipe's own scan
// when the body is read by copy) times every event the client received,
// over a real connection: the record's time to the first event, and with
// full bodies an arrival per event at the offset where it ended, in order,
// however the response was written (one write per event, 1-byte writes,
// the whole stream at once), on the paths that read the stream as events
// (a tools/call stream, one the classifier stops reading at a malformed
// event, a GET stream) and on those that read it by copy (an HTTP error with
// an event-stream body, a notification answered with a stream).
func TestEventTimesFromTheOneScan(t *testing.T) {
	result := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("r", 3000) + `"}]}}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("n", 2000) + `"}}`
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`
	events := func(data ...string) []string {
		var out []string
		for i, d := range data {
			out = append(out, fmt.Sprintf("id: %d\ndata: %s\n\n", i, d))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		method  string // HTTP method
		body    string // the request
		status  int
		events  []string
		outcome string
	}{
		{"tools/call stream", http.MethodPost, call, 200, append(events(note, note, result), ": keep-alive\n\n"), "TOOL_SUCCESS"},
		{"stopped at a malformed event", http.MethodPost, call, 200, events("{nope", note, result, note), "MALFORMED_JSON"},
		{"GET stream", http.MethodGet, "", 200, events(note, note), ""},
		{"HTTP error as a stream", http.MethodPost, call, 500, events(note, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`), ""},
		{"notification answered with a stream", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 200, events(note), ""},
		{"comments only", http.MethodPost, call, 200, []string{": a\n\n", ": b\n\n"}, "STREAM_INCOMPLETE"},
	} {
		for _, write := range []int{0, 1, -1} { // per event, 1-byte writes, all at once
			for _, mode := range []recorder.BodyMode{recorder.BodiesFull, recorder.BodiesFull + "/64", recorder.BodiesNone} {
				limit := 0
				if mode == recorder.BodiesFull+"/64" {
					// The capture is full after 64 bytes: the events after
					// those the classifier read are still timed.
					mode, limit = recorder.BodiesFull, 64
				}
				name := fmt.Sprintf("%s/write=%d/%s/limit=%d", tc.name, write, mode, limit)
				t.Run(name, func(t *testing.T) {
					evs := tc.events
					if write == 1 && len(strings.Join(evs, "")) > 6000 {
						evs = evs[:2] // 1-byte writes of a shorter stream
					}
					stream := strings.Join(evs, "")
					s := &sink{}
					rc, err := recorder.New(recorder.Options{Records: s, Bodies: mode, BodyLimit: limit, Sync: true})
					if err != nil {
						t.Fatal(err)
					}
					srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						_, _ = io.Copy(io.Discard, r.Body)
						w.Header().Set("Content-Type", "text/event-stream")
						w.WriteHeader(tc.status)
						var pieces []string
						switch write {
						case 0:
							pieces = evs
						case -1:
							pieces = []string{stream}
						default:
							for i := range len(stream) {
								pieces = append(pieces, stream[i:i+1])
							}
						}
						for _, p := range pieces {
							_, _ = io.WriteString(w, p)
							w.(http.Flusher).Flush()
						}
					})))
					defer srv.Close()
					req, err := http.NewRequest(tc.method, srv.URL, strings.NewReader(tc.body))
					if err != nil {
						t.Fatal(err)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					got, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if string(got) != stream {
						t.Fatalf("the client got %d bytes, want %d", len(got), len(stream))
					}
					s.mu.Lock()
					defer s.mu.Unlock()
					if len(s.recs) != 1 {
						t.Fatalf("%d records, want 1", len(s.recs))
					}
					rec := s.recs[0]
					if tc.outcome != "" && len(evs) == len(tc.events) && string(rec.Outcome) != tc.outcome {
						t.Fatalf("outcome %s, want %s (%s)", rec.Outcome, tc.outcome, rec.Reason)
					}
					var sc wire.SSEScanner
					sc.Feed([]byte(stream))
					var want []int64
					for tok := sc.Next(); tok != nil; tok = sc.Next() {
						if tok.Kind == wire.SSEEnd && tok.HasData {
							want = append(want, tok.End)
						}
					}
					if (len(want) > 0) != (rec.Timings.FirstEvent > 0) {
						t.Fatalf("first event %v with %d events", rec.Timings.FirstEvent, len(want))
					}
					var ends []int64
					for i, a := range rec.SSEArrivals {
						ends = append(ends, a.End)
						if i > 0 && a.At < rec.SSEArrivals[i-1].At {
							t.Fatalf("arrival %d at %v, before the one before it (%v)", i, a.At, rec.SSEArrivals[i-1].At)
						}
					}
					if mode != recorder.BodiesFull {
						want = nil
					}
					if !slices.Equal(ends, want) {
						t.Fatalf("arrivals end at %v, want %v", ends, want)
					}
					// (Both went through the record's JSON: milliseconds to the
					// microsecond.)
					if len(rec.SSEArrivals) > 0 && (rec.SSEArrivals[0].At-time.Duration(rec.Timings.FirstEvent)).Abs() >= time.Microsecond {
						t.Fatalf("first arrival at %v, first event at %v", rec.SSEArrivals[0].At, time.Duration(rec.Timings.FirstEvent))
					}
				})
			}
		}
	}
}
