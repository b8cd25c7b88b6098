package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio fixture is this test binary, re-executed with
// MCPDIAG_TEST_STDIO_SERVER=1: a go-sdk server on stdio with the tools of
// mcpServer plus
//
//	noise  prints a stray line on stdout, then succeeds
//	crash  exits with status 3 in the middle of the call
//	hang   never answers
const stdioServerEnv = "MCPDIAG_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		runStdioServer()
		return
	}
	if os.Getenv(stdioScriptEnv) == "1" {
		runScriptedStdio()
		return
	}
	os.Exit(m.Run())
}

// stdioMarkEnv names a file the fixture server appends each method it
// receives to, a line each: a test knows from it that a request reached the
// server (the proxy registers a request before it forwards it).
const stdioMarkEnv = "MCPDIAG_TEST_STDIO_MARK"

// stdioExitOnIntEnv makes the fixture server end with status 0 on SIGINT,
// as a Node server does (server-everything over stdio), instead of dying of
// it.
const stdioExitOnIntEnv = "MCPDIAG_TEST_STDIO_EXIT_ON_INT"

func runStdioServer() {
	if os.Getenv(stdioExitOnIntEnv) == "1" {
		ints := make(chan os.Signal, 1)
		signal.Notify(ints, os.Interrupt)
		go func() {
			<-ints
			os.Exit(0)
		}()
	}
	s := mcpServer()
	if path := os.Getenv(stdioMarkEnv); path != "" {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
					fmt.Fprintln(f, method)
					f.Close()
				}
				return next(ctx, method, req)
			}
		})
	}
	s.AddTool(&mcp.Tool{Name: "noise", InputSchema: objSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Println("Debugger listening on ws://127.0.0.1:9229")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noisy"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "crash", InputSchema: objSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "hang", InputSchema: objSchema},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "stdio server:", err)
		os.Exit(1)
	}
}

// The 2025-11-25 conversation the stdio tests hold.
var (
	initLine  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-client","version":"2.0"}}}`
	readyLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func toolLine(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":"hi"}}}`, id, tool)
}

// conversation writes lines one at a time; after a request it reads the
// server's lines until the response with that id, and returns everything
// read. It stops early when the output ends.
func conversation(t *testing.T, w io.Writer, r *bufio.Reader, lines []string) []string {
	t.Helper()
	var got []string
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(l), &m)
		if m.ID == nil {
			continue
		}
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				got = append(got, line)
			}
			if err != nil {
				return got
			}
			var resp struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(line), &resp) == nil && bytes.Equal(resp.ID, m.ID) {
				break
			}
		}
	}
	return got
}

func stdioCommand() (string, []string) {
	return os.Args[0], []string{"-test.run=^$"}
}

type stdioRun struct {
	in     *io.PipeWriter
	out    *bufio.Reader
	sink   *memSink
	done   chan struct{}
	res    *proxy.StdioResult
	err    error
	stderr bytes.Buffer
}

// waitStopped waits for RunStdio to return after its context ended,
// whatever it returned (wait requires no error).
func (run *stdioRun) waitStopped(t *testing.T) {
	t.Helper()
	select {
	case <-run.done:
	case <-time.After(testwait.Bound):
		t.Fatalf("RunStdio did not return within %s of its context's end", testwait.Bound)
	}
}

// startStdio runs the fixture server through the stdio proxy.
func startStdio(t *testing.T, opts proxy.StdioOptions) *stdioRun {
	t.Helper()
	return startStdioContext(t, context.Background(), opts)
}

// startStdioContext is startStdio with the run's context.
func startStdioContext(t *testing.T, parent context.Context, opts proxy.StdioOptions) *stdioRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	run := &stdioRun{in: inW, out: bufio.NewReader(outR), sink: &memSink{}, done: make(chan struct{})}
	opts.Command, opts.Args = stdioCommand()
	if opts.Env == nil {
		opts.Env = append(os.Environ(), stdioServerEnv+"=1")
	}
	opts.Stdin, opts.Stdout, opts.Stderr = inR, outW, &run.stderr
	if opts.Records == nil {
		opts.Records = run.sink
	}
	// The bound only stops a hung run: on a loaded machine under -race a
	// 16 MiB line alone takes tens of seconds (a 30 s bound failed
	// TestStdioLineOverDefaultLimit at load average 17).
	ctx, cancel := context.WithTimeout(parent, 2*time.Minute)
	go func() {
		defer close(run.done)
		defer cancel()
		run.res, run.err = proxy.RunStdio(ctx, opts)
		outW.Close()
		inR.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-run.done:
		case <-time.After(testwait.Bound):
			t.Errorf("the stdio proxy did not end within %s", testwait.Bound)
		}
	})
	return run
}

