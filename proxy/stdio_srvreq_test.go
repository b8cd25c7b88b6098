package proxy_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestStdioServerRequestEnd: the record of a server request (roots/list,
// as server-everything sends one to the MCP Inspector CLI) says how it
// ended. Answered by the client: its note says so. Left unanswered when
// the client closed the server's stdin (ended the session, as a stdio
// client shuts a server down): the client left, as an HTTP client that
// disconnects (DC), not a request still pending when the capture ended
// (UX), and its note does not say it was answered. Left unanswered when
// the server exited with the client still there: pending (UX). No reason
// speaks of HTTP. Before, every server request's note said "answered by
// the client", the reason said "no HTTP response", and the one the client
// left behind when it exited was UX, which matrix --from-records failed
// as live.pending.
func TestStdioServerRequestEnd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, tool string
		answer     bool
		flag, not  record.Flag
		pending    bool
		note       string
		outcome    classify.Outcome
		network    bool // a network member (a transport failure)
	}{
		{"answered", "ask-roots", true, "", record.FlagUX, false, "a server request (server → client), answered by the client", classify.ResultSuccess, false},
		// The session's end ends it: no failure, nothing to retry.
		{"client closed", "ask-roots", false, record.FlagDC, record.FlagUX, false, "a server request (server → client), not answered: the client closed the server's stdin", classify.HTTPSuccess, false},
		{"server exited", "ask-roots-exit", false, record.FlagUX, record.FlagDC, true, "a server request (server → client), not answered", classify.NetworkError, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
			got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("2", c.tool)}), "")
			if !strings.Contains(got, `"method":"roots/list"`) {
				t.Fatalf("the client received %q, want the server's roots/list first", got)
			}
			if c.answer {
				if _, err := io.WriteString(run.in, `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			if c.tool == "ask-roots-exit" {
				_, _ = io.Copy(io.Discard, run.out) // until the server is gone
			}
			run.in.Close()
			run.wait(t)
			var roots *record.Record
			for _, r := range run.sink.records(t) {
				if r.Method == "roots/list" {
					if roots != nil {
						t.Fatalf("two records of roots/list")
					}
					roots = r
				}
			}
			if roots == nil {
				t.Fatal("no record of roots/list")
			}
			if !strings.HasPrefix(roots.Note, c.note) || !c.answer && strings.Contains(roots.Note, "answered by") {
				t.Errorf("note %q, want it to start %q", roots.Note, c.note)
			}
			if c.flag != "" && !roots.Flags.Has(c.flag) || roots.Flags.Has(c.not) {
				t.Errorf("flags %v, want %s and not %s", roots.Flags, c.flag, c.not)
			}
			if strings.Contains(roots.Reason, "HTTP") {
				t.Errorf("reason %q speaks of HTTP on stdio", roots.Reason)
			}
			if x := judge.FromRecord(roots, ""); x.Pending != c.pending {
				t.Errorf("pending %v for the judge (%s), want %v", x.Pending, roots.Reason, c.pending)
			}
			if roots.Outcome != c.outcome || roots.Layer != c.outcome.Layer() || (roots.Network != nil) != c.network {
				t.Errorf("%s (%s), network %+v: want %s, network %v", roots.Outcome, roots.Layer, roots.Network, c.outcome, c.network)
			}
			if c.name == "client closed" {
				if want := "the client ended the session (it closed the server's stdin) without answering this server request: the session's end ends the requests outstanding in it (MCP Lifecycle › Shutdown), so no answer is due; no transport failed and nothing is to be retried"; roots.Reason != want {
					t.Errorf("reason %q, want %q", roots.Reason, want)
				}
				res := &classify.Result{Outcome: roots.Outcome, Reason: roots.Reason}
				res.SetMethod(roots.Method)
				if d := retry.DefaultPolicy().Decide(res, retry.Facts{}); !roots.Outcome.Success() || d.Action != retry.Done {
					t.Errorf("a session's normal end: success %v, retry advice %s", roots.Outcome.Success(), d)
				}
			}
		})
	}
}

// TestStdioClientRequestEnd: the client's own request, still unanswered
// when the session ended, says who ended it. The client closed the
// server's stdin (a stdio client's way to end a session) and the server
// then exited without answering: the client left (DC), not a request the
// server left pending (UX), so matrix --from-records does not fail
// live.pending on the server. The server exited while its client was still
// there: pending (UX), as before. Before, both were UX (the review of
// 4fcf361: only server requests were told apart).
func TestStdioClientRequestEnd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, tool string
		flag, not  record.Flag
		pending    bool
	}{
		{"client closed", "no-answer", record.FlagDC, record.FlagUX, false},
		{"server exited", "no-answer-exit", record.FlagUX, record.FlagDC, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
			if _, err := io.WriteString(run.in, scriptedCall("5", c.tool)+"\n"); err != nil {
				t.Fatal(err)
			}
			// (run.in is a pipe: the proxy has read the line once the
			// write returned.)
			if c.tool == "no-answer-exit" {
				_, _ = io.Copy(io.Discard, run.out) // until the server is gone
			}
			run.in.Close()
			run.wait(t)
			recs := run.sink.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want the tools/call's", len(recs))
			}
			r := recs[0]
			if r.Method != "tools/call" || r.JSONRPC.ID.String() != "5" || r.Tool != c.tool {
				t.Fatalf("record of %s id %s tool %q", r.Method, r.JSONRPC.ID, r.Tool)
			}
			if !r.Flags.Has(c.flag) || r.Flags.Has(c.not) {
				t.Errorf("flags %v, want %s and not %s (%s)", r.Flags, c.flag, c.not, r.Reason)
			}
			if x := judge.FromRecord(r, ""); x.Pending != c.pending {
				t.Errorf("pending %v for the judge (%s), want %v", x.Pending, r.Reason, c.pending)
			}
			if strings.Contains(r.Reason, "HTTP") {
				t.Errorf("reason %q speaks of HTTP on stdio", r.Reason)
			}
		})
	}
}
