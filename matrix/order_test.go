package matrix_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// The order of a record file's lines is a fact only in part: the lines of
// one connection (or one call) come in the order its requests were sent,
// and an exchange that ended before another started is written before it.
// Exchanges that overlapped in time are written in the order they finished,
// which is timing: the recorder's and the scheduler's, not the client's.
// legalOrders says how such a file may come out of identical runs, and
// TestFromRecordsOrderOfOverlappingLines requires one judgement of them all.

// lineFacts are what a record line says about its place in time.
type lineFacts struct {
	start, end time.Time
	lane       string // lines of one lane keep their order
}

func factsOf(t *testing.T, i int, line []byte) lineFacts {
	t.Helper()
	var r struct {
		Time    time.Time       `json:"time"`
		Client  string          `json:"client"`
		Conn    string          `json:"conn"`
		CallID  string          `json:"callId"`
		Session string          `json:"session"`
		Fault   json.RawMessage `json:"fault"`
		Timings struct {
			TotalMs float64 `json:"totalMs"`
		} `json:"timings"`
	}
	if err := json.Unmarshal(line, &r); err != nil || r.Time.IsZero() {
		t.Fatalf("line %d has no time (%v): %s", i+1, err, line)
	}
	lane := r.Client + " " + string(r.Fault[:min(len(r.Fault), 1)])
	switch {
	case r.Conn != "":
		lane += " conn " + r.Conn
	case r.CallID != "":
		lane += " call " + r.CallID
	case r.Session != "":
		lane += " session " + r.Session
	}
	return lineFacts{start: r.Time, end: r.Time.Add(time.Duration(r.Timings.TotalMs * float64(time.Millisecond))), lane: lane}
}

// legalOrder returns a random order of lines (seeded) that keeps every
// fact of order: each lane's lines in their order, and a line before
// another whose exchange ended before the other's started. (The matrix
// writes each run's lines when the run ends: a file's order need not be
// the order in time.) It also returns how
// many lines are not where they were.
func legalOrder(t *testing.T, lines [][]byte, seed uint64) ([][]byte, int) {
	t.Helper()
	facts := make([]lineFacts, len(lines))
	lanes := map[string][]int{}
	var laneOrder []string
	for i, l := range lines {
		facts[i] = factsOf(t, i, l)
		if _, ok := lanes[facts[i].lane]; !ok {
			laneOrder = append(laneOrder, facts[i].lane)
		}
		lanes[facts[i].lane] = append(lanes[facts[i].lane], i)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	next := map[string]int{}
	placed := make([]bool, len(lines))
	var out [][]byte
	moved := 0
	for len(out) < len(lines) {
		var ready []int
		for _, lane := range laneOrder {
			k := next[lane]
			if k == len(lanes[lane]) {
				continue
			}
			i := lanes[lane][k]
			ok := true
			for j := range i {
				if !placed[j] && !facts[j].end.After(facts[i].start) {
					ok = false // j is before i, and ended before i started
					break
				}
			}
			if ok {
				ready = append(ready, i)
			}
		}
		if len(ready) == 0 {
			t.Fatalf("no line can come next after %d of %d", len(out), len(lines))
		}
		i := ready[rng.IntN(len(ready))]
		if i != len(out) {
			moved++
		}
		placed[i] = true
		next[facts[i].lane]++
		out = append(out, lines[i])
	}
	return out, moved
}

func judgeLines(t *testing.T, lines [][]byte) string {
	t.Helper()
	p, err := matrix.FromRecords(bytes.NewReader(bytes.Join(lines, nil)), "matrix.jsonl", matrix.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFromRecordsOrderOfOverlappingLines judges a matrix run's record file
// (the built-in client's records and the fault server's lines, each
// connection's) in its own order and in legal reorders of it: every
// judgement must be the same, byte for byte. A client's tools/list still
// being closed on one connection while its tools/call was refused (401) on
// another (errors.http_status_per_method) was one trace or two, with other
// checks, by which line the recorder wrote first.
func TestFromRecordsOrderOfOverlappingLines(t *testing.T) {
	t.Parallel()
	var rec lines
	run(t, matrix.Options{Cases: selectCases(t, "", "errors.http_status_per_method", "errors.connection_close", "sse.truncated",
		"errors.header_mismatch", "mrtr.load_shedding", "session.expired", "errors.http_status_sequence"), Records: &rec})
	all := rec.all()
	want := judgeLines(t, all)
	if !strings.Contains(want, `"verdict":"pass"`) {
		t.Fatalf("nothing judged:\n%s", want)
	}
	movedTotal := 0
	for seed := uint64(1); seed <= 20; seed++ {
		order, moved := legalOrder(t, all, seed)
		movedTotal += moved
		if got := judgeLines(t, order); got != want {
			t.Fatalf("seed %d (%d of %d lines moved): another judgement\n%s", seed, moved, len(all), firstDiff(got, want))
		}
	}
	if movedTotal == 0 {
		t.Errorf("no reorder moved a line: the test shows nothing")
	}
}

// firstDiff shows the first line of got that differs from want's.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d of %d (want %d):\ngot  %s\nwant %s", i+1, len(g), len(w), a, b)
		}
	}
	return ""
}

