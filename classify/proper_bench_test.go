package classify

import (
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

// BenchmarkClassifyProper is Classify of the article's small responses
// (BenchmarkClassifySeedSmall) without the allocation: the same reading
// and writing, into a Result and room that the loop reuses. With
// BenchmarkResultAlloc and the allocation of each verdict's size, it says
// how much of the allocating Classify is the classification proper.
func BenchmarkClassifyProper(b *testing.B) {
	for _, tc := range []struct{ name, body string }{
		{"success", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}}`},
		{"jsonrpc_error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"synthetic invalid params"}}`},
		{"tool_error", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"failed"}],"isError":true}}`},
		{"input_required", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"approval":{"method":"elicitation/create","params":{"mode":"form","message":"synthetic input"}}}}}`},
		{"legacy", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"legacy ok"}],"isError":false}}`},
	} {
		ex := &Exchange{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(tc.body), ID: wire.IntID(1)}
		c := &Classifier{}
		b.Run(tc.name, func(b *testing.B) {
			var s resultError
			var in [64]byte
			var w [1]Warning
			var e extra
			b.ReportAllocs()
			for b.Loop() {
				ct, ok := c.shaped(ex)
				var f fastFacts
				if !ok || !c.fastScan(ex, ex.BodyBytes, false, "tools/call", Protocol2026, &f) {
					b.Fatal("not the fast path")
				}
				e = extra{warnings: w[:0:1]}
				s.r = Result{extra: &e}
				f.errStore, f.inBuf = &s.st, in[:]
				s.r.start(ex)
				s.r.setContentType(ct)
				s.r.BodyBytes = int64(len(ex.BodyBytes))
				c.fastApply(&s.r, ex, ex.BodyBytes, false, &f)
			}
		})
	}
}

// verdictAllocSink keeps what BenchmarkVerdictAlloc allocates, as the
// benchmarks above keep their verdicts.
var verdictAllocSink any

// BenchmarkVerdictAlloc allocates the object Classify allocates for each of
// the article's small responses, and nothing else: the Result (success,
// tool_error, legacy: its warning is a bit of the Result), with one input request
// (input_required), with an error's details and reason (jsonrpc_error).
// With BenchmarkClassifyProper it splits Classify's time into the
// allocation and the classification proper.
func BenchmarkVerdictAlloc(b *testing.B) {
	b.Run("result", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			verdictAllocSink = new(Result)
		}
	})
	b.Run("input", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			verdictAllocSink, _ = newInputVerdict(16)
		}
	})
	b.Run("error", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			verdictAllocSink = new(resultError)
		}
	})
}
