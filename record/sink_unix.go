//go:build unix

package record

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var sinkSignalsOnce sync.Once

// CatchSinkSignals makes the failures of a record sink errors instead of
// deaths: a write to a closed pipe (SIGPIPE, e.g. `--record - | head`) and
// a write past the file size limit (SIGXFSZ, `ulimit -f`) then fail with
// EPIPE and EFBIG, which the sinks count as lost records while the program
// goes on. The signals are caught, not ignored, so a child process (a
// stdio server) starts with the default action again. OpenSink calls it;
// calling it again does nothing.
func CatchSinkSignals() {
	sinkSignalsOnce.Do(func() {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE, syscall.SIGXFSZ)
	})
}
