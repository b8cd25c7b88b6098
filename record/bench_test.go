package record

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkEncodeExchange encodes a typical proxy exchange record (headers,
// a reason, a small JSON response body), the redactor's hot path.
func BenchmarkEncodeExchange(b *testing.B) {
	rec := benchExchangeRecord()
	var e Encoder
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeLine compares, in one run, the two ways to write the
// JSON of the same redacted record: encoding/json (reflection) and the
// hand encoder Encode uses.
func BenchmarkEncodeLine(b *testing.B) {
	var e Encoder
	c := e.sanitize(e.redactor(), benchExchangeRecord())
	c.ID, c.RetryOrigin, c.HTTPStatuses = NewID(), OriginNone, []int{200}
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeLine(&c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeRecord(nil, &c, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchExchangeRecord() *Record {
	return &Record{
		Kind: KindExchange, Client: "claude-code@1.0", ProtocolVersion: "2026-07-28", Method: "tools/call", Tool: "search",
		HTTPMethod: "POST", URL: "http://127.0.0.1:8080/mcp", Status: 200, ContentType: "text/event-stream",
		Outcome: "TOOL_SUCCESS", Layer: "application", Reason: "the tool returned a result (isError false)",
		RequestHeaders: http.Header{"Authorization": {"Bearer abcdefghijklmnop"}, "Content-Type": {"application/json"},
			"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"search"}, "User-Agent": {"node"}},
		ResponseHeaders: http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}, "Date": {"Tue, 01 Dec 2026 10:00:00 GMT"}},
		ResponseBody:    &Body{Text: "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"found 3 results for the keyword go, see https://example.com/search?q=go\"}],\"isError\":false}}\n\n"},
	}
}

// BenchmarkEncodeProxyJSON encodes the record `mcpdiag proxy` writes for
// one exchange of bench/proxybench's JSON workload in the default body
// mode (a successful tools/call: no body text, the Go client's headers),
// the encoder's share of the proxy's CPU per exchange.
func BenchmarkEncodeProxyJSON(b *testing.B) {
	rec := benchProxyJSONRecord()
	var e Encoder
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
}

func benchProxyJSONRecord() *Record {
	f := false
	return &Record{
		Kind: KindExchange, ID: "01M8Y575QYDAN7V64KAABBCFYV", Client: "Go-http-client/1.1", ProtocolVersion: "2026-07-28",
		Method: "tools/call", PostCount: 1, HTTPStatuses: []int{200}, ResultType: "complete",
		Outcome: "TOOL_SUCCESS", Layer: "application", Reason: "the tool call completed", Tool: "search",
		ArgsHash:   "sha256:850cbb3a8d795f0d41d4b4659900f785b9e13983b6ba2c595037847ad749e8d6",
		HTTPMethod: "POST", URL: "http://127.0.0.1:39227/mcp", Status: 200, ContentType: "application/json", IsError: &f,
		RequestHeaders: http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Length": {"1024"},
			"Content-Type": {"application/json"}, "User-Agent": {"Go-http-client/1.1"}},
		ResponseHeaders: http.Header{"Content-Length": {"1024"}, "Content-Type": {"application/json"},
			"Date": {"Thu, 03 Dec 2026 14:34:00 GMT"}},
		RequestBytes: 1024, ResponseBytes: 1024,
	}
}

// BenchmarkEncodeProxySSE encodes the record `mcpdiag proxy` writes for
// one exchange of bench/proxybench's SSE workload in the default body
// mode (a successful tools/call answered by a 64 KiB event stream of 4
// events: no body text, the stream's counts and times).
func BenchmarkEncodeProxySSE(b *testing.B) {
	rec := benchProxySSERecord()
	var e Encoder
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
}

func benchProxySSERecord() *Record {
	rec := benchProxyJSONRecord()
	rec.ContentType = "text/event-stream"
	rec.ResponseHeaders = http.Header{"Content-Type": {"text/event-stream"}, "Date": {"Thu, 03 Dec 2026 14:34:00 GMT"}}
	rec.ResponseBytes = 65536
	rec.Timings = Timings{Headers: Duration(410 * time.Microsecond), FirstEvent: Duration(520 * time.Microsecond), Total: Duration(1900 * time.Microsecond)}
	rec.SSE = &SSE{Events: 4, Notifications: 3, Messages: 3, Terminal: true, TerminalEvent: 4, End: "eof"}
	return rec
}

// TestEncodeProxyAllocs: encoding the proxy's JSON exchange record into
// a line buffer of room enough allocates nothing: the redacted copy and the
// headers read once live in a pooled encodeState, and what did not change
// (statuses, isError) is shared with the record, not copied. Before: 2
// allocations per record (the statuses, isError), and the copy on the stack.
// The SSE exchange's record too: the stream's counts are shared with the
// record when their one string, End, is unchanged by redaction. Before: 1
// allocation per record (the copy of the SSE member).
func TestEncodeProxyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for name, rec := range map[string]*Record{"json": benchProxyJSONRecord(), "sse": benchProxySSERecord()} {
		var e Encoder
		buf := make([]byte, 0, 4096)
		if allocs := testing.AllocsPerRun(200, func() {
			if _, err := e.encodeInto(buf, rec); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%s: %v allocations per record, want 0", name, allocs)
		}
	}
}

// TestEncodeSSEEndRedacted: an SSE member whose End carries a credential
// (a stream's error text) is written redacted, and the record handed to
// the encoder keeps its own text: the member is copied when it changes,
// shared only when it does not.
func TestEncodeSSEEndRedacted(t *testing.T) {
	rec := benchProxySSERecord()
	const secret = "Bearer abcdefghijklmnopqrstuvwxyz0123456789"
	end := "error: read tcp: Authorization: " + secret
	rec.SSE = &SSE{Events: 2, End: end}
	var e Encoder
	line, err := e.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(line), "abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Errorf("the line carries the credential: %s", line)
	}
	if !strings.Contains(string(line), `"sse":{"events":2,`) {
		t.Errorf("the line has no sse member: %s", line)
	}
	if rec.SSE.End != end {
		t.Errorf("the record's End changed to %q", rec.SSE.End)
	}
	rec.SSE.End = "eof"
	if line, err = e.Encode(rec); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(line), `"end":"eof"`) {
		t.Errorf("the line lost End: %s", line)
	}
}
