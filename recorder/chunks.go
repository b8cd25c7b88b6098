package recorder

import (
	"math/bits"
	"sync"
	"unsafe"
)

// The copies of the response the recorder hands to its classifier (the
// pipe's chunks) come from pools by size: a chunk is recycled once the
// classifier read it, unless the capture holds it for the record, and then
// once the record is made. Writes under minPooledChunk are copied into
// fresh memory as before (an idle stream's priming event holds no larger
// buffer), and a chunk larger than maxPooledChunk is not pooled.
const (
	minChunkShift  = 10
	maxChunkShift  = 16
	minPooledChunk = 1 << minChunkShift
	maxPooledChunk = 1 << maxChunkShift
)

// chunkPools[class] holds the first bytes of buffers of capacity
// minPooledChunk<<class (a *byte, which an interface holds without an
// allocation: a *[]byte, made anew by every putChunk, cost one per chunk
// recycled).
var chunkPools [maxChunkShift - minChunkShift + 1]sync.Pool

// chunkClass returns the pool of the buffers of capacity size, exactly a
// power of two in [minPooledChunk, maxPooledChunk], or -1.
func chunkClass(size int) int {
	if size < minPooledChunk || size > maxPooledChunk || size&(size-1) != 0 {
		return -1
	}
	return bits.TrailingZeros(uint(size)) - minChunkShift
}

// getChunk returns an empty buffer for n bytes: pooled when n is in the
// pooled range, nil otherwise (append allocates it).
func getChunk(n int) []byte {
	if n < minPooledChunk || n > maxPooledChunk {
		return nil
	}
	size := 1 << bits.Len(uint(n-1))
	class := chunkClass(size)
	if v := chunkPools[class].Get(); v != nil {
		return unsafe.Slice(v.(*byte), size)[:0]
	}
	return make([]byte, 0, size)
}

// poisonRecycled makes putChunk overwrite what it recycles, so that a test
// sees any use of a chunk after it was recycled (the recorder's tests set it).
var poisonRecycled bool

// putChunk recycles b, which nothing may use afterwards. A buffer of
// another capacity is left to the garbage collector.
func putChunk(b []byte) {
	if class := chunkClass(cap(b)); class >= 0 {
		b = b[:0]
		if poisonRecycled {
			full := b[:cap(b)]
			for i := range full {
				full[i] = 0xff
			}
		}
		chunkPools[class].Put(unsafe.SliceData(b))
	}
}
