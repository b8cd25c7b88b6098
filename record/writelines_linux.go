package record

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// batchWriter writes a batch of lines with one writev(2), from the lines'
// own buffers: nothing is copied, and no buffer the size of the largest
// batch stays live between batches (a copy into one was 40-72 KB of live
// heap at 8 clients, in every garbage collection cycle's heap;
// docs/benchmarks.md, json8). On a file opened O_APPEND, Linux appends a
// writev's bytes as one, as it does a write's: lines from several writers
// do not interleave.
type batchWriter struct {
	rc  syscall.RawConn // the file's, taken once
	f   *os.File        // the file rc is of
	iov []syscall.Iovec // the lines of the write under way, what is left of them
	n   int             // bytes written by the write under way
	err error           // its error
	do  func(fd uintptr) bool
}

// newline is the line break a batch starts with after a line cut part-way.
var newline = []byte{'\n'}

// write writes lines to f, after a newline when nl is set, and returns how
// many bytes it wrote: all of them, or fewer with the error that stopped it
// (short writes are continued, as (*os.File).Write does).
func (b *batchWriter) write(f *os.File, nl bool, lines [][]byte) (int, error) {
	if b.f != f {
		rc, err := f.SyscallConn()
		if err != nil {
			return 0, err
		}
		b.rc, b.f = rc, f
		b.do = b.writev
	}
	iov := b.iov[:0]
	if nl {
		iov = appendIovec(iov, newline)
	}
	for _, l := range lines {
		iov = appendIovec(iov, l)
	}
	b.iov, b.n, b.err = iov, 0, nil
	err := b.rc.Write(b.do)
	if err == nil {
		err = b.err
	}
	n := b.n
	clear(iov) // the lines go back to their pool: hold no pointer to them
	b.iov, b.err = iov[:0], nil
	if err != nil {
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return n, nil
}

func appendIovec(iov []syscall.Iovec, p []byte) []syscall.Iovec {
	if len(p) == 0 {
		return iov
	}
	v := syscall.Iovec{Base: &p[0]}
	v.SetLen(len(p))
	return append(iov, v)
}

// writev is b.do: the system calls of one batch. It returns false to wait
// until the file (a pipe) can take more.
func (b *batchWriter) writev(fd uintptr) bool {
	for len(b.iov) > 0 {
		cnt := min(len(b.iov), 1024) // IOV_MAX
		r, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&b.iov[0])), uintptr(cnt))
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return false
		case e != 0:
			b.err = e
			return true
		case r == 0:
			b.err = io.ErrUnexpectedEOF
			return true
		}
		b.n += int(r)
		b.advance(int(r))
	}
	return true
}

// advance drops the first n bytes written from b.iov.
func (b *batchWriter) advance(n int) {
	for n > 0 {
		l := int(b.iov[0].Len)
		if n < l {
			b.iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(b.iov[0].Base), n))
			b.iov[0].SetLen(l - n)
			return
		}
		n -= l
		b.iov[0] = syscall.Iovec{}
		b.iov = b.iov[1:]
	}
}
