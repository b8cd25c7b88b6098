package proxy_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// closedPort returns a loopback address nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Connection refused: the proxy answers 502 with a Proxy-Status header
// naming the cause, and the record says the proxy produced it.
func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	up := "http://" + closedPort(t) + "/mcp"
	purl, p, sink, stop := startProxy(t, up, proxy.Options{})
	status, hdr, body, err := post(t, http.DefaultClient, purl, callBody(1, "echo", ""), modernHeaders("echo"))
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", status)
	}
	ps := hdr.Get("Proxy-Status")
	if !strings.HasPrefix(ps, "mcpdiag; error=connection_refused") || !strings.Contains(ps, "next-hop=") {
		t.Errorf("Proxy-Status %q", ps)
	}
	if !strings.Contains(string(body), "connection_refused") {
		t.Errorf("body %q", body)
	}
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Status != 502 || r.Outcome != classify.HTTPError || r.Layer != classify.LayerTransport {
		t.Errorf("record %d %s %s", r.Status, r.Outcome, r.Layer)
	}
	if !strings.Contains(r.Note, "proxy-generated") || !strings.Contains(r.Note, "UF") || !slices.Equal(r.Flags, record.Flags{record.FlagUF}) {
		t.Errorf("the record does not say the proxy produced the 502: %q flags %v", r.Note, r.Flags)
	}
	if r.Network == nil || !strings.Contains(r.Network.Error, "connection refused") || r.Network.RequestSent || r.Network.Cause != classify.NetRefused {
		t.Errorf("network %+v", r.Network)
	}
	if r.ResponseHeaders.Get("Proxy-Status") == "" {
		t.Errorf("the recorded response headers lack Proxy-Status")
	}
	if s := p.Stats(); s.UpstreamErrors != 1 || s.Exchanges != 1 {
		t.Errorf("stats %+v", s)
	}
}

// An upstream that resets the connection before any response: the client's
// connection is dropped the same way (as it would be directly), and the
// record says the request had been sent and the upstream dropped it.
func TestUpstreamResetBeforeResponse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err == nil {
					io.Copy(io.Discard, req.Body)
				}
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}()
		}
	}()
	purl, _, sink, stop := startProxy(t, "http://"+ln.Addr().String()+"/mcp", proxy.Options{})
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	status, _, _, err := post(t, c, purl, callBody(1, "echo", ""), modernHeaders("echo"))
	if err == nil {
		t.Fatalf("the client got a response (%d), not the dropped connection", status)
	}
	stop()
	r := sink.exchanges(t)[0]
	if r.Outcome != classify.NetworkError || r.Status != 0 || r.Network == nil || !r.Network.RequestSent || r.Network.Cause != classify.NetClosed || !strings.Contains(r.Note, "UC") || !slices.Equal(r.Flags, record.Flags{record.FlagUC}) {
		t.Errorf("record %s %d network %+v note %q flags %v", r.Outcome, r.Status, r.Network, r.Note, r.Flags)
	}
}

// A client that disconnects in the middle of a stream is recorded: what it
// had received, and that it left.
func TestClientDisconnectRecorded(t *testing.T) {
	t.Parallel()
	up := serve(t, bothEras(mcpServer(), false))
	purl, p, sink, stop := startProxy(t, up, proxy.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, purl, strings.NewReader(callBody(1, "slow", `{"steps":100}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range modernHeaders("slow") {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read the first progress event, then go away.
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\n" {
			break
		}
	}
	cancel()
	resp.Body.Close()
	waitExchanges(t, p, 1)
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Outcome != classify.StreamIncomplete || !strings.Contains(r.Note, "client disconnected (DC)") || !slices.Equal(r.Flags, record.Flags{record.FlagDC}) {
		t.Errorf("record %s %q note %q flags %v", r.Outcome, r.Reason, r.Note, r.Flags)
	}
	if r.SSE == nil || r.SSE.Progress < 1 || r.SSE.Terminal {
		t.Errorf("sse %+v", r.SSE)
	}
	if p.Stats().ClientGone != 1 {
		t.Errorf("stats %+v", p.Stats())
	}
}

// A client that leaves before the response headers is recorded as a
// transport failure with no status.
func TestClientDisconnectBeforeResponse(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var started atomic.Bool
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Store(true)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	purl, p, sink, stop := startProxy(t, up, proxy.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !started.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, purl, strings.NewReader(callBody(1, "echo", "")))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the request did not fail")
	}
	waitExchanges(t, p, 1)
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Status != 0 || r.Outcome != classify.NetworkError || !strings.Contains(r.Note, "before the response") {
		t.Errorf("record %d %s note %q", r.Status, r.Outcome, r.Note)
	}
	// A client that leaves cancels its request: the cause in a word.
	if r.Network == nil || r.Network.Cause != classify.NetCancelled || r.Network.Phase != "before-response" {
		t.Errorf("network %+v", r.Network)
	}
}

// Credentials never reach the record file: not the Authorization header,
// not a token in the arguments, not a cookie; the session id is hashed.
func TestRedactionInRecordFile(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-5up3r-s3cr3t-t0k3n"
	up := serve(t, bothEras(mcpServer(), false))
	path := filepath.Join(t.TempDir(), "records.jsonl")
	file, err := record.OpenFile(path, record.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	async := record.NewAsync(file, record.AsyncOptions{})
	purl, _, _, stop := startProxy(t, up, proxy.Options{Records: async, Bodies: proxy.BodiesFull})
	hdr := modernHeaders("fail")
	hdr["Authorization"] = "Bearer " + secret
	hdr["Cookie"] = "sid=" + secret
	hdr["X-Api-Key"] = secret
	if _, _, _, err := post(t, http.DefaultClient, purl, callBody(1, "fail", `{"text":"x","password":"`+secret+`"}`), hdr); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := async.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) || strings.Contains(string(data), "5up3r") {
		t.Fatalf("a credential reached the record file:\n%s", data)
	}
	if !strings.Contains(string(data), `"Authorization":["Bearer [redacted:len=`) {
		t.Errorf("the Authorization header is not recorded as redacted:\n%s", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("record file mode %v, want 0600", st.Mode().Perm())
	}
}

// waitExchanges waits until the proxy finished n exchanges.
func waitExchanges(t *testing.T, p *proxy.Proxy, n int64) {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for p.Stats().Exchanges < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d exchanges finished", p.Stats().Exchanges, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
