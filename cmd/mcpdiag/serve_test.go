package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// startServe runs `mcpdiag serve` in-process on a free loopback port and
// returns the endpoint URL; the server stops when the test ends.
func startServe(t *testing.T, o serveOptions) (string, *syncBuffer) {
	t.Helper()
	if o.addr == "" {
		o.addr = "127.0.0.1:0"
	}
	if o.logLimit == 0 {
		o.logLimit = 1000
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, out, out, o, o.seed != 0) }()
	t.Cleanup(func() {
		cancel()
		if err := testwait.Recv(t, done, "serve to end after its context was cancelled"); err != nil {
			t.Errorf("serve: %v", err)
		}
		if !strings.Contains(out.String(), "mcpdiag serve: stopped") {
			t.Errorf("no clean stop in %q", out.String())
		}
	})
	deadline := time.Now().Add(testwait.Bound)
	for time.Now().Before(deadline) {
		if first, _, ok := strings.Cut(out.String(), "\n"); ok {
			u := strings.TrimPrefix(first, "mcpdiag serve: ")
			if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/mcp") {
				t.Fatalf("first line %q", first)
			}
			return u, out
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v (%s)", err, out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("no URL printed within %s: %q", testwait.Bound, out.String())
	return "", nil
}

// exitFor is the documented exit code of `mcpdiag call` for an outcome.
func exitFor(o classify.Outcome) int {
	switch {
	case o == classify.ToolError:
		return 1
	case o.Success():
		return 0
	case o.Layer() == classify.LayerInteraction:
		return 5
	case o.Layer() == classify.LayerProtocol:
		return 3
	}
	return 4
}

