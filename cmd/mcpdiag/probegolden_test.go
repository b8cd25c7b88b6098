package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

var updateProbe = flag.Bool("update", false, "rewrite the golden txtar files under cmd/mcpdiag/testdata (probe/*.txtar, report/*.txtar) from this run's outputs")

// probeLabel matches a probe named in the evidence ("probe 3 wrong-type
// echo.text (id 5)", "probe 9 unknown-tool NAME (id 11): HTTP 400 …"):
// index, kind, tool, property, id, and the HTTP status it reports.
// statuses counts the HTTP statuses checkEchoes compared (TestProbeGoldens
// must compare some).
var statuses int

var probeLabel = regexp.MustCompile(`probe (\d+) ([a-z-]+)(?: ([A-Za-z0-9_-]+)(?:\.([A-Za-z0-9_-]+))?)? \(id ([^)]+)\)(?:: HTTP (\d+))?`)

// TestProbeGoldens: the text, --json and --junit outputs of mcpdiag probe
// against a real mcpdiag serve (healthy, and three server.* variants: a
// must and a should finding; a should finding only; a must finding with an
// HTTP status in its evidence) are
// those of cmd/mcpdiag/testdata/probe/*.txtar (the port replaced; -update
// rewrites them), and every probe an output names is the probe of that
// index in the --record file, with the id, tool and HTTP status the output
// echoes; a per-tool verdict names only that tool's probes.
func TestProbeGoldens(t *testing.T) {
	tests := []struct {
		name, scenario, era string
		exit                int
	}{
		{"healthy", "", "2026-07-28", 0},
		{"validation_as_success", "server.validation_as_success", "2026-07-28", 1},
		{"unknown_tool_as_tool_error", "server.unknown_tool_as_tool_error", "2025-11-25", 1},
		{"no_origin_check", "server.no_origin_check", "2026-07-28", 1},
	}
	u, _ := startServe(t, serveOptions{})
	base := strings.TrimSuffix(u, "/mcp")
	statuses = 0
	defer func() {
		if statuses == 0 && !t.Failed() {
			t.Errorf("no HTTP status in the outputs was checked against a record")
		}
	}()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := u
			if tc.scenario != "" {
				url = base + "/s/" + tc.scenario + "/mcp?run=" + tc.name
			}
			dir := t.TempDir()
			junit, recs := filepath.Join(dir, "probe.xml"), filepath.Join(dir, "probe.jsonl")
			args := []string{"probe", url, "--protocol", tc.era, "--max-probes", "2", "--interval", "0", "--timeout", "5s"}
			var text, stderr bytes.Buffer
			code := run(append(args, "--junit", junit, "--record", recs), strings.NewReader(""), &text, &stderr)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.exit, text.String(), stderr.String())
			}
			var js bytes.Buffer
			if code := run(append(args, "--json"), strings.NewReader(""), &js, &stderr); code != tc.exit {
				t.Fatalf("--json: exit %d, want %d\n%s", code, tc.exit, stderr.String())
			}
			x, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			norm := func(s string) string { return strings.ReplaceAll(s, base, "http://127.0.0.1:PORT") }
			got := map[string]string{"exit": strconv.Itoa(code) + "\n", "text": norm(text.String()), "json": norm(js.String()), "junit": norm(string(x))}
			order := []string{"exit", "text", "json", "junit"}
			file := filepath.Join("testdata", "probe", tc.name+".txtar")
			comment := fmt.Sprintf("mcpdiag probe against mcpdiag serve %s, %s: %s (TestProbeGoldens; go test -run TestProbeGoldens ./cmd/mcpdiag -update rewrites it).\n",
				map[bool]string{true: "(healthy)", false: tc.scenario}[tc.scenario == ""], tc.era, strings.Join(args[2:], " "))
			if *updateProbe {
				var b strings.Builder
				b.WriteString(comment)
				for _, name := range order {
					fmt.Fprintf(&b, "-- %s --\n%s", name, got[name])
				}
				if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test -run TestProbeGoldens ./cmd/mcpdiag -update writes it)", err)
			}
			want := splitTxtar(string(data))
			for _, name := range order {
				if want[name] != got[name] {
					t.Errorf("%s: the %s output differs from the golden (-update rewrites it); got:\n%s", file, name, got[name])
				}
			}
			if n := checkEchoes(t, text.String(), js.Bytes(), recordtest.ReadFile(t, recs)); n == 0 && tc.exit != 0 {
				t.Errorf("a failing run whose outputs name no probe")
			}
		})
	}
}

