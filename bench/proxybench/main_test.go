package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/plain"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestMain lets this test binary play the server roles the orchestrator
// starts it in (it runs its own executable).
func TestMain(m *testing.M) {
	if os.Getenv(gcChildEnv) != "" {
		gcChild()
		return
	}
	if role := os.Getenv(roleEnv); role != "" {
		if err := runRole(role, os.Args[1:]); err != nil {
			os.Stderr.WriteString("proxybench " + role + ": " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmoke runs the command's short form end to end: real processes on
// 127.0.0.1 (the upstream, the plain proxy, the floor proxy and the mcpdiag
// binary built from ./bench/proxybench/plainproxy,
// ./bench/proxybench/floorproxy and ./cmd/mcpdiag), every workload, the idle
// streams, one record per exchange of the floor proxy and of mcpdiag. It asserts that the run succeeds and reports every row, never
// a time.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpdiag and runs three servers")
	}
	var out, errs bytes.Buffer
	if code := run([]string{"-smoke", "-targets", "direct,plain,floor,mcpdiag"}, &out, &errs); code != 0 {
		t.Fatalf("proxybench -smoke exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	report := out.String()
	for _, w := range []string{"json/64", "json/8", "sse/64", "sse/8", "sse/1"} {
		for _, target := range []string{"direct", "plain", "floor", "mcpdiag proxy"} {
			if !strings.Contains(report, "| "+w+" | "+target+" |") {
				t.Errorf("report has no row for %s through %s:\n%s", w, target, report)
			}
		}
	}
	for _, want := range []string{"throughput ratio", "GC cycles/1,000 exchanges", "GC cycles ratio", "Idle SSE streams", "| mcpdiag | 20 |", "| floor | 20 |", "records written",
		"the floor proxy (plain + the guarantees' work) against the plain reverse proxy", "mcpdiag proxy against the floor proxy"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "LOST") {
		t.Errorf("mcpdiag lost records:\n%s", report)
	}
}

// TestBadFlags: one clear line and exit status 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-clients", "0"}, {"-targets", "nginx"}, {"-workloads", "grpc/8"}, {"extra"}, {"-targets", "lib"}} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", args, code, errs.String())
		}
		if lines := strings.Count(strings.TrimSpace(errs.String()), "\n"); !strings.HasPrefix(errs.String(), "proxybench: ") || lines > 0 {
			t.Errorf("%q: stderr %q, want one line starting proxybench:", args, errs.String())
		}
	}
}

// TestSmokeIdleProfiles: with -profile DIR, each child but mcpdiag's (the
// upstream, the plainproxy binary, the library proxy) writes its heap profile,
// goroutines and memory statistics while the idle streams are held, and
// the library proxy and the plain proxy their CPU and allocation profiles.
func TestSmokeIdleProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three servers")
	}
	dir := t.TempDir()
	var out, errs bytes.Buffer
	if code := run([]string{"-smoke", "-targets", "direct,plain", "-workloads", "sse/1", "-profile", dir, "-memprofilerate", "4096"}, &out, &errs); code != 0 {
		t.Fatalf("proxybench exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	for _, role := range []string{"upstream", "plain", "libproxy"} {
		stats, err := os.ReadFile(filepath.Join(dir, role+"-idle-memstats.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(stats), "MemProfileRate 4096\n") || !strings.Contains(string(stats), "StackInuse ") {
			t.Errorf("%s-idle-memstats.txt:\n%s", role, stats)
		}
		g, err := os.ReadFile(filepath.Join(dir, role+"-idle-goroutines.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(g), "goroutine profile: total ") {
			t.Errorf("%s-idle-goroutines.txt starts %.60q", role, g)
		}
		for _, name := range []string{role + "-idle-heap.pprof"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
				t.Errorf("%s: %v (empty or missing)", name, err)
			}
		}
	}
	for _, name := range []string{"cpu.pprof", "allocs.pprof", "plain-cpu.pprof", "plain-allocs.pprof"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (empty or missing)", name, err)
		}
	}
}

