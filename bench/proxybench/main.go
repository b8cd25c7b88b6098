// Command proxybench measures `mcpdiag proxy` side by side with the upstream
// reached directly and with a plain httputil.ReverseProxy (FlushInterval -1,
// the transport tuned as mcpdiag tunes its own), each server in its own
// process on 127.0.0.1, the load generator in this one.
//
//	go run ./bench/proxybench                 # the full run (a few minutes)
//	go run ./bench/proxybench -smoke          # seconds: proves the command works
//	go run ./bench/proxybench -profile DIR -targets lib -workloads json/64
//	go run ./bench/proxybench -base /tmp/mcpdiag-old   # before/after in one run
//
// Workloads: a 1 KiB JSON tools/call answered by a 1 KiB tool result, and
// the same call answered by a 64 KiB event stream of 4 events (flushed one
// by one), at 64 and 8 concurrent clients, plus one client on the stream
// for the time to the first event. Each round runs every target on every
// workload (the targets' order rotates per round), and the report gives
// medians over the rounds and the ratios of each round: requests/s, p50 and
// p99 latency, CPU per exchange (user + system time of the target's server
// process, from /proc/PID/stat, the counters getrusage reads, over the
// exchanges of the workload), its garbage collections, time to the first SSE event, and the RSS of
// idle SSE streams held open through each proxy.
//
// The plain proxy is its own binary, built from ./bench/proxybench/plainproxy
// (standard library only: its live heap and its collections are a plain
// proxy's, not this binary's, which links mcpdiag's packages). Every child
// runs with GODEBUG=gctrace=1, and the report counts its garbage
// collections per 1,000 exchanges.
//
// `mcpdiag proxy` runs as users run it: the binary (built from ./cmd/mcpdiag
// unless -mcpdiag names one), recording to a file in the default body mode.
// The target "lib" is the same proxy built from the library with the CLI's
// defaults, in a child process that writes pprof CPU and allocation
// profiles to -profile DIR. The target "base" is another mcpdiag binary
// (-base), run the same way, for before/after ratios measured in one run.
//
// Everything is bounded: a count of requests per workload, a time limit per
// workload (-workload-timeout) and for the whole run (-timeout); the child
// processes die with this one. It exits 1 when a request failed or a record
// is missing, 2 on bad flags.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if role := os.Getenv(roleEnv); role != "" {
		if err := runRole(role, os.Args[1:]); err != nil {
			fmt.Fprintf(os.Stderr, "proxybench %s: %v\n", role, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the run's parameters, from the flags.
type config struct {
	rounds          int
	clients         []int
	jsonRequests    int
	sseRequests     int
	ttfeRequests    int
	idle            int
	workloadTimeout time.Duration
	timeout         time.Duration
	mcpdiag         string
	plainproxy      string
	floorproxy      string
	base            string
	profile         string
	memProfileRate  int
	leanReadBuffer  int
	samples         string
	targets         []string
	workloads       []string
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("proxybench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	smoke := fs.Bool("smoke", false, "a run of seconds with small counts (proves the command works; its numbers mean nothing)")
	clients := fs.String("clients", "64,8", "concurrent clients of the JSON and SSE workloads")
	targets := fs.String("targets", "direct,plain,mcpdiag", "targets: direct, plain (the plain reverse proxy, its own binary built from ./bench/proxybench/plainproxy: standard library only), floor (the plain proxy plus only the work a recording proxy cannot skip, its own binary built from ./bench/proxybench/floorproxy), mcpdiag, lib (the library proxy, profiled), plaininproc (the same plain proxy run inside this binary, whose image carries mcpdiag's packages and the payloads: what that costs the baseline), plainlean and mcpdiaglean (the plain proxy and the library proxy over lean.go's prototype transport, which holds no goroutine per response, both inside this binary: for measuring the floor only)")
	workloads := fs.String("workloads", "", "workloads to run (default: json/N and sse/N for each -clients N, and sse/1)")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds (each runs every target on every workload)")
	fs.IntVar(&c.jsonRequests, "json-requests", 12000, "requests per JSON workload and target in a round")
	fs.IntVar(&c.sseRequests, "sse-requests", 2000, "requests per SSE workload and target in a round")
	fs.IntVar(&c.ttfeRequests, "ttfe-requests", 400, "requests of the one-client SSE workload (time to first event)")
	fs.IntVar(&c.idle, "idle", 2000, "idle SSE streams held open through each target for the RSS measurement (0: skip)")
	fs.DurationVar(&c.workloadTimeout, "workload-timeout", 30*time.Second, "time limit of one workload on one target")
	fs.DurationVar(&c.timeout, "timeout", 20*time.Minute, "time limit of the whole run")
	fs.StringVar(&c.mcpdiag, "mcpdiag", "", "the mcpdiag binary (default: built from ./cmd/mcpdiag)")
	fs.StringVar(&c.plainproxy, "plainproxy", "", "the plain proxy's binary, the target plain (default: built from ./bench/proxybench/plainproxy; building needs this module as the working directory, as ./cmd/mcpdiag's does)")
	fs.StringVar(&c.floorproxy, "floorproxy", "", "the floor proxy's binary, the target floor (default: built from ./bench/proxybench/floorproxy, as -plainproxy's)")
	fs.StringVar(&c.base, "base", "", "another mcpdiag binary (an older commit) to run as the target \"base\", side by side with -mcpdiag (adds base to -targets)")
	fs.StringVar(&c.profile, "profile", "", "directory for the lib target's cpu.pprof and allocs.pprof (adds lib to -targets), the plain target's plain-cpu.pprof and plain-allocs.pprof, the floor target's floor-cpu.pprof and floor-allocs.pprof (plaininproc-… and plainlean-… of those targets), and for each child's heap profile, goroutines and memory statistics while the idle streams are held (ROLE-idle-*)")
	fs.IntVar(&c.memProfileRate, "memprofilerate", 64<<10, "runtime.MemProfileRate of the child processes with -profile (1: every allocation)")
	fs.StringVar(&c.samples, "samples", "", "file for every SSE request's times (its start, first event and end) and every collection of each child (its start and end), tab-separated, in µs since the run began: for finding what slow requests coincide with (see writeSamples)")
	fs.IntVar(&c.leanReadBuffer, "lean-read-buffer", 4<<10, "the read buffer of each upstream connection of the lean targets (bytes)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *smoke {
		c.rounds, c.jsonRequests, c.sseRequests, c.ttfeRequests, c.idle = 1, 200, 40, 20, 20
		c.workloadTimeout = 20 * time.Second
	}
	for _, s := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("-clients %q: want numbers from 1 to 1024", *clients)
		}
		c.clients = append(c.clients, n)
	}
	for _, t := range strings.Split(*targets, ",") {
		switch t = strings.TrimSpace(t); t {
		case "direct", "plain", "floor", "mcpdiag", "base", "lib", "plaininproc", "plainlean", "mcpdiaglean":
			c.targets = append(c.targets, t)
		default:
			return nil, fmt.Errorf("-targets: unknown target %q", t)
		}
	}
	if c.profile != "" && !contains(c.targets, "lib") {
		c.targets = append(c.targets, "lib")
	}
	if c.base != "" && !contains(c.targets, "base") {
		c.targets = append(c.targets, "base")
	}
	if contains(c.targets, "base") && c.base == "" {
		return nil, errors.New("-targets base needs -base MCPDIAG_BINARY")
	}
	if contains(c.targets, "lib") && c.profile == "" {
		return nil, errors.New("-targets lib needs -profile DIR")
	}
	if *workloads == "" {
		for _, n := range c.clients {
			c.workloads = append(c.workloads, fmt.Sprintf("json/%d", n))
		}
		for _, n := range c.clients {
			c.workloads = append(c.workloads, fmt.Sprintf("sse/%d", n))
		}
		if !contains(c.clients, 1) {
			c.workloads = append(c.workloads, "sse/1")
		}
	} else {
		for _, w := range strings.Split(*workloads, ",") {
			if _, _, err := parseWorkload(strings.TrimSpace(w)); err != nil {
				return nil, err
			}
			c.workloads = append(c.workloads, strings.TrimSpace(w))
		}
	}
	if c.memProfileRate < 1 {
		return nil, errors.New("-memprofilerate must be positive")
	}
	if c.rounds < 1 || c.jsonRequests < 1 || c.sseRequests < 1 || c.ttfeRequests < 1 || c.idle < 0 {
		return nil, errors.New("-rounds and the request counts must be positive, -idle not negative")
	}
	return c, nil
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// parseWorkload splits "json/64" into its kind and client count.
func parseWorkload(w string) (sse bool, clients int, err error) {
	kind, n, ok := strings.Cut(w, "/")
	clients, cerr := strconv.Atoi(n)
	if !ok || cerr != nil || clients < 1 || clients > 1024 || (kind != "json" && kind != "sse") {
		return false, 0, fmt.Errorf("workload %q: want json/N or sse/N", w)
	}
	return kind == "sse", clients, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "proxybench:", err)
		}
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	if err := bench(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "proxybench:", err)
		return 1
	}
	return 0
}

