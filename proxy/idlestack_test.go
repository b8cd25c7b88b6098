package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestIdleStreamStack: the goroutine stacks an idle event stream holds
// through the recording proxy are no larger than through a plain
// httputil.ReverseProxy (the same transport tuning and copy buffers),
// measured side by side in this process (runtime.MemStats.StackInuse with
// the streams held, after garbage collections, less before: the client's
// and the upstream's goroutines are the same in both, so the difference is
// the proxy's). Each stream is a new connection that receives a priming
// event and waits, as a client's listening stream does. Before the fix the
// recording proxy's handler goroutine grew its stack to 16 KiB on the
// response's first flush (net/http draining the request body the recorder
// had read, and the recorder's and admin guard's frames under net/http's
// writing of the head), which an idle stream then keeps: about +6 KiB per
// stream over the plain proxy. The 2 KiB of slack is less than one grown
// stack per stream and more than the run-to-run spread of a few
// goroutines' stacks spread over the streams.
//
// The measure is taken in a child process (this test binary, running this
// test alone): StackInuse is the whole process's, and in the package's
// run the goroutines of earlier tests (their connections closing, idle
// connections timing out, writers finishing) grew and freed stacks during
// the rounds: at load 16-21 the full run failed a land (33.6 against
// 31.4 KiB) where the test alone passed -count=6 (27.5 to 31.7 KiB).
func TestIdleStreamStack(t *testing.T) {
	if testing.Short() {
		t.Skip("holds 2x400 streams over real connections")
	}
	if os.Getenv(idleStackChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestIdleStreamStack$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), idleStackChild+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("the measuring child:\n%s", out)
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestIdleStreamStack")) {
			t.Fatalf("the measuring child failed (%v): see its output above", err)
		}
		return
	}
	// 400 streams, not 100: StackInuse counts whole stack spans, with the
	// free stacks each P keeps cached, so a round is off by a few spans
	// whatever the streams hold; over 100 streams that was ±3 KiB per
	// stream between identical runs (plain 27.8-31.0, recording
	// 25.6-31.4, six runs at load 5), more than the 2 KiB bound; over 400,
	// 35.8-36.0 and 36.1-37.2.
	const streams = 400
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, ": primed\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")

	recording, _, _, stop := startProxy(t, up.URL+"/mcp", proxy.Options{})
	defer stop()

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tr.DisableCompression = 256, 1024, true
	defer tr.CloseIdleConnections()
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = ""; pr.Out.URL.Path = u.Path },
		FlushInterval: -1, Transport: tr, BufferPool: copyPool{},
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	}))
	defer plain.Close()

	// Warm both paths once (pools, the transports' first connections).
	for _, base := range []string{plain.URL + "/mcp", recording} {
		perStream(t, base, 4)
	}
	// Rounds alternate and each side keeps its smallest: what else runs
	// (the last round's connections closing, a loaded machine's late
	// goroutines) only adds to a round's stacks, never takes from them,
	// so the minimum is the stream's own cost (one round each failed
	// land at load 18: 34.9 against 32.3 KiB).
	plainPer, recPer := math.Inf(1), math.Inf(1)
	// Five rounds: at load ~19 the minimum of three was still 1.2 KiB over
	// the bound (31.4 against 30.2, mend17) where the test alone passes.
	for range 5 {
		plainPer = min(plainPer, perStream(t, plain.URL+"/mcp", streams))
		recPer = min(recPer, perStream(t, recording, streams))
	}
	t.Logf("goroutine stacks per idle stream (client, proxy and upstream): plain reverse proxy %.1f KiB, recording proxy %.1f KiB", plainPer/1024, recPer/1024)
	if recPer > plainPer+2048 {
		t.Errorf("an idle stream through the recording proxy holds %.1f KiB of goroutine stacks, the plain reverse proxy %.1f KiB: more than 2 KiB over it", recPer/1024, plainPer/1024)
	}
}

// idleStackChild is set in the environment of TestIdleStreamStack's
// measuring child.
const idleStackChild = "MCPDIAG_TEST_IDLESTACK_CHILD"

// copyPool is the plain proxy's BufferPool, of proxy.CopyBufferSize
// buffers as mcpdiag's.
type copyPool struct{}

func (copyPool) Get() []byte  { return make([]byte, proxy.CopyBufferSize) }
func (copyPool) Put(b []byte) {}

// perStream opens n idle streams to base, each on its own connection, reads
// each to its first event, and returns the growth of StackInuse per stream
// while they are held.
func perStream(t *testing.T, base string, n int) float64 {
	t.Helper()
	client := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stackInuse := func() uint64 {
		runtime.GC()
		runtime.GC() // stacks shrink during a collection: a second one sees them shrunk
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.StackInuse
	}
	// The goroutines of the last round's streams end after their bodies
	// are closed, some while this round is measured: a round starts once
	// the count has settled, or it is off by their stacks either way.
	quietGoroutines()
	before := stackInuse()
	var bodies []io.ReadCloser
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
		client.CloseIdleConnections()
	}()
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{}}`, i+1)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.RoundTrip(req)
		if err != nil {
			t.Fatalf("stream %d through %s: %v", i+1, base, err)
		}
		bodies = append(bodies, resp.Body)
		br := bufio.NewReaderSize(resp.Body, 256)
		for blank := 0; blank < 2; {
			line, err := br.ReadSlice('\n')
			if err != nil {
				t.Fatalf("stream %d through %s: %v", i+1, base, err)
			}
			if len(line) == 1 {
				blank++
			}
		}
	}
	// The last streams' proxy goroutines may still be on their way back
	// from the flush to their wait (deeper than where they rest): measure
	// once the count has settled, as before.
	quietGoroutines()
	after := stackInuse()
	return (float64(after) - float64(before)) / float64(n)
}

// quietGoroutines waits, at most 5 s, until the goroutine count is the
// same in three looks 10 ms apart.
func quietGoroutines() {
	last, same := -1, 0
	for end := time.Now().Add(5 * time.Second); same < 3 && time.Now().Before(end); {
		n := runtime.NumGoroutine()
		if n == last {
			same++
		} else {
			last, same = n, 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}
