package proxy_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

// seen is one HTTP exchange as the client's transport received it: the
// whole body is read, even when the client stops early, so that direct and
// proxied runs compare the same bytes.
type seen struct {
	method, path string
	status       int
	header       string
	hash         string
	n            int
	end          string // "eof", "error" or "deadline"
	prefix       []byte // the first bytes, for a diff
}

func (s *seen) String() string {
	return fmt.Sprintf("%s %s → %d, %d bytes %s, ended %s, headers %s", s.method, s.path, s.status, s.n, s.hash, s.end, s.header)
}

// drainTransport reads every response body to its end on its own (up to a
// deadline), hashing it, and hands the client a copy as it arrives.
type drainTransport struct {
	rt       http.RoundTripper
	deadline time.Duration
	upstream string // the server's host, when it is not the one called
	mu       sync.Mutex
	seen     []*seen
	wg       sync.WaitGroup
}

func (d *drainTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s := &seen{method: req.Method, path: req.URL.Path}
	d.mu.Lock()
	d.seen = append(d.seen, s)
	d.mu.Unlock()
	// The drain outlives the client's interest in the response: the request
	// is not cancelled with the client's context, but the client gets its
	// error when its context ends first.
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	pr, pw := io.Pipe()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), d.deadline)
		resp, err := d.rt.RoundTrip(req.Clone(ctx))
		if err != nil {
			cancel()
			s.end = "error"
			done <- result{nil, err}
			return
		}
		d.drain(s, resp, pw, cancel)
		done <- result{resp, nil}
	}()
	var r result
	select {
	case r = <-done:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	r.resp.Body = pr
	return r.resp, nil
}

