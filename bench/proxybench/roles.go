package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// roleEnv names the role a child process plays; the orchestrator starts
// its own executable with it set.
const roleEnv = "PROXYBENCH_ROLE"

// profileEnv, when set in a child (the run has -profile DIR), is the
// directory where the child writes ROLE-idle-heap.pprof,
// ROLE-idle-goroutines.txt and ROLE-idle-memstats.txt when it receives
// SIGUSR1 (the orchestrator sends it while the idle streams are held), then
// prints "profiled" on stdout.
const profileEnv = "PROXYBENCH_PROFILE"

// memRateEnv sets runtime.MemProfileRate in a child (-memprofilerate).
const memRateEnv = "PROXYBENCH_MEMPROFILERATE"

// maxStackEnv, when set in a child, is its goroutines' stack limit
// (debug.SetMaxStack): with 8192, the first request whose calls need more
// than a goroutine's first 8 KiB stack crashes the child with that
// goroutine's traceback, which shows the deepest call (how the frames under
// net/http's writing of a response head were found: docs/benchmarks.md,
// idlettfe). A measuring aid, for one role started by hand.
const maxStackEnv = "PROXYBENCH_MAXSTACK"

// runRole runs the server role named by $PROXYBENCH_ROLE until SIGTERM or
// until its parent goes away (stdin closes). It listens on 127.0.0.1:0 and
// prints "listening ADDR" on stdout.
func runRole(role string, args []string) error {
	if v := os.Getenv(memRateEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%s=%q: want a number of bytes", memRateEnv, v)
		}
		runtime.MemProfileRate = n
	}
	if v := os.Getenv(maxStackEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4096 {
			return fmt.Errorf("%s=%q: want a number of bytes, at least 4096", maxStackEnv, v)
		}
		debug.SetMaxStack(n)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var h http.Handler
	var stop func() error
	switch role {
	case "upstream":
		h = upstream()
	case "plain", "plainlean":
		lean := role == "plainlean"
		if len(args) < 1 {
			return errors.New("plain: want the upstream URL")
		}
		u, err := url.Parse(args[0])
		if err != nil {
			return err
		}
		// The transport mcpdiag proxy builds for itself (proxy.New): the
		// default one with an idle pool for many clients.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		t.MaxIdleConns = 1024
		// And its copy buffers: pooled, of proxy.CopyBufferSize (without
		// a BufferPool, ReverseProxy allocates 32 KiB per response, which
		// an idle stream holds while it waits).
		var rt http.RoundTripper = t
		if lean {
			rt = newLeanTransport(u.Host, leanReadBuffer())
		}
		rp := &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = "" },
			FlushInterval: -1,
			Transport:     rt,
			BufferPool:    plainBuffers{},
		}
		// Full duplex: without it net/http closes the inbound body when
		// the response starts, and the transport's last read of a
		// Content-Length body then tears the upstream connection down
		// mid-response (golang/go#40747; 1-2% of the SSE requests here).
		// mcpdiag reads the request body before forwarding, so it does
		// not need this.
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.NewResponseController(w).EnableFullDuplex()
			rp.ServeHTTP(w, r)
		})
		if dir := os.Getenv(profileEnv); dir != "" {
			// The baseline of the lib target's profile (pprof -diff_base).
			stopCPU, err := cpuProfile(filepath.Join(dir, "plain-cpu.pprof"))
			if err != nil {
				return err
			}
			// And its allocations: net/http's own, the floor of the lib
			// target's allocs.pprof (pprof -diff_base).
			stop = func() error {
				if err := stopCPU(); err != nil {
					return err
				}
				return writeAllocs(filepath.Join(dir, "plain-allocs.pprof"))
			}
		}
	case "libproxy":
		// mcpdiag proxy's defaults, built from the library so that it can
		// write pprof profiles: args are UPSTREAM RECORDFILE PROFILEDIR.
		if len(args) < 3 {
			return errors.New("libproxy: want UPSTREAM RECORDFILE PROFILEDIR")
		}
		h, stop, err = libProxy(args[0], args[1], args[2], nil)
		if err != nil {
			return err
		}
	case "mcpdiaglean":
		// The same library proxy over the prototype leanTransport (lean.go),
		// not profiled: args are UPSTREAM RECORDFILE.
		if len(args) < 2 {
			return errors.New("mcpdiaglean: want UPSTREAM RECORDFILE")
		}
		u, err := url.Parse(args[0])
		if err != nil {
			return err
		}
		h, stop, err = libProxy(args[0], args[1], "", newLeanTransport(u.Host, leanReadBuffer()))
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if dir := os.Getenv(profileEnv); dir != "" {
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		go func() {
			for range usr1 {
				if err := writeIdleProfiles(dir, role); err != nil {
					fmt.Fprintf(os.Stderr, "proxybench %s: idle profiles: %v\n", role, err)
				}
				fmt.Printf("profiled\n")
			}
		}()
	}
	fmt.Printf("listening %s\n", ln.Addr())
	done := make(chan struct{})
	go func() { // the parent went away, or asked to stop
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

// leanEnv sets the read buffer of each leanTransport connection (bytes;
// 4096, the size of net/http's transport, when unset).
const leanEnv = "PROXYBENCH_LEAN_READ_BUFFER"

func leanReadBuffer() int {
	if n, err := strconv.Atoi(os.Getenv(leanEnv)); err == nil && n >= 16 {
		return n
	}
	return 4 << 10
}

// plainBuffers is the plain proxy's httputil.BufferPool: a sync.Pool of
// proxy.CopyBufferSize buffers, as mcpdiag's.
type plainBuffers struct{}

var plainPool = sync.Pool{New: func() any { b := make([]byte, proxy.CopyBufferSize); return &b }}

func (plainBuffers) Get() []byte  { return *plainPool.Get().(*[]byte) }
func (plainBuffers) Put(b []byte) { plainPool.Put(&b) }

// upstream is the canned MCP server: /mcp answers the 1 KiB tool result,
// /sse the 64 KiB stream of 4 events (flushed one by one), /idle a priming
// comment and one event, then holds the stream until the client leaves.
func upstream() http.Handler {
	result := toolResult(jsonSize)
	events := sseStream()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for _, e := range events {
				w.Write(e)
				w.(http.Flusher).Flush()
			}
		case "/idle":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, idlePriming+"event: message\ndata: "+idleEventData+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write(result)
		}
	})
}

