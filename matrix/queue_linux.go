//go:build linux

package matrix

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// queuedBytes returns how many bytes wait unread in c's receive queue
// (SIOCINQ), 0 when it cannot tell.
func queuedBytes(c net.Conn) int {
	n := 0
	control(c, func(fd int) {
		if q, err := unix.IoctlGetInt(fd, unix.SIOCINQ); err == nil {
			n = q
		}
	})
	return n
}

// acceptQueue returns how many connections wait in ln's accept queue, 0
// when it cannot tell: on a listening socket, TCP_INFO's tcpi_unacked is
// the accept queue's length.
func acceptQueue(ln net.Listener) int {
	n := 0
	control(ln, func(fd int) {
		if info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			n = int(info.Unacked)
		}
	})
	return n
}

// control runs f with the file descriptor of v, a socket, if it has one.
func control(v any, f func(fd int)) {
	sc, ok := v.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) { f(int(fd)) })
}

// receivedBytes returns how many bytes c's socket has received in all
// (TCP_INFO's tcpi_bytes_received: read or not), and whether it could tell.
func receivedBytes(c net.Conn) (int64, bool) {
	var n int64
	ok := false
	control(c, func(fd int) {
		if info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			n, ok = int64(info.Bytes_received), true
		}
	})
	return n, ok
}

// acceptCounted takes the next connection from l's accept queue and
// counts it in a.accepted under a.mu with the kernel's accept itself, so
// that unread, which reads the queue's length under the same lock, sees it
// in one place or the other at every moment. The caller notes it and takes
// it off a.accepted. The accept runs on a duplicate of the listener's
// descriptor (a listener's own RawConn cannot wait for a read), made on
// first use; a listener without one is accepted as usual and counted after.
func acceptCounted(l *headListener) (net.Conn, error) {
	l.dupOnce.Do(func() {
		if fl, ok := l.Listener.(interface{ File() (*os.File, error) }); ok {
			if f, err := fl.File(); err == nil {
				if raw, err := f.SyscallConn(); err == nil {
					l.dup, l.raw = f, raw
				} else {
					f.Close()
				}
			}
		}
	})
	if l.raw == nil {
		return acceptThenCount(l.Listener, l.a)
	}
	a := l.a
	for {
		nfd := -1
		var aerr error
		err := l.raw.Read(func(fd uintptr) bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			if aerr == unix.EAGAIN {
				return false // wait until the listener is readable
			}
			if aerr == nil {
				a.accepted++
			}
			return true
		})
		if err != nil {
			return nil, &net.OpError{Op: "accept", Net: l.Addr().Network(), Addr: l.Addr(), Err: err}
		}
		switch aerr {
		case nil:
		case unix.EINTR, unix.ECONNABORTED:
			continue // as Go's own accept: the next one
		default:
			return nil, &net.OpError{Op: "accept", Net: l.Addr().Network(), Addr: l.Addr(), Err: os.NewSyscallError("accept4", aerr)}
		}
		f := os.NewFile(uintptr(nfd), "accepted")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			a.mu.Lock()
			a.accepted--
			a.mu.Unlock()
			return nil, fmt.Errorf("matrix: taking an accepted connection: %w", err)
		}
		return c, nil
	}
}
