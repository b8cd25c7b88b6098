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
// sse) calls server-everything in its sse mode (the 2024-11-05 HTTP+SSE
// transport: GET /sse, whose first event, endpoint, names
// /message?sessionId=…; every POST there is answered 202 "Accepted" and its
// answer arrives on the GET stream) through a recording `mcpdiag proxy`,
// twice: echo ("Echo: hi") and get-resource-reference with resourceId -1,
// which throws (an isError result). Each request's record has its answer's
// outcome, paired from the stream by the session and the id: echo
// TOOL_SUCCESS, the other TOOL_ERROR with isError, initialize
// RESULT_SUCCESS, each with its integer id, status 202, answeredOn "stream",
// streamAnswer seen and no request-answered-202 warning; the notification's
// NOTIFICATION_ACCEPTED; each GET's HTTP_SUCCESS, counting every response it
// carried as paired. Before legacy10, 5 of the 6 records of a run were
// UNEXPECTED_CONTENT_TYPE; before legacy12 the requests' records were
// REQUEST_ACCEPTED whatever the answer said. The Inspector's answer to a
// server request (roots/list, sent or not as timing has it) is a client's
// answer, not a request (a fresh clone's run at 3109dee failed on it).
func TestInspectorLegacySSERecord(t *testing.T) {
	t.Parallel()
	skipShort(t, "the Inspector and server-everything run on node")
	nt := needNode(t)
	if v := nt.packages["@modelcontextprotocol/server-everything"]; v != "2026.8.31" {
		t.Fatalf("@modelcontextprotocol/server-everything %s installed, want the pinned 2026.8.31", v)
	}
	base := startEverythingSSE(t, nt)
	px := startProxy(t, "legacysse", base+"/sse")

	launcher := filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	for _, run := range []struct {
		args []string
		want string
	}{
		{[]string{"--tool-name", "echo", "--tool-arg", "message=hi"}, "Echo: hi"},
		{[]string{"--tool-name", "get-resource-reference", "--tool-arg", "resourceId=-1"}, "Invalid resourceId"},
	} {
		// The bound only turns a hang into a failure that says so: at load
		// ~26 one run took more than the 60 s this was (mend21: killed with
		// no output, Node still starting).
		const bound = 5 * time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		cmd := exec.CommandContext(ctx, nt.node, append([]string{launcher, "--cli", px.base + "/sse", "--transport", "sse",
			"--method", "tools/call"}, run.args...)...)
		cmd.Env = []string{"PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "MCP_INSPECTOR_SECRET_STORE=memory", "NO_COLOR=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Fatalf("inspector %v did not finish within %s: %v\n%s", run.args, bound, err, out.String())
		}
		if !strings.Contains(out.String(), run.want) {
			t.Fatalf("inspector %v: %v\n%s", run.args, err, out.String())
		}
	}

	integer := regexp.MustCompile(`^[0-9]+$`)
	var methods, tools []string
	var gets, requests, responses int
	for _, r := range px.records(t) {
		if r.HTTPMethod == "GET" {
			gets++
			if r.Outcome != "HTTP_SUCCESS" || r.Layer != "transport" || r.Status != 200 || r.AnsweredOn != "" || r.StreamAnswers == nil {
				t.Errorf("the GET stream: %s (%s), status %d, answeredOn %q, streamAnswers %v; want HTTP_SUCCESS (transport), 200, none, counted",
					r.Outcome, r.Layer, r.Status, r.AnsweredOn, r.StreamAnswers)
				continue
			}
			if a := r.StreamAnswers; a.Responses == 0 || a.Paired != a.Responses || a.Late != 0 || a.Unpaired != 0 {
				t.Errorf("the GET stream's answers: %+v; want every response paired", *a)
			}
			responses += r.StreamAnswers.Responses
			continue
		}
		if r.ClientAnswer {
			// The Inspector's answer to a request server-everything sent on
			// the GET stream (roots/list, when the Inspector answers it
			// before it exits: timing): the POST carrying it, accepted 202,
			// judged by the answer (answers13), the server request's method.
			// The Inspector exits once it printed the tool's result, and
			// its answer's POST may still be in flight then (at load ~25 it
			// was): the record says the client left before the response,
			// NETWORK_ERROR, DC, no status. Either is what happened; any
			// other record of the answer is wrong.
			status, outcome := 202, "RESULT_SUCCESS"
			if slices.Contains(r.Flags, "DC") {
				status, outcome = 0, "NETWORK_ERROR"
			}
			if r.HTTPMethod != "POST" || r.Status != status || r.Outcome != outcome || r.AnsweredOn != "" ||
				!integer.Match(r.JSONRPC.ID) || !slices.Contains([]string{"roots/list", "sampling/createMessage", "elicitation/create"}, r.Method) {
				t.Errorf("the client's answer %s %q (id %s): status %d, %s, flags %v, answeredOn %q; want a POST %d %s with the server request's method and integer id",
					r.HTTPMethod, r.Method, r.JSONRPC.ID, r.Status, r.Outcome, r.Flags, r.AnsweredOn, status, outcome)
			}
			continue
		}
		methods = append(methods, r.Method)
		want, layer, id := "RESULT_SUCCESS", "application", integer
		switch {
		case strings.HasPrefix(r.Method, "notifications/"):
			want, layer, id = "NOTIFICATION_ACCEPTED", "transport", regexp.MustCompile(`^null$`)
		case r.Method == "tools/call" && r.Tool == "get-resource-reference":
			want = "TOOL_ERROR"
		case r.Method == "tools/call":
			want = "TOOL_SUCCESS"
		}
		if r.HTTPMethod != "POST" || r.Status != 202 || r.Outcome != want || r.Layer != layer || r.AnsweredOn != "stream" ||
			!id.Match(r.JSONRPC.ID) || slices.Contains(r.warningCodes(), "request-answered-202") {
			t.Errorf("%s %s (id %s): status %d, %s (%s), answeredOn %q, warnings %v; want 202, %s (%s), answeredOn \"stream\", id %s, no request-answered-202",
				r.HTTPMethod, r.Method, r.JSONRPC.ID, r.Status, r.Outcome, r.Layer, r.AnsweredOn, r.warningCodes(), want, layer, id)
		}
		if layer == "application" {
			requests++
			if r.StreamAnswer == nil || !r.StreamAnswer.Seen {
				t.Errorf("%s (id %s): streamAnswer %v, want seen", r.Method, r.JSONRPC.ID, r.StreamAnswer)
			}
		}
		if r.Method == "tools/call" {
			tools = append(tools, r.Tool)
			if isErr := r.IsError != nil && *r.IsError; isErr != (want == "TOOL_ERROR") {
				t.Errorf("tools/call %s: isError %v", r.Tool, r.IsError)
			}
		}
	}
	for _, m := range []string{"initialize", "notifications/initialized", "tools/call"} {
		if !slices.Contains(methods, m) {
			t.Errorf("no record of %s (records of %v)", m, methods)
		}
	}
	slices.Sort(tools)
	if !slices.Equal(tools, []string{"echo", "get-resource-reference"}) {
		t.Errorf("tools/call records of %v, want echo and get-resource-reference", tools)
	}
	if gets != 2 || responses != requests {
		t.Errorf("%d GET records carrying %d responses, want 2 carrying one per request (%d)", gets, responses, requests)
	}
}

