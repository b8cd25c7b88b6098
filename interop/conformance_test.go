package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

const conformancePeer = "conformance 0.2.0-alpha.12"

// TestConformanceServe runs the official conformance suite's server leg
// (scripts/conformance-server.sh, the same script and baseline as the
// fixture's TestConformanceServer) against `mcpdiag serve` with no fault,
// then the same run through `mcpdiag proxy`: the proxy must change no
// check's status, in either requirement set.
func TestConformanceServe(t *testing.T) {
	t.Parallel()
	reqs := []string{"2026-07-28", "2025-11-25"}
	var rows []row
	for i, req := range reqs {
		for j, route := range []string{"direct", "via mcpdiag proxy"} {
			rows = append(rows, row{Section: 0, Order: i*2 + j, Peer: conformancePeer, Direction: "suite → mcpdiag serve",
				Era: req, Scenario: "requirement set " + req, Route: route})
		}
	}
	results.expect(t, rows)
	skipShort(t, "the conformance leg runs node", rows...)
	nt := needNode(t, rows...)
	bin := mcpdiagBin(t)
	out := t.TempDir()

	// One run per route, one after the other: the suite runs its scenarios
	// in parallel already, and the two runs share two cores with the rest
	// of go test.
	runs := map[string]string{}
	for _, route := range []string{"direct", "proxy"} {
		args := []string{filepath.Join(root, "scripts", "conformance-server.sh"), "--server", "serve", "--mcpdiag", bin,
			"--out", filepath.Join(out, route)}
		if route == "proxy" {
			args = append(args, "--proxy")
		}
		for _, req := range reqs {
			args = append(args, "--requirements", req)
		}
		runs[route] = runScript(t, args)
	}

	for i, req := range reqs {
		required := requiredScenarios(t, nt, req)
		direct := readChecks(t, filepath.Join(out, "direct", req))
		proxied := readChecks(t, filepath.Join(out, "proxy", req))
		for j, route := range []string{"direct", "proxy"} {
			r := rows[i*2+j]
			checks, log := direct, runs["direct"]
			if route == "proxy" {
				checks, log = proxied, runs["proxy"]
			}
			exit0 := regexp.MustCompile(`(?m)^== ` + regexp.QuoteMeta(req) + `: suite exit 0 `).MatchString(log)
			r.Want = "suite exit 0 against conformance/server-expected-failures.yml"
			r.Got = summarizeChecks(checks, required, log, req)
			r.Pass = exit0 && len(checks) > 0
			if route == "proxy" {
				r.Want += ", and every check's status identical to the direct run"
				diff := diffChecks(direct, proxied)
				if diff != "" {
					r.Pass = false
					r.Got += "; differs from the direct run: " + diff
				} else {
					r.Got += fmt.Sprintf("; identical to the direct run (%d scenarios, %d checks)", len(proxied), countChecks(proxied))
				}
			}
			if !exit0 {
				r.Got += "; suite exit not 0"
				t.Logf("%s log:\n%s", route, log)
			}
			results.add(t, r)
		}
	}
	if m := regexp.MustCompile(`(?m)^== mcpdiag proxy recorded (\d+) lines`).FindStringSubmatch(runs["proxy"]); m == nil || m[1] == "0" {
		t.Errorf("the proxy recorded nothing:\n%s", runs["proxy"])
	} else {
		t.Logf("the proxy recorded %s exchanges for the two runs", m[1])
	}
}

// runScript runs the conformance script in its own process group, bounded
// (the script bounds each suite run; this bounds the whole), and returns
// its output with the colours stripped.
func runScript(t *testing.T, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	plain := regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(out.String(), "")
	if err != nil {
		t.Errorf("%s failed after %s: %v\n%s", strings.Join(args, " "), time.Since(start).Round(time.Second), err, plain)
	} else {
		t.Logf("conformance-server.sh %s: %s", strings.Join(args[1:], " "), time.Since(start).Round(100*time.Millisecond))
	}
	return plain
}

// requiredScenarios lists the scenarios the suite scores for req.
func requiredScenarios(t *testing.T, nt *nodeTools, req string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(nt.bin, "conformance"), "list", "--server", "--requirements", req)
	cmd.Env = append(os.Environ(), "PATH="+nt.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("conformance list --server --requirements %s: %v", req, err)
	}
	// "Server scenarios …:" then "  - name" lines, up to a blank line.
	set := map[string]bool{}
	in := false
	for _, line := range strings.Split(regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(string(out), ""), "\n") {
		switch {
		case strings.HasPrefix(line, "Server scenarios"):
			in = true
		case in && strings.HasPrefix(line, "  - "):
			set[strings.TrimSpace(strings.TrimPrefix(line, "  - "))] = true
		case in && strings.TrimSpace(line) == "":
			in = false
		}
	}
	if len(set) == 0 {
		t.Fatalf("conformance list --server --requirements %s listed no scenario:\n%s", req, out)
	}
	return set
}