// TestServeCallEveryScenario is the catalogue's promise taken literally:
// `mcpdiag call URL TOOL --args ARGS --retries 0 --timeout 10s` against each
// scenario's endpoint of `mcpdiag serve` reports the expected outcome, with
// the matching exit code.
func TestServeCallEveryScenario(t *testing.T) {
	main, _ := startServe(t, serveOptions{seed: 1})
	base := strings.TrimSuffix(main, "/mcp")
	for _, e := range faults.Catalogue() {
		if e.OnStdio() {
			continue // not served over HTTP
		}
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel()
			args := append(entryCall(t, base, e), "--json")
			if e.Protocol != "" {
				args = append(args, "--protocol", e.Protocol)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			var call *record.Record
			recs := decodeRecords(t, stdout.Bytes())
			for _, rec := range recs {
				if rec.Kind == record.KindCall {
					call = rec
				}
			}
			if call == nil {
				t.Fatalf("no call record (exit %d): %s %s", code, stdout.String(), stderr.String())
			}
			if call.Outcome != e.ExpectedOutcome {
				t.Errorf("outcome %s (%s), want %s", call.Outcome, call.Reason, e.ExpectedOutcome)
			}
			// The call record counts the authorization chain's POSTs too
			// (registration, token); the entry counts the MCP endpoint's.
			if posts := mcpPosts(recs); posts != e.ExpectedPosts {
				t.Errorf("the client sent %d POSTs to the MCP endpoint (%d in all), want %d", posts, call.PostCount, e.ExpectedPosts)
			}
			if e.AuthStep != "" {
				checkRecordedAuthStep(t, e, call, recs)
			}
			if want := exitFor(e.ExpectedOutcome); code != want {
				t.Errorf("exit code %d, want %d (stderr %s)", code, want, stderr.String())
			}
		})
	}
}

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	_ = os.WriteFile(cfg, []byte(`{"scenario":[{"id":"baseline","params":{"delay":{"ms":1}}},{"id":"errors.tool_error"}],"seed":9}`), 0o600)
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"scenarios":"baseline"}`), 0o600)
	params := filepath.Join(dir, "params.json")
	_ = os.WriteFile(params, []byte(`{"statusCodes":[500]}`), 0o600)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--scenario", "errors.tool_error", "--params", `{"errorMessage":1}`}, 2, "errors.tool_error: param errorMessage"},
		{[]string{"serve", "--scenario", "nope"}, 2, `unknown scenario "nope"`},
		{[]string{"serve", "--params", `{"a":1}`}, 2, "params given without a scenario"},
		{[]string{"serve", "--scenario", "baseline", "--config", cfg}, 2, "both name scenarios"},
		{[]string{"serve", "--config", bad}, 2, `unknown field "scenarios"`},
		{[]string{"serve", "--config", filepath.Join(dir, "missing.json")}, 2, "--config"},
		{[]string{"serve", "--scenario", "errors.http_status_sequence", "--params", "@" + filepath.Join(dir, "missing.json")}, 2, "--params"},
		{[]string{"serve", "--addr", ln.Addr().String()}, 1, "listen on"},
		// --listen is the name serve shares with proxy and ui; --addr is
		// kept as its alias (term15).
		{[]string{"serve", "--listen", ln.Addr().String()}, 1, "listen on"},
		{[]string{"serve", "--listen", ln.Addr().String(), "--addr", ln.Addr().String()}, 1, "listen on"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--addr", ln.Addr().String()}, 2, "--addr is an alias of --listen"},
		{[]string{"serve", "--listen", "no-port"}, 2, `--listen "no-port"`},
		{[]string{"serve", "extra"}, 2, "unknown command"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, strings.NewReader(""), &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr.String(), tt.code, tt.want)
		}
	}
	// The config file and a params file are read.
	o := serveOptions{config: cfg}
	sel, seed, err := o.selection(false)
	if err != nil || sel.String() != "baseline+errors.tool_error" || seed != 9 {
		t.Errorf("config: %v %d %v", sel, seed, err)
	}
	o = serveOptions{scenario: "errors.http_status_sequence", params: "@" + params}
	if sel, _, err := o.selection(false); err != nil || sel[0].Scenario.(*faults.StatusSequence).StatusCodes[0] != 500 {
		t.Errorf("@params: %v %v", sel, err)
	}
}

// TestServeMainEndpointAndLog runs `mcpdiag serve --scenario` and reads its
// log file after a call.
func TestServeMainEndpointAndLog(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "server.jsonl")
	u, out := startServe(t, serveOptions{scenario: "errors.jsonrpc_error", params: `{"code":-32000,"message":"busy"}`, seed: 3, logFile: logFile})
	if !strings.Contains(out.String(), "scenario:  errors.jsonrpc_error (seed 3)") {
		t.Errorf("banner %q", out.String())
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"call", u, "echo", "--args", `{"text":"x"}`, "--retries", "0"}, strings.NewReader(""), &stdout, &stderr); code != 3 {
		t.Errorf("exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	deadline := time.Now().Add(testwait.Bound)
	var lines []string
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(logFile)
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(lines) != 2 || !strings.Contains(strings.Join(lines, ""), `"fired":["errors.jsonrpc_error"]`) {
		t.Errorf("log file: %q", lines)
	}
	for _, l := range lines {
		var v struct {
			Kind  string `json:"kind"`
			Fault struct {
				Seed string `json:"seed"`
			} `json:"fault"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Kind != "exchange" || v.Fault.Seed != "3" {
			t.Errorf("line %s: %v", l, err)
		}
	}
}

func TestScenariosCmd(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"scenarios"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, id := range faults.IDs() {
		if !strings.Contains(out.String(), id+" ") {
			t.Errorf("%s missing from the table", id)
		}
	}
	out.Reset()
	run([]string{"scenarios", "--json"}, strings.NewReader(""), &out, &errb)
	var entries []struct {
		ID              string          `json:"id"`
		ExpectedOutcome string          `json:"expectedOutcome"`
		Defaults        json.RawMessage `json:"defaults"`
		Tool            string          `json:"tool"`
	}
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != len(faults.IDs()) {
		t.Fatalf("--json: %v (%d entries)", err, len(entries))
	}
	for _, e := range entries {
		if e.ExpectedOutcome == "" || e.Tool == "" || len(e.Defaults) == 0 {
			t.Errorf("entry %+v", e)
		}
	}
	out.Reset()
	if code := run([]string{"scenarios", "elicitation.approval"}, strings.NewReader(""), &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "default params:") || !strings.Contains(out.String(), "--input input.json") {
		t.Errorf("one scenario: %d %s", code, out.String())
	}
	errb.Reset()
	if code := run([]string{"scenarios", "nope"}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "unknown scenario") {
		t.Errorf("unknown: %d %s", code, errb.String())
	}
	out.Reset()
	run([]string{"scenarios", "--markdown"}, strings.NewReader(""), &out, &errb)
	doc, err := os.ReadFile("../../docs/scenarios.md")
	if err != nil || !bytes.Equal(doc, out.Bytes()) {
		t.Errorf("--markdown differs from docs/scenarios.md (%v)", err)
	}
}

