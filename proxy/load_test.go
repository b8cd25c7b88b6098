package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// chaos sends a request to the real server or fails it, by the fault named
// in the X-Test-Fault request header.
func chaos(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hijackClose := func() {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		}
		switch r.Header.Get("X-Test-Fault") {
		case "reset":
			io.Copy(io.Discard, r.Body)
			hijackClose()
		case "cut":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`+"\n\n")
			w.(http.Flusher).Flush()
			hijackClose()
		case "hold":
			// One event, then nothing until the request ends: the stream
			// stays open until its client leaves, however slowly the
			// client gets to it (a stream that ends on its own after some
			// time would let a client on a busy machine read it whole).
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "503":
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// Under a bounded concurrent load with mixed faults, upstream resets and
// clients that leave early, every exchange yields exactly one record, and
// no goroutine outlives the proxy.
func TestOneRecordPerExchangeUnderLoad(t *testing.T) {
	const workers, perWorker = 16, 25
	up := serve(t, chaos(bothEras(mcpServer(), false)))
	base := runtime.NumGoroutine()

	path := t.TempDir() + "/load.jsonl"
	file, err := record.OpenFile(path, record.FileOptions{Sync: record.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	async := record.NewAsync(file, record.AsyncOptions{QueueSize: 64, Policy: record.QueueBlock})
	purl, p, _, stop := startProxy(t, up, proxy.Options{Records: async, Bodies: proxy.BodiesAll})

	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	hc := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	kinds := []string{"ok", "reset", "cut", "503", "slow", "leave", "fail"}
	var sent atomic.Int64
	want := map[string]*atomic.Int64{}
	for _, k := range kinds {
		want[k] = &atomic.Int64{}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				kind := kinds[(w*perWorker+i)%len(kinds)]
				id := w*1000 + i + 1
				tool, args := "echo", `{"text":"load"}`
				hdr := modernHeaders("echo")
				switch kind {
				case "reset", "cut", "503":
					hdr["X-Test-Fault"] = kind
				case "slow":
					tool, args = "slow", `{"steps":3}`
					hdr = modernHeaders("slow")
				case "leave":
					hdr["X-Test-Fault"] = "hold"
				case "fail":
					tool = "fail"
					hdr = modernHeaders("fail")
				}
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, purl, strings.NewReader(callBody(id, tool, args)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				sent.Add(1)
				want[kind].Add(1)
				resp, err := hc.Do(req)
				if err == nil {
					if kind == "leave" {
						// Leave after the first event.
						br := bufio.NewReader(resp.Body)
						for {
							line, err := br.ReadString('\n')
							if err != nil || line == "\n" {
								break
							}
						}
						cancel()
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				cancel()
			}
		}()
	}
	testwait.Wait(t, &wg, "the clients' calls through the proxy")
	waitExchanges(t, p, sent.Load())
	stop()
	if err := async.Close(); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()

	f, err := openRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[classify.Outcome]int{}
	ids := map[string]int{}
	for _, r := range f {
		if r.Kind != record.KindExchange {
			t.Errorf("unexpected %s record: %s", r.Kind, r.Note)
			continue
		}
		got[r.Outcome]++
		ids[r.JSONRPC.ID.String()]++
	}
	if int64(len(f)) != sent.Load() {
		t.Fatalf("%d records for %d exchanges; outcomes %v", len(f), sent.Load(), got)
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("request id %s has %d records", id, n)
		}
	}
	// Each kind ends in its own outcome.
	checks := map[classify.Outcome]int64{
		classify.ToolSuccess:  want["ok"].Load() + want["slow"].Load(),
		classify.ToolError:    want["fail"].Load(),
		classify.HTTPError:    want["503"].Load(),
		classify.NetworkError: want["reset"].Load(), // dropped as the upstream dropped it
	}
	for o, n := range checks {
		if int64(got[o]) != n {
			t.Errorf("%s: %d records, want %d (all: %v)", o, got[o], n, got)
		}
	}
	if int64(got[classify.StreamIncomplete]) != want["cut"].Load()+want["leave"].Load() {
		t.Errorf("STREAM_INCOMPLETE: %d records, want %d (all: %v)", got[classify.StreamIncomplete], want["cut"].Load()+want["leave"].Load(), got)
	}
	st := p.Stats()
	if st.UpstreamErrors != want["reset"].Load() || st.UpstreamResets != want["cut"].Load() || st.ClientGone != want["leave"].Load() {
		t.Errorf("stats %+v, want %d upstream errors, %d resets, %d gone", st, want["reset"].Load(), want["cut"].Load(), want["leave"].Load())
	}
	if st.InFlight != 0 {
		t.Errorf("%d exchanges still in flight", st.InFlight)
	}
	settleGoroutines(t, base, 2)
	t.Logf("%d exchanges, outcomes %v", sent.Load(), got)
}

func openRecords(path string) ([]*record.Record, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*record.Record
	for r, err := range record.NewReader(f).All() {
		if err != nil {
			return nil, fmt.Errorf("record file: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}
