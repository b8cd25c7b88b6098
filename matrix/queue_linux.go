//go:build linux

package matrix

import (
	"net"
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
