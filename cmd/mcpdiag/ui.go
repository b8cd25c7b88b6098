package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/ui"
	"github.com/spf13/cobra"
)

type uiOptions struct {
	addr string
	poll time.Duration
	// ready, when set, is called with the page's URL once it is served
	// (tests).
	ready func(url string)
}

func newUICmd() *cobra.Command {
	var o uiOptions
	cmd := &cobra.Command{
		Use:   "ui FILE…",
		Short: "Serve a live page over record files as they grow: every exchange with its layer, SSE timeline, retry decision and fault",
		Long: `Serves the page of docs/ui.md over record files (from call --record, proxy
--record, serve --log, matrix --record) on loopback, and prints its URL. The
URL holds an unguessable token; only direct loopback clients with a loopback
Host and Origin are served (the rule of serve's admin API). Each file is read
from its start, then followed as it grows (checked every --poll), and every
new record is pushed to the open pages as a server-sent event.

Stops cleanly on SIGINT or SIGTERM. Exit status: 0 stopped, 1 a file became
unreadable, 2 usage error.`,
		Example: `  mcpdiag proxy --upstream http://127.0.0.1:8080/mcp --record proxy.jsonl --record-bodies full &
  mcpdiag ui proxy.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runUI(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen address, loopback only (port 0 picks a free port)")
	f.DurationVar(&o.poll, "poll", 50*time.Millisecond, "how often each file is checked for new lines")
	return cmd
}

func runUI(ctx context.Context, stdout, stderr io.Writer, files []string, o uiOptions) error {
	if len(files) == 0 {
		return usageError("ui: name at least one record file")
	}
	if o.poll <= 0 {
		return usageError("--poll must be positive, got %v", o.poll)
	}
	for _, name := range files {
		st, err := os.Stat(name)
		if err != nil {
			return usageError("cannot open %s: %v", name, err)
		}
		if st.IsDir() {
			return usageError("%s is a directory", name)
		}
		f, err := os.Open(name)
		if err != nil {
			return usageError("cannot open %s: %v", name, err)
		}
		f.Close()
	}
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return usageError("--addr %q: %v", o.addr, err)
	}
	if !loopback.IsHost(host) {
		return usageError("--addr %s: the page is served on loopback only (127.0.0.1, ::1 or localhost)", o.addr)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return usageError("--addr %s: %v", o.addr, err)
	}
	if !loopback.Listener(ln.Addr()) {
		ln.Close()
		return usageError("--addr %s: listening on %s, which is not a loopback address", o.addr, ln.Addr())
	}
	title := "mcpdiag ui"
	if len(files) == 1 {
		title += ": " + files[0]
	} else {
		title += fmt.Sprintf(": %d files", len(files))
	}
	srv, err := ui.NewServer(ui.ServerOptions{Title: title})
	if err != nil {
		ln.Close()
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	for _, name := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Tail(tctx, name, o.poll); err != nil && !errors.Is(err, context.Canceled) {
				mu.Lock()
				failed = append(failed, name)
				mu.Unlock()
				fmt.Fprintf(stderr, "mcpdiag: ui: %s: %v (no longer followed)\n", name, oneLine(err.Error()))
			}
		}()
	}
	url := "http://" + ln.Addr().String() + srv.Path()
	fmt.Fprintln(stdout, url)
	fmt.Fprintf(stderr, "mcpdiag ui: following %d %s; open the URL above (Ctrl-C stops)\n", len(files), linesWordFiles(len(files)))
	if o.ready != nil {
		o.ready(url)
	}

	select {
	case <-ctx.Done():
	case err := <-served:
		cancel()
		wg.Wait()
		return &exitError{code: 1, err: fmt.Errorf("ui: serving: %w", err)}
	}
	cancel()
	wg.Wait()
	srv.Close() // ends the open event streams, so Shutdown need not wait for them
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	_ = hs.Shutdown(sctx)
	fmt.Fprintf(stderr, "mcpdiag ui: stopped; %d records shown\n", srv.Records())
	if len(failed) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("ui: %d of %d files became unreadable: %v", len(failed), len(files), failed)}
	}
	return nil
}

func linesWordFiles(n int) string {
	if n == 1 {
		return "file"
	}
	return "files"
}

// livePage is the page of a running producer (proxy --ui, serve --ui):
// its records are handed to the page as they are written.
type livePage struct {
	srv *ui.Server
	hs  *http.Server
	url string
}

// startLivePage serves a live page on addr, which must be loopback.
func startLivePage(addr, title string, enc record.Encoder) (*livePage, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", addr, err)
	}
	if !loopback.IsHost(host) {
		return nil, fmt.Errorf("%s: the page is served on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if !loopback.Listener(ln.Addr()) {
		ln.Close()
		return nil, fmt.Errorf("%s: listening on %s, which is not a loopback address", addr, ln.Addr())
	}
	srv, err := ui.NewServer(ui.ServerOptions{Title: title, Encoder: enc})
	if err != nil {
		ln.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return &livePage{srv: srv, hs: hs, url: "http://" + ln.Addr().String() + srv.Path()}, nil
}

// Close ends the page's event streams and its server.
func (l *livePage) Close() {
	l.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = l.hs.Shutdown(ctx)
}

// pageSink writes each record to the producer's own sink (its error is the
// record's fate: counted, named, exit status) and to the page (a view: a
// record the page cannot take is not a lost record).
type pageSink struct {
	primary proxy.Sink
	page    *ui.Server
}

func (p pageSink) Write(rec *record.Record) error {
	var err error
	if p.primary != nil {
		err = p.primary.Write(rec)
	}
	_ = p.page.Write(rec)
	return err
}

// Close closes the producer's own sink (proxy.Proxy.Serve closes the
// Records it is given when they have a Close method: the record file is
// flushed and its losses returned, --ui or not).
func (p pageSink) Close() error {
	if c, ok := p.primary.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// pageLines is pageSink for serve's log lines (a record.LineWriter).
type pageLines struct {
	primary record.LineWriter
	page    *ui.Server
}

func (p pageLines) WriteLine(line []byte) error {
	var err error
	if p.primary != nil {
		err = p.primary.WriteLine(line)
	}
	_ = p.page.WriteLine(line)
	return err
}

func (p pageLines) Close() error {
	if p.primary != nil {
		return p.primary.Close()
	}
	return nil
}
