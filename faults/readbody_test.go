package faults

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAtMost reads what io.ReadAll(io.LimitReader(body, n)) reads, whatever
// the declared length says (exact, short, long, absent) and however the
// reads are cut.
func TestReadAtMost(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("abcdefgh", 300) // 2400 bytes
	for _, tt := range []struct {
		name     string
		src      string
		cl, n    int64
		wantSize int
	}{
		{"exact", body, 2400, 8<<20 + 1, 2400},
		{"declared shorter", body, 100, 8<<20 + 1, 2400},
		{"declared longer", body, 5000, 8<<20 + 1, 2400},
		{"no length", body, -1, 8<<20 + 1, 2400},
		{"over the limit", body, 2400, 1001, 1001},
		{"declared over the limit", body, 9000, 1001, 1001},
		{"empty", "", 0, 10, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				var rd io.Reader = strings.NewReader(tt.src)
				if oneByte {
					rd = iotest.OneByteReader(rd)
				}
				got, err := readAtMost(rd, tt.cl, tt.n)
				if err != nil || !bytes.Equal(got, []byte(tt.src[:tt.wantSize])) {
					t.Errorf("one-byte reads %v: %d bytes, %v; want %d bytes", oneByte, len(got), err, tt.wantSize)
				}
			}
		})
	}
	if _, err := readAtMost(iotest.ErrReader(io.ErrUnexpectedEOF), 10, 100); err != io.ErrUnexpectedEOF {
		t.Errorf("a read error: %v, want it returned", err)
	}
}
