package classify_test

// Benchmarks for the classifier (see docs/benchmarks.md for how to run them
// and what they showed). Every size has a json.Valid baseline on the same
// bytes under BenchmarkJSONValid with the same sub-benchmark name, so one
// `go test -bench 'Classify|JSONValid'` run yields the ratio. Nothing here
// asserts a wall-clock limit; TestStreamMemoryBounded asserts an allocation
// bound, which does not depend on the machine's speed.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// benchSizes are the response sizes the performance requirement names.
var benchSizes = []struct {
	name string
	n    int
}{
	{"1KiB", 1 << 10},
	{"64KiB", 64 << 10},
	{"4MiB", 4 << 20},
}

// benchLines is the raw (unescaped) text a tool returns: log-like lines with
// quotes, a tab, non-ASCII letters and newlines, so the JSON text carries the
// escapes real tool output has.
var benchLines = []string{
	"2026-07-28T12:00:01Z INFO  search q=\"mcp error layers\" hits=42 took=12ms\n",
	"2026-07-28T12:00:01Z DEBUG cache miss key=\"tools/call:search\"\tttl=300s\n",
	"2026-07-28T12:00:02Z INFO  résumé of the page: año, niño, naïve café — ok\n",
	"func classify(r *Result) error { return nil } // a code line the tool read\n",
	"| id | name        | status  |\n|----|-------------|---------|\n| 7  | gateway-eu  | healthy |\n",
}

// benchEscapeText appends the JSON string contents (no quotes) of s.
func benchEscapeText(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// benchToolResult returns a JSON-RPC response to request id 1 whose
// CallToolResult holds text content blocks (at most 16 KiB of text each),
// exactly size bytes long. Small sizes get one block.
func benchToolResult(size int) []byte {
	const head = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[`
	const tail = `],"isError":false}}`
	const blockHead = `{"type":"text","text":"`
	const blockTail = `"}`
	const maxBlock = 16 << 10
	b := make([]byte, 0, size)
	b = append(b, head...)
	budget := size - len(head) - len(tail)
	line := 0
	for first := true; ; first = false {
		over := len(blockHead) + len(blockTail)
		if !first {
			over++ // the comma
		}
		room := budget - over
		if room <= 0 {
			break
		}
		if !first {
			b = append(b, ',')
		}
		b = append(b, blockHead...)
		text := min(room, maxBlock)
		start := len(b)
		for {
			next := benchEscapeText(nil, benchLines[line%len(benchLines)])
			if len(b)-start+len(next) > text {
				break
			}
			b = append(b, next...)
			line++
		}
		for len(b)-start < text { // pad with ASCII to the exact length
			b = append(b, '.')
		}
		b = append(b, blockTail...)
		budget -= over + text
	}
	b = append(b, tail...)
	if len(b) != size || !json.Valid(b) {
		panic(fmt.Sprintf("benchToolResult(%d) made %d bytes, valid=%v", size, len(b), json.Valid(b)))
	}
	return b
}

// benchProgress returns a progress notification as SSE data.
func benchProgress(i int) string {
	return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":` +
		strconv.Itoa(i) + `,"total":3,"message":"step ` + strconv.Itoa(i) + ` of 3: searching"}}`
}

// benchStream returns an event stream of exactly size bytes: a keep-alive
// comment, three progress notifications, then the response, as a resumable
// server writes them (with event ids). It also returns the JSON payloads of
// the events, for the json.Valid baseline.
func benchStream(size int) (stream []byte, payloads [][]byte) {
	var b bytes.Buffer
	b.WriteString(": keep-alive\n\n")
	for i := 1; i <= 3; i++ {
		p := benchProgress(i)
		fmt.Fprintf(&b, "id: ev-%d\ndata: %s\n\n", i, p)
		payloads = append(payloads, []byte(p))
	}
	const respHead = "id: ev-4\ndata: "
	const respTail = "\n\n"
	resp := benchToolResult(size - b.Len() - len(respHead) - len(respTail))
	b.WriteString(respHead)
	b.Write(resp)
	b.WriteString(respTail)
	payloads = append(payloads, resp)
	if b.Len() != size {
		panic(fmt.Sprintf("benchStream(%d) made %d bytes", size, b.Len()))
	}
	return b.Bytes(), payloads
}

