package judge_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

var update = flag.Bool("update", false, "rewrite the .checks sections of judge/testdata/*.txtar from the judge's verdicts")

// A golden file, testdata/RULE.txtar, holds traces: records in, checks out.
// Its comment says where the records come from. For each trace T:
//
//	-- T.jsonl --   the trace's record lines (JSONL, as mcpdiag writes them)
//	-- T.json --    how it is judged (optional; see traceInput): the mode,
//	                the case's facts and the client run of an active trace,
//	                the tools' safety
//	-- T.checks --  one check per line: RULE VERDICT EVIDENCE
//
// A passive trace takes the tools' safety from its tools/list records
// (judge.ReadSafety) as --from-records does; an active one from T.json (the
// matrix lists the fixture's tools).
type golden struct {
	comment string
	files   []goldenFile
}

type goldenFile struct {
	name string
	data []byte
}

// traceInput is T.json.
type traceInput struct {
	// Mode is "active" (a matrix run: a case and a client), "passive"
	// (--from-records, the default) or "probe" (an mcpdiag probe run).
	Mode string `json:"mode"`
	// Case is the case's facts (active).
	Case *struct {
		Name      string           `json:"name"`
		Expected  classify.Outcome `json:"expected"`
		TimeoutMs int64            `json:"timeoutMs"`
		Holds     bool             `json:"holds"`
		// NeedsCapability is the capability the scenario's interaction
		// needs (judge.Case's).
		NeedsCapability string `json:"needsCapability"`
	} `json:"case"`
	// Client is the client run (active), with the times the matrix
	// measured in milliseconds.
	Client *struct {
		judge.ClientRun
		DurationMs float64 `json:"durationMs"`
		StartupMs  float64 `json:"startupMs"`
		ActiveMs   float64 `json:"activeMs"`
	} `json:"client"`
	// Safety is the tools' safety.
	Safety map[string]retry.Safety `json:"safety"`
}

// parseTxtar reads the txtar format: a comment, then files, each after a
// line "-- NAME --".
func parseTxtar(data []byte) golden {
	var g golden
	var cur *goldenFile
	var comment []byte
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, rest = data[:i+1], data[i+1:]
		}
		data = rest
		t := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(t, []byte("-- ")) && bytes.HasSuffix(t, []byte(" --")) && len(t) > 6 {
			g.files = append(g.files, goldenFile{name: string(t[3 : len(t)-3])})
			cur = &g.files[len(g.files)-1]
			continue
		}
		if cur == nil {
			comment = append(comment, line...)
		} else {
			cur.data = append(cur.data, line...)
		}
	}
	g.comment = string(comment)
	return g
}

func formatTxtar(g golden) []byte {
	var b bytes.Buffer
	b.WriteString(g.comment)
	for _, f := range g.files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.Write(f.data)
		if len(f.data) > 0 && f.data[len(f.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func (g golden) file(name string) ([]byte, bool) {
	for _, f := range g.files {
		if f.name == name {
			return f.data, true
		}
	}
	return nil, false
}

// traces returns the trace names, in file order.
func (g golden) traces() []string {
	var out []string
	for _, f := range g.files {
		if n, ok := strings.CutSuffix(f.name, ".jsonl"); ok {
			out = append(out, n)
		}
	}
	return out
}

// judgeTrace builds trace name of g from its records with judge.NewTrace
// and judges it.
func judgeTrace(t *testing.T, g golden, name string) []judge.Check {
	t.Helper()
	data, _ := g.file(name + ".jsonl")
	var recs []*record.Record
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, err := record.Decode(line)
		if err != nil {
			t.Fatalf("%s.jsonl line %d: %v", name, i+1, err)
		}
		recs = append(recs, r)
	}
	var in traceInput
	if b, ok := g.file(name + ".json"); ok {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			t.Fatalf("%s.json: %v", name, err)
		}
	}
	var c *judge.Case
	if in.Case != nil {
		c = &judge.Case{Name: in.Case.Name, Expected: in.Case.Expected, Timeout: time.Duration(in.Case.TimeoutMs) * time.Millisecond, Holds: in.Case.Holds,
			NeedsCapability: in.Case.NeedsCapability}
	}
	tr := judge.NewTrace(name, recs, c)
	tr.Safety = map[string]retry.Safety{}
	switch in.Mode {
	case "active":
		if in.Client != nil {
			cr := in.Client.ClientRun
			ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
			cr.Duration, cr.Startup, cr.Active = ms(in.Client.DurationMs), ms(in.Client.StartupMs), ms(in.Client.ActiveMs)
			tr.Client = &cr
		}
	case "", "passive":
		tr.Passive = true
		for _, r := range recs {
			judge.ReadSafety(r, tr.Safety)
		}
	case "probe":
		// An mcpdiag probe run: the probe rules judge the server.
		tr.Probe = true
	default:
		t.Fatalf("%s.json: mode %q: want active, passive or probe", name, in.Mode)
	}
	for k, v := range in.Safety {
		tr.Safety[k] = v
	}
	return judge.Judge(tr)
}

func formatChecks(cs []judge.Check) []byte {
	var b bytes.Buffer
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %s %s\n", c.Rule, c.Verdict, c.Evidence)
	}
	return b.Bytes()
}

