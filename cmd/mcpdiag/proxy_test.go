package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// The stdio server of these tests is this test binary, re-executed with
// MCPDIAG_CMD_TEST_LINE_SERVER=1: it answers every request line with a tool
// result, and exits with status 5 on a tools/call of "crash".
const lineServerEnv = "MCPDIAG_CMD_TEST_LINE_SERVER"

func init() {
	if os.Getenv(lineServerEnv) == "1" {
		lineServer()
		os.Exit(0)
	}
}

func lineServer() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		m, ok := parseRPCRequest(sc.Bytes())
		if !ok || m.ID == nil {
			continue
		}
		if m.Params.Name == "crash" {
			os.Exit(5)
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", m.ID)
	}
}

func TestProxyUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "--upstream URL is required"},
		{[]string{"proxy", "--upstream", "ftp://x/mcp"}, "want an http:// or https:// URL"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--record-bodies", "some"}, "--record-bodies"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--params", "{}"}, "--params needs --scenario"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--scenario", "no.such"}, "--scenario"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "extra"}, "needs --stdio"},
		{[]string{"proxy", "--stdio"}, "needs the server command"},
		{[]string{"proxy", "--stdio", "--record", "-", "--", "true"}, "stdout carries the protocol"},
		{[]string{"proxy", "--stdio", "--upstream", "http://x/", "--", "true"}, "for HTTP mode"},
		{[]string{"proxy", "--stdio", "--stdio-fault", "explode", "--", "true"}, "--stdio-fault"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--stdio-fault", "drop"}, "for stdio mode"},
		{[]string{"proxy", "--stdio", "--scenario", "stdio.drop", "--stdio-fault", "drop", "--", "true"}, "--stdio-fault is an alias of --scenario"},
		{[]string{"proxy", "--stdio", "--stdio-fault", "drop", "--params", "{}", "--", "true"}, "--stdio-fault is an alias of --scenario"},
		{[]string{"proxy", "--stdio", "--params", "{}", "--", "true"}, "--params needs --scenario"},
		{[]string{"proxy", "--stdio", "--scenario", "errors.tool_error", "--", "true"}, "errors.tool_error applies to HTTP servers"},
		{[]string{"proxy", "--stdio", "--scenario", "stdio.garbage", "--params", `{"line":""}`, "--", "true"}, "stdio.garbage: param line: empty"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--scenario", "stdio.drop"}, "stdio.drop applies to stdio servers (mcpdiag proxy --stdio)"},
		// A server command that cannot start is bad input too (mend21:
		// it exited 1, the status of lost records).
		{[]string{"proxy", "--stdio", "--", "/nonexistent/mcpdiag-server"}, "starting /nonexistent/mcpdiag-server: fork/exec /nonexistent/mcpdiag-server: no such file or directory"},
		{[]string{"proxy", "--stdio", "--", "mcpdiag-no-such-command", "arg"}, `starting mcpdiag-no-such-command: exec: "mcpdiag-no-such-command": executable file not found in $PATH`},
		{[]string{"proxy", "--stdio", "--", "/"}, `starting /: exec: "/": is a directory`},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 || out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing on stdout and one line with %q", tc.args, code, out.String(), errb.String(), tc.want)
		}
	}
}

