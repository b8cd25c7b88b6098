package record

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// crockford is Crockford's base-32 alphabet (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns a new record id: 26 characters of Crockford base 32 holding
// a 48-bit millisecond timestamp and 80 random bits (the ULID layout), so
// ids sort by creation time and never collide in practice.
func NewID() string {
	return newIDAt(time.Now())
}

func newIDAt(t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	// 128 bits as 26 base-32 digits, most significant first (the first
	// digit holds the top 3 bits).
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