// TestServeBinarySignal runs the real binary and stops it with SIGTERM
// while a request hangs in a scenario. "In flight" is what serve's admin API
// says (/admin/counters: inFlight 1 on /mcp), not a sleep; an orderly stop
// is what can be seen of it: the client's request ends, the exchange's line
// is in the log, flagged SD (cut by the shutdown) with the request's id and
// method, serve says it stopped and exits 0. A serve that does not stop is
// killed at testwait.Bound and fails: the bound is against a hang, not a
// time the stop must take.
func TestServeBinarySignal(t *testing.T) {
	bin := testBinary(t)
	logPath := filepath.Join(t.TempDir(), "serve.log")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--scenario", "timeout.uncooperative_hang", "--params", `{"match":{}}`, "--log", logPath)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// A serve that does not start or does not stop is killed at the bound
	// (its stdout ends), and fails.
	hung := time.AfterFunc(testwait.Bound, func() { _ = cmd.Process.Kill() })
	defer hung.Stop()
	br := bufio.NewReader(stdout)
	first, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no first line: %v (killed at the %s bound: %v)", err, testwait.Bound, !hung.Stop())
	}
	u := strings.TrimSpace(strings.TrimPrefix(first, "mcpdiag serve: "))
	if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/mcp") {
		t.Fatalf("first line %q", first)
	}
	posted := make(chan error, 1)
	go func() {
		resp, err := http.Post(u, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		posted <- err
	}()
	counters := strings.TrimSuffix(u, "/mcp") + "/admin/counters"
	testwait.Until(t, "serve to have the request in flight (/admin/counters: /mcp inFlight 1)", func() bool {
		select {
		case err := <-posted:
			t.Fatalf("the request ended before the signal (the scenario should hold it): %v", err)
		default:
		}
		return inFlight(t, counters, "/mcp") == 1
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	err = cmd.Wait()
	if !hung.Stop() {
		t.Fatalf("serve did not start and stop within %s (killed); output after SIGTERM %q", testwait.Bound, rest)
	}
	if err != nil {
		t.Errorf("exit: %v, want 0", err)
	}
	if !strings.Contains(string(rest), "mcpdiag serve: stopped") {
		t.Errorf("no shutdown line in the output after SIGTERM %q", rest)
	}
	// The client's request ended with the server (an error or a cut
	// answer, either is the shutdown's): it is not left hanging.
	testwait.Recv(t, posted, "the in-flight request to end once serve stopped")
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("log: %v", err)
	}
	var cut []*record.Record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		r, err := record.Decode(line)
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r.Method == "tools/list" {
			cut = append(cut, r)
		}
	}
	if len(cut) != 1 {
		t.Fatalf("%d tools/list lines in the log, want 1 (the request in flight at the signal):\n%s", len(cut), data)
	}
	if r := cut[0]; r.JSONRPC.ID.String() != "1" || !r.Flags.Has(record.FlagSD) {
		t.Errorf("the in-flight request's line: id %s flags %v, want id 1 flagged SD:\n%s", r.JSONRPC.ID, r.Flags, data)
	}
	// The report of the log counts the cut exchange apart, as the
	// user's stop, not the server's failure.
	reportCutByShutdown(t, logPath, 1)
}

// inFlight returns what serve's /admin/counters says is in flight on the
// endpoint named path.
func inFlight(t *testing.T, counters, path string) int {
	t.Helper()
	resp, err := http.Get(counters)
	if err != nil {
		t.Fatalf("GET %s: %v", counters, err)
	}
	defer resp.Body.Close()
	var got map[string]struct {
		InFlight *int `json:"inFlight"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", counters, resp.StatusCode, err)
	}
	ep, ok := got[path]
	if !ok {
		return 0 // the endpoint is made on its first request
	}
	if ep.InFlight == nil {
		t.Fatalf("GET %s: %s has no inFlight", counters, path)
	}
	return *ep.InFlight
}
