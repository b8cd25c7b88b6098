package classify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/ssetest"
	"github.com/mcpdiag/mcpdiag/wire"
)

// chunksOf cuts b into chunks of size (0: wire.SSEReadSize; negative: random
// sizes up to -size), none over wire.SSEReadSize (what the recorder's pipe
// hands an event reader).
func chunksOf(b []byte, size int, rng *rand.Rand) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := size
		switch {
		case size == 0:
			n = wire.SSEReadSize
		case size < 0:
			n = 1 + rng.IntN(-size)
		}
		n = min(n, len(b), wire.SSEReadSize)
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// eventEnds is what a scanner of its own finds in the chunks: the end of
// every event with data.
func eventEnds(chunks [][]byte) []int64 {
	var sc wire.SSEScanner
	var ends []int64
	for _, c := range chunks {
		sc.Feed(c)
		for t := sc.Next(); t != nil; t = sc.Next() {
			if t.Kind == wire.SSEEnd && t.HasData {
				ends = append(ends, t.End)
			}
		}
	}
	return ends
}

// pullAndPush classifies the body twice with copies of c: reading Body in
// the chunks as an io.Reader (the pull path), and through Events, a chunk
// reader over the same chunks made with the classifier's bound and budget
// (the recorder's path). It returns both results and errors as JSON, and
// the event ends the chunk source was told.
func pullAndPush(c Classifier, base Exchange, chunks [][]byte, cutErr error, budget func() *wire.Budget) (pull, push string, ends []int64, requests [2]int) {
	run := func(events bool) (string, []int64, int) {
		cl := c
		cl.Budget = budget()
		n := 0
		cl.OnServerRequest = func([]byte) { n++ }
		ex := base
		var src *ssetest.Source
		if events {
			src = &ssetest.Source{Chunks: slices.Clone(chunks), Err: cutErr}
			ex.Events = wire.NewPooledSSEChunkReader(src, cl.MaxEventSize)
			ex.Events.SetBudget(cl.Budget)
			ex.Body = &ssetest.Pieces{Err: io.ErrNoProgress} // must not be read
		} else {
			ex.Body = &ssetest.Pieces{Chunks: slices.Clone(chunks), Err: cutErr}
		}
		r, err := cl.Classify(&ex)
		out, merr := json.Marshal(r)
		if merr != nil {
			panic(merr)
		}
		s := fmt.Sprintf("%s\nerr: %v\nresponse: %q", out, err, r.Response())
		if events {
			ex.Events.Drain()
			ex.Events.Recycle()
		}
		s += fmt.Sprintf("\nbudget in use after: %d", cl.Budget.InUse())
		if src != nil {
			return s, src.Ends, n
		}
		return s, nil, n
	}
	pull, _, requests[0] = run(false)
	push, ends, requests[1] = run(true)
	return pull, push, ends, requests
}

// eventStreamCases are streams for the verdicts a push-fed classifier must
// give as the pull path does: a cut stream, a response for another id, an
// event after the response, a server request on a 2026 stream, a trailing
// unterminated event, an event over the bound, comments only, a malformed
// event with events after it.
func eventStreamCases() []struct {
	name, protocol string
	id             string
	stream         string
} {
	big := strings.Repeat("z", 40<<10)
	result := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`
	return []struct {
		name, protocol string
		id             string
		stream         string
	}{
		{"success", Protocol2026, "1", "id: a\ndata: " + result + "\n\n"},
		{"cut after progress", Protocol2026, "1", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}` + "\n\n"},
		{"other id", Protocol2026, "1", `data: {"jsonrpc":"2.0","id":2,"result":{"content":[]}}` + "\n\n"},
		{"other id then right", Protocol2025, "1", `data: {"jsonrpc":"2.0","id":2,"result":{"content":[]}}` + "\n\ndata: " + result + "\n\n"},
		{"after terminal", Protocol2026, "1", "data: " + result + "\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\ndata: x\n\n"},
		{"server request 2026", Protocol2026, "1", `data: {"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{}}` + "\n\ndata: " + result + "\n\n"},
		{"server request 2025", Protocol2025, "1", `data: {"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{}}` + "\n\ndata: " + result + "\n\n"},
		{"trailing unterminated", Protocol2026, "1", "data: " + result + "\n\ndata: {\"jsonrpc\":\"2.0\""},
		{"unterminated response", Protocol2026, "1", "data: " + result + "\n"},
		{"big notification", Protocol2026, "1", `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}` + "\n\ndata: " + result + "\n\n"},
		{"big result", Protocol2026, "1", `data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + big + `"}]}}` + "\n\n"},
		{"malformed then more", Protocol2026, "1", "data: {nope\n\ndata: " + result + "\n\n: c\n\n"},
		{"comments only", Protocol2026, "1", ": one\n\n: two\n\n"},
		{"crlf and bom", Protocol2026, "1", "\ufeffevent: message\r\ndata: " + result + "\r\n\r\n"},
		{"multi-line data", Protocol2026, "1", "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{\"content\":[]}}\n\n"},
		{"empty", Protocol2026, "1", ""},
	}
}

