package proxy_test

import (
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/wire"
)

// The faults read the request the proxy parsed, so they and the record
// agree on what it asks: JSON-RPC member names are case-sensitive, and a
// params.Name beside params.name does not make the fault layer see another
// tool than the record names (encoding/json's case-insensitive struct
// decoding did: the scenario matching echo did not fire on a call of echo).
func TestFaultsAndRecordReadOneParse(t *testing.T) {
	t.Parallel()
	up := serve(t, bothEras(mcpServer(), true))
	sel, err := faults.Select("errors.http_status_sequence", []byte(`{"statusCodes":[503],"match":{"tool":"echo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	purl, _, sink, stop := startProxy(t, up, proxy.Options{Faults: &proxy.FaultOptions{Selection: sel, Seed: 7}})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"fail","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	status, _, _, err := post(t, http.DefaultClient, purl, body, modernHeaders("echo"))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	recs := sink.exchanges(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	rec := recs[0]
	if status != 503 || rec.Tool != "echo" || rec.Fault == nil || len(rec.Fault.Fired) != 1 {
		t.Errorf("status %d, record tool %q, fault %+v: want 503, the scenario matching echo fired on the call the record names echo", status, rec.Tool, rec.Fault)
	}
}

// One parse per exchange: a proxied tools/call, recorded and run through
// the fault layer, is parsed once (wire.ParseMessage, counted by
// wire.MessageParses); the faults and the record read that parse. Not
// parallel: the counter is the process's.
func TestProxyParsesTheRequestOnce(t *testing.T) {
	up := serve(t, bothEras(mcpServer(), true))
	sel, err := faults.Select("errors.http_status_sequence", []byte(`{"statusCodes":[503],"match":{"tool":"fail"}}`))
	if err != nil {
		t.Fatal(err)
	}
	purl, _, sink, stop := startProxy(t, up, proxy.Options{Faults: &proxy.FaultOptions{Selection: sel, Seed: 7}})
	const n = 6
	before := wire.MessageParses()
	for i := 1; i <= n; i++ {
		tool := "echo"
		if i%2 == 0 {
			tool = "fail"
		}
		if _, _, _, err := post(t, http.DefaultClient, purl, callBody(i, tool, `{"text":"x"}`), modernHeaders(tool)); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	parses := wire.MessageParses() - before
	recs := sink.exchanges(t)
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	fired := 0
	for _, r := range recs {
		if r.Fault != nil && len(r.Fault.Fired) > 0 {
			fired++
		}
		if r.ArgsHash == "" || r.Tool == "" {
			t.Errorf("record %s: tool %q args hash %q", r.JSONRPC.ID, r.Tool, r.ArgsHash)
		}
	}
	if parses != n || fired != n/2 {
		t.Errorf("%d exchanges: %d parses of a request body, %d fired; want %d parses (one each) and %d fired", n, parses, fired, n, n/2)
	}
}