// TestFromRecordsAgreesWithLive: the matrix's own records, read back with
// FromRecords, judge each run's endpoint as the live matrix did: for every
// endpoint that is one trace, every rule both judge has the same verdict.
// (An endpoint whose requests came on several connections is several
// traces there, by design: docs/matrix.md.) Every case of the catalogue,
// both eras, the built-in client.
func TestFromRecordsAgreesWithLive(t *testing.T) {
	t.Parallel()
	var rec lines
	rep := run(t, matrix.Options{Cases: matrix.Cases(), Records: &rec})
	live := map[string]map[string]judge.Check{}
	for _, c := range rep.Cases {
		for _, r := range c.Runs {
			live[r.Endpoint] = map[string]judge.Check{}
			for _, ch := range r.Checks {
				live[r.Endpoint][ch.Rule] = ch
			}
		}
	}
	p, err := matrix.FromRecords(bytes.NewReader(bytes.Join(rec.all(), nil)), "matrix.jsonl", matrix.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	traces := map[string][]*matrix.PassiveTrace{}
	for _, tr := range p.Traces {
		if ep, ok := strings.CutPrefix(tr.Trace.Name, "endpoint "); ok {
			ep, _, _ = strings.Cut(ep, " ")
			traces[ep] = append(traces[ep], tr)
		}
	}
	compared := 0
	for ep, trs := range traces {
		checks, ok := live[ep]
		if !ok {
			t.Errorf("no live run of the endpoint %s", ep)
			continue
		}
		if len(trs) != 1 {
			continue
		}
		compared++
		for _, ch := range trs[0].Checks {
			if l, ok := checks[ch.Rule]; ok && l.Verdict != ch.Verdict {
				t.Errorf("%s: %s live %s (%s), read back %s (%s)", ep, ch.Rule, l.Verdict, l.Evidence, ch.Verdict, ch.Evidence)
			}
		}
	}
	t.Logf("%d of %d endpoints compared (the others are several traces)", compared, len(live))
	if compared < len(live)/2 {
		t.Errorf("%d of %d endpoints compared: too few are one trace", compared, len(live))
	}
}

// TestFromRecordsOfTwoMatrixRunsInOneFile: matrix --record appends, and
// every matrix run names its endpoints alike. Two runs' records in one
// file are judged as each run's alone: the second server's endpoint is its
// own trace ("[server 2]"), not the first's, where its first request read
// as a retry of the first run's refused or failed last one
// (spec.reissue-new-id, safety.4xx-unchanged failed: "POST 1 re-sent the
// request of POST 1 with the same id").
func TestFromRecordsOfTwoMatrixRunsInOneFile(t *testing.T) {
	t.Parallel()
	cases := selectCases(t, "", "errors.http_status_per_method", "errors.http_status_sequence", "auth.token_lifecycle", "auth.insufficient_scope")
	var one, two lines
	run(t, matrix.Options{Cases: cases, Records: &one})
	run(t, matrix.Options{Cases: cases, Records: &two})
	sorted := func(s string) []string {
		ls := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, " [server 2]", "")), "\n")
		slices.Sort(ls)
		return ls
	}
	both := judgeLines(t, append(slices.Clone(one.all()), two.all()...))
	if strings.Contains(both, `"verdict":"fail"`) {
		t.Errorf("the two runs' records fail together:\n%s", both)
	}
	if !strings.Contains(both, " [server 2]") {
		t.Errorf("no trace of the second server:\n%s", both)
	}
	want := append(sorted(judgeLines(t, one.all())), sorted(judgeLines(t, two.all()))...)
	slices.Sort(want)
	if got := sorted(both); !slices.Equal(got, want) {
		t.Errorf("%d traces together, %d apart:\n%s", len(got), len(want), firstDiff(strings.Join(got, "\n"), strings.Join(want, "\n")))
	}
}