// TestEventsMatchBody: the classifier fed through Events (a chunk reader,
// as the recorder feeds it) gives exactly the verdict, evidence, counters
// and budget use of the classifier reading Body in the same pieces, on the
// golden SSE responses and on streams for every stream verdict, in whole,
// 1-byte, 7-byte and random chunks, with the stream ending clean or cut,
// with a bound and with budgets tight enough to refuse events; and the
// chunk source is told every event's end. Across chunkings (no budget) the
// verdict is the one of the body read whole.
func TestEventsMatchBody(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	type input struct {
		name   string
		c      Classifier
		ex     Exchange
		body   []byte
		stream bool
	}
	var inputs []input
	for _, gc := range loadGolden(t) {
		if gc.exchange["network"] != "" {
			continue
		}
		raw, err := wire.ReadRawResponse(bytes.NewReader(gc.response))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(raw.Body)
		if short := (*wire.ShortBodyError)(nil); errors.As(err, &short) {
			continue // a body cut before its Content-Length: its bytes alone are not the response
		}
		if err != nil {
			t.Fatalf("%s: %v", gc.name, err)
		}
		ex := exchangeFor(t, gc)
		ex.Status, ex.Header = raw.Status, raw.Header
		inputs = append(inputs, input{name: gc.name, c: *classifierFor(t, gc), ex: *ex, body: body, stream: mediaType(raw.Header.Get("Content-Type")) == "text/event-stream"})
	}
	for _, sc := range eventStreamCases() {
		id, err := wire.ParseID(sc.id)
		if err != nil {
			t.Fatal(err)
		}
		ex := Exchange{Method: "tools/call", ID: id, ProtocolVersion: sc.protocol, Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}}
		inputs = append(inputs, input{name: sc.name, ex: ex, body: []byte(sc.stream), stream: true})
		bounded := input{name: sc.name + " (bound 2000)", c: Classifier{MaxEventSize: 2000}, ex: ex, body: []byte(sc.stream), stream: true}
		inputs = append(inputs, bounded)
		kept := input{name: sc.name + " (keep response)", c: Classifier{KeepResponse: true}, ex: ex, body: []byte(sc.stream), stream: true}
		inputs = append(inputs, kept)
	}
	streams := 0
	for _, in := range inputs {
		if !in.stream {
			continue
		}
		streams++
		whole, _, _, _ := pullAndPush(in.c, in.ex, [][]byte{in.body}, nil, func() *wire.Budget { return nil })
		if len(in.body) > wire.SSEReadSize {
			whole, _, _, _ = pullAndPush(in.c, in.ex, chunksOf(in.body, 0, rng), nil, func() *wire.Budget { return nil })
		}
		for _, size := range []int{0, 1, 7, -5000} {
			if size == 1 && len(in.body) > 20<<10 {
				continue
			}
			chunks := chunksOf(in.body, size, rng)
			for _, cutErr := range []error{nil, io.ErrUnexpectedEOF} {
				for _, limit := range []int64{0, 600, 3000, 40 << 10} {
					budget := func() *wire.Budget {
						if limit == 0 {
							return nil
						}
						return wire.NewBudget(limit)
					}
					pull, push, ends, reqs := pullAndPush(in.c, in.ex, chunks, cutErr, budget)
					if push != pull || reqs[0] != reqs[1] {
						t.Fatalf("%s (chunks %d, end %v, budget %d): through Events\n%s\n(%d server requests)\nreading Body\n%s\n(%d server requests)", in.name, size, cutErr, limit, push, reqs[1], pull, reqs[0])
					}
					if want := eventEnds(chunks); !slices.Equal(ends, want) {
						t.Fatalf("%s (chunks %d): event ends %v, want %v", in.name, size, ends, want)
					}
					if cutErr == nil && limit == 0 && push != whole {
						t.Fatalf("%s (chunks %d): in chunks\n%s\nwhole\n%s", in.name, size, push, whole)
					}
				}
			}
		}
	}
	t.Logf("%d event streams compared", streams)
	if streams < 40 {
		t.Fatalf("only %d event streams compared; the comparison is too thin", streams)
	}
}

// FuzzEventsMatchBody: on any event stream, in any chunking, with or
// without a small bound and a tight budget, clean or cut, the classifier
// through Events gives what it gives reading Body in the same pieces.
func FuzzEventsMatchBody(f *testing.F) {
	for _, sc := range eventStreamCases() {
		if len(sc.stream) < 4000 {
			f.Add([]byte(sc.stream), uint8(0), uint64(len(sc.stream)))
		}
	}
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), uint8(7), uint64(3))
	f.Fuzz(func(t *testing.T, stream []byte, mode uint8, seed uint64) {
		c := Classifier{KeepResponse: mode&8 != 0}
		if mode&1 != 0 {
			c.MaxEventSize = 300
		}
		protocol := Protocol2026
		if mode&2 != 0 {
			protocol = Protocol2025
		}
		ex := Exchange{Method: "tools/call", ID: wire.IntID(1), ProtocolVersion: protocol, Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}}
		var cutErr error
		if mode&4 != 0 {
			cutErr = io.ErrUnexpectedEOF
		}
		budget := func() *wire.Budget { return nil }
		if mode&16 != 0 {
			budget = func() *wire.Budget { return wire.NewBudget(900) }
		}
		chunks := chunksOf(stream, -(1 + int(seed%97)), rand.New(rand.NewPCG(seed, 1)))
		pull, push, ends, reqs := pullAndPush(c, ex, chunks, cutErr, budget)
		if push != pull || reqs[0] != reqs[1] {
			t.Fatalf("through Events\n%s\nreading Body\n%s", push, pull)
		}
		if want := eventEnds(chunks); !slices.Equal(ends, want) {
			t.Fatalf("event ends %v, want %v", ends, want)
		}
	})
}