func (r *stdioRun) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(testwait.Bound):
		t.Fatalf("the stdio proxy did not end within %s", testwait.Bound)
	}
	if r.err != nil {
		t.Fatalf("RunStdio: %v", r.err)
	}
}

// Through the stdio proxy the client receives exactly the bytes it
// receives from the server directly; every request/response pair is
// recorded and classified, and a stray line on stdout is its own outcome,
// with the line.
func TestStdioTransparentAndRecorded(t *testing.T) {
	t.Parallel()
	script := []string{initLine, readyLine, toolLine(2, "echo"), toolLine(3, "fail"), toolLine(4, "noise"), toolLine(5, "nope")}

	// Directly.
	name, args := stdioCommand()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), stdioServerEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	direct := conversation(t, stdin, bufio.NewReader(stdout), script)
	stdin.Close()
	io.Copy(io.Discard, stdout)
	_ = cmd.Wait()

	// Through the proxy.
	run := startStdio(t, proxy.StdioOptions{Bodies: proxy.BodiesAll})
	via := conversation(t, run.in, run.out, script)
	run.in.Close()
	run.wait(t)

	if strings.Join(direct, "") != strings.Join(via, "") {
		t.Errorf("through the proxy the client received other bytes\ndirect: %q\nproxy:  %q", direct, via)
	}
	if run.res.ExitCode != 0 || run.res.Noise != 1 {
		t.Errorf("result %+v", run.res)
	}
	recs := run.sink.exchanges(t)
	want := []struct {
		method, tool string
		outcome      classify.Outcome
	}{
		{"initialize", "", classify.ResultSuccess},
		{"tools/call", "echo", classify.ToolSuccess},
		{"tools/call", "fail", classify.ToolError},
		{"tools/call", "noise", classify.ToolSuccess}, // records sort by start: the call began first
		{"", "", proxy.StdioNoise},
		{"tools/call", "nope", classify.JSONRPCError},
	}
	if len(recs) != len(want) {
		for _, r := range recs {
			t.Logf("%s %s %s %s", r.Method, r.Tool, r.Outcome, r.Reason)
		}
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		if r.Method != w.method || r.Tool != w.tool || r.Outcome != w.outcome {
			t.Errorf("record %d: %s %s %s (%s), want %s %s %s", i, r.Method, r.Tool, r.Outcome, r.Reason, w.method, w.tool, w.outcome)
		}
		if r.URL != "stdio:"+strings.TrimSuffix(filepathBase(os.Args[0]), "") || len(r.HTTPStatuses) != 0 || r.Status != 0 {
			t.Errorf("record %d: url %q statuses %v status %d", i, r.URL, r.HTTPStatuses, r.Status)
		}
		if w.outcome != proxy.StdioNoise && (r.Client != "stdio-client@2.0" || r.ProtocolVersion != "2025-11-25") {
			t.Errorf("record %d: client %q protocol %q", i, r.Client, r.ProtocolVersion)
		}
	}
	noise := recs[4]
	if noise.Layer != classify.LayerTransport || noise.ResponseBody == nil || noise.ResponseBody.Text != "Debugger listening on ws://127.0.0.1:9229" {
		t.Errorf("noise record: layer %s body %+v", noise.Layer, noise.ResponseBody)
	}
	if !strings.Contains(noise.Note, "pending") || !strings.Contains(noise.Note, "4") {
		t.Errorf("noise note %q: should name the pending request", noise.Note)
	}
}

func filepathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// A server that dies in the middle of a request: its exit code is the
// proxy's, and the request it left is recorded as a transport failure.
func TestStdioServerDiesMidRequest(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{})
	conversation(t, run.in, run.out, []string{initLine, readyLine, toolLine(2, "echo"), toolLine(3, "crash")})
	run.wait(t)
	if run.res.ExitCode != 3 {
		t.Errorf("exit code %d, want 3", run.res.ExitCode)
	}
	recs := run.sink.exchanges(t)
	last := recs[len(recs)-1]
	if len(recs) != 3 || last.Tool != "crash" || last.Outcome != classify.NetworkError || last.Layer != classify.LayerTransport ||
		!strings.Contains(last.Reason, "exit status 3") || last.Network == nil || !last.Network.RequestSent || last.Network.Cause != classify.NetClosed || !last.Flags.Pending() || !last.Flags.Has(record.FlagUX) {
		for _, r := range recs {
			t.Logf("%s %s %s %s", r.Method, r.Tool, r.Outcome, r.Reason)
		}
		t.Errorf("crash record: %s %s %q %+v flags %v", last.Tool, last.Outcome, last.Reason, last.Network, last.Flags)
	}
	for _, r := range recs[:2] {
		if len(r.Flags) != 0 {
			t.Errorf("%s answered: flags %v", r.Method, r.Flags)
		}
	}
}

// Signals reach the server, and a server killed by one is reported so.
func TestStdioSignalPropagates(t *testing.T) {
	t.Parallel()
	sigs := make(chan os.Signal, 1)
	run := startStdio(t, proxy.StdioOptions{Signals: sigs})
	conversation(t, run.in, run.out, []string{initLine, readyLine})
	io.WriteString(run.in, toolLine(2, "hang")+"\n")
	time.Sleep(50 * time.Millisecond)
	sigs <- syscall.SIGTERM
	run.wait(t)
	if run.res.Signal != syscall.SIGTERM || run.res.ExitCode != -1 {
		t.Errorf("result %+v, want killed by SIGTERM", run.res)
	}
	recs := run.sink.exchanges(t)
	last := recs[len(recs)-1]
	if last.Tool != "hang" || last.Outcome != classify.NetworkError || !strings.Contains(last.Reason, "signal") {
		t.Errorf("hang record: %s %s %q", last.Tool, last.Outcome, last.Reason)
	}
}

// A Ctrl-C the proxy passes on to a server that ends on it with status 0
// (server-everything over stdio does) is named on the records of the
// requests it left unanswered: before outsider16 they said only "the server
// process exited (exit status 0) before responding", as for a server that
// ended by itself.
func TestStdioForwardedSignalNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		env    []string
		sig    os.Signal
		reason string
	}{
		{"exits 0 on SIGINT", []string{stdioExitOnIntEnv + "=1"}, syscall.SIGINT,
			"the server process exited (exit status 0) before responding, after the proxy received the signal interrupt and passed it on to the server"},
		{"dies of SIGTERM", nil, syscall.SIGTERM,
			"the server process was killed by signal terminated before responding, after the proxy received the signal terminated and passed it on to the server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sigs := make(chan os.Signal, 1)
			mark := filepath.Join(t.TempDir(), "methods")
			run := startStdio(t, proxy.StdioOptions{Signals: sigs,
				Env: append(append(os.Environ(), stdioServerEnv+"=1", stdioMarkEnv+"="+mark), tc.env...)})
			conversation(t, run.in, run.out, []string{initLine, readyLine})
			go func() { _, _ = io.Copy(io.Discard, run.out) }()
			io.WriteString(run.in, toolLine(2, "hang")+"\n")
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if b, _ := os.ReadFile(mark); strings.Contains(string(b), "tools/call") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the hang call did not reach the server within a minute")
				}
			}
			sigs <- tc.sig
			run.wait(t)
			recs := run.sink.exchanges(t)
			last := recs[len(recs)-1]
			if last.Tool != "hang" || last.Outcome != classify.NetworkError || last.Reason != "no response line from the server after the request was sent (the server may have processed it): "+tc.reason {
				t.Errorf("hang record: %s %s %q; want NETWORK_ERROR with %q", last.Tool, last.Outcome, last.Reason, tc.reason)
			}
			// The run's own stop, as the HTTP proxy's shutdown cut
			// (SD): report counts it apart, not as the server's failure
			// (outsider18: it counted "2 failed (100.0%)", exit 0).
			if !last.Flags.Has(record.FlagSD) || !last.Flags.Has(record.FlagUX) {
				t.Errorf("hang record flags %v; want SD and UX", last.Flags)
			}
		})
	}
}

