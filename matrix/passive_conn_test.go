package matrix_test

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestFromRecordsConnections: sessionless records without a call id are
// one trace per connection, except that a connection opened right after
// an answer a client retries (a cut stream, no answer, a 503) continues
// that trace: the retry is judged as a retry of the same client. After a
// complete answer (or a tool error) the next connection is a trace of its
// own.
func TestFromRecordsConnections(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		first  req
		next   req // the new connection's first request; echo when empty
		traces int
	}{
		{"after a success", req{tool: "echo"}, req{}, 2},
		{"after a tool error", req{tool: "echo", outcome: classify.ToolError}, req{}, 2},
		{"after a cut stream", req{tool: "echo", outcome: classify.StreamIncomplete}, req{}, 1},
		{"after no answer", req{tool: "echo", net: "connection reset by peer"}, req{}, 1},
		{"after a 503", req{tool: "echo", status: 503, outcome: classify.HTTPError}, req{}, 1},
		// Not the same request again: another client's (or another run's)
		// first request, as a second MCP Inspector CLI process's
		// server/discover after the first one's subscriptions/listen
		// stream ended when it exited.
		{"after a cut stream, another method", req{method: "subscriptions/listen", outcome: classify.StreamIncomplete, flags: record.Flags{record.FlagDC}}, req{method: "server/discover"}, 2},
		{"after a cut stream, another tool", req{tool: "echo", outcome: classify.StreamIncomplete}, req{tool: "add"}, 2},
		{"after a cut stream, other arguments", req{tool: "echo", args: `{"text":"a"}`, outcome: classify.StreamIncomplete}, req{tool: "echo", args: `{"text":"b"}`}, 2},
		{"after input_required, the next round", req{tool: "echo", issued: "s1"}, req{tool: "echo", state: "s1", inputs: true}, 1},
		{"after a 503, the same arguments", req{tool: "echo", args: `{"text":"a"}`, status: 503, outcome: classify.HTTPError}, req{tool: "echo", args: `{"text":"a"}`}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cp := newCapture(t)
			cp.add(c.first)
			if c.next.method == "" && c.next.tool == "" {
				c.next = req{tool: "echo"}
			}
			cp.add(c.next)
			cp.recs[0].Conn, cp.recs[1].Conn = "r-1", "r-2"
			p := cp.judge()
			if len(p.Traces) != c.traces {
				var names []string
				for _, tr := range p.Traces {
					names = append(names, tr.Trace.Name)
				}
				t.Fatalf("%d traces (%s), want %d", len(p.Traces), strings.Join(names, "; "), c.traces)
			}
			if !strings.Contains(p.Traces[0].Trace.Name, "conn r-1") {
				t.Errorf("trace %q does not name its first connection", p.Traces[0].Trace.Name)
			}
		})
	}
}

// TestFromRecordsOfAnOldServeLog: a log of mcpdiag serve at e244dc8 (kind
// server lines, unclassified), where mcpdiag call met sse.truncated and
// sse.wrong_id and retried each cut answer. The judge takes the answers a
// scenario fired on for what the catalogue says the scenario makes (a cut
// stream, another request's id), not for complete answers: the retries are
// no loop.identical-calls. Before, both endpoints failed it ("sent 3 times
// after complete answers"), where the same traffic logged by today's serve
// passes.
func TestFromRecordsOfAnOldServeLog(t *testing.T) {
	t.Parallel()
	p := judgeFile(t, "serve-e244dc8-retries.jsonl")
	if len(p.Traces) != 2 {
		t.Fatalf("%d traces, want the two endpoints", len(p.Traces))
	}
	if fails := passiveFailures(p); len(fails) > 0 {
		t.Errorf("failures on a client that retried cut answers: %v", fails)
	}
}

// TestFromRecordsTableNamesApart: the table's rows name their traces so
// that two traces whose names differ only at their end (the connection)
// are told apart. Before, each name was cut to 44 characters, and the
// traces of one long client name read the same: "inspector-cli@2.12.0 (no
// session, conn 1d0c…" five times.
func TestFromRecordsTableNamesApart(t *testing.T) {
	t.Parallel()
	cp := newCapture(t)
	cp.add(req{tool: "echo", client: "a-client-with-a-rather-long-name@2.12.0"})
	cp.add(req{tool: "echo", client: "a-client-with-a-rather-long-name@2.12.0"})
	cp.recs[0].Conn, cp.recs[1].Conn = "1d0c527b-1", "1d0c527b-2"
	p := cp.judge()
	if len(p.Traces) != 2 {
		t.Fatalf("%d traces, want 2", len(p.Traces))
	}
	var out strings.Builder
	if err := p.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, conn := range []string{"conn 1d0c527b-1)", "conn 1d0c527b-2)"} {
		if !strings.Contains(out.String(), conn) {
			t.Errorf("no row names %q:\n%s", conn, out.String())
		}
	}
}

// TestFromRecordsServeClientsApart: two clients on one endpoint of
// mcpdiag serve, each on its own connection, with no session: the first
// (inspector-cli) got a 503, the second (mcpdiag) then sent the same
// tools/call on a new connection. That is another client, not the first
// one's retry: two traces, and no spec.reissue-new-id failure. Before, the
// serve lines' trace key named the endpoint only, so the second client's
// request joined the first's trace as its retry, with the same id.
func TestFromRecordsServeClientsApart(t *testing.T) {
	t.Parallel()
	p := judgeFile(t, "serve-two-clients-503.jsonl")
	if len(p.Traces) != 2 {
		var names []string
		for _, tr := range p.Traces {
			names = append(names, tr.Trace.Name)
		}
		t.Fatalf("%d traces (%s), want one per client", len(p.Traces), strings.Join(names, "; "))
	}
	for _, tr := range p.Traces {
		for _, ch := range tr.Checks {
			if ch.Rule == "spec.reissue-new-id" && ch.Verdict == judge.Fail {
				t.Errorf("%s: %s failed: %s", tr.Trace.Name, ch.Rule, ch.Evidence)
			}
		}
	}
}

