package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Shutdown bounds of Serve.
const (
	// DefaultShutdownTimeout is how long Serve lets the open exchanges
	// finish once its context ended, before it cuts them.
	DefaultShutdownTimeout = 5 * time.Second
	// DefaultDrainTimeout bounds the wait, once the server is closed, for
	// the exchanges' goroutines to classify and hand their records to the
	// sink (see Proxy.Close).
	DefaultDrainTimeout = 10 * time.Second
)

// ShutdownStage names a step of Serve's shutdown.
type ShutdownStage string

// The stages, in the order they can happen.
const (
	// ShutdownBegin: the context ended; no new connections are accepted
	// and the open exchanges get ShutdownOptions.Timeout to finish.
	ShutdownBegin ShutdownStage = "begin"
	// ShutdownTimedOut: the Timeout passed; the open exchanges are cut.
	ShutdownTimedOut ShutdownStage = "timed-out"
	// ShutdownCut: ShutdownOptions.CutNow fired; the open exchanges are cut at
	// once.
	ShutdownCut ShutdownStage = "cut"
)

// ShutdownEvent is one stage of Serve's shutdown, told to
// ShutdownOptions.OnShutdown.
type ShutdownEvent struct {
	Stage ShutdownStage
	// InFlight is the number of open exchanges at that moment.
	InFlight int64
	// Timeout is the ShutdownOptions.Timeout in force.
	Timeout time.Duration
	// Cause is context.Cause of Serve's context (ShutdownBegin only).
	Cause error
}

// ShutdownOptions say how Serve stops (Options.Shutdown). The zero value is
// the defaults.
type ShutdownOptions struct {
	// Timeout is how long the open exchanges may finish once the context
	// ended (DefaultShutdownTimeout when 0; negative: cut at once).
	Timeout time.Duration
	// DrainTimeout bounds the wait for the records of the exchanges once
	// the server is closed (DefaultDrainTimeout when 0).
	DrainTimeout time.Duration
	// CutNow, when not nil, cuts the open exchanges at once when it is
	// closed (or receives) during the shutdown: the second signal of a
	// command line program.
	CutNow <-chan struct{}
	// OnShutdown, when set, is told each stage of the shutdown as it
	// happens (for a progress line); it must not block.
	OnShutdown func(ShutdownEvent)
}

// ServeError is what Serve returns when it did not end cleanly: the
// server failed, exchanges were still open when the drain bound passed (they
// have no record), or the record sink lost records or failed to close. The
// fields not nil say which; Stats are the proxy's counters at the end.
type ServeError struct {
	// Serve is the http.Server's error (not http.ErrServerClosed).
	Serve error
	// Drain says exchanges were still in flight after ShutdownOptions.DrainTimeout.
	Drain error
	// Records is the record sink's Close error, naming the sink (it
	// wraps a *record.LostError when records were lost).
	Records error
	// Stats are the proxy's counters after the shutdown.
	Stats Stats
}

func (e *ServeError) Error() string {
	var parts []string
	for _, err := range e.Unwrap() {
		parts = append(parts, err.Error())
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the causes, in the order the fields list them.
func (e *ServeError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Serve, e.Drain, e.Records} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Serve builds a proxy from opts (see New) and serves it on ln until ctx
// ends, then shuts it down as Proxy.Serve does.
func Serve(ctx context.Context, ln net.Listener, opts Options) error {
	p, err := New(opts)
	if err != nil {
		ln.Close()
		return err
	}
	return p.Serve(ctx, ln)
}

// Serve serves the proxy on ln (through HTTPServer) until ctx ends or the
// server fails, then shuts down in this order:
//
//  1. stop accepting connections and let the open exchanges finish, for
//     up to Options.Shutdown.Timeout (or until its CutNow fires);
//  2. cut the ones still open, telling the proxy first (BeginShutdown) so
//     that their records say the shutdown cut them (flag SD), not that
//     their clients left;
//  3. wait, for up to Options.Shutdown.DrainTimeout, until every exchange has handed its
//     record to the sink, and close the idle upstream connections (Close);
//  4. close Options.Records when it has a Close method (a *record.Async or
//     *record.Sink: every queued record flushed to its file).
//
// Serve owns ln and, when it can be closed, Options.Records. It returns nil
// after a clean shutdown, and otherwise a *ServeError saying what was lost:
// a failed server, exchanges left without a record, a sink that lost
// records or failed to close (the error names the sink).
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	so := p.opts.Shutdown
	timeout := so.Timeout
	if timeout == 0 {
		timeout = DefaultShutdownTimeout
	}
	drain := so.DrainTimeout
	if drain <= 0 {
		drain = DefaultDrainTimeout
	}
	tell := func(ev ShutdownEvent) {
		if so.OnShutdown != nil {
			ev.InFlight, ev.Timeout = p.Stats().InFlight, max(timeout, 0)
			so.OnShutdown(ev)
		}
	}
	srv := p.HTTPServer(p)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	var serveErr error
	select {
	case serveErr = <-served:
	case <-ctx.Done():
	}
	if serveErr == nil {
		tell(ShutdownEvent{Stage: ShutdownBegin, Cause: context.Cause(ctx)})
		p.shutdown(srv, timeout, so.CutNow, tell)
		serveErr = <-served
	} else {
		p.BeginShutdown()
		_ = srv.Close()
	}
	e := &ServeError{}
	if !errors.Is(serveErr, http.ErrServerClosed) {
		e.Serve = fmt.Errorf("proxy: serving on %s: %w", ln.Addr(), serveErr)
	}
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := p.Close(dctx); err != nil {
		e.Drain = fmt.Errorf("%w; their records are missing", err)
	}
	if c, ok := p.opts.Records.(io.Closer); ok {
		if err := c.Close(); err != nil {
			e.Records = fmt.Errorf("proxy: records to %s: %w", sinkName(p.opts.Records), err)
		}
	}
	e.Stats = p.Stats()
	if e.Serve == nil && e.Drain == nil && e.Records == nil {
		return nil
	}
	return e
}

// shutdown stops srv gracefully for up to timeout, then (or at once when cut
// fires) closes it, the proxy told first.
func (p *Proxy) shutdown(srv *http.Server, timeout time.Duration, cut <-chan struct{}, tell func(ShutdownEvent)) {
	if timeout > 0 {
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- srv.Shutdown(sctx) }()
		select {
		case err := <-done:
			if err == nil {
				return
			}
			tell(ShutdownEvent{Stage: ShutdownTimedOut})
		case <-cut:
			tell(ShutdownEvent{Stage: ShutdownCut})
		}
	}
	p.BeginShutdown()
	_ = srv.Close()
}

// sinkName names a record sink in an error: its Name (a file's path) when
// it has one.
func sinkName(s Sink) string {
	if n, ok := s.(interface{ Name() string }); ok && n.Name() != "" {
		return n.Name()
	}
	return "the record sink"
}