// server is a child process serving HTTP on 127.0.0.1.
type server struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	base  string // http://ADDR
	lines chan string
	tail  *tailBuffer
	done  chan struct{}
	// gcs is the number of the last garbage collection the child reported
	// (its GODEBUG=gctrace=1 lines on stderr, kept out of tail): the
	// cycles it ran so far. A number, not a count of lines: the runtime
	// prints its line from any thread, so a line can land inside one the
	// child's code writes to stderr and be missed, and the next one still
	// counts every cycle.
	gcs atomic.Int64
	// gcCPU is the CPU time of the collections the child reported, summed
	// over the gctrace lines read (nanoseconds).
	gcCPU atomic.Int64
	// gcMu guards gcLog, each collection the child reported, in order.
	gcMu  sync.Mutex
	gcLog []gcEvent
}

// gcEvent is one collection of a child: when its gctrace line was read
// (the line is written at the cycle's end, the mark termination) and the
// cycle's wall time from its start ("ms clock"), so it ran from end−wall to
// end (the read adds the pipe's delay, microseconds when proxybench is not
// starved of CPU).
type gcEvent struct {
	n    int64
	end  time.Time
	wall time.Duration
}

// tailBuffer keeps what a child wrote to stderr (its last 64 KiB).
type tailBuffer struct {
	ch  chan struct{}
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	<-t.ch
	t.buf = append(t.buf, p...)
	if len(t.buf) > 64<<10 {
		t.buf = t.buf[len(t.buf)-64<<10:]
	}
	t.ch <- struct{}{}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	<-t.ch
	defer func() { t.ch <- struct{}{} }()
	return string(t.buf)
}

