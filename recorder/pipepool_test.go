package recorder

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestPipeReusedAllocs: a pipe's whole life as a 64 KiB event stream of
// 16 KiB events lives it (written, read by chunks as the event reader
// does, stopped, given back) allocates nothing once the pools are warm.
// Before the pipes were pooled it cost 4 allocations: the pipe and its
// queue's growth to 1, 2 and 4 entries (the reader lags a few writes).
func TestPipeReusedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops on purpose under the race detector")
	}
	const size = 16 << 10
	life := func() {
		p := newPipe()
		for range 4 {
			p.write(getChunk(size)[:size], 0)
		}
		p.closeWithError(nil)
		for {
			if _, err := p.NextChunk(); err != nil {
				break
			}
		}
		p.stop()
		releasePipe(p)
	}
	if n := mallocsPerRun(1000, life); n > 0.05 {
		t.Errorf("%.2f allocations per pipe's life, want 0", n)
	}
}

// TestPipeQueueKeepsItsArray: taking the head of the queue keeps the
// array's room, so a writer that stays a few chunks ahead of its reader
// does not grow the queue again (reslicing from the front lost the room
// and every append past it copied the queue into a new array).
func TestPipeQueueKeepsItsArray(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops on purpose under the race detector")
	}
	p := newPipe()
	defer func() { p.stop(); releasePipe(p) }()
	for range 3 {
		p.write(getChunk(1024)[:1024], 0)
	}
	n := mallocsPerRun(1000, func() {
		p.write(getChunk(1024)[:1024], 0) // 4 queued
		c, err := p.NextChunk()           // 3 queued, the head's room kept
		if err != nil || len(c) != 1024 {
			panic(fmt.Sprintf("NextChunk: %d bytes, %v", len(c), err))
		}
	})
	if n > 0.05 {
		t.Errorf("%.2f allocations per write and read with 3 chunks queued, want 0", n)
	}
}

// TestPooledPipesNoLeak: event streams of every shape through the recorder
// from 8 clients at once, each exchange's pipe taken from the pool that
// the exchanges before it gave theirs back to: every record is its own
// stream's (its bytes, its events, the verdict of its last event and, for
// an error, the message and the body as sent). Recycled chunks are
// poisoned, so a chunk or pipe still in use by another exchange shows.
// Half the streams write a comment 2 ms after their last event: without
// bodies the classifier stops at the terminal response while the handler
// still writes, and a pipe given back before the handler's end would take
// those bytes into another exchange's stream.
func TestPooledPipesNoLeak(t *testing.T) {
	for _, mode := range []BodyMode{BodiesErrors, BodiesNone} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) { testPooledPipes(t, mode) })
	}
}

func testPooledPipes(t *testing.T, mode BodyMode) {
	SetPoisonRecycled(true)
	defer SetPoisonRecycled(false)
	type stream struct {
		body   string
		events int
		err    bool
	}
	var mu sync.Mutex
	streams := make(map[string]stream) // the request id -> what the upstream sent
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id := string(b[strings.Index(string(b), `"id":"`)+6:])
		id = id[:strings.IndexByte(id, '"')]
		rnd := rand.New(rand.NewPCG(uint64(len(id)), uint64(id[len(id)-1])))
		var s stream
		var all strings.Builder
		w.Header().Set("Content-Type", "text/event-stream")
		n := 1 + rnd.IntN(6)
		for i := range n {
			pad := strings.Repeat(string(rune('a'+rnd.IntN(26))), rnd.IntN(20<<10))
			var ev string
			switch {
			case i < n-1:
				ev = fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"%s %s\"}}\n\n", id, pad)
			case rnd.IntN(2) == 0:
				s.err = true
				ev = fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"error\":{\"code\":-32000,\"message\":\"failed %s\"}}\n\n", id, id)
			default:
				ev = fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s %s\"}]}}\n\n", id, id, pad)
			}
			all.WriteString(ev)
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
		if rnd.IntN(2) == 0 {
			time.Sleep(2 * time.Millisecond)
			const trailing = ": trailing\n\n"
			all.WriteString(trailing)
			io.WriteString(w, trailing)
			w.(http.Flusher).Flush()
		}
		s.body, s.events = all.String(), n
		mu.Lock()
		streams[id] = s
		mu.Unlock()
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	sink := &collectSink{}
	rc, err := New(Options{Records: sink, Bodies: mode, Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	fwd := sentReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rc.Serve(w, r, fwd) }))
	defer srv.Close()

	const clients, each = 8, 40
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%d-%d","method":"tools/call","params":{"name":"echo","arguments":{}}}`, c, i)
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	testwait.Wait(t, &wg, "the clients' calls through the recorder")
	if err := rc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sink.recs) != clients*each {
		t.Fatalf("%d records, want %d", len(sink.recs), clients*each)
	}
	for _, r := range sink.recs {
		id := strings.Trim(r.JSONRPC.ID.String(), `"`)
		s, ok := streams[id]
		switch {
		case !ok:
			t.Errorf("record of id %q: no such stream", id)
		case r.ResponseBytes != int64(len(s.body)):
			t.Errorf("id %s: %d response bytes, the stream was %d", id, r.ResponseBytes, len(s.body))
		case r.SSE == nil || r.SSE.Events != s.events || !r.SSE.Terminal:
			t.Errorf("id %s: sse %+v, the stream had %d events", id, r.SSE, s.events)
		case s.err && (r.Outcome != classify.JSONRPCError || r.ErrorMessage != "failed "+id):
			t.Errorf("id %s: %s %q, the stream ended in its error", id, r.Outcome, r.ErrorMessage)
		case s.err && mode != BodiesNone && (r.ResponseBody == nil || r.ResponseBody.Text != s.body):
			t.Errorf("id %s: the recorded body is not the stream's", id)
		case !s.err && r.Outcome != classify.ToolSuccess:
			t.Errorf("id %s: %s, the stream ended in its result", id, r.Outcome)
		}
	}
}
