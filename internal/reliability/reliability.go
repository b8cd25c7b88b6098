// Package reliability drives the real mcpdiag binary on loopback, mcpdiag
// serve as the upstream and mcpdiag proxy in front of it, and counts what
// is recorded and what is lost: under load with faults and clients that
// leave, on SIGTERM, SIGINT and kill -9 in the middle of the load, with a
// record sink on a full disk, under slowloris, and with thousands of idle
// SSE streams open.
//
// Each experiment returns its figures and the list of truths that did not
// hold (records written == exchanges forwarded, a summary that matches the
// file, a non-zero exit status when records were lost, ...). Nothing is a
// wall-clock assertion: times are measured and reported, never compared
// with a limit, except the bounds that keep a broken run from hanging.
//
// TestReliability runs every experiment with small counts (the test
// command runs it); scripts/reliability.sh runs the full counts that
// docs/reliability.md reports.
package reliability

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
)

// Env is where the experiments run.
type Env struct {
	// Bin is the mcpdiag binary.
	Bin string
	// Dir is a scratch directory (records, logs).
	Dir string
	// Logf, when set, receives progress lines.
	Logf func(format string, args ...any)
}

func (e *Env) logf(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

// Bounds that keep a broken run from hanging; never asserted as speeds.
const (
	startLimit = 60 * time.Second
	stopLimit  = 120 * time.Second
)

// Truths collects the checks of one experiment that did not hold.
type Truths []string

// Check adds the message when ok is false.
func (t *Truths) Check(ok bool, format string, args ...any) {
	if !ok {
		*t = append(*t, fmt.Sprintf(format, args...))
	}
}

var (
	serveURLLine   = regexp.MustCompile(`^mcpdiag serve: (http://127\.0\.0\.1:\d+)/mcp$`)
	proxyURLLine   = regexp.MustCompile(`^mcpdiag proxy: (http://127\.0\.0\.1:\d+)/mcp → `)
	metricsURLLine = regexp.MustCompile(`^mcpdiag proxy: metrics at (http://\S+)$`)
	shuttingDown   = regexp.MustCompile(`^mcpdiag proxy: \S+: shutting down; `)
	// summaryLine is the proxy's last line.
	summaryLine = regexp.MustCompile(`^mcpdiag proxy: (\d+) exchanges(?: \(([^)]*)\))?; (\d+) records written(?:, (\d+) LOST \(([^)]*)\))?`)
	leftLine    = regexp.MustCompile(`(\d+) left by the client`)
)

// Upstream is a running mcpdiag serve with its log file.
type Upstream struct {
	*Proc
	Base    string // http://127.0.0.1:PORT
	LogPath string
}

// StartServe starts mcpdiag serve on a free loopback port, logging every
// request to a file.
func (e *Env) StartServe(name string, extra ...string) (*Upstream, error) {
	logPath := filepath.Join(e.Dir, name+".serve.jsonl")
	_ = os.Remove(logPath) // serve appends: start from nothing
	args := append([]string{e.Bin, "serve", "--addr", "127.0.0.1:0", "--seed", "1", "--log", logPath}, extra...)
	p, err := Start(name+" serve", args...)
	if err != nil {
		return nil, err
	}
	m, err := p.WaitLine(serveURLLine, startLimit)
	if err != nil {
		p.Kill()
		return nil, err
	}
	return &Upstream{Proc: p, Base: m[1], LogPath: logPath}, nil
}

// Stop ends serve with SIGTERM (which writes out its log) and returns its
// exit code.
func (u *Upstream) Stop() (int, error) {
	_ = u.Signal(syscall.SIGTERM)
	return u.Wait(stopLimit)
}

// Proxy is a running mcpdiag proxy.
type Proxy struct {
	*Proc
	Base       string // http://127.0.0.1:PORT
	Metrics    string // its /metrics URL
	RecordPath string
}

// StartProxy starts mcpdiag proxy in front of up, recording to recordPath
// (a file in Dir when empty), with metrics on a free port; argv0, when
// set, is a shell prefix (sh -c 'ulimit -f N; exec "$0" "$@"').
func (e *Env) StartProxy(name string, up *Upstream, recordPath string, prefix []string, extra ...string) (*Proxy, error) {
	if recordPath == "" {
		recordPath = filepath.Join(e.Dir, name+".records.jsonl")
	}
	if strings.HasPrefix(recordPath, e.Dir) || !strings.HasPrefix(recordPath, "/dev/") {
		_ = os.Remove(recordPath) // the proxy appends: start from nothing
	}
	args := append(append([]string{}, prefix...), e.Bin, "proxy", "--upstream", up.Base+"/mcp", "--listen", "127.0.0.1:0",
		"--metrics", "127.0.0.1:0", "--record", recordPath)
	args = append(args, extra...)
	p, err := Start(name+" proxy", args...)
	if err != nil {
		return nil, err
	}
	m, err := p.WaitLine(proxyURLLine, startLimit)
	if err != nil {
		p.Kill()
		return nil, err
	}
	mm, err := p.WaitLine(metricsURLLine, startLimit)
	if err != nil {
		p.Kill()
		return nil, err
	}
	return &Proxy{Proc: p, Base: m[1], Metrics: mm[1], RecordPath: recordPath}, nil
}

// Summary is the proxy's last stderr line, read.
type Summary struct {
	Line      string
	Exchanges int
	Written   int
	Lost      int
	// ClientGone is the "N left by the client" count.
	ClientGone int
}

// Summary finds and reads the proxy's summary line.
func (p *Proxy) Summary() (Summary, bool) {
	for _, l := range strings.Split(p.Stderr(), "\n") {
		if m := summaryLine.FindStringSubmatch(l); m != nil {
			s := Summary{Line: l}
			s.Exchanges, _ = strconv.Atoi(m[1])
			s.Written, _ = strconv.Atoi(m[3])
			s.Lost, _ = strconv.Atoi(m[4])
			if g := leftLine.FindStringSubmatch(m[2]); g != nil {
				s.ClientGone, _ = strconv.Atoi(g[1])
			}
			return s, true
		}
	}
	return Summary{}, false
}

// metric reads the sum of a metric's samples from the proxy's /metrics.
func (p *Proxy) metric(name string) (float64, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(p.Metrics)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, name) || (len(l) > len(name) && l[len(name)] != ' ' && l[len(name)] != '{') {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum, sc.Err()
}

// InFlight is the proxy's count of open exchanges.
func (p *Proxy) InFlight() (int, error) {
	v, err := p.metric("mcpdiag_proxy_in_flight")
	return int(v), err
}

// WaitInFlight waits until cond holds of the proxy's open exchanges.
func (p *Proxy) WaitInFlight(cond func(int) bool, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		n, err := p.InFlight()
		if err == nil && cond(n) {
			return n, nil
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("in-flight exchanges %d after %s (%v)", n, limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Lines is a JSONL file read back: its complete lines decoded, and what
// was wrong with it.
type Lines struct {
	Records []*record.Record
	Bad     int  // complete lines that do not decode
	Partial bool // the file ends in a line without its newline
	// ByID holds the records by their id's JSON text, not by its value
	// (wire.ID.Key): the experiments send integer ids written as
	// strconv.Itoa writes them, and a record must carry each as it was
	// sent, so an id the proxy or serve wrote another way (1.0, "1") is
	// a record of no call here and fails the check that looks for it.
	ByID     map[string][]*record.Record
	Complete int // lines that end in "\n"
}

// ReadLines reads a record or log file.
func ReadLines(path string) (Lines, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Lines{}, err
	}
	l := Lines{ByID: map[string][]*record.Record{}}
	l.Complete = bytes.Count(b, []byte("\n"))
	l.Partial = len(b) > 0 && b[len(b)-1] != '\n'
	for i, line := range bytes.Split(b, []byte("\n")) {
		if i == l.Complete {
			break // the partial tail, if any
		}
		r, err := record.Decode(line)
		if err != nil {
			l.Bad++
			continue
		}
		l.Records = append(l.Records, r)
		if id := r.JSONRPC.ID.String(); hasID(r) {
			l.ByID[id] = append(l.ByID[id], r)
		}
	}
	return l, nil
}

// hasID reports whether a record names a request id.
func hasID(r *record.Record) bool { return !r.JSONRPC.ID.IsZero() && !r.JSONRPC.ID.IsNull() }

// tool calls the experiments make, by kind.
type kind struct {
	name string
	path string // below the base URL, with the query
	tool string
	args string
}

var (
	kindOK        = kind{"ok", "/mcp", "echo", `{"text":"load"}`}
	kindToolError = kind{"tool-error", "/mcp", "fail", `{}`}
	kindReset     = kind{"upstream-reset", "/s/errors.connection_close/mcp?schedule=" + url.QueryEscape("{}"), "echo", `{"text":"load"}`}
	kindCut       = kind{"upstream-cut", "/s/sse.truncated/mcp", "echo", `{"text":"load"}`}
	kind503       = kind{"upstream-503", "/s/errors.http_status_sequence/mcp?statusCodes=" + url.QueryEscape("[503]") + "&retryAfter=1", "echo", `{"text":"load"}`}
	// kindLeave is a stream of 100 progress events 300 ms apart (30 s)
	// unless its client leaves, which it does after the first event: the
	// client has 29.7 s to leave, however busy the machine.
	kindLeave = kind{"client-leaves", "/mcp", "slow", `{"steps":100,"intervalMs":300}`}
	// kindLong is a stream of 100 progress events a second apart (100 s),
	// kept open by its client.
	kindLong = kind{"long-stream", "/mcp", "slow", `{"steps":100,"intervalMs":1000}`}
)

// callBody is a 2026-07-28 tools/call.
func callBody(id int, k kind) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"progressToken":%d,`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"reliability","version":"1"}}}}`,
		id, k.tool, k.args, id)
}

// Result is what a client saw of one call.
type Result struct {
	ID       int
	Kind     string
	Status   int   // 0: no response
	Headers  bool  // response headers arrived
	Complete bool  // the body was read to its end without an error
	Left     bool  // the client left on purpose
	Refused  bool  // the connection was refused (nothing listens)
	Err      error // the error, if any
	Body     []byte
}

// do makes one call of kind k with id through base, and leaves after the
// first SSE event when leave is set.
func do(ctx context.Context, hc *http.Client, base string, id int, k kind, leave bool) Result {
	return doStarted(ctx, hc, base, id, k, leave, nil)
}

// doStarted is do, calling started (when set) once the first SSE event
// has arrived.
func doStarted(ctx context.Context, hc *http.Client, base string, id int, k kind, leave bool, started func()) Result {
	res := Result{ID: id, Kind: k.name}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+k.path, strings.NewReader(callBody(id, k)))
	if err != nil {
		res.Err = err
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", k.tool)
	resp, err := hc.Do(req)
	if err != nil {
		res.Err = err
		res.Refused = errors.Is(err, syscall.ECONNREFUSED)
		return res
	}
	defer resp.Body.Close()
	res.Status, res.Headers = resp.StatusCode, true
	if leave || started != nil {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				res.Err = err
				return res
			}
			if line == "\n" {
				break
			}
		}
		if leave {
			res.Left = true
			cancel()
			return res
		}
		started()
	}
	res.Body, err = io.ReadAll(resp.Body)
	res.Err = err
	res.Complete = err == nil
	return res
}

