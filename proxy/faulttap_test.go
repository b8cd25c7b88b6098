package proxy_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// The fault layer's decision reaches the exchange's record through the
// request's context: the typed fault member (selection, seed, what fired,
// every decision) and the FI flag, on the request it fired on only; the
// upstream sees no header of the proxy's own.
func TestFaultDecisionInRecord(t *testing.T) {
	t.Parallel()
	var seen []http.Header
	inner := bothEras(mcpServer(), true)
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Clone())
		inner.ServeHTTP(w, r)
	}))
	sel, err := faults.Select("errors.http_status_sequence", []byte(`{"statusCodes":[503],"match":{"tool":"echo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	purl, _, sink, stop := startProxy(t, up, proxy.Options{Faults: &proxy.FaultOptions{Selection: sel, Seed: 7}})
	if _, _, _, err := post(t, http.DefaultClient, purl, callBody(1, "echo", `{"text":"x"}`), modernHeaders("echo")); err != nil {
		t.Fatal(err)
	}
	// A tools/call of another tool does not match: decided, not fired.
	if _, _, _, err := post(t, http.DefaultClient, purl, callBody(2, "fail", `{"text":"x"}`), modernHeaders("fail")); err != nil {
		t.Fatal(err)
	}
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	first, second := recs[0], recs[1]
	if first.JSONRPC.ID.String() != "1" {
		first, second = second, first
	}
	f := first.Fault
	if first.Status != 503 || first.Outcome != classify.HTTPError || f == nil || f.Seed != 7 || f.Selection != "errors.http_status_sequence" ||
		!slices.Equal(f.Fired, []string{"errors.http_status_sequence"}) || len(f.Decisions) != 1 || !f.Decisions[0].Fired ||
		!first.Flags.Has(record.FlagFI) || first.Scenario != "errors.http_status_sequence" {
		t.Errorf("fired: status %d %s scenario %q flags %v fault %+v", first.Status, first.Outcome, first.Scenario, first.Flags, f)
	}
	f = second.Fault
	if second.Status != 200 || second.Tool != "fail" || f == nil || len(f.Fired) != 0 || len(f.Decisions) != 1 || f.Decisions[0].Fired || second.Flags.Has(record.FlagFI) || second.Scenario != "" {
		t.Errorf("not fired: status %d scenario %q flags %v fault %+v", second.Status, second.Scenario, second.Flags, f)
	}
	for _, h := range seen {
		for k := range h {
			if len(k) > 8 && http.CanonicalHeaderKey(k)[:8] == "Mcpdiag-" {
				t.Errorf("the upstream received the proxy's header %s", k)
			}
		}
	}
}

// TestFaultedRequestOverTheParseLimitHasItsMethod: with faults on, the
// proxy's recorder parses as much of a request body as the fault endpoint
// reads (faults.DefaultMaxBody), so the record of a 5 MiB tools/call the
// scenario fired on names its method, tool and id. Before, it had none
// (the recorder's 4 MiB limit) beside the decision that fired on it.
func TestFaultedRequestOverTheParseLimitHasItsMethod(t *testing.T) {
	t.Parallel()
	up := serve(t, bothEras(mcpServer(), true))
	sel, err := faults.Select("errors.http_status_sequence", []byte(`{"statusCodes":[503],"match":{"tool":"echo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	purl, _, sink, stop := startProxy(t, up, proxy.Options{Faults: &proxy.FaultOptions{Selection: sel, Seed: 7}})
	big := `{"text":"` + strings.Repeat("x", 5<<20) + `"}`
	if _, _, _, err := post(t, http.DefaultClient, purl, callBody(1, "echo", big), modernHeaders("echo")); err != nil {
		t.Fatal(err)
	}
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Status != 503 || r.Scenario != "errors.http_status_sequence" || r.Method != "tools/call" || r.Tool != "echo" || r.JSONRPC.ID.String() != "1" {
		t.Errorf("status %d, scenario %q, method %q, tool %q, id %s; want 503, errors.http_status_sequence, tools/call, echo, 1 (note %q)",
			r.Status, r.Scenario, r.Method, r.Tool, r.JSONRPC.ID, r.Note)
	}
}