// TestCtxSwitches: the context switches of this process's threads are
// read, and a thread that sleeps (blocks in the kernel) adds voluntary ones.
func TestCtxSwitches(t *testing.T) {
	v0, _, err := ctxSwitches(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		time.Sleep(time.Millisecond)
	}
	v1, iv1, err := ctxSwitches(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if v1-v0 < 10 || iv1 < 0 {
		t.Errorf("voluntary context switches over 20 sleeps: %d -> %d (involuntary %d), want at least 10 more", v0, v1, iv1)
	}
}

// gcChildEnv makes the test binary the child of TestStartCountsGC.
const gcChildEnv = "PROXYBENCH_TEST_GC_CHILD"

// gcChild collects three times (three gctrace lines on stderr, with the
// GODEBUG start gives it), then writes 1 MiB of other lines to stderr, far more
// than a pipe holds, then says it listens and waits for the end of stdin.
func gcChild() {
	for range 3 {
		runtime.GC()
	}
	// The runtime may print a cycle's line after runtime.GC returns, from
	// another thread, into the middle of a line of ours.
	time.Sleep(200 * time.Millisecond)
	line := strings.Repeat("x", 1023) + "\n"
	for range 1024 {
		os.Stderr.WriteString(line)
	}
	os.Stderr.WriteString("last line\n")
	fmt.Println("listening 127.0.0.1:1")
	io.Copy(io.Discard, os.Stdin)
}

// TestStartCountsGC: a child started by start runs with gctrace on; its
// collections and their CPU time are counted from its stderr and kept out of its tail, and
// its stderr is read as it comes (the child writes 1 MiB there before it
// says it listens: it would block on a pipe no one reads).
func TestStartCountsGC(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := start(ctx, "gc child", []string{gcChildEnv + "=1"}, listeningRE, false, self)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testwait.Bound)
	for !strings.Contains(s.tail.String(), "last line\n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.gcs.Load(); got < 3 {
		t.Errorf("collections counted: %d, want at least the child's 3 runtime.GC()", got)
	}
	if s.gcCPU.Load() <= 0 {
		t.Errorf("the collections' CPU time: %d ns, want more than 0", s.gcCPU.Load())
	}
	s.gcMu.Lock()
	log := slices.Clone(s.gcLog)
	s.gcMu.Unlock()
	if len(log) < 3 {
		t.Errorf("collections logged: %d, want at least 3", len(log))
	}
	for i, g := range log {
		if g.n != int64(i+1) || g.wall <= 0 || (i > 0 && g.end.Before(log[i-1].end)) {
			t.Errorf("collection %d logged as %+v (after %+v): want number %d, a wall time, in order", i+1, g, log[max(i-1, 0)], i+1)
		}
	}
	tail := s.tail.String()
	if !strings.Contains(tail, "last line\n") {
		t.Errorf("tail ends %q, want the child's last stderr line", tail[max(0, len(tail)-80):])
	}
	if strings.Contains(tail, "gc 1 @") || strings.Contains(tail, "(forced)") {
		i := max(strings.Index(tail, "gc 1 @"), strings.Index(tail, "(forced)"))
		t.Errorf("a gctrace line in the tail: …%q…", tail[max(0, i-100):min(len(tail), i+100)])
	}
	s.stdin.Close() // the child's end
	select {
	case <-s.done:
		if !s.cmd.ProcessState.Success() {
			t.Errorf("gc child: %v", s.cmd.ProcessState)
		}
	case <-time.After(testwait.Bound):
		t.Errorf("gc child did not end with its stdin within %s", testwait.Bound)
	}
}

