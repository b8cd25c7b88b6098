// Package testwait bounds a test's waits on the code under test: a receive
// from a channel, a WaitGroup, a condition. The wait is for the event, never
// for a time; the bound (Bound) only turns a hang into a failure that names
// what was waited for and shows where every goroutine was, instead of the
// package's timeout (minutes later, with no message about which wait hung).
package testwait

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// Bound is how long a wait may last before the test fails: far beyond what
// any event the tests wait for takes on a loaded machine (seconds at load 16
// on two cores), far below go test's package timeout.
const Bound = time.Minute

// maxStacks caps the goroutine dump a failed wait logs.
const maxStacks = 1 << 20

// Recv receives from ch as <-ch does (a value, or the zero value once ch is
// closed) and returns it; it fails tb, naming what, when nothing comes within
// Bound. Call it from the test's goroutine (it may call tb.Fatalf).
func Recv[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	return recv(tb, ch, what, Bound)
}

// Wait waits for wg as wg.Wait does; it fails tb, naming what, when wg is not
// done within Bound. Call it from the test's goroutine.
func Wait(tb testing.TB, wg *sync.WaitGroup, what string) {
	tb.Helper()
	wait(tb, wg, what, Bound)
}

// Until polls cond until it holds; it fails tb, naming what, when it does
// not hold within Bound. Call it from the test's goroutine.
func Until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	until(tb, what, cond, Bound)
}

func recv[T any](tb testing.TB, ch <-chan T, what string, bound time.Duration) T {
	tb.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		fail(tb, what, bound)
		var zero T
		return zero
	}
}

func wait(tb testing.TB, wg *sync.WaitGroup, what string, bound time.Duration) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	recv(tb, done, what, bound)
}

func until(tb testing.TB, what string, cond func() bool, bound time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			fail(tb, what, bound)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fail logs every goroutine's stack (where the code under test is stuck)
// and fails tb with one line naming the wait.
func fail(tb testing.TB, what string, bound time.Duration) {
	tb.Helper()
	buf := make([]byte, maxStacks)
	buf = buf[:runtime.Stack(buf, true)]
	tb.Logf("goroutines when the wait for %s gave up:\n%s", what, buf)
	tb.Fatalf("waited %s for %s: it never came (a bound against a hang, not a timing the test relies on)", bound, what)
}
