package record

import (
	"strings"
	"testing"
)

// BenchmarkArgsHash hashes the arguments of bench/proxybench's ~1 KiB
// tools/call, as SetMessage does for every recorded tools/call.
func BenchmarkArgsHash(b *testing.B) {
	args := []byte(`{"query":"mcp error layers","text":"` + strings.Repeat("x", 900) + `"}`)
	b.ReportAllocs()
	for b.Loop() {
		if h := argsHash("tools/call", "search", args, false, true); len(h) != len("sha256:")+64 {
			b.Fatal(h)
		}
	}
}
