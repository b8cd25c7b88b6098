package judge_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// FuzzNewTrace: any record lines build a trace without a panic, whose
// exchanges are POSTs numbered from 1 in order (or in the fault endpoint's
// count order), a failure says what failed, a pending request failed, and
// judging it, as records or as a matrix run, gives one check per rule of
// that mode with a known verdict. Seeds: the goldens' traces.
func FuzzNewTrace(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.txtar")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		g := parseTxtar(data)
		for _, name := range g.traces() {
			b, _ := g.file(name + ".jsonl")
			f.Add(b, false)
			f.Add(b, true)
		}
	}
	f.Add([]byte("not json\n{}\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, active bool) {
		var recs []*record.Record
		for _, line := range bytes.Split(data, []byte("\n")) {
			if r, err := record.Decode(line); err == nil {
				recs = append(recs, r)
			}
		}
		var c *judge.Case
		if active {
			c = &judge.Case{Name: "fuzz", Expected: classify.StreamIncomplete, Timeout: time.Second}
		}
		tr := judge.NewTrace("fuzz", recs, c)
		counted := true
		for _, x := range tr.Exchanges {
			counted = counted && x.N > 0
		}
		for i, x := range tr.Exchanges {
			if x.HTTPMethod != "POST" {
				t.Errorf("exchange %d is a %s, not a POST", i, x.HTTPMethod)
			}
			if !counted && x.N != i+1 {
				t.Errorf("exchange %d numbered %d, want %d", i, x.N, i+1)
			}
			if i > 0 && x.N < tr.Exchanges[i-1].N {
				t.Errorf("exchange %d (N %d) after N %d", i, x.N, tr.Exchanges[i-1].N)
			}
			if x.Failed && x.What == "" {
				t.Errorf("%s failed without saying how", x.Label())
			}
			if x.Pending && !x.Failed {
				t.Errorf("%s is pending but did not fail", x.Label())
			}
		}
		tr.Passive = !active
		if active {
			tr.Client = &judge.ClientRun{Outcome: classify.ToolSuccess, ExitCode: 1, Stderr: "a\nb"}
		}
		want := 0
		for _, r := range judge.Rules() {
			if active && r.Active || !active && r.Passive {
				want++
			}
		}
		cs := judge.Judge(tr)
		if len(cs) != want {
			t.Fatalf("%d checks, want %d", len(cs), want)
		}
		for _, ch := range cs {
			switch ch.Verdict {
			case judge.Pass, judge.Fail, judge.NotApplicable:
			default:
				t.Errorf("%s: verdict %q", ch.Rule, ch.Verdict)
			}
			if ch.Verdict == judge.Fail && strings.TrimSpace(ch.Evidence) == "" {
				t.Errorf("%s failed without evidence", ch.Rule)
			}
		}
	})
}