func newTail() *tailBuffer {
	t := &tailBuffer{ch: make(chan struct{}, 1)}
	t.ch <- struct{}{}
	return t
}

// gcEnv is the GODEBUG of the children: the caller's, with gctrace=1, so
// that each child reports every garbage collection on stderr (one line at
// the end of each cycle, "gc N @…"; the count of the run's table).
func gcEnv() string {
	if v := os.Getenv("GODEBUG"); v != "" {
		return "GODEBUG=" + v + ",gctrace=1"
	}
	return "GODEBUG=gctrace=1"
}

// gcLine parses a gctrace line, "gc N @T P%: … ms clock, A+B/C/D+E ms
// cpu, …": N (the runtime numbers its collections from 1) and the CPU time
// of the cycle, A+B+C+D+E (the stop-the-world sweep termination, the
// mark's assist, background and idle time, the stop-the-world mark
// termination: runtime/extern.go's gctrace), and whether line is one. The
// idle mark time is CPU the collector took from otherwise idle Ps; the
// process's CPU time counts it too. This is the runtime's own accounting:
// a stop-the-world phase counts its wall time on every P (GOMAXPROCS of
// them), so on a loaded machine it can exceed what /proc counts.
func gcLine(line string) (n int64, cpu time.Duration, ok bool) {
	rest, ok := strings.CutPrefix(line, "gc ")
	if !ok {
		return 0, 0, false
	}
	num, rest, ok := strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(rest, "@") {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 {
		return 0, 0, false
	}
	for _, field := range strings.Split(rest, ", ") {
		times, ok := strings.CutSuffix(field, " ms cpu")
		if !ok {
			continue
		}
		var ms float64
		for _, t := range strings.FieldsFunc(times, func(r rune) bool { return r == '+' || r == '/' }) {
			v, err := strconv.ParseFloat(t, 64)
			if err != nil {
				return n, 0, true // the cycle counts; its time is unknown
			}
			ms += v
		}
		return n, time.Duration(ms * float64(time.Millisecond)), true
	}
	return n, 0, true
}

// gcWall is the wall time of the cycle of gctrace line (the sum of its
// "A+B+C ms clock": sweep termination, concurrent mark, mark termination),
// 0 when the line has none.
func gcWall(line string) time.Duration {
	for _, field := range strings.Split(line, ", ") {
		if times, ok := strings.CutSuffix(field, " ms clock"); ok {
			field = times[strings.LastIndexByte(times, ' ')+1:]
			var ms float64
			for _, t := range strings.Split(field, "+") {
				v, err := strconv.ParseFloat(t, 64)
				if err != nil {
					return 0
				}
				ms += v
			}
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	return 0
}

// start runs argv with GODEBUG=gctrace=1 and waits for the line of its
// stdout (role children, plainproxy) or stderr (mcpdiag) that re matches;
// its first submatch is the base URL. Both of the child's outputs are read
// to their end as they come, so that a full pipe never stalls it: the
// gctrace lines are counted (server.gcs), the rest kept in its tail, and
// the lines of the watched output also offered to server.lines.
func start(ctx context.Context, name string, env []string, re *regexp.Regexp, fromStderr bool, argv ...string) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), gcEnv()), env...)
	cmd.SysProcAttr = childAttr()
	s := &server{name: name, cmd: cmd, lines: make(chan string, 16), tail: newTail(), done: make(chan struct{})}
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var readers sync.WaitGroup
	readers.Go(func() { s.read(stdout, !fromStderr) })
	readers.Go(func() { s.read(stderr, fromStderr) })
	go func() {
		readers.Wait()
		cmd.Wait()
		close(s.done)
	}()
	timer := time.NewTimer(60 * time.Second)
	defer timer.Stop()
	for {
		select {
		case line := <-s.lines:
			if m := re.FindStringSubmatch(line); m != nil {
				s.base = m[1]
				return s, nil
			}
		case <-s.done:
			return nil, fmt.Errorf("%s exited (%v) before it listened; it wrote:\n%s", name, cmd.ProcessState, s.tail)
		case <-timer.C:
			s.kill()
			return nil, fmt.Errorf("%s did not listen within 60s; it wrote:\n%s", name, s.tail)
		case <-ctx.Done():
			s.kill()
			return nil, ctx.Err()
		}
	}
}

