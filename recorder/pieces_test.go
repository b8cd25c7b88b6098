package recorder

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// allSink keeps every record, and closes answered at the first record of
// a client's answer.
type allSink struct {
	mu       sync.Mutex
	recs     []*record.Record
	once     sync.Once
	answered chan struct{}
}

func (s *allSink) Write(r *record.Record) error {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
	if r.ClientAnswer {
		s.once.Do(func() { close(s.answered) })
	}
	return nil
}

func (s *allSink) answer() *record.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.recs {
		if r.ClientAnswer {
			return r
		}
	}
	return nil
}

// gatedReader returns first, then waits for gate, then returns rest, then
// io.EOF.
type gatedReader struct {
	first, rest []byte
	gate        <-chan struct{}
	step        int
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.step++
	switch g.step {
	case 1:
		return copy(p, g.first), nil
	case 2:
		<-g.gate
		return copy(p, g.rest), nil
	}
	return 0, io.EOF
}

const (
	elicitEvent = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"name?\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n"
	finalEvent  = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n\n"
)

// answerRace runs a tools/call whose event stream (forwarded through
// ForwardChunk, so classified on the forwarding goroutine after each
// piece's write) carries a server request, with hook called after the
// request's piece was flushed and before the classifier reads it; the
// client reads the request and POSTs its answer at once. The stream ends
// only once the answer's record was written. It returns the answer's
// record.
func answerRace(t *testing.T, hook func(rc *Recorder, s *allSink)) *record.Record {
	s := &allSink{answered: make(chan struct{})}
	rc, err := New(Options{Records: s})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	testPieceWritten = func(ex *Exchange) {
		if ex.msg.Method == "tools/call" {
			once.Do(func() { hook(rc, s) })
		}
	}
	t.Cleanup(func() { testPieceWritten = nil })
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/answer" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ex := From(r.Context())
		if err := forwardBody(ex, &gatedReader{first: []byte(elicitEvent), rest: []byte(finalEvent), gate: s.answered}); err != io.EOF {
			t.Errorf("forwardBody: %v, want io.EOF", err)
		}
	})))
	defer srv.Close()
	post := func(path, body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", "s-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	call := post("/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	br := bufio.NewReader(call.Body)
	var got strings.Builder
	for !strings.HasSuffix(got.String(), "\n\n") {
		line, err := br.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("the stream ended before the request (%q): %v", got.String(), err)
		}
	}
	if got.String() != elicitEvent {
		t.Fatalf("the client read %q, want the request's event", got.String())
	}
	ans := post("/answer", `{"jsonrpc":"2.0","id":"e1","result":{"action":"accept","content":{"name":"ada"}}}`)
	io.Copy(io.Discard, ans.Body)
	ans.Body.Close()
	rest, err := io.ReadAll(br)
	call.Body.Close()
	if err != nil || string(rest) != finalEvent {
		t.Errorf("the rest of the stream: %q (%v), want the result's event", rest, err)
	}
	if err := rc.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	a := s.answer()
	if a == nil {
		t.Fatal("no record of the client's answer")
	}
	return a
}

// TestAnswerWaitsForItsPieceInFlight: an event stream forwarded through
// ForwardChunk is written and flushed first and read by its classifier
// after, so a client can read a server request and POST its answer before
// the request is noted. The answer's record waits for its session's piece
// in flight and names the method it answers. Here the classifier's read of
// the request's piece is held until the answer's record waits for it (or,
// with no wait, was written): without the wait the record has no method.
func TestAnswerWaitsForItsPieceInFlight(t *testing.T) {
	a := answerRace(t, func(rc *Recorder, s *allSink) {
		testwait.Until(t, "the answer's record waiting for the piece", func() bool {
			select {
			case <-s.answered:
				return true
			default:
			}
			return rc.pieces.waiters.Load() > 0
		})
	})
	if a.Method != "elicitation/create" || string(a.JSONRPC.ID.Raw()) != `"e1"` || strings.Contains(a.Note, "not known") {
		t.Errorf("the answer's record: method %q, id %s, note %q; want elicitation/create, \"e1\", no note of the wait", a.Method, a.JSONRPC.ID.Raw(), a.Note)
	}
}

