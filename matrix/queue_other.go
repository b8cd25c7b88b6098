//go:build !linux

package matrix

import "net"

// queuedBytes is 0 where the kernel's receive queue is not looked at: the
// run's wait then sees a request only once the server has read part of it.
func queuedBytes(net.Conn) int { return 0 }

// acceptQueue is 0 where the accept queue is not looked at.
func acceptQueue(net.Listener) int { return 0 }

// receivedBytes is unknown where TCP_INFO is not read: the socket's queue
// is looked at instead.
func receivedBytes(net.Conn) (int64, bool) { return 0, false }

// acceptCounted accepts as usual where the kernel's accept is not taken
// under the arrivals' lock: a connection is counted a moment after it left
// the accept queue.
func acceptCounted(l *headListener) (net.Conn, error) { return acceptThenCount(l.Listener, l.a) }
