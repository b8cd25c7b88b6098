package recorder

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// finishers are the recorder's long-lived finishing goroutines: an exchange
// whose handler returned before its finishing goroutine started (a JSON
// response delivered whole: nearly every exchange), or whose response
// streams past lazyStart (startEarly), is handed to an idle one instead of
// a new goroutine. A new goroutine per exchange cost its
// creation and exit, and a stack that grew on every exchange as the
// classifier and the record's encoding went deeper than its first stack
// (docs/benchmarks.md, jsonpath and jsonpath2); a finisher's stack stays
// grown while it works. The handler's own goroutine does not finish the
// exchange: those frames would grow the connection's stack, which an idle
// stream on that connection would then keep (idlettfe).
//
// There is no timer: an idle finisher waits on the channel until the
// recorder's Wait (its owner is done with it) or until the recorder is
// unreachable (a cleanup closes stop). At most max wait at once; an
// exchange that finds none idle gets a goroutine of its own, which joins
// them when it is done if there is room. Under 64 clients on 2 cores, 8
// finishers left 22% of the exchanges without an idle one, 32 left 3.6%.
//
// The hand-off is to an idle finisher only, never into a queue: every
// exchange is finished at once by a goroutine of its own, as before, since
// one exchange's finishing may wait for another's (the proxy's Finish hook
// waits for the tools/list exchanges that started before a tools/call).
type finishers struct {
	work chan *Exchange
	stop chan struct{}
	once sync.Once
	max  int32
	n    atomic.Int32 // finishers that wait (idle)
}

// newFinishers returns the finishers of rc; they stop when rc is
// unreachable, as when Wait is called.
func newFinishers(rc *Recorder) *finishers {
	f := &finishers{work: make(chan *Exchange), stop: make(chan struct{}), max: int32(min(64, 16*runtime.GOMAXPROCS(0)))}
	runtime.AddCleanup(rc, func(f *finishers) { f.close() }, f)
	return f
}

// close makes the idle finishers exit, and the others when they are done
// with their exchange; later exchanges get a goroutine each.
func (f *finishers) close() { f.once.Do(func() { close(f.stop) }) }

// dispatch finishes ex, whose handler has returned, on an idle finisher,
// or on a new goroutine when none is idle. It never waits.
func (f *finishers) dispatch(ex *Exchange) {
	select {
	case f.work <- ex:
	default:
		go f.run(ex)
	}
}

// run finishes ex, then stays as a finisher while there is room. Only the
// idle finishers count against max: one that finishes a stream (started
// early, while the response streams) may work on it for as long as the
// stream lasts, and does not keep the exchanges after it from an idle one.
func (f *finishers) run(ex *Exchange) {
	for {
		ex.rc.run(ex)
		select {
		case <-f.stop:
			return
		default:
		}
		if f.n.Add(1) > f.max {
			f.n.Add(-1)
			return
		}
		select {
		case ex = <-f.work:
			f.n.Add(-1)
		case <-f.stop:
			f.n.Add(-1)
			return
		}
	}
}
