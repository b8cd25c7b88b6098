package interop_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInspectorLegacySSERecord: the MCP Inspector CLI (2.12.0, --transport
// sse) calls server-everything's echo in its sse mode (the 2024-11-05
// HTTP+SSE transport: GET /sse, whose first event, endpoint, names
// /message?sessionId=…; every POST there is answered 202 "Accepted" and
// its answer arrives on the GET stream) through a recording `mcpdiag
// proxy`. The peer gets "Echo: hi"; each request's record is
// REQUEST_ACCEPTED (transport, not a failure) with answeredOn "stream" and
// no request-answered-202 warning, the notification's NOTIFICATION_ACCEPTED,
// the GET's HTTP_SUCCESS. Before, 5 of the 6 records were
// UNEXPECTED_CONTENT_TYPE, the requests warned that their caller never gets
// the answer.
func TestInspectorLegacySSERecord(t *testing.T) {
	t.Parallel()
	skipShort(t, "the Inspector and server-everything run on node")
	nt := needNode(t)
	if v := nt.packages["@modelcontextprotocol/server-everything"]; v != "2026.8.31" {
		t.Fatalf("@modelcontextprotocol/server-everything %s installed, want the pinned 2026.8.31", v)
	}
	home := t.TempDir()
	se := exec.Command(nt.node, "--import", "file://"+filepath.Join(root, "interop", "node", "loopback.mjs"),
		filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "sse")
	se.Env = []string{"PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + home, "PORT=0"}
	se.Dir = home
	sp, base, err := start("server-everything (sse)", se, regexp.MustCompile(`mcpdiag-interop: listening (http://127\.0\.0\.1:\d+)`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sp.stop)
	px := startProxy(t, "legacysse", base+"/sse")

	launcher := filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nt.node, launcher, "--cli", px.base+"/sse", "--transport", "sse",
		"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi")
	cmd.Env = []string{"PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "MCP_INSPECTOR_SECRET_STORE=memory", "NO_COLOR=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "Echo: hi") {
		t.Fatalf("inspector: %v\n%s", err, out.String())
	}

	integer := regexp.MustCompile(`^[0-9]+$`)
	var methods []string
	var gets int
	for _, r := range px.records(t) {
		if r.HTTPMethod == "GET" {
			gets++
			if r.Outcome != "HTTP_SUCCESS" || r.Layer != "transport" || r.Status != 200 || r.AnsweredOn != "" {
				t.Errorf("the GET stream: %s (%s), status %d, answeredOn %q; want HTTP_SUCCESS (transport), 200, none", r.Outcome, r.Layer, r.Status, r.AnsweredOn)
			}
			continue
		}
		methods = append(methods, r.Method)
		want, id := "REQUEST_ACCEPTED", integer
		if strings.HasPrefix(r.Method, "notifications/") {
			want, id = "NOTIFICATION_ACCEPTED", regexp.MustCompile(`^null$`)
		}
		if r.HTTPMethod != "POST" || r.Status != 202 || r.Outcome != want || r.Layer != "transport" || r.AnsweredOn != "stream" ||
			!id.Match(r.JSONRPC.ID) || slices.Contains(r.warningCodes(), "request-answered-202") {
			t.Errorf("%s %s (id %s): status %d, %s (%s), answeredOn %q, warnings %v; want 202, %s (transport), answeredOn \"stream\", id %s, no request-answered-202",
				r.HTTPMethod, r.Method, r.JSONRPC.ID, r.Status, r.Outcome, r.Layer, r.AnsweredOn, r.warningCodes(), want, id)
		}
		if r.Method == "tools/call" && r.Tool != "echo" {
			t.Errorf("the tools/call's tool is %q, want echo", r.Tool)
		}
	}
	for _, m := range []string{"initialize", "notifications/initialized", "tools/call"} {
		if !slices.Contains(methods, m) {
			t.Errorf("no record of %s (records of %v)", m, methods)
		}
	}
	if gets != 1 {
		t.Errorf("%d GET records, want 1", gets)
	}
}
