package interop_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInspectorStandaloneStreamRecord: the MCP Inspector CLI (2.12.0, legacy
// era) calls server-everything's echo through a recording `mcpdiag proxy`;
// after its tools/call it opens the 2025-11-25 standalone GET event stream,
// which carries server notifications and no JSON-RPC response. That GET is
// recorded HTTP_SUCCESS in the transport layer (judged at the HTTP layer
// only, as its reason says), method empty; it was RESULT_SUCCESS in the
// application layer, a result no method returned. The tools/call beside it
// keeps its own verdict (TOOL_SUCCESS, application, tool echo).
func TestInspectorStandaloneStreamRecord(t *testing.T) {
	t.Parallel()
	skipShort(t, "the Inspector and server-everything run on node")
	nt := needNode(t)
	px := startProxy(t, "getstream", startEverything(t, nt))
	launcher := filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nt.node, launcher, "--cli", px.base+"/mcp", "--protocol-era", "legacy",
		"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi", "--format", "json")
	cmd.Env = []string{"PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "MCP_INSPECTOR_SECRET_STORE=memory", "NO_COLOR=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "Echo: hi") {
		t.Fatalf("inspector: %v\n%s", err, out.String())
	}
	recs := px.records(t)
	var gets, calls int
	for _, r := range recs {
		switch {
		case r.HTTPMethod == "GET":
			gets++
			if r.Outcome != "HTTP_SUCCESS" || r.Layer != "transport" || r.Method != "" || r.Status != 200 || r.Client != "inspector-cli@2.12.0" {
				t.Errorf("the standalone GET stream is recorded %s (%s layer), method %q, status %d, client %q; want HTTP_SUCCESS (transport), no method, 200, inspector-cli@2.12.0",
					r.Outcome, r.Layer, r.Method, r.Status, r.Client)
			}
		case r.Method == "tools/call":
			calls++
			if r.Outcome != "TOOL_SUCCESS" || r.Layer != "application" || r.Tool != "echo" || r.Status != 200 || r.HTTPMethod != "POST" {
				t.Errorf("the tools/call is recorded %s (%s), tool %q, status %d, %s", r.Outcome, r.Layer, r.Tool, r.Status, r.HTTPMethod)
			}
		}
	}
	if gets == 0 || calls != 1 {
		t.Fatalf("%d GET and %d tools/call records, want at least 1 and 1", gets, calls)
	}
}