// splitTxtar returns the files of a txtar archive by name.
func splitTxtar(s string) map[string]string {
	out := map[string]string{}
	name := ""
	for _, line := range strings.SplitAfter(s, "\n") {
		if n, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "-- "); ok && strings.HasSuffix(n, " --") {
			name = strings.TrimSuffix(n, " --")
			out[name] = ""
			continue
		}
		if name != "" {
			out[name] += line
		}
	}
	return out
}

// checkEchoes checks every probe the text and JSON outputs name against
// the record of that probe (by index): kind, tool, id, HTTP status; and
// that each tool's verdicts (JSON tools[].checks) name only its probes.
func checkEchoes(t *testing.T, text string, js []byte, recs []*record.Record) int {
	t.Helper()
	byIndex := map[int]*record.Record{}
	for _, r := range recs {
		if r.Probe != nil {
			byIndex[r.Probe.Index] = r
		}
	}
	var rep struct {
		Checks []struct{ Rule, Evidence string } `json:"checks"`
		Tools  []struct {
			Name   string
			Checks []struct{ Rule, Evidence string } `json:"checks"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatalf("--json: %v", err)
	}
	n := 0
	check := func(where, ev, tool string) {
		if ev == "" {
			return
		}
		for _, m := range probeLabel.FindAllStringSubmatch(ev, -1) {
			n++
			i, _ := strconv.Atoi(m[1])
			r := byIndex[i]
			switch {
			case r == nil:
				t.Errorf("%s names probe %d, which has no record: %q", where, i, m[0])
				continue
			case r.Probe.Kind != m[2]:
				t.Errorf("%s: probe %d is %s in the record, %s in the output", where, i, r.Probe.Kind, m[2])
			case m[3] != "" && r.Tool != m[3]:
				t.Errorf("%s: probe %d called %q in the record, %q in the output", where, i, r.Tool, m[3])
			case m[4] != "" && r.Probe.Property != m[4]:
				t.Errorf("%s: probe %d broke %q in the record, %q in the output", where, i, r.Probe.Property, m[4])
			case r.JSONRPC.ID.String() != m[5]:
				t.Errorf("%s: probe %d has id %s in the record, %s in the output", where, i, r.JSONRPC.ID, m[5])
			case m[6] != "" && strconv.Itoa(r.Status) != m[6]:
				t.Errorf("%s: probe %d got HTTP %d in the record, %s in the output", where, i, r.Status, m[6])
			case m[6] != "":
				statuses++
			case tool != "" && r.Tool != tool:
				t.Errorf("%s: a verdict of tool %s names probe %d of %q", where, tool, i, r.Tool)
			}
			if want := probeMethod(r.Probe.Kind); r.Method != want {
				t.Errorf("probe %d (%s): method %q in the record, want %q", i, r.Probe.Kind, r.Method, want)
			}
		}
	}
	for _, line := range strings.Split(text, "\n") {
		check("text", line, "")
	}
	for _, c := range rep.Checks {
		check("--json "+c.Rule, c.Evidence, "")
	}
	for _, tl := range rep.Tools {
		for _, c := range tl.Checks {
			check("--json tool "+tl.Name+" "+c.Rule, c.Evidence, tl.Name)
		}
	}
	t.Logf("%d probe labels checked against the records", n)
	return n
}

// probeMethod is the method a probe of kind sends: tools/list for the id
// and header probes, the notification's, tools/call for the rest.
func probeMethod(kind string) string {
	switch kind {
	case "id-string", "id-number", "foreign-origin", "bad-protocol-version":
		return "tools/list"
	case "notification":
		return "notifications/cancelled"
	}
	return "tools/call"
}