// TestGCLine: the cycle number and the CPU time of real gctrace lines
// (go1.26, forced and not; the runtime writes them to stderr with
// GODEBUG=gctrace=1), and lines that are not one.
func TestGCLine(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	for _, c := range []struct {
		line string
		n    int64
		cpu  time.Duration
		ok   bool
		wall time.Duration
	}{
		{"gc 1 @0.002s 6%: 0.048+0.57+0.005 ms clock, 0.097+0.46/0/0+0.010 ms cpu, 3->4->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n", 1, ms(0.567), true, ms(0.623)},
		{"gc 2 @0.018s 1%: 0.21+2.3+0.005 ms clock, 0.43+0/0.17/0.13+0.010 ms cpu, 3->6->3 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n", 2, ms(0.74), true, ms(2.515)},
		{"gc 7 @0.043s 2%: 0.17+0.33+0.002 ms clock, 0.34+0/0.34/0.092+0.004 ms cpu, 15->15->5 MB, 20 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n", 7, ms(0.776), true, ms(0.502)},
		{"gc 56 @6.726s 0%: 1.6+3.9+0.73 ms clock, 3.2+0.76/1.4/0+1.4 ms cpu, 3->3->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n", 56, ms(6.76), true, ms(6.23)},
		{"gc 12345 @812.503s 3%: 0.13+1.9+0.10 ms clock, 0.27+0.39/1.1/0+0.21 ms cpu, 3->3->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P", 12345, ms(1.97), true, ms(2.13)},
		// Cut short by another write to stderr: the cycle counts, its
		// CPU time is lost (its wall time, before it, is not).
		{"gc 9 @1.0s 1%: 0.1+0.2+0.0 ms clock, 0.2+0.1/0.x", 9, 0, true, ms(0.3)},
		{"gc 1 @", 1, 0, true, 0},
		{"mcpdiag proxy: http://127.0.0.1:40123 -> http://127.0.0.1:40000/mcp, recording to /tmp/r.jsonl\n", 0, 0, false, 0},
		{"listening 127.0.0.1:40123\n", 0, 0, false, 0},
		{"gc x @0.002s 6%: …\n", 0, 0, false, 0},
		{"gc 0 @0.002s 6%: …\n", 0, 0, false, 0},
		{"gc 3 0.002s\n", 0, 0, false, 0},
		{" gc 1 @0.002s 6%: …\n", 0, 0, false, 0},
		{"", 0, 0, false, 0},
	} {
		n, cpu, ok := gcLine(c.line)
		if d := cpu - c.cpu; n != c.n || ok != c.ok || d < -time.Nanosecond || d > time.Nanosecond {
			t.Errorf("gcLine(%.40q) = %d, %v, %v; want %d, %v, %v", c.line, n, cpu, ok, c.n, c.cpu, c.ok)
		}
		if wall := gcWall(c.line); wall-c.wall < -time.Nanosecond || wall-c.wall > time.Nanosecond {
			t.Errorf("gcWall(%.40q) = %v, want %v", c.line, wall, c.wall)
		}
	}
}

// TestPlainproxyStandardOnly: the plain proxy's binary links nothing but
// the standard library and its two packages here (so its image holds no
// live heap of mcpdiag's), and its copy buffers, head flush and idle
// timeout are mcpdiag's.
func TestPlainproxyStandardOnly(t *testing.T) {
	if plain.CopyBufferSize != proxy.CopyBufferSize {
		t.Errorf("plain.CopyBufferSize %d, proxy.CopyBufferSize %d: the baseline's copy buffers must be mcpdiag's", plain.CopyBufferSize, proxy.CopyBufferSize)
	}
	if plain.HeadFlushDelay != proxy.DefaultHeadFlushDelay {
		t.Errorf("plain.HeadFlushDelay %s, proxy.DefaultHeadFlushDelay %s: the baseline must flush a response's head as mcpdiag does", plain.HeadFlushDelay, proxy.DefaultHeadFlushDelay)
	}
	if got := plain.Transport().IdleConnTimeout; got != proxy.UpstreamIdleConnTimeout {
		t.Errorf("plain.Transport().IdleConnTimeout %s, proxy.UpstreamIdleConnTimeout %s: the baseline's transport must be tuned as mcpdiag's", got, proxy.UpstreamIdleConnTimeout)
	}
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", plainproxyPkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	slices.Sort(got)
	want := []string{
		"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/child",
		"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/plain",
		plainproxyPkg,
	}
	if !slices.Equal(got, want) {
		t.Errorf("plainproxy's packages outside the standard library: %q, want %q", got, want)
	}
}

