package wire

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatByte is an endless (or n-byte) run of one byte, made as it is read,
// so a test can offer a 64 MiB header line without holding it.
type repeatByte struct {
	c byte
	n int64
}

func (r *repeatByte) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n))
	for i := range k {
		p[i] = r.c
	}
	r.n -= int64(k)
	return k, nil
}

// TestReadRawResponseHeaderCap: a header block over the cap fails with
// ErrHeaderTooLarge and holds about the cap, not the line (issue 11, hole
// 7: a 200 MB header line took 909 MB); a header block within the cap is
// read as before, and the body after it is not capped.
func TestReadRawResponseHeaderCap(t *testing.T) {
	huge := func(prefix string, n int64, rest string) io.Reader {
		return io.MultiReader(strings.NewReader(prefix), &repeatByte{'a', n}, strings.NewReader(rest))
	}
	for _, tc := range []struct {
		name string
		in   func() io.Reader
	}{
		{"one header line of 64 MiB", func() io.Reader { return huge("HTTP/1.1 200 OK\r\nX-Big: ", 64<<20, "\r\n\r\n{}") }},
		{"a status line of 64 MiB", func() io.Reader { return huge("HTTP/1.1 200 ", 64<<20, "\r\n\r\n{}") }},
		{"many header lines", func() io.Reader {
			return io.MultiReader(strings.NewReader("HTTP/1.1 200 OK\r\n"), strings.NewReader(strings.Repeat("X-A: 0123456789abcdef\r\n", 80000)), strings.NewReader("\r\n{}"))
		}},
		{"endless interim responses", func() io.Reader {
			return io.MultiReader(strings.NewReader(strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 100000)), strings.NewReader("HTTP/1.1 200 OK\r\n\r\n{}"))
		}},
		{"endless blank lines", func() io.Reader { return &repeatByte{'\n', 64 << 20} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := ReadRawResponseLimit(tc.in(), 1<<20)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrHeaderTooLarge) || !strings.Contains(err.Error(), "1048576") {
				t.Fatalf("err %v, want ErrHeaderTooLarge naming the 1048576-byte cap", err)
			}
			// A bound on what was allocated, garbage included (many small
			// interim responses make some): far below the 64 MiB offered.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("%d bytes allocated for a header block capped at 1 MiB", alloc)
			}
		})
	}
	// Within the cap: the header is read, and the body after it is whole.
	r, err := ReadRawResponseLimit(huge("HTTP/1.1 200 OK\r\nX-Big: ", 1<<20-64, "\r\nContent-Type: application/json\r\n\r\n"), 1<<20)
	if err != nil || len(r.Header.Get("X-Big")) != 1<<20-64 {
		t.Fatalf("a header block just under the cap: %v", err)
	}
	r, err = ReadRawResponseLimit(io.MultiReader(strings.NewReader("HTTP/1.1 200 OK\r\n\r\n"), &repeatByte{'b', 8 << 20}), 1024)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, r.Body); err != nil || n != 8<<20 {
		t.Fatalf("body after a small head: %d bytes, %v (the body is not capped)", n, err)
	}
	if DefaultMaxHeaderBytes != 1<<20 {
		t.Fatalf("DefaultMaxHeaderBytes %d", DefaultMaxHeaderBytes)
	}
}
