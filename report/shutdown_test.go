package report

import (
	"slices"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// shutdownFile holds the records of two real captures stopped with a
// tools/call in flight, each exchange cut by the recorder's own shutdown
// (flag SD): `mcpdiag proxy --record` in front of `mcpdiag serve --scenario
// timeout.uncooperative_hang`, sent SIGTERM while `mcpdiag call … echo`
// hung (its tools/list and the cut tools/call, NETWORK_ERROR), then the log
// of another `mcpdiag serve --scenario timeout.uncooperative_hang --log`
// sent SIGTERM while a call hung in it (the same two). Made with
//
//	mcpdiag serve --addr 127.0.0.1:0 --scenario timeout.uncooperative_hang &
//	mcpdiag proxy --upstream URL --listen 127.0.0.1:0 --record proxy.jsonl --shutdown-timeout 200ms &
//	mcpdiag call PROXY_URL echo --args '{"text":"hi"}' &   # then kill -TERM the proxy
//	mcpdiag serve --addr 127.0.0.1:0 --scenario timeout.uncooperative_hang --log serve.log &
//	mcpdiag call URL echo --args '{"text":"hi"}' --retries 0 &   # then kill -TERM serve
//	cat proxy.jsonl serve.log > shutdown-cut.jsonl
const shutdownFile = "testdata/shutdown-cut.jsonl"

// TestShutdownCutCountedApart: over the records of real captures that the
// proxy's and serve's own shutdown cut, each exchange flagged SD is counted
// once, apart, as cut by shutdown (in the section, its outcome and the
// summary), never as a failure, an example, a worst offender or a latency
// sample, and no gate fails on it; the failure rate is of the other
// records. Metamorphic: the same records without the flag count exactly
// those records as failures again (what report said before: "2 failed").
func TestShutdownCutCountedApart(t *testing.T) {
	recs := recordtest.ReadFile(t, shutdownFile)
	var sd, failing int64
	ids := map[string]bool{}
	for _, r := range recs {
		if r.Kind != record.KindExchange {
			t.Fatalf("%s: a %s line; the file holds exchanges only", r.ID, r.Kind)
		}
		if r.Flags.Has(record.FlagSD) {
			sd++
			ids[r.ID] = true
			if !Failure(r.Kind, r.Outcome) {
				t.Fatalf("%s: a cut exchange whose outcome %s is no failure: not the file this test is about", r.ID, r.Outcome)
			}
		} else if Failure(r.Kind, r.Outcome) {
			failing++
		}
	}
	if sd != 2 {
		t.Fatalf("%d exchanges flagged SD, want 2", sd)
	}
	s := summarise(recs)
	ex := s.Exchanges
	if ex.Total != int64(len(recs)) || ex.CutByShutdown != sd || s.CutByShutdown != sd || ex.Failures != failing || ex.Interrupted != 0 {
		t.Errorf("exchanges: total %d, cut by shutdown %d (summary %d), failures %d, interrupted %d; the lines: %d, %d flagged SD, %d failing unflagged",
			ex.Total, ex.CutByShutdown, s.CutByShutdown, ex.Failures, ex.Interrupted, len(recs), sd, failing)
	}
	if want := rate(failing, ex.Total-sd); ex.FailureRate != want {
		t.Errorf("failure rate %v, want %v (of the lines not cut)", ex.FailureRate, want)
	}
	if ex.Latency.Samples != ex.Total-sd {
		t.Errorf("latency samples %d, want %d (a cut exchange's time is the stop's)", ex.Latency.Samples, ex.Total-sd)
	}
	var byOutcome int64
	for _, c := range ex.ByOutcome {
		byOutcome += c.CutByShutdown
		for _, id := range c.Examples {
			if ids[id] {
				t.Errorf("%s's examples name %s, a cut exchange", c.Outcome, id)
			}
		}
	}
	if byOutcome != sd {
		t.Errorf("the outcomes' cutByShutdown add up to %d, want %d", byOutcome, sd)
	}
	for _, o := range ex.WorstOffenders {
		t.Errorf("worst offender %s %s (%v): the only failures are cut exchanges", o.Name(), o.Outcome, o.Examples)
	}
	for _, sl := range ex.Slowest {
		if ids[sl.ID] {
			t.Errorf("slowest names %s, a cut exchange", sl.ID)
		}
	}
	g := Gates{On: string(record.KindExchange), FailOn: []classify.Outcome{classify.NetworkError}}
	if rep, err := g.Check(s); err != nil || !rep.Passed {
		t.Errorf("--fail-on NETWORK_ERROR on the exchanges: %+v, %v; want passed (the only NETWORK_ERRORs are cut by the shutdown)", rep, err)
	}

	// Without the flag, the same records are failures, and nothing else
	// changes.
	plain := make([]*record.Record, len(recs))
	for i, r := range recs {
		c := *r
		c.Flags = slices.DeleteFunc(slices.Clone(r.Flags), func(f record.Flag) bool { return f == record.FlagSD })
		plain[i] = &c
	}
	p := summarise(plain).Exchanges
	if p.CutByShutdown != 0 || p.Failures != ex.Failures+sd || p.Total != ex.Total {
		t.Errorf("without SD: cut %d, failures %d, total %d; want 0, %d, %d", p.CutByShutdown, p.Failures, p.Total, ex.Failures+sd, ex.Total)
	}
}

// TestShutdownCutOrphanCall: a call rebuilt from exchanges (its call line
// missing) of which one was cut by the shutdown is counted as cut by
// shutdown, not as a failed call, as an interrupted one is counted
// interrupted.
func TestShutdownCutOrphanCall(t *testing.T) {
	recs := recordtest.ReadFile(t, shutdownFile)
	var withCall []*record.Record
	for i, r := range recs {
		c := *r
		c.CallID, c.Seq = "01M9CALL0000000000000000"+string(rune('A'+i/2)), i%2+1
		withCall = append(withCall, &c)
	}
	s := summarise(withCall)
	if s.Calls.Total != 2 || s.Calls.Orphans != 2 || s.Calls.CutByShutdown != 2 || s.Calls.Failures != 0 {
		t.Errorf("calls: total %d, orphans %d, cut by shutdown %d, failures %d; want 2 orphan calls, both cut by shutdown, none failed",
			s.Calls.Total, s.Calls.Orphans, s.Calls.CutByShutdown, s.Calls.Failures)
	}
}