// TestAnswerWaitIsBounded: a piece whose write does not end (a client
// that reads nothing more) holds an answer's record for answerWaitLimit at
// most; the record then names no method and says why. The classifier's
// read of the piece is held here until the answer's record was written.
func TestAnswerWaitIsBounded(t *testing.T) {
	old := answerWaitLimit
	answerWaitLimit = time.Millisecond
	t.Cleanup(func() { answerWaitLimit = old })
	a := answerRace(t, func(rc *Recorder, s *allSink) {
		testwait.Recv(t, s.answered, "the answer's record, its wait over")
	})
	if a.Method != "" || string(a.JSONRPC.ID.Raw()) != `"e1"` || !strings.Contains(a.Note, "method this answer answers is not known") {
		t.Errorf("the answer's record: method %q, id %s, note %q; want no method, \"e1\", the note", a.Method, a.JSONRPC.ID.Raw(), a.Note)
	}
}

// onceReader returns b in one read, then io.EOF.
type onceReader struct {
	b    []byte
	done bool
}

func (o *onceReader) Read(p []byte) (int, error) {
	if o.done {
		return 0, io.EOF
	}
	o.done = true
	return copy(p, o.b), nil
}

// TestAnswerWaitAcrossAReleasedStream: an answer's record waits for the
// pieces in flight of two streams of its session; one of them ends, and
// its inlineClass goes back to the pool (reset) while the wait goes on.
// The waiter reads only the stream's piece slot, which the reset leaves
// alone: under -race this failed (review21) while the waiter read the
// inlineClass's generation under the watch's lock and release reset it
// without it. The answer's record names its method.
func TestAnswerWaitAcrossAReleasedStream(t *testing.T) {
	s := &allSink{answered: make(chan struct{})}
	rc, err := New(Options{Records: s})
	if err != nil {
		t.Fatal(err)
	}
	aGo, bGo := make(chan struct{}), make(chan struct{})
	var aOnce, bOnce sync.Once
	testPieceWritten = func(ex *Exchange) {
		switch ex.msg.ID.String() {
		case "1":
			aOnce.Do(func() { <-aGo })
		case "2":
			bOnce.Do(func() { <-bGo })
		}
	}
	t.Cleanup(func() { testPieceWritten = nil })
	progress := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/answer" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ex := From(r.Context())
		if r.URL.Path == "/a" {
			forwardBody(ex, &onceReader{b: []byte(progress)})
			return
		}
		forwardBody(ex, &gatedReader{first: []byte(elicitEvent), rest: []byte(finalEvent), gate: s.answered})
	})))
	defer srv.Close()
	post := func(path, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", "s-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil
		}
		return resp
	}
	aDone := make(chan struct{})
	go func() {
		defer close(aDone)
		resp := post("/a", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
		if resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	testwait.Until(t, "stream A's piece in flight", func() bool {
		rc.pieces.mu.Lock()
		defer rc.pieces.mu.Unlock()
		return len(rc.pieces.streams["s-1"]) == 1 && rc.pieces.streams["s-1"][0].slot.flight.Load() != 0
	})
	call := post("/b", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	br := bufio.NewReader(call.Body)
	var got strings.Builder
	for !strings.HasSuffix(got.String(), "\n\n") {
		line, err := br.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		ans := post("/answer", `{"jsonrpc":"2.0","id":"e1","result":{"action":"accept","content":{"name":"ada"}}}`)
		if ans != nil {
			io.Copy(io.Discard, ans.Body)
			ans.Body.Close()
		}
	}()
	testwait.Until(t, "the answer's record waiting", func() bool { return rc.pieces.waiters.Load() > 0 })
	close(aGo) // A's piece lands, its stream ends, its inlineClass is released
	testwait.Recv(t, aDone, "stream A's end")
	testwait.Until(t, "stream A's record", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range s.recs {
			if r.JSONRPC.ID.String() == "1" {
				return true
			}
		}
		return false
	})
	close(bGo)
	io.ReadAll(br)
	call.Body.Close()
	if err := rc.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a := s.answer(); a == nil || a.Method != "elicitation/create" || string(a.JSONRPC.ID.Raw()) != `"e1"` {
		t.Errorf("the answer's record %+v, want elicitation/create's answer, id \"e1\"", a)
	}
}
