package recorder

import (
	"testing"
	"unsafe"
)

// TestExchangeFitsItsSizeClass: the Exchange, allocated for every exchange
// and not pooled (contexts hold it after the handler), fits the runtime's
// 1,024-byte size class. At 1,144-1,152 bytes it took the 1,152-byte class:
// 128 bytes more garbage per exchange, more collections (docs/benchmarks.md,
// json8). A field added must make room elsewhere (exchangeRare holds what
// few exchanges have).
func TestExchangeFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Exchange{}); n > 1024 {
		t.Errorf("an Exchange is %d bytes, want at most 1,024 (the next size class is 1,152)", n)
	}
}
