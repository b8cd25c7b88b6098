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
//
// The finisher that became idle last takes the next exchange (a stack of
// idle finishers, not a queue): its stack is still grown from the exchange
// it finished, and its memory still in the caches, while the ones below it
// rest. Handed out in turn (the receivers of one channel are served first
// come, first served), every idle finisher ran between two collections,
// and each one's stack, halved by the collection while it waited, grew
// again in its next exchange: 0.3-0.75 us per exchange in the proxy's
// profiles at 8 and 64 clients (docs/benchmarks.md, fixed21).
type finishers struct {
	stop chan struct{}
	once sync.Once
	max  int

	mu     sync.Mutex
	idle   []*finisher  // the idle finishers, the one idle last on top
	closed bool         // close was called: no finisher waits any more
	n      atomic.Int32 // len(idle)
}

// finisher is an idle finishing goroutine's mailbox: dispatch takes it off
// the idle stack and puts the exchange in it (one slot: dispatch never
// waits).
type finisher struct {
	work  chan *Exchange
	taken bool // dispatch took it off the idle stack (under finishers.mu): an exchange is on its way
}

// newFinishers returns the finishers of rc; they stop when rc is
// unreachable, as when Wait is called.
func newFinishers(rc *Recorder) *finishers {
	f := &finishers{stop: make(chan struct{}), max: min(64, 16*runtime.GOMAXPROCS(0))}
	runtime.AddCleanup(rc, func(f *finishers) { f.close() }, f)
	return f
}

// close makes the idle finishers exit, and the others when they are done
// with their exchange; later exchanges get a goroutine each.
func (f *finishers) close() {
	f.once.Do(func() {
		f.mu.Lock()
		f.closed = true
		f.mu.Unlock()
		close(f.stop)
	})
}

// dispatch finishes ex, whose handler has returned, on the finisher that
// became idle last, or on a new goroutine when none is idle. It never
// waits.
func (f *finishers) dispatch(ex *Exchange) {
	f.mu.Lock()
	if k := len(f.idle) - 1; k >= 0 && !f.closed {
		w := f.idle[k]
		f.idle[k] = nil
		f.idle = f.idle[:k]
		f.n.Add(-1)
		w.taken = true
		f.mu.Unlock()
		w.work <- ex
		return
	}
	f.mu.Unlock()
	go f.run(ex)
}

// run finishes ex, then stays as a finisher while there is room. Only the
// idle finishers count against max: one that finishes a stream (started
// early, while the response streams) may work on it for as long as the
// stream lasts, and does not keep the exchanges after it from an idle one.
func (f *finishers) run(ex *Exchange) {
	var w *finisher
	for {
		ex.rc.run(ex)
		f.mu.Lock()
		if f.closed || len(f.idle) >= f.max {
			f.mu.Unlock()
			return
		}
		if w == nil {
			w = &finisher{work: make(chan *Exchange, 1)}
		}
		w.taken = false
		f.idle = append(f.idle, w)
		f.n.Add(1)
		f.mu.Unlock()
		select {
		case ex = <-w.work:
		case <-f.stop:
			if f.leave(w) {
				return
			}
			// Taken before the close: its exchange is on its way.
			ex = <-w.work
		}
	}
}

// leave takes w, idle, off the idle stack when the finishers stop; false
// when dispatch took it first (an exchange is on its way to it).
func (f *finishers) leave(w *finisher) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.taken {
		return false
	}
	for i, x := range f.idle {
		if x == w {
			k := len(f.idle) - 1
			copy(f.idle[i:], f.idle[i+1:])
			f.idle[k] = nil
			f.idle = f.idle[:k]
			break
		}
	}
	f.n.Add(-1)
	return true
}
