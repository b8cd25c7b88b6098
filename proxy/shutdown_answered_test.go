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

// TestShutdownAfterTheAnswerIsNoCut: the server answers a tools/call with a
// JSON-RPC error (-32603) on an SSE stream it leaves open; the client has
// read the answer; then the proxy is stopped. The answer arrived whole
// before the stop: the record is the answer's, without SD, and report
// counts the server's -32603 as a failure. Before, the record carried SD and
// report counted it apart as cut by shutdown, 0 failures (review18).
func TestShutdownAfterTheAnswerIsNoCut(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"database is down\"}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the server leaves its stream open
	}))
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
		if !strings.Contains(line, "-32603") {
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
	r := recs[0]
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
