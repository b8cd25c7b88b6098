package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestSessionlessClientsApart: two 2026-07-28 clients (no session, the
// same clientInfo) call the same tool with the same arguments twice each
// through one proxy, each on its own connection. The records say which
// connection each request came on (conn), and the passive judge keeps the
// clients apart: no loop.identical-calls across them. Before, both were
// one trace "test-client@9 (no session)" that failed loop.identical-calls
// (4 identical calls). One client sending the same call 4 times still
// fails it, on its one connection.
func TestSessionlessClientsApart(t *testing.T) {
	t.Parallel()
	upstream := serve(t, bothEras(mcpServer(), true))
	for _, c := range []struct {
		name    string
		clients int // each sends 4/clients identical calls on its own connection
		loop    bool
	}{
		{"two clients", 2, false},
		{"one client", 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(upstream)
			if err != nil {
				t.Fatal(err)
			}
			sink := &memSink{}
			p, err := proxy.New(proxy.Options{Upstream: u, Records: sink})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewUnstartedServer(nil)
			ts.Config = p.HTTPServer(p) // as mcpdiag proxy serves: with its ConnContext
			ts.Start()
			id := 0
			for range c.clients {
				tr := &http.Transport{}
				cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
				for range 4 / c.clients {
					id++
					status, _, body, err := post(t, cl, ts.URL+u.Path, callBody(id, "echo", `{"text":"hi"}`), modernHeaders("echo"))
					if err != nil || status != http.StatusOK || !bytes.Contains(body, []byte("echo: hi")) {
						t.Fatalf("call %d: %d %s %v", id, status, body, err)
					}
				}
				tr.CloseIdleConnections()
			}
			ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			conns := map[string]bool{}
			for _, r := range sink.records(t) {
				if r.Conn == "" {
					t.Errorf("record %s has no conn", r.ID)
				}
				conns[r.Conn] = true
			}
			if len(conns) != c.clients {
				t.Errorf("%d connections in the records (%v), want %d", len(conns), conns, c.clients)
			}
			sink.mu.Lock()
			file := bytes.Join(sink.lines, nil)
			sink.mu.Unlock()
			pa, err := matrix.FromRecords(bytes.NewReader(file), "proxy records", matrix.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			_ = pa.WriteTable(&out)
			if len(pa.Traces) != c.clients {
				t.Errorf("%d traces, want %d:\n%s", len(pa.Traces), c.clients, out.String())
			}
			looped := false
			for _, tr := range pa.Traces {
				for _, ch := range tr.Checks {
					if ch.Rule == "loop.identical-calls" && ch.Verdict == judge.Fail {
						looped = true
					}
				}
			}
			if looped != c.loop {
				t.Errorf("loop.identical-calls failed: %v, want %v:\n%s", looped, c.loop, out.String())
			}
			if c.loop && !strings.Contains(out.String(), "conn ") {
				t.Errorf("the trace does not name its connection:\n%s", out.String())
			}
		})
	}
}

// TestStdioRunsApart: two runs of the stdio proxy (one client each, the
// same clientInfo and command) append to one record file, each calling
// the same tool with the same arguments twice. Each run's records carry
// its own conn (the pipe is one client connection), so the passive judge
// keeps the runs apart: no loop.identical-calls across them. Before, the
// four calls were one trace that failed it.
func TestStdioRunsApart(t *testing.T) {
	t.Parallel()
	sink := &memSink{}
	for range 2 {
		run := startStdio(t, proxy.StdioOptions{Records: sink})
		conversation(t, run.in, run.out, []string{initLine, readyLine, toolLine(2, "echo"), toolLine(3, "echo")})
		run.in.Close()
		go io.Copy(io.Discard, run.out)
		run.wait(t)
	}
	sink.mu.Lock()
	file := bytes.Join(sink.lines, nil)
	sink.mu.Unlock()
	pa, err := matrix.FromRecords(bytes.NewReader(file), "stdio records", matrix.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_ = pa.WriteTable(&out)
	if len(pa.Traces) != 2 {
		t.Errorf("%d traces, want one per run:\n%s", len(pa.Traces), out.String())
	}
	for _, tr := range pa.Traces {
		for _, ch := range tr.Checks {
			if ch.Verdict == judge.Fail {
				t.Errorf("%s failed: %s", ch.Rule, ch.Evidence)
			}
		}
	}
}