// HTTP mode end to end: a real client through `mcpdiag proxy` to the
// fixture server; SIGTERM ends it cleanly and every exchange is in the
// record file; /metrics counts them.
func TestProxyHTTPCommand(t *testing.T) {
	up := httptest.NewServer(fixture.New(fixture.Options{}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "records.jsonl")
	ready := make(chan [2]string, 1)
	sigs := make(chan os.Signal, 1)
	o := proxyOptions{
		upstream: up.URL + "/mcp", listen: "127.0.0.1:0", recordFile: path, recordBodies: "errors",
		queue: 16, queuePolicy: "block", fsync: "close", metricsAddr: "127.0.0.1:0", shutdownTimeout: time.Second,
		ready: func(p, m string) { ready <- [2]string{p, m} }, signals: sigs,
	}
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- runProxy(context.Background(), nil, io.Discard, &stderr, nil, o) }()
	var urls [2]string
	select {
	case urls = <-ready:
	case err := <-done:
		t.Fatalf("the proxy ended: %v", err)
	case <-time.After(testwait.Bound):
		t.Fatalf("the proxy neither gave its URLs nor ended within %s", testwait.Bound)
	}
	c, err := client.New(client.Options{URL: urls[0], Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || call.Outcome != classify.ToolSuccess {
		t.Fatalf("call through the proxy: %v %v", err, call.Outcome)
	}
	// The exchange's metrics are counted when its record is made, just
	// after the client has the response: scrape until they show.
	const wantMetric = `mcpdiag_proxy_exchanges_total{layer="application",method="tools/call",outcome="TOOL_SUCCESS",tool="echo",transport="tcp"} 1`
	var metricsText []byte
	for deadline := time.Now().Add(testwait.Bound); ; {
		resp, err := http.Get(urls[1])
		if err != nil {
			t.Fatal(err)
		}
		metricsText, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(metricsText), wantMetric) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	sigs <- syscall.SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runProxy: %v", err)
		}
	case <-time.After(testwait.Bound):
		t.Fatalf("the proxy did not stop within %s", testwait.Bound)
	}
	recs := recordtest.ReadFile(t, path)
	if len(recs) != len(c.Exchanges()) {
		t.Errorf("%d records for %d exchanges", len(recs), len(c.Exchanges()))
	}
	if !strings.Contains(string(metricsText), wantMetric) {
		t.Errorf("metrics:\n%s", metricsText)
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("%d exchanges; %d records written\n", len(recs), len(recs))) {
		t.Errorf("stderr %q", stderr.String())
	}
}

// stdio mode: lines pass through, pairs are recorded, and the server's exit
// code is the proxy's.
func TestProxyStdioCommand(t *testing.T) {
	t.Setenv(lineServerEnv, "1")
	path := filepath.Join(t.TempDir(), "records.jsonl")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash"}}`,
	}, "\n") + "\n"
	var out, errb bytes.Buffer
	code := run([]string{"proxy", "--stdio", "--record", path, "--", os.Args[0], "-test.run=^$"}, strings.NewReader(in), &out, &errb)
	if code != 5 {
		t.Fatalf("exit %d, want the server's 5; stderr %q", code, errb.String())
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}` + "\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"outcome":"TOOL_SUCCESS"`) || !strings.Contains(lines[0], `"client":"c@1"`) ||
		!strings.Contains(lines[1], `"outcome":"NETWORK_ERROR"`) || !strings.Contains(lines[1], "exit status 5") {
		t.Errorf("records:\n%s", data)
	}
}

// stdio mode with a catalogue scenario: --scenario stdio.garbage writes
// the stray line before the response and records it, and the old
// --stdio-fault spelling of the same fault gives the same bytes and the
// same records.
func TestProxyStdioScenario(t *testing.T) {
	t.Setenv(lineServerEnv, "1")
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}` + "\n"
	response := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}` + "\n"
	var outs, recs []string
	for _, flags := range [][]string{
		{"--scenario", "stdio.garbage", "--params", `{"line":"hello"}`},
		{"--stdio-fault", "garbage,line=hello"},
	} {
		path := filepath.Join(t.TempDir(), "records.jsonl")
		args := append([]string{"proxy", "--stdio", "--record", path}, flags...)
		args = append(args, "--", os.Args[0], "-test.run=^$")
		var out, errb bytes.Buffer
		if code := run(args, strings.NewReader(in), &out, &errb); code != 0 {
			t.Fatalf("%q: exit %d; stderr %q", flags, code, errb.String())
		}
		if out.String() != "hello\n"+response {
			t.Errorf("%q: stdout %q, want the stray line, then %q", flags, out.String(), response)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			rec, err := record.Decode([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %s scenario=%s", rec.Method, rec.Outcome, rec.Scenario))
		}
		outs, recs = append(outs, out.String()), append(recs, strings.Join(got, "\n"))
	}
	if want := " STDIO_NOISE scenario=stdio.garbage\ntools/call TOOL_SUCCESS scenario=stdio.garbage"; recs[0] != want {
		t.Errorf("records:\n%s\nwant\n%s", recs[0], want)
	}
	if outs[0] != outs[1] || recs[0] != recs[1] {
		t.Errorf("--stdio-fault is not the same fault as --scenario:\n%q\n%q\n%s\n%s", outs[0], outs[1], recs[0], recs[1])
	}
}
