// Package child is the life of one of proxybench's server processes: it
// listens on 127.0.0.1:0, says so on stdout ("listening ADDR"), serves
// until SIGTERM or until its parent goes away (stdin closes), and, when
// the run profiles, writes its idle profiles on SIGUSR1. It imports only
// the standard library: the plainproxy binary is built on it.
package child

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"
)

// ProfileEnv, when set in a child (the run has -profile DIR), is the
// directory where the child writes ROLE-idle-heap.pprof,
// ROLE-idle-goroutines.txt and ROLE-idle-memstats.txt when it receives
// SIGUSR1 (the orchestrator sends it while the idle streams are held), then
// prints "profiled" on stdout.
const ProfileEnv = "PROXYBENCH_PROFILE"

// MemRateEnv sets runtime.MemProfileRate in a child (-memprofilerate).
const MemRateEnv = "PROXYBENCH_MEMPROFILERATE"

// MaxStackEnv, when set in a child, is its goroutines' stack limit
// (debug.SetMaxStack): with 8192, the first request whose calls need more
// than a goroutine's first 8 KiB stack crashes the child with that
// goroutine's traceback, which shows the deepest call (how the frames under
// net/http's writing of a response head were found: docs/benchmarks.md,
// idlettfe). A measuring aid, for one role started by hand.
const MaxStackEnv = "PROXYBENCH_MAXSTACK"

// Setup applies MemRateEnv and MaxStackEnv; a child calls it first.
func Setup() error {
	if v := os.Getenv(MemRateEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%s=%q: want a number of bytes", MemRateEnv, v)
		}
		runtime.MemProfileRate = n
	}
	if v := os.Getenv(MaxStackEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4096 {
			return fmt.Errorf("%s=%q: want a number of bytes, at least 4096", MaxStackEnv, v)
		}
		debug.SetMaxStack(n)
	}
	return nil
}

// Serve serves h on 127.0.0.1:0 as the child named role until SIGTERM or
// an interrupt, or until stdin reaches its end (the parent went away or
// asked to stop), then shuts the server down and calls stop (when not nil)
// and returns its error.
func Serve(role string, h http.Handler, stop func() error) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if dir := os.Getenv(ProfileEnv); dir != "" {
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		go func() {
			for range usr1 {
				if err := WriteIdleProfiles(dir, role); err != nil {
					fmt.Fprintf(os.Stderr, "%s: idle profiles: %v\n", role, err)
				}
				fmt.Printf("profiled\n")
			}
		}()
	}
	fmt.Printf("listening %s\n", ln.Addr())
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	go func() { _ = srv.Serve(ln) }()
	select {
	case <-done:
	case <-sigs:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	if stop != nil {
		return stop()
	}
	return nil
}

// Profile starts a CPU profile written to dir/PREFIXcpu.pprof; the stop it
// returns ends it and writes the process's allocation profile to
// dir/PREFIXallocs.pprof.
func Profile(dir, prefix string) (stop func() error, err error) {
	stopCPU, err := CPUProfile(filepath.Join(dir, prefix+"cpu.pprof"))
	if err != nil {
		return nil, err
	}
	return func() error {
		if err := stopCPU(); err != nil {
			return err
		}
		return WriteAllocs(filepath.Join(dir, prefix+"allocs.pprof"))
	}, nil
}

// WriteIdleProfiles writes, after a garbage collection, the in-use heap
// profile, the goroutines (debug=1: grouped by stack) and the runtime's
// memory statistics of this process into dir, named after role.
func WriteIdleProfiles(dir, role string) error {
	runtime.GC()
	write := func(name string, f func(io.Writer) error) error {
		out, err := os.Create(filepath.Join(dir, role+"-idle-"+name))
		if err != nil {
			return err
		}
		if err := f(out); err != nil {
			out.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		return out.Close()
	}
	if err := write("heap.pprof", func(w io.Writer) error { return pprof.Lookup("heap").WriteTo(w, 0) }); err != nil {
		return err
	}
	if err := write("goroutines.txt", func(w io.Writer) error { return pprof.Lookup("goroutine").WriteTo(w, 1) }); err != nil {
		return err
	}
	return write("memstats.txt", func(w io.Writer) error {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		_, err := fmt.Fprintf(w, "goroutines %d\nHeapInuse %d\nHeapAlloc %d\nHeapObjects %d\nStackInuse %d\nMSpanInuse %d\nSys %d\nHeapReleased %d\nMemProfileRate %d\nNumGC %d\n",
			runtime.NumGoroutine(), m.HeapInuse, m.HeapAlloc, m.HeapObjects, m.StackInuse, m.MSpanInuse, m.Sys, m.HeapReleased, runtime.MemProfileRate, m.NumGC)
		return err
	})
}

// WriteAllocs writes the process's allocation profile (every allocation
// since it started, sampled at runtime.MemProfileRate) to path.
func WriteAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("allocation profile: %w", err)
	}
	return f.Close()
}

// CPUProfile starts a CPU profile written to path; stop ends it and closes
// the file.
func CPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