// The stdio faults, given in the old --stdio-fault syntax (an alias of the
// catalogue's stdio scenarios): a dropped response is never seen by the
// client and is recorded as such; a garbage line precedes the response;
// exit kills the server in the middle of the request.
func TestStdioFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec    string
		outcome classify.Outcome
		extra   classify.Outcome // a second record, if any
	}{
		{"drop,tool=echo", classify.NetworkError, ""},
		{"garbage,tool=echo", classify.ToolSuccess, proxy.StdioNoise},
		{"delay=30ms,tool=echo", classify.ToolSuccess, ""},
		{"exit,tool=echo", classify.NetworkError, ""},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			t.Parallel()
			sel, err := faults.ParseStdioAlias(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			kind := sel.String()
			run := startStdio(t, proxy.StdioOptions{Faults: &proxy.FaultOptions{Selection: sel}})
			conversation(t, run.in, run.out, []string{initLine, readyLine})
			start := time.Now()
			io.WriteString(run.in, toolLine(2, "echo")+"\n")
			var lines []string
			if kind != "stdio.drop" && kind != "stdio.exit" {
				for len(lines) == 0 || !strings.Contains(lines[len(lines)-1], `"id":2`) {
					l, err := run.out.ReadString('\n')
					if err != nil {
						t.Fatalf("read: %v (got %q)", err, lines)
					}
					lines = append(lines, l)
				}
			}
			if kind == "stdio.delay" && time.Since(start) < 30*time.Millisecond {
				t.Errorf("the response came after %s, before the delay", time.Since(start))
			}
			if kind == "stdio.garbage" && (len(lines) != 2 || lines[0] != faults.DefaultGarbage+"\n") {
				t.Errorf("lines %q", lines)
			}
			run.in.Close()
			run.wait(t)
			var got []classify.Outcome
			for _, r := range run.sink.exchanges(t)[1:] {
				got = append(got, r.Outcome)
				if r.Scenario != kind {
					t.Errorf("record %s scenario %q, want %q", r.Outcome, r.Scenario, kind)
				}
			}
			want := []classify.Outcome{tc.outcome}
			if tc.extra != "" {
				want = []classify.Outcome{tc.outcome, tc.extra} // by start time: the call, then the line
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("outcomes %v, want %v", got, want)
			}
		})
	}
}

// A fault's delay ends with the run: cancelled while it holds a response
// back for a minute, RunStdio returns at once (the old stdio delay was a
// time.Sleep that only the full minute ended), and the held request is
// recorded as cut by the end of the run.
func TestStdioDelayEndsWithTheRun(t *testing.T) {
	t.Parallel()
	sel, err := faults.ParseStdioAlias("delay=1m,tool=echo")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mark := filepath.Join(t.TempDir(), "methods")
	run := startStdioContext(t, ctx, proxy.StdioOptions{Faults: &proxy.FaultOptions{Selection: sel},
		Env: append(os.Environ(), stdioServerEnv+"=1", stdioMarkEnv+"="+mark)})
	conversation(t, run.in, run.out, []string{initLine, readyLine})
	go func() { _, _ = io.Copy(io.Discard, run.out) }()
	io.WriteString(run.in, toolLine(2, "echo")+"\n")
	// Cancel once the call has reached the server (a fixed sleep let a
	// loaded machine cancel the run before the proxy had taken the line:
	// no record of the call). The server most likely answers it at once,
	// so that the proxy holds the answer; if not, the run ends all the same.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(mark); strings.Contains(string(b), "tools/call") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the echo call did not reach the server within a minute")
		}
	}
	cancel()
	select {
	case <-run.done:
	case <-time.After(20 * time.Second):
		t.Fatal("RunStdio still runs 20 s after its context ended, inside a 1-minute delay")
	}
	if !errors.Is(run.err, context.Canceled) {
		t.Errorf("RunStdio: %v, want context.Canceled", run.err)
	}
	recs := run.sink.exchanges(t)
	last := recs[len(recs)-1]
	if last.Tool != "echo" || last.Outcome != classify.NetworkError {
		t.Errorf("the held call's record: %s %s %q", last.Tool, last.Outcome, last.Reason)
	}
}

var _ = record.KindExchange
