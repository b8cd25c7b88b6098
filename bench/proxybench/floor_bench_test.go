package main

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// pieces is a chunk source over fixed pieces (the reads the floor proxy
// makes of the upstream's 64 KiB stream: each 16 KiB event as a 4,096-byte
// read, the transport's buffer, then the rest).
type pieces struct {
	p [][]byte
	i int
}

func (s *pieces) NextChunk() ([]byte, error) {
	if s.i == len(s.p) {
		return nil, io.EOF
	}
	s.i++
	return s.p[s.i-1], nil
}

func (*pieces) EventEnd(int64) {}

// BenchmarkGuarantees measures, part by part, the work the floor proxy adds
// to the plain one per exchange of proxybench's workloads (its payloads),
// on this process's CPU and without sockets: the request's parse, the
// SSE stream's scan alone, its classification (scan included) through the
// chunk reader as the floor reads it, the JSON body's classification, and
// the record's build, redaction and encoding (SetResult and the Encoder,
// as record.Async.Write does in the floor's record goroutine). What
// docs/benchmarks.md (ssefloor19) adds up against the plain proxy's CPU
// per exchange.
func BenchmarkGuarantees(b *testing.B) {
	req := toolsCall()
	events := sseStream()
	var chunks [][]byte
	for _, e := range events {
		chunks = append(chunks, e[:4096], e[4096:])
	}
	result := toolResult(jsonSize)
	sseHeader := http.Header{"Content-Type": {"text/event-stream"}}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	msg := wire.ParseMessage(req)
	cx := func(h http.Header) *classify.Exchange {
		return &classify.Exchange{Method: msg.Method, ID: msg.ID, ProtocolVersion: msg.Protocol, Extensions: msg.Extensions, Status: 200, Header: h}
	}
	budget := wire.NewBudget(128 << 20)
	classifySSE := func(r *classify.Result) {
		src := &pieces{p: chunks}
		rd := wire.NewPooledSSEChunkReader(src, 0)
		rd.SetBudget(budget)
		x := cx(sseHeader)
		x.Events = rd
		cl := classify.Classifier{Budget: budget}
		if err := cl.ClassifyInto(x, r); err != nil || r.Outcome != classify.ToolSuccess {
			b.Fatalf("%v %s", err, r.Outcome)
		}
		rd.Recycle()
	}
	b.Run("parse request (1 KiB tools/call)", func(b *testing.B) {
		for b.Loop() {
			m := wire.ParseMessage(req)
			if m.Tool != "search" {
				b.Fatal(m.Tool)
			}
		}
	})
	b.Run("SSE scan alone (64 KiB, wire.SSEScanner)", func(b *testing.B) {
		for b.Loop() {
			var sc wire.SSEScanner
			n := 0
			for _, c := range chunks {
				sc.Feed(c)
				for t := sc.Next(); t != nil; t = sc.Next() {
					if t.Kind == wire.SSEEnd {
						n++
					}
				}
			}
			if n != sseEvents {
				b.Fatal(n)
			}
		}
	})
	b.Run("SSE classification (64 KiB, scan included)", func(b *testing.B) {
		var r classify.Result
		for b.Loop() {
			r = classify.Result{}
			classifySSE(&r)
		}
	})
	b.Run("JSON classification (1 KiB)", func(b *testing.B) {
		var r classify.Result
		for b.Loop() {
			r = classify.Result{}
			x := cx(jsonHeader)
			x.BodyBytes = result
			if err := (&classify.Classifier{Budget: budget}).ClassifyInto(x, &r); err != nil || r.Outcome != classify.ToolSuccess {
				b.Fatalf("%v %s", err, r.Outcome)
			}
		}
	})
	enc := record.Encoder{BodyLimit: record.DefaultBodyLimit}
	for _, kind := range []string{"SSE", "JSON"} {
		var res classify.Result
		if kind == "SSE" {
			classifySSE(&res)
		} else {
			x := cx(jsonHeader)
			x.BodyBytes = result
			(&classify.Classifier{}).ClassifyInto(x, &res)
		}
		b.Run("record of the "+kind+" exchange (build, redact, encode)", func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				rec := record.Record{Kind: record.KindExchange, Time: start, Method: msg.Method, Tool: msg.Tool, PostCount: 1}
				rec.JSONRPC.ID = msg.ID
				rec.SetResult(&res)
				rec.Status, rec.HTTPStatuses = 200, []int{200}
				rec.Timings = record.Timings{Headers: record.Duration(time.Millisecond), Total: record.Duration(2 * time.Millisecond)}
				line, err := enc.Encode(&rec)
				if err != nil || len(line) < 100 {
					b.Fatal(err, len(line))
				}
			}
		})
	}
	b.Run("wire.Valid of the 64 KiB (reference)", func(b *testing.B) {
		var data [][]byte
		for _, e := range events {
			data = append(data, e[len("id: ev-1\ndata: "):len(e)-2])
		}
		for b.Loop() {
			for _, d := range data {
				if !wire.Valid(d) {
					b.Fatal("invalid")
				}
			}
		}
	})
}
