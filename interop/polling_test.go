package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// startPollingExample starts the TypeScript SDK's (1.32.2) SSE polling
// example server (SEP-1699: it closes a tools/call long-task's stream after
// the priming event, id and retry 2000, and keeps the rest in an event
// store for the GET that resumes it) on 127.0.0.1 at a free port
// (port.mjs moves its listen(3001), loopback.mjs binds and prints it), and
// returns its /mcp URL; it is stopped when the test ends.
func startPollingExample(t *testing.T, nt *nodeTools) string {
	t.Helper()
	sdk := filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "sdk")
	if v := packageVersion(t, sdk); v != "1.32.2" {
		t.Fatalf("@modelcontextprotocol/sdk %s installed, want 1.32.2 (the lockfile's)", v)
	}
	home := t.TempDir()
	cmd := exec.Command(nt.node, "--import", "file://"+filepath.Join(root, "interop", "node", "port.mjs"),
		"--import", "file://"+filepath.Join(root, "interop", "node", "loopback.mjs"),
		filepath.Join(sdk, "dist", "esm", "examples", "server", "ssePollingExample.js"))
	cmd.Env = []string{"PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + home, "MCPDIAG_LISTEN_PORT=0"}
	cmd.Dir = home
	p, base, err := start("ssePollingExample", cmd, regexp.MustCompile(`mcpdiag-interop: listening (http://127\.0\.0\.1:\d+)`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return base + "/mcp"
}

func packageVersion(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	return pkg.Version
}

// TestSSEPollingThroughProxy: the TypeScript SDK's SSE polling example, its
// server behind a recording `mcpdiag proxy` and its own client
// (ssePollingClient.js, fetch-target.mjs sends it to the proxy), which
// resumes the tools/call's stream with GET and Last-Event-ID and gets the
// result there. `mcpdiag report` over the proxy's records judges the call
// as `mcpdiag call` against the server directly does (the metamorphic
// property: proxying changes no verdict): TOOL_SUCCESS, 0 failed, the link
// naming the request's method and tool, the POST's id (a number, 1) the
// id of the response on the GET. Before, report said 1 failed
// (STREAM_INCOMPLETE) and the GET "not a JSON-RPC exchange".
func TestSSEPollingThroughProxy(t *testing.T) {
	t.Parallel()
	skipShort(t, "the TypeScript SDK's example runs on node")
	nt := needNode(t)
	upstream := startPollingExample(t, nt)

	// The call made directly: its call line's verdict is the reference.
	rec := filepath.Join(t.TempDir(), "direct.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := exec.CommandContext(ctx, mcpdiagBin(t), "call", upstream, "long-task", "--protocol", "2025-11-25", "--record", rec)
	if out, err := call.CombinedOutput(); err != nil {
		t.Fatalf("mcpdiag call directly: %v\n%s", err, out)
	}
	var direct *record.Record
	for _, r := range readRecords(t, rec) {
		if r.Kind == record.KindCall {
			direct = r
		}
	}
	if direct == nil || direct.Tool != "long-task" || direct.Method != "tools/call" {
		t.Fatalf("the direct call's line: %+v", direct)
	}

	px := startProxy(t, "polling", upstream)
	client := exec.CommandContext(ctx, nt.node, "--import", "file://"+filepath.Join(root, "interop", "node", "fetch-target.mjs"),
		filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "client", "ssePollingClient.js"))
	client.Env = []string{"PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "MCPDIAG_TARGET=" + px.base}
	client.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	client.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	client.Stdout, client.Stderr = &out, &out
	if err := client.Run(); err != nil || !strings.Contains(out.String(), "[Client] Tool completed!") || !strings.Contains(out.String(), "Long task completed successfully!") {
		t.Fatalf("ssePollingClient: %v\n%s", err, out.String())
	}
	px.records(t) // stops the proxy: its file is whole
	recs := readRecords(t, px.record)
	var post, get *record.Record
	for _, r := range recs {
		switch {
		case r.Method == "tools/call":
			post = r
		case r.HTTPMethod == "GET" && r.Resume != nil && len(r.Resume.Responses) > 0:
			get = r
		}
	}
	if post == nil || post.Resume == nil || !post.Resume.Resumable || post.Tool != "long-task" || string(post.JSONRPC.ID.Raw()) != "1" {
		t.Fatalf("the proxy's tools/call record: %+v (resume %+v); want long-task, id 1, resumable", post, post.Resume)
	}
	if get == nil || get.Resume.After != post.Resume.LastEventID || get.Session != post.Session {
		t.Fatalf("no GET record that resumed the tools/call's stream (after %q) in its session", post.Resume.LastEventID)
	}
	resp := get.Resume.Responses[0]
	if string(resp.ID.Raw()) != "1" || resp.Method != "tools/call" || resp.Tool != "long-task" || resp.Outcome != direct.Outcome {
		t.Errorf("the GET's response: id %s, %s %s, %s; want 1, tools/call long-task, %s (the direct call's)", resp.ID, resp.Method, resp.Tool, resp.Outcome, direct.Outcome)
	}

	acc := report.New(report.Options{})
	f, err := os.Open(px.record)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := report.Read(f, px.record, nil, acc); err != nil {
		t.Fatal(err)
	}
	acc.Close()
	ex := acc.Summary().Exchanges
	if ex.Failures != 0 || ex.Resumed != 1 || len(ex.ResumeLinks) != 1 {
		t.Fatalf("report over the proxy's records: %d failed, %d resumed; want 0 and 1", ex.Failures, ex.Resumed)
	}
	l := ex.ResumeLinks[0]
	if l.ID != post.ID || l.ResumedBy != get.ID || l.Method != direct.Method || l.Tool != direct.Tool || l.Outcome != string(direct.Outcome) {
		t.Errorf("the link %+v; want %s resumed by %s, %s %s, %s (as mcpdiag call directly)", l, post.ID, get.ID, direct.Method, direct.Tool, direct.Outcome)
	}
}

// readRecords reads a record file whole.
func readRecords(t *testing.T, path string) []*record.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*record.Record
	for r, err := range record.NewReader(f).All() {
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out
}
