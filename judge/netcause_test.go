package judge_test

import (
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestNetworkFailureWordsByCause: two records of one event, a body cut by a
// reset, whose error texts differ as Go's do between identical runs (EOF,
// "connection reset by peer" with the ports): the evidence a rule cites
// is the same, the cause in words; so for a refused connection (its
// port). Other causes keep the record's text, mcpdiag's own words (a
// timeout's names its limit: probe's TestProbeTimeoutEvidence).
func TestNetworkFailureWordsByCause(t *testing.T) {
	t.Parallel()
	what := func(errText string, cause classify.NetCause) string {
		t.Helper()
		r := &record.Record{Kind: record.KindExchange, HTTPMethod: "POST", Method: "tools/call", Tool: "echo",
			Outcome: classify.NetworkError, Layer: classify.LayerTransport,
			Network: &record.Network{Error: errText, Phase: "before-response", RequestSent: true, Cause: cause}}
		tr := judge.NewTrace("baseline", []*record.Record{r}, &judge.Case{Name: "baseline", Expected: "TOOL_SUCCESS"})
		if len(tr.Exchanges) != 1 || !tr.Exchanges[0].Failed {
			t.Fatalf("%d exchanges, want one failed", len(tr.Exchanges))
		}
		return tr.Exchanges[0].What
	}
	eof := what("unexpected EOF", classify.NetClosed)
	reset := what("read tcp 127.0.0.1:40112->127.0.0.1:38917: read: connection reset by peer", classify.NetClosed)
	if want := "NETWORK_ERROR: " + classify.NetClosed.Words(); eof != want || reset != want {
		t.Errorf("evidence %q and %q, want both %q", eof, reset, want)
	}
	refusedA := what("dial tcp 127.0.0.1:40113: connect: connection refused", classify.NetRefused)
	refusedB := what("dial tcp 127.0.0.1:39001: connect: connection refused", classify.NetRefused)
	if want := "NETWORK_ERROR: " + classify.NetRefused.Words(); refusedA != want || refusedB != want {
		t.Errorf("evidence %q and %q, want both %q", refusedA, refusedB, want)
	}
	// mcpdiag's own words say more than the cause: kept (probe's timeout
	// evidence names its limit).
	if got, want := what("no answer within the 200ms limit", classify.NetTimeout), "NETWORK_ERROR: no answer within the 200ms limit"; got != want {
		t.Errorf("evidence %q, want %q", got, want)
	}
	if got, want := what("the proxy shut down before the response ended", classify.NetOther), "NETWORK_ERROR: the proxy shut down before the response ended"; got != want {
		t.Errorf("evidence %q, want %q", got, want)
	}
	if got, want := what("written by an older mcpdiag", ""), "NETWORK_ERROR: written by an older mcpdiag"; got != want {
		t.Errorf("evidence %q, want %q", got, want)
	}
}
