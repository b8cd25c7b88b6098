package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/child"
	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/plain"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// roleEnv names the role a child process plays; the orchestrator starts
// its own executable with it set. The target "plain" is not one of them: it
// is the plainproxy binary, standard library only (plainproxy/main.go).
const roleEnv = "PROXYBENCH_ROLE"

// seqHeader numbers a request of a run with -samples, for the upstream's
// times of it.
const seqHeader = "X-Proxybench-Seq"

// runRole runs the server role named by $PROXYBENCH_ROLE until SIGTERM or
// until its parent goes away (stdin closes). It listens on 127.0.0.1:0 and
// prints "listening ADDR" on stdout (child.Serve).
func runRole(role string, args []string) error {
	if err := child.Setup(); err != nil {
		return err
	}
	var h http.Handler
	var stop func() error
	var err error
	switch role {
	case "upstream":
		h = upstream()
	case "plaininproc", "plainlean":
		// The plain proxy of the target "plain" inside this binary (its
		// image carries mcpdiag's packages and the payloads), over the
		// transport the plainproxy binary uses or over lean.go's.
		if len(args) < 1 {
			return fmt.Errorf("%s: want the upstream URL", role)
		}
		u, err := url.Parse(args[0])
		if err != nil {
			return err
		}
		var rt http.RoundTripper = plain.Transport()
		if role == "plainlean" {
			rt = newLeanTransport(u.Host, leanReadBuffer())
		}
		h = plain.New(u, rt)
		if dir := os.Getenv(child.ProfileEnv); dir != "" {
			if stop, err = child.Profile(dir, role+"-"); err != nil {
				return err
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
	return child.Serve(role, h, stop)
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

// upstream is the canned MCP server: /mcp answers the 1 KiB tool result,
// /sse the 64 KiB stream of 4 events (flushed one by one), /idle a priming
// comment and one event, then holds the stream until the client leaves.
//
// A request with a seqHeader (proxybench -samples) has its times kept:
// its handler's start, the end of its body, and the return of the first
// event's flush; GET /samples answers them, a line each, "SEQ START BODY
// FIRST" in Unix nanoseconds, and forgets them.
func upstream() http.Handler {
	result := toolResult(jsonSize)
	events := sseStream()
	var mu sync.Mutex
	var log []byte
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		io.Copy(io.Discard, r.Body)
		seq := r.Header.Get(seqHeader)
		var read time.Time
		if seq != "" {
			read = time.Now()
		}
		switch r.URL.Path {
		case "/samples":
			mu.Lock()
			w.Write(log)
			log = log[:0]
			mu.Unlock()
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for i, e := range events {
				w.Write(e)
				w.(http.Flusher).Flush()
				if i == 0 && seq != "" {
					first := time.Now()
					mu.Lock()
					log = fmt.Appendf(log, "%s %d %d %d\n", seq, arrived.UnixNano(), read.UnixNano(), first.UnixNano())
					mu.Unlock()
				}
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
	stopCPU, err := child.CPUProfile(filepath.Join(profileDir, "cpu.pprof"))
	if err != nil {
		return nil, nil, err
	}
	stop := func() error {
		stopCPU()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Wait(ctx)
		serr := sink.Close()
		if err := child.WriteAllocs(filepath.Join(profileDir, "allocs.pprof")); err != nil {
			return err
		}
		return serr
	}
	return p, stop, nil
}
