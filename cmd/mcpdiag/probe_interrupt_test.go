package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestProbeInterruptBinary: SIGINT to a real `mcpdiag probe` whose server
// leaves a probe unanswered exits 130, as call and matrix do, prints the
// report of what was answered (interrupted, not a complete probe) and
// writes the records. Before, it exited 3, the status of a server whose
// tools could not be listed (newuser7's note).
func TestProbeInterruptBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses SIGINT")
	}
	bin := testBinary(t)
	url, hung := hangingServer(t, `[{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}]`,
		func(method string) bool { return method != "tools/list" })
	recs := filepath.Join(t.TempDir(), "probe.jsonl")
	p := startProcess(t, nil, bin, "probe", url+"/mcp", "--protocol", "2026-07-28", "--timeout", "60s", "--record", recs)
	code := interruptWhenHung(t, p, hung, "probe")
	out, errOut := p.stdout.String(), p.stderr.String()
	if code != 130 {
		t.Errorf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "not a complete probe") {
		t.Errorf("the report does not say the run was interrupted:\n%s", out)
	}
	if want := "mcpdiag: probe stopped ("; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	b, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"method":"tools/list"`) {
		t.Errorf("the records lack the tools/list exchange:\n%s", b)
	}
}