// read reads one of the child's outputs line by line to its end: a
// gctrace line sets s.gcs and adds to s.gcCPU; any other goes to s.tail, and with watch to
// s.lines too (dropped when no one takes them).
func (s *server) read(r io.Reader, watch bool) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if n, cpu, ok := gcLine(line); ok {
			now := time.Now()
			s.gcs.Store(n)
			s.gcCPU.Add(int64(cpu))
			s.gcMu.Lock()
			s.gcLog = append(s.gcLog, gcEvent{n: n, end: now, wall: gcWall(line)})
			s.gcMu.Unlock()
		} else if line != "" {
			s.tail.Write([]byte(line))
			if watch {
				select {
				case s.lines <- line:
				default:
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// stop asks the child to end (SIGTERM) and waits up to limit.
func (s *server) stop(limit time.Duration) error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(limit):
		s.kill()
		return fmt.Errorf("%s did not stop within %s", s.name, limit)
	}
	if !s.cmd.ProcessState.Success() {
		return fmt.Errorf("%s: %v; it wrote:\n%s", s.name, s.cmd.ProcessState, s.tail)
	}
	return nil
}

// cpuTicks returns the user + system time of process pid in clock ticks,
// from /proc/PID/stat (fields 14 and 15: the counters getrusage reads).
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return u + s, nil
}

