package ui

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// BenchmarkPublish is what proxy --ui adds per exchange on the recorder's
// path: one encode (with redaction) of the record and an append under the
// server's lock. The pages read the kept lines on their own goroutines.
func BenchmarkPublish(b *testing.B) {
	recs := fixture(&testing.T{})
	s, err := NewServer(ServerOptions{MaxRecords: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	var enc record.Encoder
	b.Run("encode only (the record file's cost)", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if _, err := enc.Encode(recs[i%len(recs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Publish", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if err := s.Publish(recs[i%len(recs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWriteLine is proxy --ui's cost with --record: the line the
// file got, kept as it is (a validity check and a copy), on the sink's
// writer goroutine.
func BenchmarkWriteLine(b *testing.B) {
	recs := fixture(&testing.T{})
	var enc record.Encoder
	lines := make([][]byte, len(recs))
	for i, r := range recs {
		l, err := enc.Encode(r)
		if err != nil {
			b.Fatal(err)
		}
		lines[i] = l
	}
	s, err := NewServer(ServerOptions{MaxRecords: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := range b.N {
		if err := s.WriteLine(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}
