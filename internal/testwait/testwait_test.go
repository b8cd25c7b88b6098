package testwait

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTB records what a wait reports; its Fatalf ends the goroutine it is
// called on, as testing.T's does.
type fakeTB struct {
	testing.TB
	mu    sync.Mutex
	logs  []string
	fatal string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// run calls wait as a test body would, on its own goroutine, and returns
// what it reported and whether it returned normally.
func run(wait func(tb testing.TB)) (f *fakeTB, returned bool) {
	f = &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(f)
		returned = true
	}()
	<-done // ends: every wait below either returns or hits its bound
	return f, returned
}

// TestWaitsReturnWhatCame: a value, a close and a done WaitGroup each end
// the wait with no failure, and the value is the one sent.
func TestWaitsReturnWhatCame(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 42
	var got int
	f, ok := run(func(tb testing.TB) { got = Recv(tb, ch, "the answer") })
	if !ok || f.fatal != "" || got != 42 {
		t.Errorf("a sent value: returned %v, got %d, fatal %q; want 42 and no failure", ok, got, f.fatal)
	}
	closed := make(chan struct{})
	close(closed)
	if f, ok := run(func(tb testing.TB) { Recv(tb, closed, "the close") }); !ok || f.fatal != "" {
		t.Errorf("a closed channel: returned %v, fatal %q", ok, f.fatal)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go wg.Done()
	if f, ok := run(func(tb testing.TB) { Wait(tb, &wg, "the group") }); !ok || f.fatal != "" {
		t.Errorf("a done group: returned %v, fatal %q", ok, f.fatal)
	}
	n := 0
	if f, ok := run(func(tb testing.TB) { Until(tb, "three looks", func() bool { n++; return n == 3 }) }); !ok || f.fatal != "" || n != 3 {
		t.Errorf("a condition: returned %v after %d looks, fatal %q; want 3", ok, n, f.fatal)
	}
}

// TestWaitsThatHangFailNamingThem: a channel nothing is sent on, a group
// never done and a condition that never holds each fail at the bound, with
// one line that names the wait and the goroutines' stacks logged (the
// stuck goroutine, parked in stuckHere, among them).
func TestWaitsThatHangFailNamingThem(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := make(chan struct{})
	go stuckHere(stuck, release)
	<-stuck
	never := make(chan string)
	var wg sync.WaitGroup
	wg.Add(1)
	defer wg.Done()
	for name, wait := range map[string]func(tb testing.TB){
		"Recv":  func(tb testing.TB) { recv(tb, never, "the server's answer", time.Millisecond) },
		"Wait":  func(tb testing.TB) { wait(tb, &wg, "the server's answer", time.Millisecond) },
		"Until": func(tb testing.TB) { until(tb, "the server's answer", func() bool { return false }, time.Millisecond) },
	} {
		f, ok := run(wait)
		if ok {
			t.Errorf("%s returned after a wait that never ends", name)
		}
		if want := "waited 1ms for the server's answer: it never came"; !strings.HasPrefix(f.fatal, want) {
			t.Errorf("%s: failure %q, want it to begin %q", name, f.fatal, want)
		}
		if len(f.logs) != 1 || !strings.Contains(f.logs[0], "testwait.stuckHere") {
			t.Errorf("%s: logged %d entries, want one with the stuck goroutine's stack:\n%s", name, len(f.logs), strings.Join(f.logs, "\n"))
		}
	}
}

func stuckHere(stuck, release chan struct{}) {
	close(stuck)
	<-release
}