// judgeFile judges the records of testdata/name as matrix --from-records
// does.
func judgeFile(t *testing.T, name string) *matrix.Passive {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := matrix.FromRecords(f, name, matrix.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFromRecordsRoundsAcrossPooledConnections: a sessionless client with
// a pool of connections (the TypeScript SDK v2 through mcpdiag serve)
// sends the MRTR rounds of one call on connections that already carried
// its other requests: here server/discover on r-2, the call on r-1, its
// first round on r-2, the second on r-1. Each round echoes the state the
// previous answer issued, so it joins that answer's trace: the call is one
// trace with its rounds, and no MRTR rule fails. Before, the traces were
// cut by connection and failed spec.mrtr-no-invented-state (a round on r-2
// echoing a state "no answer issued") and spec.mrtr-echo-state, differently
// from one identical run to the next as the pool handed out connections
// (found by newuser8: 5 runs of the SDK on elicitation.approval and
// elicitation.decline, judged with matrix --from-records, gave 4 sets of
// verdicts).
func TestFromRecordsRoundsAcrossPooledConnections(t *testing.T) {
	t.Parallel()
	cp := newCapture(t)
	cp.add(req{method: "server/discover"})
	cp.add(req{tool: "echo", issued: "s1"})
	cp.add(req{tool: "echo", state: "s1", inputs: true, issued: "s2"})
	cp.add(req{tool: "echo", state: "s2", inputs: true})
	for i, conn := range []string{"r-2", "r-1", "r-2", "r-1"} {
		cp.recs[i].Conn = conn
	}
	p := cp.judge()
	if f := passiveFailures(p); len(f) != 0 {
		t.Errorf("failures %v, want none", f)
	}
	got := map[string]string{}
	for _, tr := range p.Traces {
		var what []string
		for _, x := range tr.Trace.Exchanges {
			what = append(what, x.Label())
		}
		got[tr.Trace.Name] = strings.Join(what, "; ")
	}
	want := map[string]string{
		"agent@1.0 (no session, conn r-2)": "POST 1 (server/discover, id 1)",
		"agent@1.0 (no session, conn r-1)": "POST 1 (tools/call echo, id 2); POST 2 (tools/call echo, id 3); POST 3 (tools/call echo, id 4)",
	}
	if !maps.Equal(got, want) {
		t.Errorf("traces %v,\nwant %v", got, want)
	}
}

// TestFromRecordsRefusalAcrossPooledConnections: a request refused with
// 400, then (or not) a tools/list, then the request again, on whatever
// connections a client's pool hands out. safety.4xx-unchanged must give the
// same verdict in every arrangement: a pass when tools/list was re-read in
// between, a failure when nothing changed. Before, the traces were cut by
// connection and the verdict followed the pool: the re-read on another
// connection read as an unchanged repeat, and an unchanged repeat on another
// connection was not seen at all (newuser8: the TypeScript SDK failed
// errors.header_mismatch in 4 of 5 identical runs).
func TestFromRecordsRefusalAcrossPooledConnections(t *testing.T) {
	t.Parallel()
	conns := []string{"r-1", "r-2", "r-3"}
	for _, reread := range []bool{true, false} {
		for _, listConn := range conns {
			for _, repeatConn := range conns {
				if !reread && listConn != "r-1" {
					continue // one arrangement per repeat's connection
				}
				cp := newCapture(t)
				cp.add(req{method: "server/discover"})
				cp.add(req{tool: "echo", args: `{"text":"a"}`, status: 400, outcome: classify.HTTPError})
				conn := []string{"r-2", "r-1"}
				if reread {
					cp.add(req{method: "tools/list"})
					conn = append(conn, listConn)
				}
				cp.add(req{tool: "echo", args: `{"text":"a"}`})
				conn = append(conn, repeatConn)
				for i, c := range conn {
					cp.recs[i].Conn = c
				}
				p := cp.judge()
				f, failed := passiveFailures(p)["safety.4xx-unchanged"]
				name := fmt.Sprintf("tools/list re-read %v on %s, repeat on %s", reread, listConn, repeatConn)
				switch {
				case reread && failed:
					t.Errorf("%s: safety.4xx-unchanged failed: %s", name, f)
				case !reread && !failed:
					t.Errorf("%s: safety.4xx-unchanged did not fail (checks %v)", name, passiveVerdicts(p, "safety.4xx-unchanged"))
				case !reread && !strings.Contains(f, "with nothing changed"):
					t.Errorf("%s: evidence %q", name, f)
				}
			}
		}
	}
}

// passiveVerdicts lists the verdicts of rule in every trace of p.
func passiveVerdicts(p *matrix.Passive, rule string) []string {
	var out []string
	for _, tr := range p.Traces {
		for _, c := range tr.Checks {
			if c.Rule == rule {
				out = append(out, tr.Trace.Name+": "+string(c.Verdict)+" "+c.Evidence)
			}
		}
	}
	return out
}
