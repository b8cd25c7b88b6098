//go:build !linux

package record

import "os"

// batchWriter writes a batch of lines with one write(2) of their copy in a
// buffer it keeps (up to 1 MiB) for the next batch.
type batchWriter struct {
	buf []byte
}

// write writes lines to f, after a newline when nl is set, and returns how
// many bytes it wrote: all of them, or fewer with the error that stopped it.
func (b *batchWriter) write(f *os.File, nl bool, lines [][]byte) (int, error) {
	buf := b.buf[:0]
	if nl {
		buf = append(buf, '\n')
	}
	for _, l := range lines {
		buf = append(buf, l...)
	}
	if cap(buf) <= 1<<20 {
		b.buf = buf
	} else {
		b.buf = nil
	}
	return f.Write(buf)
}
