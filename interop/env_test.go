package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// The environment every interop test shares: the repository root, one
// built mcpdiag binary, one `mcpdiag serve` process, and the Node tools in
// .tools/node. Each is made on first use and shared; the processes are
// stopped when TestMain ends (and die with the test binary: Pdeathsig).

var update = flag.Bool("update", false, "rewrite the results table in docs/interop.md from this run")

var (
	root    string // the repository root
	workDir string // a temporary directory for this run
	started = time.Now()
)

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	if root, err = filepath.Abs(".."); err == nil {
		workDir, err = os.MkdirTemp("", "mcpdiag-interop-")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(2)
	}
	code := m.Run()
	stopAll()
	os.RemoveAll(workDir)
	line := results.summary()
	fmt.Println(line)
	if err := results.write(line, time.Since(started)); err != nil {
		fmt.Fprintln(os.Stderr, "interop: writing .tools/interop:", err)
	}
	if *update {
		if err := results.updateDoc(filepath.Join(root, "docs", "interop.md")); err != nil {
			fmt.Fprintln(os.Stderr, "interop: -update:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// once memoizes a set-up step and its error.
type once[T any] struct {
	o   sync.Once
	v   T
	err error
}

func (o *once[T]) get(f func() (T, error)) (T, error) {
	o.o.Do(func() { o.v, o.err = f() })
	return o.v, o.err
}

// --- the mcpdiag binary ----------------------------------------------------

var binOnce once[string]

// mcpdiagBin builds ./cmd/mcpdiag once (without -race: it is the program
// under test, run as a user runs it).
func mcpdiagBin(t testing.TB) string {
	t.Helper()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func buildBin() (string, error) {
	return binOnce.get(func() (string, error) {
		bin := filepath.Join(workDir, "mcpdiag")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/mcpdiag")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build ./cmd/mcpdiag: %v\n%s", err, out)
		}
		return bin, nil
	})
}

// --- processes -------------------------------------------------------------

// proc is a process the suite started: its own process group, killed with
// the test binary (Pdeathsig), stopped with SIGTERM then SIGKILL.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *watcher // stdout and stderr together
	done chan struct{}
	err  error

	stopOnce sync.Once
}

var (
	procsMu sync.Mutex
	procs   []*proc
)

// start runs cmd and waits until its output matches ready (the first
// submatch is returned: the URL it listens on).
func start(name string, cmd *exec.Cmd, ready *regexp.Regexp) (*proc, string, error) {
	p := &proc{name: name, cmd: cmd, out: newWatcher(ready), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cmd.WaitDelay == 0 {
		// Once the process has exited, a descendant outside its group that
		// holds its output open does not keep Wait (and stop) waiting.
		cmd.WaitDelay = 10 * time.Second
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	procsMu.Lock()
	procs = append(procs, p)
	procsMu.Unlock()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case m := <-p.out.matched:
		return p, m, nil
	case <-p.done:
		return nil, "", fmt.Errorf("%s exited before it was ready (%v):\n%s", name, p.err, p.out.String())
	case <-time.After(testwait.Bound):
		// A bound against a hang: a peer's start on a loaded machine takes
		// seconds, and the wait ends as soon as the address is printed.
		p.stop()
		return nil, "", fmt.Errorf("%s printed no address within %s:\n%s", name, testwait.Bound, p.out.String())
	}
}

// stopGrace is how long stop waits after SIGTERM before SIGKILL: longer
// than mcpdiag proxy's own shutdown (proxy.DefaultShutdownTimeout, 5 s, which
// net/http's Shutdown can take in full for a client's connection that never
// sent a request), so that a proxy under test is never killed while it
// flushes its records. A process that exits at once takes no longer.
const stopGrace = 30 * time.Second

// stop ends the process group: SIGTERM, then SIGKILL after stopGrace.
func (p *proc) stop() {
	p.stopOnce.Do(func() {
		pid := p.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-p.done
		}
	})
}

func stopAll() {
	procsMu.Lock()
	ps := append([]*proc(nil), procs...)
	procsMu.Unlock()
	for _, p := range ps {
		p.stop()
	}
}

// watcher keeps a process's output (the first 1 MiB) and reports the first
// match of a pattern.
type watcher struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	re      *regexp.Regexp
	matched chan string
	found   bool
}

func newWatcher(re *regexp.Regexp) *watcher {
	return &watcher{re: re, matched: make(chan string, 1)}
}

