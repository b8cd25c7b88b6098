package interop_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	mjudge "github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
)

// startEverything starts the pinned @modelcontextprotocol/server-everything
// in streamableHttp mode on 127.0.0.1 (loopback.mjs binds it there and
// prints the port PORT=0 got) with a scrubbed environment (get-env returns
// the whole environment to any caller), and returns its /mcp URL; it is
// stopped when the test ends.
func startEverything(t *testing.T, nt *nodeTools) string {
	t.Helper()
	if v := nt.packages["@modelcontextprotocol/server-everything"]; v != "2026.8.31" {
		t.Fatalf("@modelcontextprotocol/server-everything %s installed, want the pinned 2026.8.31", v)
	}
	home := t.TempDir()
	cmd := exec.Command(nt.node, "--import", "file://"+filepath.Join(root, "interop", "node", "loopback.mjs"),
		filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "streamableHttp")
	cmd.Env = []string{"PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + home, "PORT=0"}
	cmd.Dir = home
	p, base, err := start("server-everything", cmd, regexp.MustCompile(`mcpdiag-interop: listening (http://127\.0\.0\.1:\d+)`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return base + "/mcp"
}

// probeWant is what one probe rule must conclude on a peer: its verdict
// and words its evidence must hold.
type probeWant struct {
	verdict  mjudge.Verdict
	evidence []string
}

// everythingProbe is what `mcpdiag probe` (default options: seed 1, at most
// 6 argument probes per tool, read-only tools only) must find on the pinned
// server-everything, for every probe rule. Two findings: an unknown tool is
// answered with an isError result ("MCP error -32602: Tool … not found")
// where the spec wants a protocol error, and a foreign Origin is served.
// Every argument probe gets isError, so probe.invalid-arguments passes; on
// 2025-11-25 there is no resultType to check.
var everythingProbe = map[string]probeWant{
	"probe.answered":                 {mjudge.Pass, []string{"probes checked"}},
	"probe.answer-shape":             {mjudge.Pass, []string{"probes checked"}},
	"probe.result-type":              {mjudge.NotApplicable, []string{"not applicable on 2025-11-25: resultType is a 2026-07-28 field"}},
	"probe.invalid-arguments":        {mjudge.Pass, []string{"answered isError true, 0 a JSON-RPC error"}},
	"probe.is-error-missing":         {mjudge.Pass, []string{"probes checked"}},
	"probe.unknown-tool":             {mjudge.Fail, []string{"unknown-tool mcpdiag_no_such_tool_", "TOOL_ERROR, not a JSON-RPC error"}},
	"probe.malformed-call":           {mjudge.Pass, []string{"probes checked"}},
	"probe.id-type":                  {mjudge.Pass, []string{"probes checked"}},
	"probe.origin":                   {mjudge.Fail, []string{"foreign-origin", "HTTP 200 (RESULT_SUCCESS), not 403"}},
	"probe.protocol-version":         {mjudge.Pass, []string{"1 probe checked"}},
	"probe.protocol-version-missing": {mjudge.Pass, []string{"1 probe checked: served"}},
	"probe.accept":                   {mjudge.Pass, []string{"1 probe checked: 406 Not Acceptable"}},
	"probe.notification-202":         {mjudge.Pass, []string{"1 probe checked"}},
}

// probeRules are the probe rules, sorted: the rows of one probe run.
func probeRules() []string {
	var rules []string
	for _, f := range probe.Families {
		rules = append(rules, f.Rules...)
	}
	sort.Strings(rules)
	return rules
}

// holdProbeRules adds one row per rule (rows[j] is rules[j]): the rule's
// check in rep must have want's verdict and evidence words, on era.
func holdProbeRules(t *testing.T, rep *probe.Report, rows []row, rules []string, want map[string]probeWant, era string) {
	t.Helper()
	got := map[string]mjudge.Check{}
	for _, c := range rep.Checks {
		got[c.Rule] = c
	}
	for j, rule := range rules {
		r := rows[j]
		w, ok := want[rule]
		if !ok {
			r.Want, r.Got = "a verdict in the test's table", "the rule has none (add it)"
			results.add(t, r)
			continue
		}
		r.Want = fmt.Sprintf("%s on %s, evidence with %q", w.verdict, era, strings.Join(w.evidence, `", "`))
		c, ok := got[rule]
		if !ok {
			r.Got = "no check of this rule in the report"
			results.add(t, r)
			continue
		}
		r.Got = fmt.Sprintf("verdict %s on %s: %s", c.Verdict, rep.Protocol, trimTo(c.Evidence, 160))
		r.Pass = c.Verdict == w.verdict && rep.Protocol == era
		for _, word := range w.evidence {
			r.Pass = r.Pass && strings.Contains(c.Evidence, word)
		}
		results.add(t, r)
	}
}

// TestProbePeers runs `mcpdiag probe` (the probe package, default options,
// each probe bounded by 10 s) against the pinned server-everything over
// Streamable HTTP on 127.0.0.1, with the era fixed to 2025-11-25 and with
// discovery (it has no server/discover: the probe falls back to
// initialize), and holds every probe rule's verdict to everythingProbe: one
// row per rule, and one for the unknown tool's record (the isError text
// "MCP error -32602" and the classifier's protocol-error-as-tool-error
// warning). TestProbeGoPeers probes the Go SDKs' servers. docs/probe.md
// has the results.
func TestProbePeers(t *testing.T) {
	t.Parallel()
	const peer = "server-everything 2026.8.31"
	rules := probeRules()
	eras := []struct{ protocol, label string }{{"2025-11-25", "2025-11-25"}, {"auto", "auto → 2025-11-25"}}
	var rows []row
	for i, e := range eras {
		for j, rule := range rules {
			rows = append(rows, row{Section: 5, Order: i*100 + j, Peer: peer, Direction: fromDiag, Era: e.label,
				Scenario: "mcpdiag probe: " + rule, Route: "direct"})
		}
		rows = append(rows, row{Section: 5, Order: i*100 + 99, Peer: peer, Direction: fromDiag, Era: e.label,
			Scenario: "mcpdiag probe: the unknown tool's record", Route: "direct"})
	}
	results.expect(t, rows)
	skipShort(t, "server-everything runs on node", rows...)
	nt := needNode(t, rows...)
	url := startEverything(t, nt)

	for i, e := range eras {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		rep, err := probe.Run(ctx, probe.Options{URL: url, Protocol: e.protocol, Timeout: 10 * time.Second})
		cancel()
		if err != nil {
			t.Errorf("probe.Run %s (%s): %v", url, e.protocol, err)
			continue // the rows are counted as failed by expect
		}
		t.Logf("%s: era %s (%s), %d probes", e.label, rep.Protocol, rep.EraReason, len(rep.Probes))
		holdProbeRules(t, rep, rows[i*(len(rules)+1):], rules, everythingProbe, "2025-11-25")

		r := rows[i*(len(rules)+1)+len(rules)]
		r.Want = "one record: TOOL_ERROR, isError true, text with \"MCP error -32602\", warning " + classify.WarnProtocolErrorAsTool
		r.Got, r.Pass = unknownToolAsToolError(rep, false)
		results.add(t, r)
	}
}

// unknownToolAsToolError checks server-everything's known finding in the
// records of a probe run: exactly one unknown-tool probe, answered TOOL_ERROR
// with isError true, the text "MCP error -32602" and the
// protocol-error-as-tool-error warning (over stdio also no HTTP status). It
// returns what it found, for the row, and whether it holds.
func unknownToolAsToolError(rep *probe.Report, stdio bool) (string, bool) {
	var found []string
	pass := false
	for _, rec := range rep.Records {
		if rec.Probe == nil || rec.Probe.Kind != string(probe.UnknownTool) {
			continue
		}
		var warns []string
		for _, w := range rec.Warnings {
			warns = append(warns, w.Code)
		}
		body := ""
		if rec.ResponseBody != nil {
			body = rec.ResponseBody.Text
		}
		desc := fmt.Sprintf("%s isError %v warnings %v", rec.Outcome, rec.IsError != nil && *rec.IsError, warns)
		if stdio {
			desc += fmt.Sprintf(" status %d", rec.Status)
		} else if strings.Contains(body, "MCP error -32602") {
			desc += `, text with "MCP error -32602"`
		}
		found = append(found, desc)
		pass = rec.Outcome == classify.ToolError && rec.IsError != nil && *rec.IsError && (!stdio || rec.Status == 0) &&
			strings.Contains(body, "MCP error -32602") && slices.Contains(warns, classify.WarnProtocolErrorAsTool)
	}
	return fmt.Sprintf("%d records: %s", len(found), strings.Join(found, "; ")), pass && len(found) == 1
}