// TestLegacyServerNamed: `mcpdiag call` and `mcpdiag probe` against
// server-everything in its sse mode (the 2024-11-05 HTTP+SSE transport: a
// POST to /sse is Express's 404 "Cannot POST /sse") end on that 404, and say
// that the server speaks the older transport, the message path its endpoint
// event named (/message, never the session's query) and the way out
// (mcpdiag proxy); twice, with the same words. Before, call said only "HTTP
// 404 Not Found without a session to renew: the endpoint or the method is
// absent" and probe "HTTP_ERROR: HTTP 404 Not Found".
func TestLegacyServerNamed(t *testing.T) {
	t.Parallel()
	skipShort(t, "server-everything runs on node")
	nt := needNode(t)
	bin := mcpdiagBin(t)
	base := startEverythingSSE(t, nt)
	u := base + "/sse"
	hint := "the server speaks the older HTTP+SSE transport (2024-11-05: a GET of the URL opened an event stream whose first event, " +
		"endpoint, names /message for the messages), which mcpdiag call and probe do not speak; record a client that speaks it through " +
		"`mcpdiag proxy --upstream " + u + "` instead"
	for _, c := range []struct {
		args []string
		exit int
		want []string
	}{
		{[]string{"call", u, "echo", "--args", `{"message":"hi"}`}, 4, []string{
			"HTTP_ERROR (transport layer)", "  decision:  fail — " + hint + "; the last answer: HTTP 404 Not Found",
			"  era:       none: the server speaks the 2024-11-05 HTTP+SSE transport (",
			"    #1  tools/list ", "    #2  initialize "}},
		{[]string{"probe", u}, 3, []string{"mcpdiag: listing the tools of " + u + ": HTTP_ERROR: HTTP 404 Not Found; " + hint + "\n"}},
	} {
		var first string
		for run := range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			cmd := exec.CommandContext(ctx, bin, c.args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			cancel()
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			got := out.String()
			if code != c.exit {
				t.Errorf("mcpdiag %s: exit %d (%v), want %d\n%s", strings.Join(c.args, " "), code, err, c.exit, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("mcpdiag %s: no %q in\n%s", strings.Join(c.args, " "), w, got)
				}
			}
			if strings.Contains(got, "sessionId") {
				t.Errorf("mcpdiag %s: the output carries the session id:\n%s", strings.Join(c.args, " "), got)
			}
			// Run to run, only timings (and the padding after them) and
			// the record id may differ.
			stable := regexp.MustCompile(`\d+(\.\d+)?(ms|µs|s)\b|call [0-9A-Z]{26}`).ReplaceAllString(got, "")
			stable = regexp.MustCompile(`[ \t]+`).ReplaceAllString(stable, " ")
			if run == 0 {
				first = stable
			} else if stable != first {
				t.Errorf("mcpdiag %s: a second identical run said\n%s\nthe first\n%s", strings.Join(c.args, " "), stable, first)
			}
		}
	}
}

// startEverythingSSE starts server-everything in its sse mode (the
// 2024-11-05 HTTP+SSE transport) on 127.0.0.1, stopped at the test's end,
// and returns its base URL (its stream is base+"/sse").
func startEverythingSSE(t *testing.T, nt *nodeTools) string {
	t.Helper()
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
	return base
}