// TestPlainproxyFlag: -plainproxy names the binary run as the target plain
// (no build): a path that does not exist fails the run at that start, with
// the path in the message.
func TestPlainproxyFlag(t *testing.T) {
	var out, errs bytes.Buffer
	bin := filepath.Join(t.TempDir(), "no-plainproxy")
	code := run([]string{"-smoke", "-targets", "plain", "-workloads", "json/8", "-idle", "0", "-plainproxy", bin}, &out, &errs)
	if code != 1 || !strings.Contains(errs.String(), bin) || strings.Contains(errs.String(), "building") {
		t.Errorf("exit %d, stderr %q; want 1 and an error naming %s, nothing built", code, errs.String(), bin)
	}
}

// TestSamples: -samples writes each SSE request of the run, with its
// target, round and times in order, the upstream's times of it, and the
// children's collections; no line for a JSON request.
func TestSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plain proxy and runs two servers")
	}
	file := filepath.Join(t.TempDir(), "samples.tsv")
	var out, errs bytes.Buffer
	if code := run([]string{"-rounds", "2", "-ttfe-requests", "20", "-json-requests", "50", "-targets", "direct,plain", "-workloads", "sse/1,json/8", "-idle", "0", "-samples", file}, &out, &errs); code != 0 {
		t.Fatalf("proxybench exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	reqs := map[string]int{}
	seqs := map[int64]bool{}
	gcs := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		switch {
		case f[0] == "req" && len(f) == 11:
			var round int
			var start, ttfe, end, upStart, upBody, upFirst float64
			if _, err := fmt.Sscan(f[3], &round); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			var seq int64
			if _, err := fmt.Sscan(strings.Join(f[4:], " "), &start, &ttfe, &end, &upStart, &upBody, &upFirst, &seq); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			if f[1] != "sse/1" || ttfe <= 0 || start <= 0 || start+ttfe > end {
				t.Errorf("line %q: want an sse/1 request that began after the run, its first event after its start and before its end", line)
			}
			// The upstream's times, on the same clock: it got the request
			// after the client sent it, before the client had its first
			// event, and read its body and flushed its first event after.
			if upStart <= start || upStart >= start+ttfe || upBody < upStart || upFirst < upBody {
				t.Errorf("line %q: want the upstream's start, body read and first flush in order within the request", line)
			}
			if seqs[seq] || seq < 1 {
				t.Errorf("line %q: sequence number %d not new", line, seq)
			}
			seqs[seq] = true
			reqs[fmt.Sprintf("%s round %d", f[2], round)]++
		case f[0] == "gc" && len(f) == 5:
			var n int
			var start, end float64
			if _, err := fmt.Sscan(f[2]+" "+f[3]+" "+f[4], &n, &start, &end); err != nil || n < 1 || start > end {
				t.Errorf("line %q: want a collection's number, start and end (%v)", line, err)
			}
			if f[1] != "upstream" && f[1] != "plain" {
				t.Errorf("line %q: a collection of no process of the run", line)
			}
			gcs++
		default:
			t.Errorf("line %q: neither a request nor a collection", line)
		}
	}
	want := map[string]int{"direct round 1": 20, "direct round 2": 20, "plain round 1": 20, "plain round 2": 20}
	if !maps.Equal(reqs, want) {
		t.Errorf("requests per target and round: %v, want %v", reqs, want)
	}
	t.Logf("%d collections", gcs)
}