// drain reads resp's body to its end (or the deadline), hashing it, and
// passes it to pw until the reader of the pipe goes away. It starts the
// reading on its own goroutine and returns once the headers are noted.
func (d *drainTransport) drain(s *seen, resp *http.Response, pw *io.PipeWriter, cancel context.CancelFunc) {
	s.status = resp.StatusCode
	h := resp.Header.Clone()
	for _, k := range []string{"Date", "Mcp-Session-Id", "Connection", "Keep-Alive", "Transfer-Encoding"} {
		h.Del(k)
	}
	var hb strings.Builder
	_ = h.Write(&hb)
	// A server names itself in absolute URLs (resource metadata); the two
	// servers compared listen on different ports.
	s.header = strings.ReplaceAll(hb.String(), resp.Request.URL.Host, "UPSTREAM")
	if d.upstream != "" {
		s.header = strings.ReplaceAll(s.header, d.upstream, "UPSTREAM")
	}
	body := resp.Body
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer body.Close()
		defer cancel()
		timer := time.AfterFunc(d.deadline, func() { body.Close() })
		defer timer.Stop()
		var sum hash.Hash = sha256.New()
		// requestState carries an expiry in Unix seconds, so two servers
		// can sign it differently when their calls straddle a second; the
		// hash masks its value (it is still read and forwarded like any
		// byte). The body is kept whole for that: test bodies are small.
		var all []byte
		defer func() {
			sum.Write(requestStateValue.ReplaceAll(all, []byte(`"requestState":"…"`)))
			s.hash = hex.EncodeToString(sum.Sum(nil)[:8])
		}()
		buf := make([]byte, 32<<10)
		clientGone := false
		for {
			n, err := body.Read(buf)
			if n > 0 {
				all = append(all, buf[:n]...)
				if len(s.prefix) < 512 {
					s.prefix = append(s.prefix, buf[:min(n, 512-len(s.prefix))]...)
				}
				s.n += n
				if !clientGone {
					if _, werr := pw.Write(buf[:n]); werr != nil {
						clientGone = true
					}
				}
			}
			if err != nil {
				switch {
				case err == io.EOF:
					s.end = "eof"
				case !timer.Stop(), errors.Is(err, context.DeadlineExceeded):
					s.end = "deadline"
				default:
					s.end = "error"
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
}

func (d *drainTransport) exchanges(t *testing.T) []*seen {
	t.Helper()
	testwait.Wait(t, &d.wg, "the upstream bodies to be drained")
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

// requestStateValue matches a requestState member and its string value.
var requestStateValue = regexp.MustCompile(`"requestState":\s*"(?:[^"\\]|\\.)*"`)

// faultServer serves one scenario of the catalogue over the fixture, with a
// fixed seed and requestState key, so that two of them answer alike.
func faultServer(t *testing.T, sel faults.Selection) string {
	t.Helper()
	key := bytes.Repeat([]byte{7}, 32)
	ep := faults.NewEndpoint(sel, fixture.New(fixture.Options{StateKey: key}), faults.EndpointOptions{Path: "/mcp", Seed: 1, Key: key})
	ts := httptest.NewServer(ep)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// callEntry makes the entry's call as `mcpdiag call URL TOOL --args ARGS
// --retries 0` would, through tr.
func callEntry(t *testing.T, url string, e faults.Entry, timeout time.Duration, tr http.RoundTripper) (*client.Call, *client.Client) {
	t.Helper()
	pol := retry.DefaultPolicy()
	pol.MaxRetries = 0
	opts := client.Options{URL: url, Protocol: e.Protocol, Policy: &pol, Timeout: timeout, Rand: rand.New(rand.NewPCG(1, 2)),
		HTTPClient: &http.Client{Transport: tr}}
	if len(e.Input) > 0 {
		in, err := client.ReadInputs(strings.NewReader(string(e.Input)))
		if err != nil {
			t.Fatal(err)
		}
		opts.Inputs = in
	}
	c, err := client.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CallTool(context.Background(), e.Tool, e.Args)
	if err != nil {
		t.Fatal(err)
	}
	return call, c
}

// For every scenario of the fault catalogue: the bytes, statuses and headers
// a client receives through the proxy are those it receives directly; the
// client reaches the scenario's expected outcome through the proxy; and the
// proxy wrote one record per exchange, each with the verdict the client
// reached on that exchange.
func TestTransparencyCatalogue(t *testing.T) {
	t.Parallel()
	for _, e := range faults.Catalogue() {
		if e.OnStdio() {
			continue // TestStdioCatalogue
		}
		if e.UsesOAuth() {
			// Behind mcpdiag serve's own authorization server, which
			// faultServer does not host: cmd/mcpdiag's canary test runs
			// them through the proxy (--preserve-host, bodies in full).
			continue
		}
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel()
			timeout := 10 * time.Second
			if e.QuickTimeoutMs > 0 {
				timeout = time.Duration(e.QuickTimeoutMs) * time.Millisecond
			}
			sel, err := faults.Select(e.ID, e.QuickParams)
			if err != nil {
				t.Fatal(err)
			}
			drain := timeout + time.Second

			directT := &drainTransport{rt: &http.Transport{DisableCompression: true}, deadline: drain}
			directCall, _ := callEntry(t, faultServer(t, sel), e, timeout, directT)

			up := faultServer(t, sel)
			purl, p, sink, stop := startProxy(t, up, proxy.Options{})
			viaT := &drainTransport{rt: &http.Transport{DisableCompression: true}, deadline: drain, upstream: strings.Split(up, "/")[2]}
			viaCall, viaClient := callEntry(t, purl, e, timeout, viaT)

			direct, via := directT.exchanges(t), viaT.exchanges(t)
			if len(direct) != len(via) {
				t.Fatalf("%d exchanges direct, %d through the proxy", len(direct), len(via))
			}
			for i := range direct {
				d, v := direct[i], via[i]
				same := d.String() == v.String()
				if !same && (d.end == "deadline" || v.end == "deadline") {
					// A stream cut by the test's own deadline: what one run
					// read must be a prefix of what the other read.
					short, long := d, v
					if short.n > long.n {
						short, long = long, short
					}
					same = d.status == v.status && d.header == v.header && bytes.HasPrefix(long.prefix, short.prefix)
				}
				if !same {
					t.Errorf("exchange %d differs\ndirect: %s\n        %q\nproxy:  %s\n        %q", i+1, d, d.prefix, v, v.prefix)
				}
			}
			if directCall.Outcome != e.ExpectedOutcome || viaCall.Outcome != e.ExpectedOutcome {
				t.Errorf("outcome direct %s, through the proxy %s, want %s", directCall.Outcome, viaCall.Outcome, e.ExpectedOutcome)
			}
			waitExchanges(t, p, int64(len(via)))
			stop()
			recs := sink.exchanges(t)
			if len(recs) != len(via) {
				t.Fatalf("%d records for %d exchanges", len(recs), len(via))
			}
			// The client's own verdicts on its POSTs, in order, against the
			// proxy's records of them.
			var posts []string
			for _, r := range recs {
				if r.HTTPMethod == http.MethodPost {
					posts = append(posts, string(r.Outcome))
				}
			}
			var client []string
			for _, ex := range viaClient.Exchanges() {
				client = append(client, string(ex.Result.Outcome))
			}
			if strings.Join(posts, " ") != strings.Join(client, " ") {
				t.Errorf("record outcomes %v, the client's %v", posts, client)
			}
		})
	}
}

// TestStdioCatalogue runs every stdio scenario of the catalogue through the
// real stdio proxy (RunStdio), in front of a real stdio server (this test
// binary's go-sdk fixture), as its entry says: initialize,
// notifications/initialized, then the entry's call, with the quick params
// when there are any. The first record written with the fault injected has
// the entry's expected outcome, the records of requests number
// ExpectedPosts, and what the client received is what the scenario says.
func TestStdioCatalogue(t *testing.T) {
	t.Parallel()
	for _, e := range faults.Catalogue() {
		if !e.OnStdio() {
			continue
		}
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel()
			sel, err := faults.SelectStdio(e.ID, e.QuickParams)
			if err != nil {
				t.Fatal(err)
			}
			run := startStdio(t, proxy.StdioOptions{Faults: &proxy.FaultOptions{Selection: sel, Seed: 1}})
			conversation(t, run.in, run.out, []string{initLine, readyLine})
			// The rest of the output, up to its end, as the client sees it.
			var rest bytes.Buffer
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				_, _ = io.Copy(&rest, run.out)
			}()
			call := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, e.Tool, e.Args)
			sent := time.Now()
			if _, err := io.WriteString(run.in, call+"\n"); err != nil {
				t.Fatal(err)
			}
			// The call's record is written when its response is forwarded
			// or dropped, or when the server is gone; only then does the
			// client hang up (an earlier EOF would let the server end
			// before it answered, whatever the fault).
			deadline := time.Now().Add(testwait.Bound)
			for !slices.ContainsFunc(run.sink.records(t), func(r *record.Record) bool { return r.Method == "tools/call" }) {
				if time.Now().After(deadline) {
					t.Fatalf("no record of the call after %s", testwait.Bound)
				}
				time.Sleep(10 * time.Millisecond)
			}
			took := time.Since(sent)
			run.in.Close()
			run.wait(t)
			testwait.Recv(t, drained, "the proxy's output to end after it stopped")

			recs := run.sink.records(t) // in the order they were written
			var first *record.Record
			requests := 0
			for _, r := range recs {
				if r.Method != "" {
					requests++
				}
				if first == nil && r.Scenario == e.ID {
					first = r
				}
			}
			if first == nil {
				for _, r := range recs {
					t.Logf("  %s %s scenario=%q %s", r.Method, r.Outcome, r.Scenario, r.Reason)
				}
				t.Fatalf("no record names %s (the fault never fired)", e.ID)
			}
			if first.Outcome != e.ExpectedOutcome {
				t.Errorf("first record with the fault: %s (%s), want %s", first.Outcome, first.Reason, e.ExpectedOutcome)
			}
			if requests != e.ExpectedPosts {
				t.Errorf("%d request records, want %d", requests, e.ExpectedPosts)
			}
			answered := strings.Contains(rest.String(), `"id":2`)
			switch e.ID {
			case "stdio.delay":
				if !answered {
					t.Errorf("the client never got the response: %q", rest.String())
				}
				if took < 30*time.Millisecond {
					t.Errorf("the call's record came %s after the request, before the 30 ms delay", took)
				}
			case "stdio.drop":
				if answered {
					t.Errorf("the dropped response reached the client: %q", rest.String())
				}
				if !strings.Contains(first.Reason+first.Note, "dropped by the fault") {
					t.Errorf("the record does not say the response was dropped: %q / %q", first.Reason, first.Note)
				}
			case "stdio.garbage":
				want := faults.DefaultGarbage + "\n"
				if !strings.HasPrefix(rest.String(), want) || !answered {
					t.Errorf("the client got %q, want the stray line, then the response", rest.String())
				}
				if first.ResponseBody == nil || first.ResponseBody.Text != faults.DefaultGarbage {
					t.Errorf("the noise record's body: %+v", first.ResponseBody)
				}
			case "stdio.exit":
				if answered {
					t.Errorf("a response reached the client after the kill: %q", rest.String())
				}
				if run.res.Signal != syscall.SIGKILL {
					t.Errorf("the server ended %+v, want killed by SIGKILL", run.res)
				}
			default:
				t.Errorf("no check of what the client receives for %s", e.ID)
			}
		})
	}
}
