package interop_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The MCP Inspector CLI (npm @modelcontextprotocol/inspector 2.12.0, whose
// launcher's --cli mode is the CLI; the separate inspector-cli package
// stopped at 1.0.3) calls five scenarios of `mcpdiag serve`, directly and
// through a recording `mcpdiag proxy`, in both eras. A row holds what the
// Inspector surfaced (its output and exit code) next to mcpdiag's outcome
// for the same tools/call (the proxy's record).

// inspectorCase is one scenario the Inspector calls (tool echo, text=hi).
type inspectorCase struct {
	name    string
	id      string
	params  string // the endpoint's params query, when not the defaults
	outcome string // mcpdiag's outcome for the tools/call
	status  int    // its HTTP status
	code    int    // its JSON-RPC error code, 0 for none
	cut     bool   // the stream is cut: the Inspector waits (bounded below)
}

var inspectorCases = []inspectorCase{
	{name: "baseline", id: "baseline", outcome: "TOOL_SUCCESS", status: 200},
	{name: "errors.tool_error", id: "errors.tool_error", outcome: "TOOL_ERROR", status: 200},
	{name: "errors.jsonrpc_error (-32602)", id: "errors.jsonrpc_error", outcome: "JSONRPC_ERROR", status: 200, code: -32602},
	{name: "errors.http_status_sequence (503 on tools/call)", id: "errors.http_status_sequence",
		params: `{"statusCodes":[503],"match":{"method":"tools/call"}}`, outcome: "HTTP_ERROR", status: 503},
	{name: "sse.truncated (cut stream)", id: "sse.truncated", outcome: "STREAM_INCOMPLETE", status: 200, cut: true},
}

// inspectorEras maps the era to the Inspector's --protocol-era.
var inspectorEras = []struct{ era, flag string }{{"2025-11-25", "legacy"}, {"2026-07-28", "modern"}}

// afterCut is how long the Inspector is watched after the server cut the
// stream (the server's own log says when) before it is stopped. Its own
// request timeout is 60 s and the CLI has no option for it (--connect-timeout
// bounds the connection only; a config file's requestTimeout is not passed
// to the CLI's client), so the test stops it and holds what it showed so far.
const afterCut = 3 * time.Second

func (c inspectorCase) endpoint(era, route string) string {
	run := strings.NewReplacer(" ", "-", ".", "-", "/", "-").Replace("inspector-" + era + "-" + route + "-" + c.id)
	q := "?run=" + run
	if c.params != "" {
		q += "&params=" + url.QueryEscape(c.params)
	}
	return "/s/" + c.id + "/mcp" + q
}

// TestInspectorCLI runs the MCP Inspector CLI against the scenarios.
func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	const peer = "MCP Inspector CLI 2.12.0"
	routes := []string{"direct", "via mcpdiag proxy"}
	var rows []row
	for i, e := range inspectorEras {
		for j, c := range inspectorCases {
			for k, route := range routes {
				rows = append(rows, row{Section: 4, Order: i*100 + j*10 + k, Peer: peer, Direction: "peer → mcpdiag serve",
					Era: e.era, Scenario: c.name, Route: route})
			}
		}
	}
	results.expect(t, rows)
	skipShort(t, "the Inspector runs on node", rows...)
	nt := needNode(t, rows...)
	if v := nt.packages["@modelcontextprotocol/inspector"]; v != "2.12.0" {
		t.Fatalf("@modelcontextprotocol/inspector %s installed, want the pinned 2.12.0", v)
	}
	base := serveBase(t)
	px := startProxy(t, "inspector", base+"/mcp")
	home := t.TempDir() // the Inspector's catalog and state stay here

	runs := map[string]inspectorRun{}
	for _, e := range inspectorEras {
		for _, c := range inspectorCases {
			for _, route := range routes {
				front := base
				if route != "direct" {
					front = px.base
				}
				ep := c.endpoint(e.era, route)
				runs[e.era+c.id+route] = runInspector(t, nt, home, base, front+ep, ep, e.flag, c.cut)
			}
		}
	}
	recs := px.records(t)
	for i, e := range inspectorEras {
		for j, c := range inspectorCases {
			for k, route := range routes {
				r := rows[i*len(inspectorCases)*len(routes)+j*len(routes)+k]
				run := runs[e.era+c.id+route]
				var calls []exchangeRecord
				if route != "direct" {
					calls = toolCalls(recs, c.endpoint(e.era, route))
				}
				r.Want, r.Got, r.Pass = judgeInspector(c, e.era, route, run, runs[e.era+c.id+"direct"], calls)
				results.add(t, r)
			}
		}
	}
}