func goldenFiles(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files in testdata (%v)", err)
	}
	return paths
}

// TestGolden judges every trace of every golden file and compares the
// checks with its .checks section (-update rewrites them).
func TestGolden(t *testing.T) {
	for _, p := range goldenFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			g := parseTxtar(data)
			if len(g.traces()) == 0 {
				t.Fatalf("%s: no trace (a T.jsonl section)", p)
			}
			changed := false
			for _, name := range g.traces() {
				got := formatChecks(judgeTrace(t, g, name))
				want, ok := g.file(name + ".checks")
				if bytes.Equal(got, want) {
					continue
				}
				if !*update {
					t.Errorf("%s: trace %s: checks differ (go test ./judge -run TestGolden -update rewrites them)\n--- got\n%s--- want\n%s", p, name, got, want)
					continue
				}
				changed = true
				if !ok {
					g.files = append(g.files, goldenFile{name: name + ".checks"})
				}
				for i := range g.files {
					if g.files[i].name == name+".checks" {
						g.files[i].data = got
					}
				}
			}
			if changed {
				if err := os.WriteFile(p, formatTxtar(g), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestGoldenEveryRule: every rule has its golden file, testdata/ID.txtar,
// with a trace it passes and a trace it fails (a rule that says a run did
// not test its case, Rule.Untested: a trace it passes and one not tested);
// every golden file is named after a rule.
func TestGoldenEveryRule(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range judge.Rules() {
		ids[r.ID] = true
		p := filepath.Join("testdata", r.ID+".txtar")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("rule %s has no golden file: %v", r.ID, err)
			continue
		}
		g := parseTxtar(data)
		var seen []judge.Verdict
		for _, name := range g.traces() {
			for _, c := range judgeTrace(t, g, name) {
				if c.Rule == r.ID && !slices.Contains(seen, c.Verdict) {
					seen = append(seen, c.Verdict)
				}
			}
		}
		want := []judge.Verdict{judge.Pass, judge.Fail}
		if r.Untested != nil {
			want = []judge.Verdict{judge.Pass, judge.NotTested}
		}
		for _, v := range want {
			if !slices.Contains(seen, v) {
				t.Errorf("%s: no trace where %s is %s (verdicts seen: %v)", p, r.ID, v, seen)
			}
		}
	}
	for _, p := range goldenFiles(t) {
		if id := strings.TrimSuffix(filepath.Base(p), ".txtar"); !ids[id] {
			t.Errorf("%s is named after no rule", p)
		}
	}
}

// TestTxtarRoundTrip: formatting a parsed golden file gives its bytes back
// (so -update rewrites only the checks).
func TestTxtarRoundTrip(t *testing.T) {
	for _, p := range goldenFiles(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatTxtar(parseTxtar(data)); !bytes.Equal(got, data) {
			t.Errorf("%s does not round-trip through the txtar reader", p)
		}
	}
}
