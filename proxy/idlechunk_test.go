package proxy_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestIdleStreamHoldsNoChunk: an event stream whose upstream sends nothing
// holds no copy buffer in the proxy while it waits, and every event the
// upstream sends reaches the client whole, in order, before the upstream
// sends the next (each event flushed as it is read, none held back).
//
// The measure is exact, not a size of memory: the upstream transport
// given to the proxy notes the capacity of the buffer of every read of a
// response body while the read is in progress, and once every stream's
// forwarding loop waits in a read, the sum is what the idle streams hold.
// Before idle18 each idle stream waited in a read into a pooled 16 KiB
// chunk (20 streams: 327,680 bytes held); the forwarding loop now gives
// the chunk back and waits in a read of no bytes. Half the streams get a
// priming event with their head (the wait follows a short read), half
// nothing (the wait is the body's first read). Each stream then gets an
// event larger than two chunks (read in several pieces, the last a short
// read), a small one, and is idle again, holding nothing again; then its
// upstream ends it, and the client has exactly the bytes the upstream sent
// and the proxy wrote one record per stream. The upstream speaks HTTP/1.1
// (a chunked body: the empty read returns once the next chunk's header is
// in) and, over TLS, HTTP/2 (once data is there).
func TestIdleStreamHoldsNoChunk(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		name := "HTTP/1.1"
		if h2 {
			name = "HTTP/2"
		}
		t.Run(name, func(t *testing.T) { idleStreamHoldsNoChunk(t, h2) })
	}
}

func idleStreamHoldsNoChunk(t *testing.T, h2 bool) {
	const streams = 20
	big := strings.Repeat("0123456789abcdef", (2*proxy.CopyBufferSize+5000)/16)
	events := []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + big + "\"}}\n\n",
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
	}
	const priming = ": primed\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"

	// steps[i] tells stream i's upstream handler to send its next event,
	// and, once closed after the events, to end the stream.
	steps := make([]chan struct{}, streams)
	for i := range steps {
		steps[i] = make(chan struct{})
	}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		i, err := strconv.Atoi(r.URL.Query().Get("s"))
		if err != nil || i < 0 || i >= streams {
			http.Error(w, "no stream", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if i%2 == 0 {
			io.WriteString(w, priming)
		}
		w.(http.Flusher).Flush()
		for _, e := range events {
			select {
			case <-steps[i]:
			case <-r.Context().Done():
				return
			}
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
		select {
		case <-steps[i]:
		case <-r.Context().Done():
		}
	}))
	var tr *http.Transport
	if h2 {
		up.EnableHTTP2 = true
		up.StartTLS()
		tr = up.Client().Transport.(*http.Transport).Clone() // trusts the server's certificate
	} else {
		up.Start()
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	defer up.Close()

	held := &heldReads{}
	tr.DisableCompression = true
	defer tr.CloseIdleConnections()
	base, _, sink, stop := startProxy(t, up.URL+"/mcp", proxy.Options{Transport: heldTransport{tr, held}})
	defer stop()

	client := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
	defer client.CloseIdleConnections()
	type opened struct {
		resp *http.Response
		err  error
	}
	resps := make([]chan opened, streams)
	for i := range streams {
		resps[i] = make(chan opened, 1)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{}}`, i+1)
		req, _ := http.NewRequest(http.MethodPost, base+"?s="+strconv.Itoa(i), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		go func() {
			resp, err := client.RoundTrip(req)
			resps[i] <- opened{resp, err}
		}()
	}
	idle := func(when string) {
		t.Helper()
		testwait.Until(t, fmt.Sprintf("every stream's forwarding loop waiting in an upstream read (%s)", when), func() bool {
			return held.reads.Load() == streams
		})
		if b := held.bytes.Load(); b != 0 {
			t.Errorf("%s: %d idle streams wait in upstream reads into buffers of %d bytes in all (%d per stream), want none", when, streams, b, b/streams)
		}
	}
	idle("after the priming event, or none")

	bodies := make([]io.ReadCloser, streams)
	defer func() {
		for _, b := range bodies {
			if b != nil {
				b.Close()
			}
		}
	}()
	got := make([][]byte, streams)
	// readN reads exactly n bytes of stream i, waiting at most testwait.Bound.
	readN := func(i, n int, what string) {
		t.Helper()
		done := make(chan error, 1)
		buf := make([]byte, n)
		go func() {
			_, err := io.ReadFull(bodies[i], buf)
			done <- err
		}()
		if err := testwait.Recv(t, done, fmt.Sprintf("stream %d: %s reaching the client", i, what)); err != nil {
			t.Fatalf("stream %d: reading %s: %v", i, what, err)
		}
		got[i] = append(got[i], buf...)
	}
	for i := range streams {
		if i%2 == 0 {
			o := testwait.Recv(t, resps[i], fmt.Sprintf("stream %d's head", i))
			if o.err != nil {
				t.Fatalf("stream %d: %v", i, o.err)
			}
			bodies[i] = o.resp.Body
			readN(i, len(priming), "the priming event")
		}
	}
	for i := range streams {
		for k, e := range events {
			steps[i] <- struct{}{}
			if bodies[i] == nil {
				o := testwait.Recv(t, resps[i], fmt.Sprintf("stream %d's head", i))
				if o.err != nil {
					t.Fatalf("stream %d: %v", i, o.err)
				}
				bodies[i] = o.resp.Body
			}
			readN(i, len(e), fmt.Sprintf("event %d (%d bytes)", k+1, len(e)))
		}
	}
	idle("after an event of two chunks and more, and a small one")

	for i := range streams {
		close(steps[i])
		done := make(chan []byte, 1)
		go func() {
			rest, _ := io.ReadAll(bodies[i])
			done <- rest
		}()
		got[i] = append(got[i], testwait.Recv(t, done, fmt.Sprintf("stream %d's end", i))...)
		want := strings.Join(events, "")
		if i%2 == 0 {
			want = priming + want
		}
		if !bytes.Equal(got[i], []byte(want)) {
			t.Errorf("stream %d: the client got %d bytes, not the %d the upstream sent (first difference at %d)", i, len(got[i]), len(want), firstDiffBytes(got[i], []byte(want)))
		}
	}
	stop()
	if recs := sink.exchanges(t); len(recs) != streams {
		t.Errorf("%d exchange records for %d streams", len(recs), streams)
	}
	if want := map[bool]int{false: 1, true: 2}[h2]; held.proto.Load() != int32(want) {
		t.Errorf("the upstream answered in HTTP/%d, want HTTP/%d", held.proto.Load(), want)
	}
}

// heldReads counts the reads of response bodies in progress and the
// capacity of their buffers.
type heldReads struct {
	reads, bytes atomic.Int64
	proto        atomic.Int32 // the responses' HTTP major version
}

// heldTransport is an upstream transport whose response bodies count their
// reads in progress in h.
type heldTransport struct {
	rt http.RoundTripper
	h  *heldReads
}

func (t heldTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		t.h.proto.Store(int32(resp.ProtoMajor))
		resp.Body = &heldBody{ReadCloser: resp.Body, h: t.h}
	}
	return resp, err
}

// heldBody is a response body that counts its reads in progress.
type heldBody struct {
	io.ReadCloser
	h *heldReads
}

func (b *heldBody) Read(p []byte) (int, error) {
	b.h.reads.Add(1)
	b.h.bytes.Add(int64(cap(p)))
	n, err := b.ReadCloser.Read(p)
	b.h.bytes.Add(-int64(cap(p)))
	b.h.reads.Add(-1)
	return n, err
}