// inspectorRun is what one Inspector run showed.
type inspectorRun struct {
	exit    int    // -1 when it was stopped
	stdout  string // --format json: one JSON line, the result
	stderr  string // the error envelope, one JSON line
	stopped bool   // still running afterCut after the cut: stopped by the test
	err     string // the run could not be judged (did not start, no cut seen)
	took    time.Duration
}

// runInspector runs `inspector --cli URL --method tools/call --tool-name
// echo --tool-arg text=hi --format json` with the pinned Node, in its own
// process group. For a cut stream it waits until serve's log shows the cut
// tools/call of endpoint ep, then at most afterCut, and stops it.
func runInspector(t *testing.T, nt *nodeTools, home, serve, target, ep, era string, cut bool) inspectorRun {
	t.Helper()
	launcher := filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	cmd := exec.Command(nt.node, launcher, "--cli", target, "--protocol-era", era,
		"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi", "--format", "json")
	cmd.Env = []string{"PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + home, "MCP_INSPECTOR_SECRET_STORE=memory", "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return inspectorRun{err: err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }
	run := inspectorRun{}
	// A bound on every run: the Inspector's own 60 s request timeout must
	// not be reached by any case (a cut stream is stopped well before).
	limit := time.NewTimer(50 * time.Second)
	defer limit.Stop()
	quit := make(chan struct{})
	defer close(quit)
	var cutSeen <-chan time.Time
	if cut {
		cutSeen = watchCut(serve, ep, quit)
	}
	select {
	case err := <-done:
		run.exit = cmd.ProcessState.ExitCode()
		if err != nil && run.exit < 0 {
			run.err = err.Error()
		}
	case at := <-cutSeen:
		select {
		case <-done:
			run.exit = cmd.ProcessState.ExitCode()
		case <-time.After(afterCut - time.Since(at)):
			kill()
			run.exit, run.stopped = -1, true
		}
	case <-limit.C:
		kill()
		run.exit, run.err = -1, "no exit within 50 s"
		if cut {
			run.err = "serve's log showed no cut tools/call within 50 s"
		}
	}
	run.took = time.Since(start)
	run.stdout, run.stderr = strings.TrimSpace(stdout.String()), strings.TrimSpace(stderr.String())
	return run
}

// watchCut polls serve's log until a tools/call of endpoint ep on which a
// fault fired appears, and sends the time it saw it; it ends when quit is
// closed.
func watchCut(serve, ep string, quit <-chan struct{}) <-chan time.Time {
	out := make(chan time.Time, 1)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			resp, err := http.Get(serve + "/admin/log")
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var l struct {
					URL    string `json:"url"`
					Method string `json:"method"`
					Fault  struct {
						Fired []string `json:"fired"`
					} `json:"fault"`
				}
				if json.Unmarshal(sc.Bytes(), &l) == nil && l.URL == ep && l.Method == "tools/call" && len(l.Fault.Fired) > 0 {
					out <- time.Now()
					return
				}
			}
		}
	}()
	return out
}

// inspectorView is what the Inspector's output says.
type inspectorView struct {
	result  bool
	isError bool
	text    string
	errCode string // the envelope's code ("error", "tool_is_error")
	errMsg  string
	status  int // the envelope's HTTP status, when it has one
}