var (
	benchJSONHeader = http.Header{"Content-Type": {"application/json"}}
	benchSSEHeader  = http.Header{"Content-Type": {"text/event-stream"}}
	benchSink       *classify.Result
	benchValidSink  bool
)

func benchRunClassify(b *testing.B, ex *classify.Exchange, want classify.Outcome) {
	b.Helper()
	c := &classify.Classifier{}
	r, err := c.Classify(ex)
	if err != nil || r.Outcome != want {
		b.Fatalf("outcome %s (%s), err %v; want %s", r.Outcome, r.Reason, err, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		benchSink, _ = c.Classify(ex)
	}
}

// BenchmarkClassify classifies tool results of 1 KiB, 64 KiB and 4 MiB as a
// JSON body (BodyBytes, as a caller that has read the body holds it) and as
// an event stream (Body, an io.Reader, as it comes off the connection).
// MB/s counts the response body bytes.
func BenchmarkClassify(b *testing.B) {
	id := wire.IntID(1)
	for _, sz := range benchSizes {
		body := benchToolResult(sz.n)
		b.Run("JSON/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			benchRunClassify(b, &classify.Exchange{Status: 200, Header: benchJSONHeader, BodyBytes: body, ID: id}, classify.ToolSuccess)
		})
	}
	for _, sz := range benchSizes {
		stream, _ := benchStream(sz.n)
		b.Run("SSE/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			rd := bytes.NewReader(stream)
			ex := &classify.Exchange{Status: 200, Header: benchSSEHeader, Body: rd, ID: id}
			c := &classify.Classifier{}
			r, err := c.Classify(ex)
			if err != nil || r.Outcome != classify.ToolSuccess || benchSSE(r).Progress != 3 {
				b.Fatalf("outcome %s (%s), err %v", r.Outcome, r.Reason, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rd.Reset(stream)
				benchSink, _ = c.Classify(ex)
			}
		})
	}
}

// BenchmarkClassifyReader is BenchmarkClassify/JSON with the body given as an
// io.Reader (Body) rather than bytes, so the classifier reads it itself.
func BenchmarkClassifyReader(b *testing.B) {
	id := wire.IntID(1)
	for _, sz := range benchSizes {
		body := benchToolResult(sz.n)
		b.Run("JSON/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			rd := bytes.NewReader(body)
			ex := &classify.Exchange{Status: 200, Header: benchJSONHeader, Body: rd, ID: id}
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(body)
				benchSink, _ = (&classify.Classifier{}).Classify(ex)
			}
		})
	}
}

// BenchmarkJSONValid is the baseline: json.Valid over the same JSON bytes as
// the sub-benchmark of BenchmarkClassify with the same name. For SSE it
// validates the JSON payload of every event (the least any classifier must
// do) and counts the whole stream's bytes, as BenchmarkClassify does, so the
// two MB/s figures compare directly.
func BenchmarkJSONValid(b *testing.B) { benchValid(b, json.Valid) }

// BenchmarkWireValid is BenchmarkJSONValid with wire.Valid, the validator
// the classifier itself runs: the least the classifier must do with its own
// tools, so its ratio to the classifier says what the rest of the work
// costs. Same sub-benchmark names and byte counts.
func BenchmarkWireValid(b *testing.B) { benchValid(b, wire.Valid) }

// benchValid runs valid over BenchmarkClassify's JSON bodies and over the
// payloads of its SSE streams (counting the whole stream's bytes), with
// BenchmarkClassify's sub-benchmark names.
func benchValid(b *testing.B, valid func([]byte) bool) {
	for _, sz := range benchSizes {
		body := benchToolResult(sz.n)
		b.Run("JSON/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				benchValidSink = valid(body)
			}
		})
	}
	for _, sz := range benchSizes {
		stream, payloads := benchStream(sz.n)
		b.Run("SSE/"+sz.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				ok := true
				for _, p := range payloads {
					ok = valid(p) && ok
				}
				benchValidSink = ok
			}
		})
	}
}