func (w *watcher) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := 1<<20 - w.buf.Len(); room > 0 {
		w.buf.Write(b[:min(len(b), room)])
	}
	if !w.found && w.re != nil {
		if m := w.re.FindSubmatch(w.buf.Bytes()); m != nil {
			w.found = true
			w.matched <- string(m[len(m)-1])
		}
	}
	return len(b), nil
}

func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// --- mcpdiag serve and mcpdiag proxy -----------------------------------------

var serveOnce once[string]

// serveBase starts one `mcpdiag serve` for the whole run (no fault on /mcp)
// and returns its base URL (http://127.0.0.1:PORT). Tests use the
// per-scenario endpoints /s/{id}/mcp with a run=… query of their own, so
// they never share counters.
func serveBase(t testing.TB) string {
	t.Helper()
	base, err := serveOnce.get(func() (string, error) {
		bin, err := buildBin()
		if err != nil {
			return "", err
		}
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--seed", "7")
		_, url, err := start("mcpdiag serve", cmd, regexp.MustCompile(`mcpdiag serve: (http://127\.0\.0\.1:\d+)/mcp`))
		return url, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// recordingProxy is one `mcpdiag proxy --record` process.
type recordingProxy struct {
	p      *proc
	base   string // http://127.0.0.1:PORT
	record string // the record file
}

// startProxy starts `mcpdiag proxy --upstream upstream --record FILE` on
// 127.0.0.1; it is stopped when the test ends (or by stop).
func startProxy(t testing.TB, name, upstream string) *recordingProxy {
	t.Helper()
	bin := mcpdiagBin(t)
	rec := filepath.Join(t.TempDir(), name+".jsonl")
	cmd := exec.Command(bin, "proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", "--record", rec)
	p, url, err := start("mcpdiag proxy ("+name+")", cmd, regexp.MustCompile(`mcpdiag proxy: (http://127\.0\.0\.1:\d+)`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return &recordingProxy{p: p, base: url, record: rec}
}

// records stops the proxy (SIGTERM: it drains and closes its record file)
// and returns its exchange records.
func (rp *recordingProxy) records(t testing.TB) []exchangeRecord {
	t.Helper()
	rp.p.stop()
	if rp.p.err != nil {
		t.Errorf("mcpdiag proxy exited with %v:\n%s", rp.p.err, rp.p.out.String())
	}
	b, err := os.ReadFile(rp.record)
	if err != nil {
		t.Fatal(err)
	}
	var out []exchangeRecord
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r exchangeRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s line %d: %v", rp.record, i+1, err)
		}
		if r.Kind == "exchange" {
			out = append(out, r)
		}
	}
	return out
}

// exchangeRecord is the part of a record (docs/records.md) the suite reads.
type exchangeRecord struct {
	Time            time.Time `json:"time"`
	Kind            string    `json:"kind"`
	Client          string    `json:"client"`
	ProtocolVersion string    `json:"protocolVersion"`
	Method          string    `json:"method"`
	Tool            string    `json:"tool"`
	URL             string    `json:"url"`
	HTTPMethod      string    `json:"httpMethod"`
	Status          int       `json:"status"`
	Outcome         string    `json:"outcome"`
	Layer           string    `json:"layer"`
	ResultType      string    `json:"resultType"`
	IsError         *bool     `json:"isError"`
	JSONRPC         struct {
		ID        json.RawMessage `json:"id"`
		ErrorCode *int            `json:"errorCode"`
	} `json:"jsonrpc"`
	AnsweredOn   string   `json:"answeredOn"`
	ClientAnswer bool     `json:"clientAnswer"`
	Flags        []string `json:"flags"`
	StreamAnswer *struct {
		Seen    bool   `json:"seen"`
		NotSeen string `json:"notSeen"`
	} `json:"streamAnswer"`
	StreamAnswers *struct {
		Responses int `json:"responses"`
		Paired    int `json:"paired"`
		Late      int `json:"late"`
		Unpaired  int `json:"unpaired"`
	} `json:"streamAnswers"`
	Warnings []struct {
		Code string `json:"code"`
	} `json:"warnings"`
	SSE *struct {
		Requests int `json:"requests"`
	} `json:"sse"`
	Note string `json:"note"`
}

func (r exchangeRecord) warningCodes() []string {
	var codes []string
	for _, w := range r.Warnings {
		codes = append(codes, w.Code)
	}
	return codes
}

// toolCalls returns the tools/call records whose URL ends with suffix (an
// endpoint path and its query), in the order they were sent.
func toolCalls(recs []exchangeRecord, suffix string) []exchangeRecord {
	var out []exchangeRecord
	for _, r := range recs {
		if r.Method == "tools/call" && strings.HasSuffix(r.URL, suffix) {
			out = append(out, r)
		}
	}
	// In the order they were sent: a record is written when its exchange
	// ends, and an MRTR round's record can reach the file after the next
	// round's (TestGoPeers saw TOOL_SUCCESS before INPUT_REQUIRED once,
	// under load).
	slices.SortStableFunc(out, func(a, b exchangeRecord) int { return a.Time.Compare(b.Time) })
	return out
}

// --- Node -----------------------------------------------------------------

// nodeTools is the pinned Node install in .tools/node.
type nodeTools struct {
	prefix   string // .tools/node, the npm prefix
	node     string // its Node 22 binary
	bin      string // node_modules/.bin
	version  string // node --version, without the v
	packages map[string]string
	notes    []string // one line per pinned package: version, engines, verdict
}

var nodeOnce once[*nodeTools]

// errNodeOff is returned when MCPDIAG_CONFORMANCE=off asks to skip Node.
var errNodeOff = errors.New("MCPDIAG_CONFORMANCE=off: the Node peers are skipped on purpose")

// pinned are the npm packages the suite runs, from conformance/package.json.
var pinned = []string{"@modelcontextprotocol/conformance", "@modelcontextprotocol/client", "@modelcontextprotocol/server-everything", "@modelcontextprotocol/inspector"}

// needNode returns the Node tools, installing them on first use, or skips
// the test (MCPDIAG_CONFORMANCE=off) with the reason recorded as a skipped
// row for each of rows.
func needNode(t *testing.T, skipped ...row) *nodeTools {
	t.Helper()
	nt, err := nodeOnce.get(installNode)
	if errors.Is(err, errNodeOff) {
		skipRows(t, err.Error(), err.Error(), skipped...)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nt.notes {
		t.Log(n)
	}
	return nt
}

// skipShort skips the test under -short, each of rows recorded as a
// skipped row; why is what -short leaves out ("server-everything runs on
// node").
func skipShort(t *testing.T, why string, rows ...row) {
	t.Helper()
	if testing.Short() {
		skipRows(t, "-short", "-short: "+why, rows...)
	}
}

// skipRows records each of rows as skipped for reason, then skips the test
// with msg.
func skipRows(t *testing.T, reason, msg string, rows ...row) {
	t.Helper()
	for _, r := range rows {
		r.Skipped = reason
		results.add(t, r)
	}
	t.Skip(msg)
}

// installNode installs Node 22 and the pinned packages into .tools/node with
// npm ci, exactly as scripts/conformance-server.sh does (same cache check,
// same lock), unless that lockfile is already installed.
func installNode() (*nodeTools, error) {
	if os.Getenv("MCPDIAG_CONFORMANCE") == "off" {
		return nil, errNodeOff
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not on PATH: the Node peers need node and npm (any version that runs npm ci; "+
				"Node 22 is installed into .tools/node). Install them, or set MCPDIAG_CONFORMANCE=off to skip them knowingly", tool)
		}
	}
	tools := filepath.Join(root, ".tools")
	prefix := filepath.Join(tools, "node")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(tools, "node.lock"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	deadline := time.Now().Add(10 * time.Minute)
	for syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			return nil, errors.New(".tools/node.lock is held by another run for 10 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	nt := &nodeTools{prefix: prefix, bin: filepath.Join(prefix, "node_modules", ".bin"), packages: map[string]string{}}
	nt.node = filepath.Join(nt.bin, "node")
	if !nt.installed() {
		if err := nt.install(); err != nil {
			return nil, err
		}
		if !nt.installed() {
			return nil, errors.New("npm ci finished but .tools/node has no Node 22, no conformance binary or a pinned package missing")
		}
	}
	if err := nt.check(); err != nil {
		return nil, err
	}
	return nt, nil
}

func sameFile(a, b string) bool {
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// installed is the scripts' cache check, plus the interop packages.
func (nt *nodeTools) installed() bool {
	conf := filepath.Join(root, "conformance")
	if !sameFile(filepath.Join(conf, "package.json"), filepath.Join(nt.prefix, "package.json")) ||
		!sameFile(filepath.Join(conf, "package-lock.json"), filepath.Join(nt.prefix, "package-lock.json")) {
		return false
	}
	if _, err := os.Stat(filepath.Join(nt.bin, "conformance")); err != nil {
		return false
	}
	for _, p := range pinned {
		if _, err := os.Stat(filepath.Join(nt.prefix, "node_modules", p, "package.json")); err != nil {
			return false
		}
	}
	out, err := exec.Command(nt.node, "--version").Output()
	return err == nil && strings.HasPrefix(string(out), "v22.")
}

func (nt *nodeTools) install() error {
	if err := os.RemoveAll(nt.prefix); err != nil {
		return err
	}
	if err := os.MkdirAll(nt.prefix, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(root, "conformance", f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(nt.prefix, f), b, 0o644); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--prefix", nt.prefix, "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(nt.prefix, "npm-ci.log"), out, 0o644)
	if err != nil {
		_ = os.Remove(filepath.Join(nt.prefix, "package-lock.json")) // not cached: try again next time
		return fmt.Errorf("npm ci --prefix .tools/node: %v\n%s", err, out)
	}
	return nil
}

// check reads the installed versions and holds each pinned package's
// engines field against the Node that runs it.
func (nt *nodeTools) check() error {
	out, err := exec.Command(nt.node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %v", nt.node, err)
	}
	nt.version = strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	for _, p := range pinned {
		var pkg struct {
			Version string `json:"version"`
			Engines struct {
				Node string `json:"node"`
			} `json:"engines"`
		}
		b, err := os.ReadFile(filepath.Join(nt.prefix, "node_modules", p, "package.json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			return fmt.Errorf("%s/package.json: %v", p, err)
		}
		nt.packages[p] = pkg.Version
		verdict := "declares no engines.node"
		if pkg.Engines.Node != "" {
			ok, known := satisfies(nt.version, pkg.Engines.Node)
			switch {
			case !known:
				verdict = fmt.Sprintf("engines.node %q (not checked: a range this check does not read)", pkg.Engines.Node)
			case ok:
				verdict = fmt.Sprintf("engines.node %q: satisfied", pkg.Engines.Node)
			default:
				// Node 22 comes from the lockfile; a package that needs more
				// must be pinned to an older version that runs here.
				return fmt.Errorf("%s %s needs Node %s, and .tools/node has %s: pin the newest version that runs on it "+
					"(conformance/package.json) and say so in docs/interop.md", p, pkg.Version, pkg.Engines.Node, nt.version)
			}
		}
		nt.notes = append(nt.notes, fmt.Sprintf("%s %s on Node %s: %s", p, pkg.Version, nt.version, verdict))
	}
	return nil
}

// satisfies reads the engines ranges seen in practice: alternatives joined
// with "||", each ">=X[.Y[.Z]]", "^X[…]" or "X[…]" (an exact major). known
// is false for anything else.
func satisfies(version, ranges string) (ok, known bool) {
	v := semver(version)
	for _, alt := range strings.Split(ranges, "||") {
		alt = strings.TrimSpace(alt)
		switch {
		case strings.HasPrefix(alt, ">="):
			min := semver(strings.TrimSpace(alt[2:]))
			if min == nil || v == nil {
				return false, false
			}
			if compare(v, min) >= 0 {
				return true, true
			}
		case strings.HasPrefix(alt, "^"):
			min := semver(alt[1:])
			if min == nil || v == nil {
				return false, false
			}
			if v[0] == min[0] && compare(v, min) >= 0 {
				return true, true
			}
		default:
			m := semver(alt)
			if m == nil || v == nil {
				return false, false
			}
			if v[0] == m[0] && compare(v, m) >= 0 {
				return true, true
			}
		}
	}
	return false, true
}

func semver(s string) []int {
	parts := strings.Split(strings.TrimPrefix(strings.TrimSpace(s), "v"), ".")
	out := make([]int, 3)
	for i := 0; i < len(parts) && i < 3; i++ {
		if _, err := fmt.Sscanf(parts[i], "%d", &out[i]); err != nil {
			if parts[i] == "x" || parts[i] == "*" {
				continue
			}
			return nil
		}
	}
	return out
}

func compare(a, b []int) int {
	for i := range 3 {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// runNode runs a script from interop/node with the pinned Node, stdin in,
// bounded by timeout; it returns stdout and fails the test on a non-zero
// exit.
func runNode(t *testing.T, nt *nodeTools, timeout time.Duration, script string, stdin []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nt.node, filepath.Join(root, "interop", "node", script))
	cmd.Env = append(os.Environ(), "MCPDIAG_NODE_PREFIX="+nt.prefix)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("node %s stderr:\n%s", script, trimTo(stderr.String(), 4000))
	}
	return stdout.Bytes()
}

func trimTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var _ io.Writer = (*watcher)(nil)