func (run inspectorRun) view() (inspectorView, error) {
	var v inspectorView
	if run.stdout != "" {
		var out struct {
			Result *struct {
				Content []struct {
					Type, Text string
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(run.stdout), &out); err != nil {
			return v, fmt.Errorf("stdout %q: %v", trimTo(run.stdout, 200), err)
		}
		if out.Result != nil {
			v.result, v.isError = true, out.Result.IsError
			for _, c := range out.Result.Content {
				v.text += c.Text
			}
		}
	}
	// stderr holds the error envelope as its last line (status lines, if
	// any, come before it).
	if lines := strings.Split(run.stderr, "\n"); run.stderr != "" {
		var env struct {
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Status  int    `json:"status"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(lines[len(lines)-1]), &env) == nil && env.Error != nil {
			v.errCode, v.errMsg, v.status = env.Error.Code, env.Error.Message, env.Error.Status
		}
	}
	return v, nil
}

func (v inspectorView) String() string {
	var parts []string
	if v.result {
		parts = append(parts, fmt.Sprintf("result isError=%v %q", v.isError, trimTo(v.text, 60)))
	}
	if v.errCode != "" {
		e := fmt.Sprintf("error %s %q", v.errCode, trimTo(v.errMsg, 100))
		if v.status != 0 {
			e += fmt.Sprintf(" status %d", v.status)
		}
		parts = append(parts, e)
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// judgeInspector holds one run against the scenario, and a proxied run
// also against the proxy's record of its tools/call and against the direct
// run (the proxy changes nothing the Inspector can see).
func judgeInspector(c inspectorCase, era, route string, run, direct inspectorRun, calls []exchangeRecord) (want, got string, pass bool) {
	v, err := run.view()
	var problems []string
	if err != nil {
		problems = append(problems, err.Error())
	}
	if run.err != "" {
		problems = append(problems, run.err)
	}
	switch {
	case c.cut:
		want = fmt.Sprintf("no result and no error %s after the server cut the stream (the Inspector waits for its 60 s request timeout); mcpdiag says %s", afterCut, c.outcome)
		got = fmt.Sprintf("Inspector: %s, still waiting %s after the cut (stopped)", v, afterCut)
		if !run.stopped || v.result || v.errCode != "" {
			got = fmt.Sprintf("Inspector: %s, exit %d after %s", v, run.exit, run.took.Round(100*time.Millisecond))
			problems = append(problems, "the Inspector did not keep waiting")
		}
	default:
		got = fmt.Sprintf("Inspector: %s, exit %d", v, run.exit)
		switch c.outcome {
		case "TOOL_SUCCESS":
			want = `a result, isError=false, "hi", exit 0`
			if !v.result || v.isError || v.text != "hi" || run.exit != 0 {
				problems = append(problems, "not the result")
			}
		case "TOOL_ERROR":
			want = `a result, isError=true, "Tool-side failure", error tool_is_error, exit 5`
			if !v.result || !v.isError || v.text != "Tool-side failure" || v.errCode != "tool_is_error" || run.exit != 5 {
				problems = append(problems, "not the tool error")
			}
		case "JSONRPC_ERROR":
			want = `no result, error "Invalid params", exit 1`
			if v.result || v.errMsg != "Invalid params" || run.exit != 1 {
				problems = append(problems, "not the JSON-RPC error")
			}
		case "HTTP_ERROR":
			want = fmt.Sprintf("no result, an error with status %d, exit 1", c.status)
			if v.result || v.status != c.status || run.exit != 1 {
				problems = append(problems, "not the HTTP error")
			}
		}
		want += "; mcpdiag says " + c.outcome
	}
	if route == "direct" {
		got += "; mcpdiag (scenario): " + c.outcome
	} else {
		if dv, _ := direct.view(); dv.String() != v.String() || direct.exit != run.exit {
			problems = append(problems, fmt.Sprintf("through the proxy the Inspector showed %s (exit %d), directly %s (exit %d)", v, run.exit, dv, direct.exit))
		}
		if len(calls) == 0 {
			problems = append(problems, "the proxy recorded no tools/call")
			got += "; no record"
		} else {
			final := calls[len(calls)-1]
			rec := final.Outcome
			if final.JSONRPC.ErrorCode != nil {
				rec += fmt.Sprintf(" %d", *final.JSONRPC.ErrorCode)
			}
			if final.Status != 200 {
				rec += fmt.Sprintf(" (HTTP %d)", final.Status)
			}
			got += "; record: " + rec
			code := 0
			if final.JSONRPC.ErrorCode != nil {
				code = *final.JSONRPC.ErrorCode
			}
			if final.Outcome != c.outcome || final.Status != c.status || code != c.code || final.ProtocolVersion != era ||
				!strings.HasPrefix(final.Client, "inspector-cli@") {
				problems = append(problems, fmt.Sprintf("the record says %s, status %d, code %d, %s, client %q", final.Outcome, final.Status, code, final.ProtocolVersion, final.Client))
			}
		}
	}
	if len(problems) > 0 {
		return want, got + "; " + strings.Join(problems, "; "), false
	}
	return want, got, true
}
