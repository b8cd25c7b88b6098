package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// streamingUpstream answers /stream with an SSE stream of progress
// notifications that ends only when the request does, and anything else
// with a JSON result at once.
func streamingUpstream(t *testing.T) string {
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/stream" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; ; i++ {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":%d}}\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
}

// startServe runs Proxy.Serve on a fresh 127.0.0.1 listener and returns the
// proxy's base URL, the proxy, and a channel with Serve's result.
func startServe(t *testing.T, ctx context.Context, opts proxy.Options) (string, *proxy.Proxy, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), p, done
}

// openStream starts a streaming tools/call and returns once its first event
// arrived; the body is read until the proxy cuts it.
func openStream(t *testing.T, u string) {
	t.Helper()
	first := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(callBody(1, "slow", `{}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- err
			return
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		_, err = br.ReadString('\n')
		first <- err
		_, _ = io.Copy(io.Discard, br)
	}()
	select {
	case err := <-first:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testwait.Bound):
		t.Fatalf("the stream did not start within %s", testwait.Bound)
	}
}

// TestServeShutdownOrder: proxy.Serve on a real 127.0.0.1 listener, its
// context cancelled while streams are open: every exchange, finished or cut,
// has its record in the file once Serve returned (the sink was flushed and
// closed by Serve, not by the test), the cut ones say the shutdown cut them,
// and the stages were told in order with the open exchanges counted.
func TestServeShutdownOrder(t *testing.T) {
	up := streamingUpstream(t)
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cut     bool
		stages  []proxy.ShutdownStage
	}{
		{"the timeout cuts the open streams", 200 * time.Millisecond, false, []proxy.ShutdownStage{proxy.ShutdownBegin, proxy.ShutdownTimedOut}},
		{"CutNow cuts them at once", time.Hour, true, []proxy.ShutdownStage{proxy.ShutdownBegin, proxy.ShutdownCut}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.jsonl")
			file, err := record.OpenFile(path, record.FileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sink := record.NewAsync(file, record.AsyncOptions{})
			u, _ := url.Parse(up)
			cutNow := make(chan struct{})
			var mu sync.Mutex
			var events []proxy.ShutdownEvent
			opts := proxy.Options{Upstream: u, Records: sink, Shutdown: proxy.ShutdownOptions{
				Timeout: tc.timeout, CutNow: cutNow,
				OnShutdown: func(ev proxy.ShutdownEvent) {
					mu.Lock()
					events = append(events, ev)
					mu.Unlock()
					if ev.Stage == proxy.ShutdownBegin && tc.cut {
						close(cutNow)
					}
				},
			}}
			ctx, cancel := context.WithCancelCause(context.Background())
			base, p, done := startServe(t, ctx, opts)
			const streams, calls = 3, 2
			for range calls {
				if status, _, _, err := post(t, http.DefaultClient, base+"/mcp", callBody(1, "echo", `{}`), modernHeaders("echo")); err != nil || status != 200 {
					t.Fatalf("call: %d %v", status, err)
				}
			}
			// Only the streams are open when the shutdown counts.
			for deadline := time.Now().Add(20 * time.Second); p.Stats().InFlight > 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d exchanges still in flight after the calls ended", p.Stats().InFlight)
				}
			}
			for range streams {
				openStream(t, base+"/stream")
			}
			stop := errors.New("test stops the proxy")
			cancel(stop)
			var serveErr error
			select {
			case serveErr = <-done:
			case <-time.After(testwait.Bound):
				t.Fatalf("Serve did not return within %s", testwait.Bound)
			}
			if serveErr != nil {
				t.Fatalf("Serve: %v", serveErr)
			}
			recs := recordtest.ReadFile(t, path)
			var cut int
			for _, r := range recs {
				if r.Flags.Has(record.FlagSD) {
					cut++
				}
			}
			if len(recs) != streams+calls || cut != streams {
				t.Errorf("%d records, %d cut by the shutdown; want %d, %d", len(recs), cut, streams+calls, streams)
			}
			if st := sink.Stats(); st.Written != streams+calls || st.Lost() != 0 {
				t.Errorf("sink stats %s", st)
			}
			if err := sink.Write(&record.Record{Kind: record.KindExchange}); !errors.Is(err, record.ErrClosed) {
				t.Errorf("a write after Serve returned: %v, want ErrClosed (Serve closes the sink)", err)
			}
			mu.Lock()
			defer mu.Unlock()
			var got []proxy.ShutdownStage
			for _, ev := range events {
				got = append(got, ev.Stage)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.stages) {
				t.Fatalf("stages %v, want %v", got, tc.stages)
			}
			if ev := events[0]; ev.InFlight != streams || !errors.Is(ev.Cause, stop) || ev.Timeout != tc.timeout {
				t.Errorf("begin event %+v: want %d in flight, the context's cause, timeout %s", ev, streams, tc.timeout)
			}
			if ev := events[1]; ev.InFlight != streams {
				t.Errorf("%s event counts %d open exchanges, want %d", ev.Stage, ev.InFlight, streams)
			}
		})
	}
}

// TestServeReportsAFailingSink: a record file on a full device loses every
// record; the traffic is unaffected, and Serve returns a *ServeError whose
// Records error names the file and wraps the sink's *record.LostError.
func TestServeReportsAFailingSink(t *testing.T) {
	const dev = "/dev/full"
	if _, err := os.Stat(dev); err != nil {
		t.Skipf("no %s: %v", dev, err)
	}
	file, err := record.OpenFile(dev, record.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(streamingUpstream(t))
	ctx, cancel := context.WithCancel(context.Background())
	base, _, done := startServe(t, ctx, proxy.Options{Upstream: u, Records: record.NewAsync(file, record.AsyncOptions{})})
	const calls = 3
	for range calls {
		if status, _, _, err := post(t, http.DefaultClient, base+"/mcp", callBody(1, "echo", `{}`), modernHeaders("echo")); err != nil || status != 200 {
			t.Fatalf("call: %d %v", status, err)
		}
	}
	cancel()
	err = testwait.Recv(t, done, "Serve to end after its context was cancelled")
	var se *proxy.ServeError
	if !errors.As(err, &se) || se.Records == nil || se.Serve != nil || se.Drain != nil {
		t.Fatalf("Serve: %#v, want a *ServeError with only Records set", err)
	}
	var lost *record.LostError
	if !errors.As(err, &lost) || lost.Stats.Failed != calls {
		t.Errorf("error %v: want a *record.LostError with %d failed writes", err, calls)
	}
	if !strings.Contains(se.Records.Error(), dev) || !strings.Contains(err.Error(), dev) {
		t.Errorf("error %q does not name the sink %s", err, dev)
	}
	if se.Stats.Exchanges != calls {
		t.Errorf("Stats.Exchanges %d, want %d", se.Stats.Exchanges, calls)
	}
}

// TestServeReportsAFailedListener: a listener that fails makes Serve return
// at once with the error, and the sink is still closed.
func TestServeReportsAFailedListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	u, _ := url.Parse(streamingUpstream(t))
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	file, err := record.OpenFile(path, record.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sink := record.NewAsync(file, record.AsyncOptions{})
	err = proxy.Serve(context.Background(), ln, proxy.Options{Upstream: u, Records: sink}) // the function, not the method
	var se *proxy.ServeError
	if !errors.As(err, &se) || se.Serve == nil || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Serve: %v, want a *ServeError with the listener's error", err)
	}
	if err := sink.Write(&record.Record{Kind: record.KindExchange}); !errors.Is(err, record.ErrClosed) {
		t.Errorf("a write after Serve returned: %v, want ErrClosed", err)
	}
}
