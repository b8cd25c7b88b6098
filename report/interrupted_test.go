package report

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// interruptedFile is the --record file of a real `mcpdiag matrix` (the
// built-in client; baseline, errors.jsonrpc_error and
// timeout.uncooperative_hang in 2026-07-28, --parallel 4) sent SIGINT once
// the first two runs were judged: the hang's run was in flight, and its
// records (the client's call line, its exchanges, the server's lines: a
// tools/call cut by the stop, NETWORK_ERROR) carry the warning
// matrix-run-interrupted. Made with
//
//	mcpdiag matrix --scenarios 'baseline,errors.jsonrpc_error,timeout.uncooperative_hang' \
//	  --protocol 2026-07-28 --parallel 4 --record matrix-interrupted.jsonl &
//	# once two call lines are in the file:
//	kill -INT $!
const interruptedFile = "testdata/matrix-interrupted.jsonl"

// rawCounts counts a record file's lines from their JSON, without the
// record package's reader: by kind, those whose warnings hold the code
// matrix-run-interrupted, and those without it whose outcome is a failure.
type rawCounts struct {
	total, interrupted, failures map[record.Kind]int64
	// interruptedFailing counts the interrupted lines whose outcome is a
	// failure: what the report counted as failures before.
	interruptedFailing map[record.Kind]int64
	ids                map[string]bool // the interrupted lines' ids
}

