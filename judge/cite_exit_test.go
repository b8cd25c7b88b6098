package judge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/judge"
)

// TestClientRanCitesCallsExitCodes: client.ran's citation gives mcpdiag
// call as the example of a client whose exit code reports its failure; the
// codes it names are the ones mcpdiag call exits with. It said "3 on a
// transport failure", which is the protocol layer's code (a transport
// failure exits 4); a matrix user reading the rule to learn what a failed
// client should exit with was told wrong (found by newuser7 running matrix
// against a client that only prints an outcome).
func TestClientRanCitesCallsExitCodes(t *testing.T) {
	r, ok := judge.RuleByID("client.ran")
	if !ok {
		t.Fatal("no rule client.ran")
	}
	code := func(o classify.Outcome) int { return (&client.Call{Outcome: o}).ExitCode() }
	want := fmt.Sprintf("(as mcpdiag call exits %d on TOOL_ERROR, %d on a protocol-layer and %d on a transport-layer failure)",
		code(classify.ToolError), code(classify.JSONRPCError), code(classify.NetworkError))
	if !strings.HasSuffix(r.Cite, want) {
		t.Errorf("client.ran cites\n  %s\nwant it to end\n  %s", r.Cite, want)
	}
}
