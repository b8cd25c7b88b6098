package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/internal/testbin"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// The "no silent loss" property, on the real binary: a record sink that
// fails (a full device, a file size limit reached part-way, a pipe whose
// reader left) is reported record by record and counted, the exit status is
// non-zero, and the traffic is not affected.

// testBinary builds mcpdiag once per test run and returns its path.
func testBinary(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, ".")
}

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Clean()
	os.Exit(code)
}

// process is a running mcpdiag with its stderr collected (and its stdout,
// unless the test takes it).
type process struct {
	cmd    *exec.Cmd
	stderr syncBuffer
	stdout syncBuffer
	lines  chan string // stderr lines, as they come
	done   chan struct{}
	err    error
}

// startProcess runs the binary with args; a nil stdout collects it.
func startProcess(t *testing.T, stdout io.Writer, argv ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(argv[0], argv[1:]...), lines: make(chan string, 1000), done: make(chan struct{})}
	if stdout == nil {
		stdout = &p.stdout
	}
	p.cmd.Stdout = stdout
	pr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		br := bufio.NewReader(pr)
		for {
			line, err := br.ReadString('\n')
			p.stderr.Write([]byte(line))
			if line != "" {
				select {
				case p.lines <- line:
				default:
				}
			}
			if err != nil {
				break
			}
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			testwait.Recv(t, p.done, "the killed process's stderr to end")
		}
	})
	return p
}

// waitLine returns the first stderr line that matches re.
func (p *process) waitLine(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	timeout := time.After(testwait.Bound)
	for {
		select {
		case l := <-p.lines:
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-p.done:
			t.Fatalf("the process ended (%v) before printing %s; stderr:\n%s", p.err, re, p.stderr.String())
		case <-timeout:
			t.Fatalf("no line %s within %s (a bound against a hang); stderr:\n%s", re, testwait.Bound, p.stderr.String())
		}
	}
}

// stop sends sig and returns the exit code.
func (p *process) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	if sig != nil {
		_ = p.cmd.Process.Signal(sig)
	}
	select {
	case <-p.done:
	case <-time.After(testwait.Bound):
		t.Fatalf("the process did not stop within %s (a bound against a hang); stderr:\n%s", testwait.Bound, p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatalf("wait: %v", p.err)
	}
	return 0
}

var proxyURLLine = regexp.MustCompile(`^mcpdiag proxy: (http://127\.0\.0\.1:\d+/\S*) → `)

// callsSucceed makes n real tool calls through u; each must succeed, since
// a failing record sink must not touch the traffic.
func callsSucceed(t *testing.T, u string, n int) int {
	t.Helper()
	exchanges := 0
	for i := range n {
		c, err := client.New(client.Options{URL: u, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		call, err := c.CallTool(context.Background(), "echo", json.RawMessage(fmt.Sprintf(`{"text":"call %d"}`, i)))
		if err != nil || call.Outcome != classify.ToolSuccess {
			t.Fatalf("call %d through a proxy whose record sink fails: %v %v", i, err, call.Outcome)
		}
		exchanges += len(c.Exchanges())
	}
	return exchanges
}

// summaryRE reads the proxy's last line.
var summaryRE = regexp.MustCompile(`mcpdiag proxy: (\d+) exchanges; (\d+) records written(?:, (\d+) LOST \(([^)]*)\))?`)

// checkLossReport checks the proxy's stderr: each lost record named (up to
// the cap), and a summary whose written count is `written` and whose lost
// count makes up the exchanges.
func checkLossReport(t *testing.T, stderr string, exchanges, written int, why string) {
	t.Helper()
	m := summaryRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary line in stderr:\n%s", stderr)
	}
	ex, _ := strconv.Atoi(m[1])
	wr, _ := strconv.Atoi(m[2])
	lost, _ := strconv.Atoi(m[3])
	if ex != exchanges || wr != written || lost != exchanges-written || lost == 0 {
		t.Errorf("summary %q: want %d exchanges, %d written, %d lost", m[0], exchanges, written, exchanges-written)
	}
	named := strings.Count(stderr, "mcpdiag proxy: record lost: exchange ")
	if named != min(lost, record.MaxNamedLosses) {
		t.Errorf("%d lost records named, want %d; stderr:\n%s", named, min(lost, record.MaxNamedLosses), stderr)
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "mcpdiag proxy: record lost: ") && (!strings.Contains(l, why) || !strings.Contains(l, "(POST tools/")) {
			t.Errorf("loss line %q does not name its exchange and %q", l, why)
		}
	}
}

// completeLines counts the lines of a file that end in "\n".
func completeLines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

