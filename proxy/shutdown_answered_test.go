package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// stopAfterFirstLine runs the proxy in front of upstream (a handler that
// answers and then leaves its response open), sends one tools/call, waits
// until the client has read the answer's first line, which must contain
// want, stops the proxy with a drain that cuts at once, and returns the one
// record it wrote.
func stopAfterFirstLine(t *testing.T, upstream http.HandlerFunc, want string) *record.Record {
	t.Helper()
	up := serve(t, upstream)
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	file, err := record.OpenFile(path, record.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sink := record.NewAsync(file, record.AsyncOptions{})
	u, _ := url.Parse(up)
	cutNow := make(chan struct{})
	opts := proxy.Options{Upstream: u, Records: sink, Shutdown: proxy.ShutdownOptions{Timeout: time.Hour, CutNow: cutNow,
		OnShutdown: func(ev proxy.ShutdownEvent) {
			if ev.Stage == proxy.ShutdownBegin {
				close(cutNow)
			}
		}}}
	ctx, cancel := context.WithCancelCause(context.Background())
	base, _, done := startServe(t, ctx, opts)
	got := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(callBody(1, "q", `{}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range modernHeaders("q") {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		line, _ := br.ReadString('\n')
		got <- line
		_, _ = io.Copy(io.Discard, br)
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, want) {
			t.Fatalf("the client read %q", line)
		}
	case <-time.After(testwait.Bound):
		t.Fatal("no answer")
	}
	cancel(errors.New("the user stops the proxy"))
	select {
	case <-done:
	case <-time.After(testwait.Bound):
		t.Fatal("Serve did not return")
	}
	recs := recordtest.ReadFile(t, path)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	return recs[0]
}

// TestShutdownAfterTheAnswerIsNoCut: the server answers a tools/call with a
// JSON-RPC error (-32603) on an SSE stream it leaves open; the client has
// read the answer; then the proxy is stopped. The answer arrived whole
// before the stop: the record is the answer's, without SD, and report
// counts the server's -32603 as a failure. Before, the record carried SD and
// report counted it apart as cut by shutdown, 0 failures (review18).
func TestShutdownAfterTheAnswerIsNoCut(t *testing.T) {
	r := stopAfterFirstLine(t, func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"database is down\"}}\n\n")
		w.(http.Flusher).Flush()
		<-req.Context().Done() // the server leaves its stream open
	}, "-32603")
	if r.Outcome != "JSONRPC_ERROR" || r.Flags.Has(record.FlagSD) || r.Flags.Has(record.FlagDC) || !strings.Contains(r.Note, "shut down after the response arrived whole") {
		t.Errorf("record: outcome %s, flags %v, note %q; want JSONRPC_ERROR, no SD nor DC, the shutdown after the answer named", r.Outcome, r.Flags, r.Note)
	}
	acc := report.New(report.Options{})
	acc.Add(r)
	s := acc.Summary()
	if s.Exchanges.Failures != 1 || s.Exchanges.CutByShutdown != 0 || s.CutByShutdown != 0 {
		t.Errorf("report: %d failures, %d cut by shutdown (summary %d); want the server's -32603 as 1 failure, none cut", s.Exchanges.Failures, s.Exchanges.CutByShutdown, s.CutByShutdown)
	}
}

// TestShutdownCutOf500: the server answers a tools/call 500 with the head
// and part of a JSON body, then hangs; the client has read that much; then
// the proxy is stopped and cuts the exchange. Its record carries SD (the
// stop cut the body) and HTTP_ERROR with status 500: what the server said
// before the stop, a failure of its own. report counts it as a failure,
// not as cut by shutdown. Before, report put every SD record apart: 0
// failures, 1 cut by shutdown, the server's 500 hidden (review18).
func TestShutdownCutOf500(t *testing.T) {
	r := stopAfterFirstLine(t, func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		fmt.Fprint(w, "{\"jsonrpc\":\"2.0\",\"id\":1,\n")
		w.(http.Flusher).Flush()
		<-req.Context().Done() // the server leaves its stream open
	}, "jsonrpc")
	if r.Outcome != "HTTP_ERROR" || r.Status != 500 || !r.Flags.Has(record.FlagSD) {
		t.Errorf("record: outcome %s, status %d, flags %v; want HTTP_ERROR, 500, SD (the stop cut the body)", r.Outcome, r.Status, r.Flags)
	}
	if r.CutByShutdown() {
		t.Errorf("CutByShutdown() of an SD record with the server's HTTP_ERROR 500: true, want false")
	}
	acc := report.New(report.Options{})
	acc.Add(r)
	s := acc.Summary()
	if s.Exchanges.Failures != 1 || s.Exchanges.CutByShutdown != 0 || s.CutByShutdown != 0 {
		t.Errorf("report: %d failures, %d cut by shutdown (summary %d); want the server's 500 as 1 failure, none cut", s.Exchanges.Failures, s.Exchanges.CutByShutdown, s.CutByShutdown)
	}
}