// benchSeedSmall are the article's small responses, byte for byte what its test
// peer sends (JSON.stringify of the article's objects; bench/node/bench.mjs
// checks that it produces the same strings).
var benchSeedSmall = []struct {
	name string
	body string
	want classify.Outcome
}{
	{"success", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`, classify.ToolSuccess},
	{"jsonrpc_error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`, classify.JSONRPCError},
	{"tool_error", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"failed"}],"isError":true}}`, classify.ToolError},
	{"input_required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`, classify.InputRequired},
	{"legacy", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`, classify.ToolSuccess},
}

// BenchmarkClassifySeedSmall classifies the article's small responses, the
// ones its Node.js classifier (bench/node) is timed on.
func BenchmarkClassifySeedSmall(b *testing.B) {
	id := wire.IntID(1)
	for _, tc := range benchSeedSmall {
		body := []byte(tc.body)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			benchRunClassify(b, &classify.Exchange{Status: 200, Header: benchJSONHeader, BodyBytes: body, ID: id}, tc.want)
		})
	}
}

// BenchmarkClassifySeedSmallInto is BenchmarkClassifySeedSmall with the
// caller's Result reused through ClassifyInto, as a proxy or a loop of calls
// does: no allocation per response.
func BenchmarkClassifySeedSmallInto(b *testing.B) {
	id := wire.IntID(1)
	for _, tc := range benchSeedSmall {
		body := []byte(tc.body)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			ex := &classify.Exchange{Status: 200, Header: benchJSONHeader, BodyBytes: body, ID: id}
			c := &classify.Classifier{}
			var r classify.Result
			if err := c.ClassifyInto(ex, &r); err != nil || r.Outcome != tc.want {
				b.Fatalf("outcome %s, err %v; want %s", r.Outcome, err, tc.want)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = c.ClassifyInto(ex, &r)
			}
		})
	}
}

// BenchmarkResultAlloc allocates a Result and nothing else, kept in the same
// sink as the benchmarks above keep their verdicts: the floor under the
// allocating Classify of any response, however fast the classification.
func BenchmarkResultAlloc(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchSink = new(classify.Result)
	}
}

// benchNotificationStream generates an event stream on the fly: events
// notifications of eventSize bytes each, then one response event whose data
// is final. It holds one event at a time and does not allocate per event.
type benchNotificationStream struct {
	events    int
	eventSize int
	final     []byte
	buf       []byte
	cur       []byte
	tail      [][]byte
	n         int
	done      bool
	total     int64
}

var benchPad = bytes.Repeat([]byte{'x'}, 64<<10)

func (s *benchNotificationStream) Read(p []byte) (int, error) {
	for len(s.cur) == 0 {
		switch {
		case s.n < s.events:
			s.n++
			b := append(s.buf[:0], `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":"event `...)
			b = strconv.AppendInt(b, int64(s.n), 10)
			b = append(b, ' ')
			b = append(b, benchPad[:max(s.eventSize-len(b)-len("\"}}\n\n"), 0)]...)
			b = append(b, "\"}}\n\n"...)
			s.buf, s.cur = b, b
		case !s.done:
			// The response goes out in three pieces, so that serving it
			// allocates nothing.
			s.done = true
			s.cur = []byte("data: ")
			s.tail = [][]byte{s.final, []byte("\n\n")}
		case len(s.tail) > 0:
			s.cur, s.tail = s.tail[0], s.tail[1:]
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	s.total += int64(n)
	return n, nil
}

func newBenchNotificationStream(events, eventSize int, final []byte) *benchNotificationStream {
	return &benchNotificationStream{events: events, eventSize: eventSize, final: final, buf: make([]byte, 0, eventSize)}
}

// benchStreamAlloc classifies a generated stream of the given number of
// 1 KiB notifications followed by a response of finalSize bytes and returns
// the bytes the classifier allocated (runtime.MemStats.TotalAlloc, which
// counts every allocation, freed or not, so it bounds the peak heap growth
// too) and the stream length.
func benchStreamAlloc(tb testing.TB, events, finalSize int) (alloc uint64, streamLen int64) {
	tb.Helper()
	st := newBenchNotificationStream(events, 1<<10, benchToolResult(finalSize))
	ex := &classify.Exchange{Status: 200, Header: benchSSEHeader, Body: st, ID: wire.IntID(1)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := (&classify.Classifier{}).Classify(ex)
	runtime.ReadMemStats(&after)
	if err != nil || r.Outcome != classify.ToolSuccess || benchSSE(r).Messages != events {
		tb.Fatalf("outcome %s (%s), %d messages, err %v", r.Outcome, r.Reason, benchSSE(r).Messages, err)
	}
	return after.TotalAlloc - before.TotalAlloc, st.total
}

// TestStreamAllocsPerEvent: classifying a stream allocates nothing per
// event — the same number of allocations for 64 events as for 4096 (an
// errors.As target declared inside the loop once cost one per event).
func TestStreamAllocsPerEvent(t *testing.T) {
	final := benchToolResult(1 << 10)
	count := func(events int) float64 {
		return testing.AllocsPerRun(3, func() {
			st := newBenchNotificationStream(events, 1<<10, final)
			ex := &classify.Exchange{Status: 200, Header: benchSSEHeader, Body: st, ID: wire.IntID(1)}
			if r, err := (&classify.Classifier{}).Classify(ex); err != nil || r.Outcome != classify.ToolSuccess {
				t.Fatalf("%s, %v", r.Outcome, err)
			}
		})
	}
	few, many := count(64), count(4096)
	if many > few+2 {
		t.Errorf("%.0f allocations for 64 events, %.0f for 4096: the classifier allocates per event", few, many)
	}
}

// TestStreamMemoryBounded checks that classifying an event stream allocates
// in proportion to its largest event, not to its length: a 64 MiB stream of
// 1 KiB notifications (generated on the fly) must cost a few MiB at most in
// total allocations, however long it is. This is an allocation bound, not a
// timing one, so it holds on any machine.
func TestStreamMemoryBounded(t *testing.T) {
	events := 64 << 10 // 64 Ki events of 1 KiB: 64 MiB
	if testing.Short() {
		events = 8 << 10
	}
	alloc, n := benchStreamAlloc(t, events, 1<<10)
	t.Logf("stream of %d bytes (%d events of 1 KiB): %d bytes allocated in total", n, events, alloc)
	// The generator does not allocate per event, so this is the
	// classifier's: O(largest event) plus its fixed buffers. A reader that
	// kept the stream would need 64 MiB; 4 MiB leaves room for the runtime
	// and the race detector.
	if limit := uint64(4 << 20); alloc > limit {
		t.Errorf("classifying a %d-byte stream of 1 KiB events allocated %d bytes; want < %d (memory must be bounded by the largest event)", n, alloc, limit)
	}
	// The bound follows the largest event: a stream whose response is 8 MiB
	// needs at least that much (the event is held whole), and no more than a
	// few times it (the line is assembled in a buffer that doubles).
	alloc, n = benchStreamAlloc(t, events/8, 8<<20)
	t.Logf("stream of %d bytes ending in an 8 MiB response: %d bytes allocated in total", n, alloc)
	if alloc < 8<<20 {
		t.Errorf("a stream with an 8 MiB event allocated only %d bytes: the measurement is broken", alloc)
	}
	if limit := uint64(4 * (8 << 20)); alloc > limit {
		t.Errorf("a stream with an 8 MiB event allocated %d bytes; want < %d", alloc, limit)
	}
}

// BenchmarkStreamMemory reports B/op for streams of 1 KiB notifications of
// growing length (4, 16, 64 MiB) ending in a 1 KiB response: B/op stays flat
// while the stream grows, since memory is bounded by the largest event.
func BenchmarkStreamMemory(b *testing.B) {
	for _, mib := range []int{4, 16, 64} {
		b.Run(strconv.Itoa(mib)+"MiB", func(b *testing.B) {
			final := benchToolResult(1 << 10)
			events := mib << 10
			b.SetBytes(int64(events)<<10 + int64(len(final)) + 8)
			b.ReportAllocs()
			for b.Loop() {
				st := newBenchNotificationStream(events, 1<<10, final)
				benchSink, _ = (&classify.Classifier{}).Classify(&classify.Exchange{Status: 200, Header: benchSSEHeader, Body: st, ID: wire.IntID(1)})
			}
		})
	}
}

// benchSSE returns r's event-stream counts through r's JSON, which every
// version of Result writes the same way: bench/run.sh builds this file
// against an older commit's classifier too (BASE=), whose SSE was a field.
func benchSSE(r *classify.Result) classify.SSEDetails {
	var v struct {
		SSE classify.SSEDetails `json:"sse"`
	}
	b, _ := json.Marshal(r)
	_ = json.Unmarshal(b, &v)
	return v.SSE
}