func TestNoSilentLossProxyBinary(t *testing.T) {
	bin := testBinary(t)
	up := httptest.NewServer(fixture.New(fixture.Options{}))
	defer up.Close()
	base := []string{"proxy", "--upstream", up.URL + "/mcp", "--listen", "127.0.0.1:0", "--record-queue", "4"}

	t.Run("full device", func(t *testing.T) {
		p := startProcess(t, nil, append([]string{bin}, append(base, "--record", "/dev/full")...)...)
		u := p.waitLine(t, proxyURLLine)[1]
		n := callsSucceed(t, u, 3)
		if code := p.stop(t, syscall.SIGTERM); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		checkLossReport(t, p.stderr.String(), n, 0, "no space left on device")
	})

	t.Run("file size limit reached part-way", func(t *testing.T) {
		// ulimit -f: the file may grow to 8 blocks, then every write fails
		// (EFBIG) as on a disk that filled up while the proxy ran.
		path := filepath.Join(t.TempDir(), "rec.jsonl")
		argv := append([]string{"sh", "-c", `ulimit -f 8 && exec "$0" "$@"`, bin}, append(base, "--record", path)...)
		p := startProcess(t, nil, argv...)
		u := p.waitLine(t, proxyURLLine)[1]
		n := callsSucceed(t, u, 12)
		if code := p.stop(t, syscall.SIGTERM); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		lines := completeLines(t, path)
		if lines == 0 || lines >= n {
			t.Fatalf("%d complete lines for %d exchanges: the limit did not cut the file part-way", lines, n)
		}
		checkLossReport(t, p.stderr.String(), n, lines, "file too large")
	})

	t.Run("record pipe closed by its reader", func(t *testing.T) {
		// --record - | head -c 100: the reader takes 100 bytes and leaves.
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		p := startProcess(t, pw, append([]string{bin}, append(base, "--record", "-")...)...)
		pw.Close()
		u := p.waitLine(t, proxyURLLine)[1]
		n := callsSucceed(t, u, 1)
		if _, err := io.ReadFull(pr, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		pr.Close()
		n += callsSucceed(t, u, 3)
		if code := p.stop(t, syscall.SIGTERM); code != 1 {
			t.Errorf("exit %d, want 1 (141 is death by SIGPIPE)", code)
		}
		m := summaryRE.FindStringSubmatch(p.stderr.String())
		if m == nil {
			t.Fatalf("no summary:\n%s", p.stderr.String())
		}
		written, _ := strconv.Atoi(m[2])
		// What was written before the reader left is unknown to the test
		// (the pipe buffers it); what came after is lost, and each is named.
		checkLossReport(t, p.stderr.String(), n, written, "broken pipe")
		if written > n-6 {
			t.Errorf("%d of %d records written to a closed pipe", written, n)
		}
	})
}

// startServeLoggingToFull starts the real binary's serve on 127.0.0.1,
// its address given under addrFlag (--listen, or its alias --addr), with
// --log on a full device, and returns the process and the URL it prints.
func startServeLoggingToFull(t *testing.T, addrFlag string) (*process, string) {
	t.Helper()
	bin := testBinary(t)
	var stdout syncBuffer
	p := startProcess(t, &stdout, bin, "serve", addrFlag, "127.0.0.1:0", "--log", "/dev/full")
	var u string
	deadline := time.Now().Add(testwait.Bound)
	for u == "" && time.Now().Before(deadline) {
		if first, _, ok := strings.Cut(stdout.String(), "\n"); ok {
			u = strings.TrimPrefix(first, "mcpdiag serve: ")
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("no URL: %q", stdout.String())
	}
	return p, u
}

// serve --log on a full device: every request still answered, every lost
// log line named, exit 1.
func TestNoSilentLossServeBinary(t *testing.T) {
	p, u := startServeLoggingToFull(t, "--addr")
	n := callsSucceed(t, u, 3)
	if code := p.stop(t, syscall.SIGTERM); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	stderr := p.stderr.String()
	if got := strings.Count(stderr, "mcpdiag serve: --log: record lost: exchange "); got != n {
		t.Errorf("%d lost log lines named, want %d (one per request); stderr:\n%s", got, n, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf("mcpdiag serve: log: 0 records written, %d LOST (%d failed to write)", n, n)) {
		t.Errorf("no summary of the loss; stderr:\n%s", stderr)
	}
}

// call --record on a full device, and call --json into a closed pipe: the
// report is still printed, each lost record named, exit ExitRecordsLost.
func TestNoSilentLossCallBinary(t *testing.T) {
	bin := testBinary(t)
	up := httptest.NewServer(fixture.New(fixture.Options{}))
	defer up.Close()

	t.Run("record on a full device", func(t *testing.T) {
		p := startProcess(t, nil, bin, "call", up.URL+"/mcp", "echo", "--args", `{"text":"hi"}`, "--record", "/dev/full")
		if code := p.stop(t, nil); code != ExitRecordsLost {
			t.Errorf("exit %d, want %d", code, ExitRecordsLost)
		}
		if !strings.Contains(p.stdout.String(), "TOOL_SUCCESS (application layer)") {
			t.Errorf("the report is missing:\n%s", p.stdout.String())
		}
		stderr := p.stderr.String()
		if strings.Count(stderr, "mcpdiag call: --record: record lost: exchange ") != 2 || strings.Count(stderr, "mcpdiag call: --record: record lost: call ") != 1 {
			t.Errorf("the two exchanges and the call record are not each named:\n%s", stderr)
		}
		if !strings.Contains(stderr, "0 records written, 3 LOST (3 failed to write)") {
			t.Errorf("no count:\n%s", stderr)
		}
	})

	t.Run("json into a closed pipe", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pr.Close()
		p := startProcess(t, pw, bin, "call", up.URL+"/mcp", "echo", "--args", `{"text":"hi"}`, "--json")
		pw.Close()
		if code := p.stop(t, nil); code != ExitRecordsLost {
			t.Errorf("exit %d, want %d (141 is death by SIGPIPE); stderr:\n%s", code, ExitRecordsLost, p.stderr.String())
		}
		if !strings.Contains(p.stderr.String(), "0 records written, 3 LOST (3 failed to write)") {
			t.Errorf("stderr:\n%s", p.stderr.String())
		}
	})
}