func countRaw(t *testing.T, path string) rawCounts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := rawCounts{total: map[record.Kind]int64{}, interrupted: map[record.Kind]int64{}, failures: map[record.Kind]int64{},
		interruptedFailing: map[record.Kind]int64{}, ids: map[string]bool{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var l struct {
			Kind     record.Kind      `json:"kind"`
			ID       string           `json:"id"`
			Outcome  classify.Outcome `json:"outcome"`
			Warnings []struct {
				Code string `json:"code"`
			} `json:"warnings"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		c.total[l.Kind]++
		cut := slices.ContainsFunc(l.Warnings, func(w struct {
			Code string `json:"code"`
		}) bool {
			return w.Code == "matrix-run-interrupted"
		})
		switch {
		case cut:
			c.interrupted[l.Kind]++
			c.ids[l.ID] = true
			if Failure(l.Kind, l.Outcome) {
				c.interruptedFailing[l.Kind]++
			}
		case Failure(l.Kind, l.Outcome):
			c.failures[l.Kind]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

func summarise(recs []*record.Record) *Summary {
	acc := New(Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	return acc.Summary()
}

// TestInterruptedRunCountedApart: over the records of a real interrupted
// matrix, each section's counts are the lines' own: every line counted
// once, the ones marked matrix-run-interrupted as interrupted (never as
// failures, examples or worst offenders), the failures those of the other
// lines only, and the failure rate over the other lines. Before, the cut
// run's NETWORK_ERROR call and exchanges were failures ("calls: 3, 2 failed
// (66.7%)" where one call failed and one was cut) and nothing said the run
// was interrupted.
func TestInterruptedRunCountedApart(t *testing.T) {
	raw := countRaw(t, interruptedFile)
	s := summarise(recordtest.ReadFile(t, interruptedFile))
	var marked, failingMarked int64
	for _, k := range []record.Kind{record.KindCall, record.KindExchange, record.KindServer} {
		sec := s.Section(string(k))
		marked += raw.interrupted[k]
		failingMarked += raw.interruptedFailing[k]
		if sec.Total != raw.total[k] || sec.Interrupted != raw.interrupted[k] || sec.Failures != raw.failures[k] {
			t.Errorf("%s: total %d, interrupted %d, failures %d; the lines: %d, %d marked, %d failing unmarked",
				k, sec.Total, sec.Interrupted, sec.Failures, raw.total[k], raw.interrupted[k], raw.failures[k])
		}
		if want := rate(raw.failures[k], raw.total[k]-raw.interrupted[k]); sec.FailureRate != want {
			t.Errorf("%s: failure rate %v, want %v (of the lines not interrupted)", k, sec.FailureRate, want)
		}
		var byOutcome int64
		for _, c := range sec.ByOutcome {
			byOutcome += c.Interrupted
			for _, id := range c.Examples {
				if raw.ids[id] {
					t.Errorf("%s: %s's examples name %s, a record of the interrupted run", k, c.Outcome, id)
				}
			}
		}
		if byOutcome != sec.Interrupted {
			t.Errorf("%s: the outcomes' interrupted add up to %d, the section's is %d", k, byOutcome, sec.Interrupted)
		}
		for _, o := range sec.WorstOffenders {
			for _, id := range o.Examples {
				if raw.ids[id] {
					t.Errorf("%s: worst offender %s %s names %s, a record of the interrupted run", k, o.Name(), o.Outcome, id)
				}
			}
		}
	}
	if s.Interrupted != marked {
		t.Errorf("summary: %d interrupted, the file marks %d", s.Interrupted, marked)
	}
	// The file must hold what the fix is about, or this test proves
	// nothing: marked records whose outcome is a failure.
	if failingMarked == 0 || raw.interrupted[record.KindCall] == 0 {
		t.Fatalf("the file has %d marked failing records, %d marked calls: not the interrupted run it should be", failingMarked, raw.interrupted[record.KindCall])
	}
}

// TestInterruptedRecordsMoveNoFailure is the metamorphic side: leaving the
// interrupted run's records out changes no failure count, no failure rate,
// no worst offender, no latency (a cut exchange's time is the stop's), no
// slowest record and no gate's verdict; keeping them but without the
// warning makes exactly their failing ones failures again (the count the
// report gave before).
func TestInterruptedRecordsMoveNoFailure(t *testing.T) {
	recs := recordtest.ReadFile(t, interruptedFile)
	all := summarise(recs)
	var kept, stripped []*record.Record
	failing := map[record.Kind]int64{}
	for _, r := range recs {
		if !r.RunInterrupted() {
			kept = append(kept, r)
			stripped = append(stripped, r)
			continue
		}
		c := *r
		c.Warnings = slices.DeleteFunc(slices.Clone(r.Warnings), func(w record.Warning) bool { return w.Code == record.WarnRunInterrupted })
		stripped = append(stripped, &c)
		if Failure(r.Kind, r.Outcome) {
			failing[r.Kind]++
		}
	}
	without, unmarked := summarise(kept), summarise(stripped)
	gates := Gates{FailOn: []classify.Outcome{classify.NetworkError, classify.JSONRPCError}, Baseline: without}
	for _, k := range []string{"call", "exchange", "server"} {
		a, w, u := all.Section(k), without.Section(k), unmarked.Section(k)
		if a.Failures != w.Failures || a.FailureRate != w.FailureRate {
			t.Errorf("%s: %d failures (%v) with the interrupted run's records, %d (%v) without", k, a.Failures, a.FailureRate, w.Failures, w.FailureRate)
		}
		for _, part := range []struct {
			name string
			a, w any
		}{{"worst offenders", a.WorstOffenders, w.WorstOffenders}, {"latency", a.Latency, w.Latency}, {"slowest", a.Slowest, w.Slowest}} {
			if ja, jw := mustJSON(t, part.a), mustJSON(t, part.w); ja != jw {
				t.Errorf("%s: %s\n%s\nwith the interrupted run's records, without:\n%s", k, part.name, ja, jw)
			}
		}
		for i, tl := range a.ByTool {
			if tw := w.ByTool[slices.IndexFunc(w.ByTool, func(x ToolStats) bool { return x.Method == tl.Method && x.Tool == tl.Tool })]; mustJSON(t, tl.Latency) != mustJSON(t, tw.Latency) {
				t.Errorf("%s: tool %d %s's latency %+v with the interrupted run's records, %+v without", k, i, tl.Name(), tl.Latency, tw.Latency)
			}
		}
		if u.Interrupted != 0 || u.Total != a.Total || u.Failures != a.Failures+failing[record.Kind(k)] {
			t.Errorf("%s: unmarked, %d interrupted, total %d, %d failures; want 0, %d, %d", k, u.Interrupted, u.Total, u.Failures, a.Total, a.Failures+failing[record.Kind(k)])
		}
		// The baseline (the run without the interrupted records) has no
		// server lines to compare with.
		g := gates
		g.On = k
		if w.Total == 0 {
			g.Baseline = nil
		}
		ga, err := g.Check(all)
		if err != nil {
			t.Fatal(err)
		}
		gw, err := g.Check(without)
		if err != nil {
			t.Fatal(err)
		}
		if g1, g2 := mustJSON(t, ga), mustJSON(t, gw); g1 != g2 {
			t.Errorf("%s: gates\n%s\nwith the interrupted run's records, without:\n%s", k, g1, g2)
		}
	}
}

// TestInterruptedOrphanCall: a call of the interrupted run whose call line
// is missing (a file cut before it) is rebuilt from its exchanges as an
// orphan, and is interrupted, not failed, when its exchanges are marked.
func TestInterruptedOrphanCall(t *testing.T) {
	recs := recordtest.ReadFile(t, interruptedFile)
	var noCallLine []*record.Record
	dropped := 0
	for _, r := range recs {
		if r.Kind == record.KindCall && r.RunInterrupted() {
			dropped++
			continue
		}
		noCallLine = append(noCallLine, r)
	}
	if dropped != 1 {
		t.Fatalf("%d interrupted call lines in the file, want 1", dropped)
	}
	full, orphaned := summarise(recs).Calls, summarise(noCallLine).Calls
	if orphaned.Orphans != 1 || orphaned.Total != full.Total || orphaned.Interrupted != full.Interrupted || orphaned.Failures != full.Failures {
		t.Errorf("without the cut call's line: %d orphans, total %d, %d interrupted, %d failures; want 1, %d, %d, %d",
			orphaned.Orphans, orphaned.Total, orphaned.Interrupted, orphaned.Failures, full.Total, full.Interrupted, full.Failures)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInterruptedProbeCountedInTheSummary: a record of a cut run that is
// also a probe is counted by its section as a probe (a probe's answer is
// never a failure) and by the summary as a record of the cut run, as the
// page's count line counts it (app.js model.interrupted): the summary's
// "incomplete: N records" names every record that carries the warning.
// Before, the summary summed the sections' interrupted counts, one short of
// the page's for each such record (review17).
func TestInterruptedProbeCountedInTheSummary(t *testing.T) {
	recs := recordtest.ReadFile(t, interruptedFile)
	before := summarise(recs)
	var marked int64
	probed := false
	for _, r := range recs {
		if !r.Interrupted() {
			continue
		}
		marked++
		if !probed && r.Kind == record.KindExchange {
			r.Probe = &record.Probe{Kind: "unknown-tool", Seed: "1", Index: 0}
			probed = true
		}
	}
	if !probed {
		t.Fatalf("%s has no interrupted exchange to make a probe of", interruptedFile)
	}
	after := summarise(recs)
	if before.Interrupted != marked || after.Interrupted != marked {
		t.Errorf("summary: %d interrupted before, %d with a probe among them; the file marks %d", before.Interrupted, after.Interrupted, marked)
	}
	b, a := before.Section(string(record.KindExchange)), after.Section(string(record.KindExchange))
	if a.Interrupted != b.Interrupted-1 || a.Probes != b.Probes+1 || a.Failures != b.Failures {
		t.Errorf("exchanges: interrupted %d → %d, probes %d → %d, failures %d → %d; want one interrupted counted as a probe, no failure added",
			b.Interrupted, a.Interrupted, b.Probes, a.Probes, b.Failures, a.Failures)
	}
}