// ioCalls returns the read and write system calls process pid made, from
// /proc/PID/io (syscr + syscw: every read(2)/write(2)-like call, sockets
// and files alike). Unlike CPU time, a count the load of the machine does
// not change.
func ioCalls(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, err
	}
	var n int64
	found := 0
	for _, l := range strings.Split(string(b), "\n") {
		for _, k := range []string{"syscr:", "syscw:"} {
			if v, ok := strings.CutPrefix(l, k); ok {
				c, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("/proc/%d/io: %s %q", pid, k, v)
				}
				n += c
				found++
			}
		}
	}
	if found != 2 {
		return 0, fmt.Errorf("/proc/%d/io: no syscr/syscw", pid)
	}
	return n, nil
}

// ctxSwitches returns the voluntary and involuntary context switches of
// every thread of process pid, summed over /proc/PID/task/*/status (the
// process's own status file counts its first thread only). A voluntary
// switch is a thread that blocked (a futex wait, an idle poll), which a
// hand-off between goroutines costs when it wakes a parked thread; like
// the system calls, a count the load of the machine moves little, except
// the involuntary ones (preemption by other processes). Threads that
// exited are not counted (the Go runtime rarely ends one).
func ctxSwitches(pid int) (vol, invol int64, err error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil {
			continue // the thread exited since ReadDir
		}
		for _, l := range strings.Split(string(b), "\n") {
			dst := &vol
			v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:")
			if !ok {
				dst = &invol
				if v, ok = strings.CutPrefix(l, "nonvoluntary_ctxt_switches:"); !ok {
					continue
				}
			}
			c, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("/proc/%d/task/%s/status: %q", pid, task.Name(), l)
			}
			*dst += c
		}
	}
	return vol, invol, nil
}

// clockTick is the kernel's USER_HZ, the unit of /proc/PID/stat times.
const clockTick = 10 * time.Millisecond

// rssKiB returns the resident set of process pid.
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// build builds the command of package pkg (an import path of this module)
// into dir/name.
func build(ctx context.Context, dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// The packages proxybench builds: mcpdiag proxy as users run it, the
// plain proxy (standard library only) as the target "plain", and the floor
// proxy (the plain one plus the guarantees' work) as the target "floor".
const (
	mcpdiagPkg    = "github.com/mcpdiag/mcpdiag/cmd/mcpdiag"
	plainproxyPkg = "github.com/mcpdiag/mcpdiag/bench/proxybench/plainproxy"
	floorproxyPkg = "github.com/mcpdiag/mcpdiag/bench/proxybench/floorproxy"
)

var (
	listeningRE = regexp.MustCompile(`^listening (\S+)`)
	mcpdiagRE   = regexp.MustCompile(`^mcpdiag proxy: (http://[^/\s]+)`)
	summaryRE   = regexp.MustCompile(`(?m)^mcpdiag proxy: (\d+) exchanges.*$`)
)