// newClient is an HTTP client for n concurrent callers that never follows
// redirects and keeps connections alive.
func newClient(n int) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext}
	return &http.Client{Transport: tr, Timeout: 120 * time.Second}
}

// idsOf returns the sorted ids of results that satisfy keep.
func idsOf(rs []Result, keep func(Result) bool) []string {
	var out []string
	for _, r := range rs {
		if keep(r) {
			out = append(out, strconv.Itoa(r.ID))
		}
	}
	sort.Strings(out)
	return out
}

// toolCallIDs returns the ids of the tools/call lines of a serve log:
// every call the upstream received.
func toolCallIDs(l Lines) map[string]bool {
	out := map[string]bool{}
	for _, r := range l.Records {
		if r.Method == "tools/call" && hasID(r) {
			out[r.JSONRPC.ID.String()] = true
		}
	}
	return out
}

// missing returns the members of want not in have (at most 5, for messages).
func missing(want []string, have func(string) bool) []string {
	var out []string
	for _, id := range want {
		if !have(id) {
			out = append(out, id)
		}
	}
	return out
}

func firstN(s []string, n int) string {
	if len(s) > n {
		return strings.Join(s[:n], ",") + ",…"
	}
	return strings.Join(s, ",")
}

// Uptime returns the load averages of /proc/loadavg (Linux).
func Uptime() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average unknown"
	}
	return "load average " + strings.Join(f[:3], " ")
}