// libProxy builds the proxy as `mcpdiag proxy --upstream U --record F`
// does (default body mode, block policy, fsync on close, the default
// queue), with a CPU profile running and an allocation profile written at
// the end.
//
// With a transport (the lean prototype), it is used instead of the one
// proxy.New builds, and with no profileDir nothing is profiled.
func libProxy(upstreamURL, recordFile, profileDir string, rt http.RoundTripper) (http.Handler, func() error, error) {
	u, err := url.Parse(upstreamURL)
	if err != nil {
		return nil, nil, err
	}
	enc := record.Encoder{BodyLimit: proxy.DefaultBodyLimit}
	fw, err := record.OpenFile(recordFile, record.FileOptions{Sync: record.SyncClose, Encoder: enc})
	if err != nil {
		return nil, nil, err
	}
	sink := record.NewAsync(fw, record.AsyncOptions{QueueSize: record.DefaultQueueSize, Policy: record.QueueBlock, Encoder: enc})
	p, err := proxy.New(proxy.Options{
		Upstream: u, Records: sink, Bodies: proxy.BodiesErrors,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		ReadHeaderTimeout: proxy.DefaultReadHeaderTimeout, IdleTimeout: proxy.DefaultIdleTimeout,
		Transport: rt,
	})
	if err != nil {
		return nil, nil, err
	}
	if profileDir == "" {
		return p, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			p.Wait(ctx)
			return sink.Close()
		}, nil
	}
	stopCPU, err := cpuProfile(filepath.Join(profileDir, "cpu.pprof"))
	if err != nil {
		return nil, nil, err
	}
	stop := func() error {
		stopCPU()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Wait(ctx)
		serr := sink.Close()
		if err := writeAllocs(filepath.Join(profileDir, "allocs.pprof")); err != nil {
			return err
		}
		return serr
	}
	return p, stop, nil
}

// writeIdleProfiles writes, after a garbage collection, the in-use heap
// profile, the goroutines (debug=1: grouped by stack) and the runtime's
// memory statistics of this process into dir, named after role.
func writeIdleProfiles(dir, role string) error {
	runtime.GC()
	write := func(name string, f func(io.Writer) error) error {
		out, err := os.Create(filepath.Join(dir, role+"-idle-"+name))
		if err != nil {
			return err
		}
		if err := f(out); err != nil {
			out.Close()
			return err
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
		_, err := fmt.Fprintf(w, "goroutines %d\nHeapInuse %d\nHeapAlloc %d\nHeapObjects %d\nStackInuse %d\nMSpanInuse %d\nSys %d\nHeapReleased %d\nMemProfileRate %d\n",
			runtime.NumGoroutine(), m.HeapInuse, m.HeapAlloc, m.HeapObjects, m.StackInuse, m.MSpanInuse, m.Sys, m.HeapReleased, runtime.MemProfileRate)
		return err
	})
}

// writeAllocs writes the process's allocation profile (every allocation
// since it started, sampled at runtime.MemProfileRate) to path.
func writeAllocs(path string) error {
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

// cpuProfile starts a CPU profile written to path; stop ends it and closes
// the file.
func cpuProfile(path string) (stop func() error, err error) {
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
