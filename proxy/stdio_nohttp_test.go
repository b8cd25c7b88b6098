package proxy_test

import (
	"slices"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestStdioNoHTTPStatusWarning: a 2026-07-28 JSON-RPC error over stdio
// carries no status-mismatch warning. The stdio proxy hands the classifier
// a line as an HTTP 200 JSON body, and -32601 on 2026-07-28 was warned
// "error -32601 came with HTTP 200; the spec requires 404": stdio has no
// HTTP status (server-everything's answer to server/discover through
// mcpdiag probe showed it first).
func TestStdioNoHTTPStatusWarning(t *testing.T) {
	t.Parallel()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"stdio-client","version":"2.0"}}`
	script := []string{`{"jsonrpc":"2.0","id":1,"method":"mcpdiag/no-such-method","params":{` + meta + `}}`}
	run := startStdio(t, proxy.StdioOptions{Bodies: proxy.BodiesAll})
	conversation(t, run.in, run.out, script)
	run.in.Close()
	run.wait(t)
	recs := run.sink.exchanges(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Outcome != classify.JSONRPCError || r.JSONRPC.ErrorCode == nil || *r.JSONRPC.ErrorCode != -32601 || r.ProtocolVersion != "2026-07-28" {
		t.Fatalf("record %s %s code %v, want JSONRPC_ERROR -32601 on 2026-07-28 (reason %q)", r.ProtocolVersion, r.Outcome, r.JSONRPC.ErrorCode, r.Reason)
	}
	if i := slices.IndexFunc(r.Warnings, func(w record.Warning) bool { return w.Code == classify.WarnStatusMismatch }); i >= 0 {
		t.Errorf("warning %s: %s (stdio has no HTTP status)", r.Warnings[i].Code, r.Warnings[i].Message)
	}
}
