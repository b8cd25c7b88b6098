package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"github.com/mcpdiag/mcpdiag/record"
)

// InputError is a problem with what the caller asked for (no file, a file
// that cannot be opened, an address that is not loopback), as opposed to a
// failure while serving. The CLI maps it to its usage exit status.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Listen opens a listener on addr for a page, refusing any address that is
// not loopback (the page is served on loopback only, whatever the name
// resolves to) or whose port no listener can have with an *InputError; a
// failed listen (a port in use) is another error.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, inputErrorf("%q: %v", addr, err)
	}
	if !loopback.IsHost(host) {
		return nil, inputErrorf("%s: the page is served on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	if err := loopback.CheckPort(port); err != nil {
		return nil, inputErrorf("%s: %v", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// Not the caller's request: the address is good, and another
		// listener holds it (or the system refused it).
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	if !loopback.Listener(ln.Addr()) {
		ln.Close()
		return nil, inputErrorf("%s: listening on %s, which is not a loopback address", addr, ln.Addr())
	}
	return ln, nil
}

// Live is the page of a running producer (proxy --ui, serve --ui, matrix
// --ui): its records are handed to the page as they are written.
type Live struct {
	// Server is the page; write records to it (or through RecordTee or
	// LineTee).
	Server *Server
	// URL is the page's address, token included.
	URL string
	hs  *http.Server
}

// StartLive serves a live page on addr (loopback only; see Listen).
func StartLive(addr, title string, enc record.Encoder) (*Live, error) {
	ln, err := Listen(addr)
	if err != nil {
		return nil, err
	}
	srv, err := NewServer(ServerOptions{Title: title, Encoder: enc})
	if err != nil {
		ln.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return &Live{Server: srv, hs: hs, URL: "http://" + ln.Addr().String() + srv.Path()}, nil
}

// Close ends the page's event streams and its server.
func (l *Live) Close() {
	l.Server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = l.hs.Shutdown(ctx)
}

// RecordSink is what a producer writes its records to.
type RecordSink interface {
	Write(*record.Record) error
}

// RecordTee writes each record to the producer's own sink (its error is
// the record's fate: counted, named, exit status) and to the page (a view:
// a record the page cannot take is not a lost record).
type RecordTee struct {
	Primary RecordSink // nil: the page only
	Page    *Server
}

// Write implements RecordSink.
func (p RecordTee) Write(rec *record.Record) error {
	var err error
	if p.Primary != nil {
		err = p.Primary.Write(rec)
	}
	_ = p.Page.Write(rec)
	return err
}

// Close closes the primary sink when it has a Close method, so the record
// file is flushed and its losses returned, page or not.
func (p RecordTee) Close() error {
	if c, ok := p.Primary.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// LineTee is RecordTee for encoded lines (serve's log, matrix's records).
type LineTee struct {
	Primary record.LineWriter // nil: the page only
	Page    *Server
}

// WriteLine implements record.LineWriter.
func (p LineTee) WriteLine(line []byte) error {
	var err error
	if p.Primary != nil {
		err = p.Primary.WriteLine(line)
	}
	_ = p.Page.WriteLine(line)
	return err
}

// Close closes the primary writer.
func (p LineTee) Close() error {
	if p.Primary != nil {
		return p.Primary.Close()
	}
	return nil
}

// FollowOptions configure Follow.
type FollowOptions struct {
	// Files are the record files to show, each read from its start and
	// then followed as it grows.
	Files []string
	// Addr is the listen address, loopback only ("127.0.0.1:0" when empty).
	Addr string
	// Poll is how often each file is checked for new lines (50 ms when 0).
	Poll time.Duration
	// Ready, when set, is called with the page's URL once it is served.
	Ready func(url string)
	// Log gets the progress lines and each file that stopped being
	// followed (io.Discard when nil).
	Log io.Writer
}

// FollowError reports the files that became unreadable while followed.
type FollowError struct {
	Failed []string
	Of     int
}

func (e *FollowError) Error() string {
	return fmt.Sprintf("ui: %d of %d files became unreadable: %v", len(e.Failed), e.Of, e.Failed)
}

// Follow serves the page over record files until ctx is done: what
// `mcpdiag ui FILE…` runs. A bad request is an *InputError; files that
// became unreadable are a *FollowError after the page stopped.
func Follow(ctx context.Context, o FollowOptions) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Poll == 0 {
		o.Poll = 50 * time.Millisecond
	}
	if len(o.Files) == 0 {
		return inputErrorf("ui: name at least one record file")
	}
	if o.Poll < 0 {
		return inputErrorf("--poll must be positive, got %v", o.Poll)
	}
	for _, name := range o.Files {
		st, err := os.Stat(name)
		if err != nil {
			return inputErrorf("cannot open %s: %v", name, err)
		}
		if st.IsDir() {
			return inputErrorf("%s is a directory", name)
		}
		f, err := os.Open(name)
		if err != nil {
			return inputErrorf("cannot open %s: %v", name, err)
		}
		f.Close()
	}
	ln, err := Listen(o.Addr)
	var ie *InputError
	switch {
	case errors.As(err, &ie):
		return inputErrorf("--listen %v", err)
	case err != nil:
		return fmt.Errorf("--listen %w", err)
	}
	title := "mcpdiag ui"
	if len(o.Files) == 1 {
		title += ": " + o.Files[0]
	} else {
		title += fmt.Sprintf(": %d files", len(o.Files))
	}
	srv, err := NewServer(ServerOptions{Title: title})
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
	for _, name := range o.Files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Tail(tctx, name, o.Poll); err != nil && !errors.Is(err, context.Canceled) {
				mu.Lock()
				failed = append(failed, name)
				mu.Unlock()
				fmt.Fprintf(o.Log, "mcpdiag: ui: %s: %v (no longer followed)\n", name, firstLine(err.Error()))
			}
		}()
	}
	url := "http://" + ln.Addr().String() + srv.Path()
	word := "files"
	if len(o.Files) == 1 {
		word = "file"
	}
	if o.Ready != nil {
		o.Ready(url)
	}
	fmt.Fprintf(o.Log, "mcpdiag ui: following %d %s; open the URL above (Ctrl-C stops)\n", len(o.Files), word)

	select {
	case <-ctx.Done():
	case err := <-served:
		cancel()
		wg.Wait()
		return fmt.Errorf("ui: serving: %w", err)
	}
	cancel()
	wg.Wait()
	srv.Close() // ends the open event streams, so Shutdown need not wait for them
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	_ = hs.Shutdown(sctx)
	fmt.Fprintf(o.Log, "mcpdiag ui: stopped; %d records shown\n", srv.Records())
	if len(failed) > 0 {
		return &FollowError{Failed: failed, Of: len(o.Files)}
	}
	return nil
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