// readChecks reads dir/server-<scenario>-<time>/checks.json into
// scenario → check id → status.
func readChecks(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	stamp := regexp.MustCompile(`-\d{4}-\d\d-\d\dT[\d-]+Z$`)
	out := map[string]map[string]string{}
	for _, f := range files {
		name := stamp.ReplaceAllString(strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "server-"), "")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m := map[string]string{}
		for _, c := range checks {
			// A check id may repeat within a scenario: keep every status.
			if prev, ok := m[c.ID]; ok {
				m[c.ID] = prev + "," + c.Status
			} else {
				m[c.ID] = c.Status
			}
		}
		out[name] = m
	}
	return out
}

func has(checks map[string]string, status string) bool {
	for _, s := range checks {
		for _, one := range strings.Split(s, ",") {
			if one == status {
				return true
			}
		}
	}
	return false
}

// countChecks counts check entries (an id may repeat in a scenario).
func countChecks(runs map[string]map[string]string) int {
	n := 0
	for _, c := range runs {
		for _, s := range c {
			n += strings.Count(s, ",") + 1
		}
	}
	return n
}

// summarizeChecks says how the required scenarios did, which failures the
// baseline lists, what failed outside the scored set, and where the suite
// warned (a recommendation, not a failure: the suite passes the scenario).
func summarizeChecks(checks map[string]map[string]string, required map[string]bool, log, req string) string {
	var pass, total int
	var expected, unscored, warned []string
	for name, c := range checks {
		if has(c, "WARNING") {
			warned = append(warned, name)
		}
		if !required[name] {
			if has(c, "FAILURE") {
				unscored = append(unscored, name)
			}
			continue
		}
		total++
		if !has(c, "FAILURE") {
			pass++
		} else {
			expected = append(expected, name)
		}
	}
	sort.Strings(expected)
	sort.Strings(unscored)
	sort.Strings(warned)
	s := fmt.Sprintf("%d/%d required scenarios pass", pass, len(required))
	if total != len(required) {
		s += fmt.Sprintf(" (%d of them ran)", total)
	}
	if len(expected) > 0 {
		s += "; expected failure (baseline): " + strings.Join(expected, ", ")
	}
	if len(unscored) > 0 {
		s += fmt.Sprintf("; not scored for %s and failing: %d (%s)", req, len(unscored), abbreviate(unscored))
	}
	if len(warned) > 0 {
		s += "; warnings (SHOULD-level) in " + strings.Join(warned, ", ")
	}
	if total := suiteTotal(log, req); total != "" {
		s += "; suite " + total
	}
	return s
}

// suiteTotal is the "Total: N passed, M failed" line of req's run in a
// script log (one section per requirement set).
func suiteTotal(log, req string) string {
	i := strings.Index(log, "== conformance server --requirements "+req)
	if i < 0 {
		return ""
	}
	section := log[i+1:]
	if j := strings.Index(section, "== conformance server --requirements "); j >= 0 {
		section = section[:j]
	}
	return regexp.MustCompile(`(?m)^Total: \d+ passed, \d+ failed`).FindString(section)
}

// abbreviate names a list compactly: a common prefix once ("tasks-*").
func abbreviate(names []string) string {
	if len(names) > 3 {
		prefix := names[0]
		for _, n := range names[1:] {
			for !strings.HasPrefix(n, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
		if i := strings.LastIndex(prefix, "-"); i > 0 {
			return prefix[:i+1] + "*"
		}
	}
	return strings.Join(names, ", ")
}

// diffChecks lists what differs between two runs, per scenario and check.
func diffChecks(a, b map[string]map[string]string) string {
	var diffs []string
	names := map[string]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	for n := range names {
		ca, okA := a[n]
		cb, okB := b[n]
		if !okA || !okB {
			diffs = append(diffs, fmt.Sprintf("%s ran in only one run", n))
			continue
		}
		ids := map[string]bool{}
		for id := range ca {
			ids[id] = true
		}
		for id := range cb {
			ids[id] = true
		}
		for id := range ids {
			if ca[id] != cb[id] {
				diffs = append(diffs, fmt.Sprintf("%s:%s %s → %s", n, id, orNone(ca[id]), orNone(cb[id])))
			}
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}
