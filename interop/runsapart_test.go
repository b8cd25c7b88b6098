package interop_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	judgepkg "github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// TestInspectorRunsApart runs the MCP Inspector CLI twice, one process
// after the other, through one recording `mcpdiag proxy` in front of
// `mcpdiag serve`'s healthy endpoint, on 2026-07-28 (sessionless), and
// judges the records with `matrix --from-records`. Each process sends
// server/discover with id "server-discover-probe-1" and opens a
// subscriptions/listen stream with id "listen:0", which it leaves open
// until it exits: the proxy records that stream as cut by the client. No
// trace may hold requests of both processes (their ids repeat), and every
// verdict passes. Before, the second process's first connection was taken
// for a retry of the first one's cut stream: one trace, and a failing
// spec.reissue-new-id ("listen:0" sent again with the same id).
func TestInspectorRunsApart(t *testing.T) {
	t.Parallel()
	const peer = "MCP Inspector CLI 2.12.0"
	r := row{Section: 4, Order: 1000, Peer: peer, Direction: "peer → mcpdiag serve", Era: "2026-07-28",
		Scenario: "two runs, one proxy: matrix --from-records judges them apart", Route: "via mcpdiag proxy"}
	results.expect(t, []row{r})
	skipShort(t, "the Inspector runs on node", r)
	nt := needNode(t, r)
	base := serveBase(t)
	px := startProxy(t, "inspector-apart", base+"/mcp")
	home := t.TempDir()
	var got []string
	for i := range 2 {
		run := runInspector(t, nt, home, base, px.base+"/mcp", "/mcp", "modern", false)
		if run.exit != 0 || !strings.Contains(run.stdout, `"text":"hi"`) {
			got = append(got, fmt.Sprintf("run %d: exit %d, %s %s %s", i+1, run.exit, run.stdout, run.stderr, run.err))
		}
	}
	px.records(t)
	f, err := os.Open(px.record)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := matrix.FromRecords(f, px.record, matrix.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	discovers := 0
	for _, tr := range p.Traces {
		seen := map[string]bool{}
		for _, x := range tr.Trace.Exchanges {
			if x.Method == "server/discover" {
				discovers++
			}
			k := x.Method + " " + x.ID.String()
			if seen[k] {
				got = append(got, fmt.Sprintf("trace %q holds %s twice (two processes in one trace)", tr.Trace.Name, k))
			}
			seen[k] = true
		}
		for _, c := range tr.Checks {
			if c.Verdict == judgepkg.Fail {
				got = append(got, fmt.Sprintf("trace %q fails %s: %s", tr.Trace.Name, c.Rule, c.Evidence))
			}
		}
	}
	if discovers != 2 {
		got = append(got, fmt.Sprintf("%d server/discover requests judged, want the 2 of the two runs", discovers))
	}
	r.Want = "each run's requests in traces of their own, every verdict pass"
	r.Got, r.Pass = strings.Join(got, "; "), len(got) == 0
	if r.Pass {
		r.Got = fmt.Sprintf("%d traces, every verdict pass", len(p.Traces))
	}
	results.add(t, r)
}
