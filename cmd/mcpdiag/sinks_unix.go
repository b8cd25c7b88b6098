//go:build unix

package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var sinkSignalsOnce sync.Once

// handleSinkSignals makes the failures of a record sink errors instead of
// deaths: a write to a closed pipe (SIGPIPE, e.g. `--record - | head`) and
// a write past the file size limit (SIGXFSZ, `ulimit -f`) then fail with
// EPIPE and EFBIG, which the writers count as lost records while the
// command goes on forwarding. The signals are caught, not ignored, so a
// child process (a stdio server) starts with the default action again.
func handleSinkSignals() {
	sinkSignalsOnce.Do(func() {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE, syscall.SIGXFSZ)
	})
}
