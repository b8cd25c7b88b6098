package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/child"
)

// target is one way to reach the upstream: its base URL and the process
// whose CPU time the exchanges cost.
type target struct {
	name   string
	base   string
	server *server
	sent   int64 // requests sent through it (all workloads, warm-up, idle)
}

// result is one workload on one target in one round.
type result struct {
	requests  int
	errors    int
	firstErr  string
	elapsed   time.Duration
	p50, p99  time.Duration
	ttfe50    time.Duration
	ttfe99    time.Duration
	cpu       time.Duration // the target process's user + system time
	syscalls  int64         // the target process's read and write system calls
	vcsw      int64         // its threads' voluntary context switches
	ivcsw     int64         // and involuntary ones
	upCPU     time.Duration // the upstream's
	gcs       int64         // the target process's garbage collections (gctrace)
	gcCPU     time.Duration // and their CPU time (gctrace's "ms cpu")
	truncated bool          // stopped by the workload timeout
	samples   []sample      // each SSE request's times
}

// sample is one SSE request: when the client began it, and its times to
// the first event and to the end of the response.
type sample struct {
	seq         int64 // its seqHeader, 0 without -samples
	start       time.Time
	ttfe, total time.Duration
}

// seqs numbers the requests of a run with -samples.
var seqs atomic.Int64

// sampleSet is the samples of one workload on one target in one round.
type sampleSet struct {
	workload, target string
	round            int
	samples          []sample
}

func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// gcPer1000 is the target's garbage collections per 1,000 exchanges.
func (r result) gcPer1000() float64 { return 1000 * float64(r.gcs) / float64(max(r.requests, 1)) }

// gcCPUPer is the target's collections' CPU time per exchange.
func (r result) gcCPUPer() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.gcCPU / time.Duration(r.requests)
}

// gcSettle is how long runWorkload waits after a workload for the last
// gctrace lines of its cycles.
const gcSettle = 20 * time.Millisecond

func (r result) cpuPer() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.requests)
}

func bench(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "proxybench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	raiseFileLimit()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	loadStart := loadavg()
	started := time.Now()

	var servers []*server
	defer func() {
		for _, s := range servers {
			select {
			case <-s.done:
			default:
				s.kill()
			}
		}
	}()
	var profEnv []string // the children's profiling, with -profile
	if cfg.profile != "" {
		if err := os.MkdirAll(cfg.profile, 0o755); err != nil {
			return err
		}
		profEnv = []string{child.ProfileEnv + "=" + cfg.profile, fmt.Sprintf("%s=%d", child.MemRateEnv, cfg.memProfileRate)}
	}
	up, err := start(ctx, "upstream", append([]string{roleEnv + "=upstream"}, profEnv...), listeningRE, false, self)
	if err != nil {
		return err
	}
	servers = append(servers, up)
	up.base = "http://" + up.base
	targets := map[string]*target{}
	plainBin := cfg.plainproxy
	records := map[string]string{} // target → its record file
	for _, name := range cfg.targets {
		var s *server
		switch name {
		case "direct":
			targets[name] = &target{name: name, base: up.base, server: up}
			continue
		case "plain":
			if plainBin == "" {
				fmt.Fprintln(stderr, "proxybench: building ./bench/proxybench/plainproxy")
				if plainBin, err = build(ctx, dir, "plainproxy", plainproxyPkg); err != nil {
					return err
				}
			}
			s, err = start(ctx, "plain proxy", profEnv, listeningRE, false, plainBin, up.base)
			if err == nil {
				s.base = "http://" + s.base
			}
		case "floor":
			bin := cfg.floorproxy
			if bin == "" {
				fmt.Fprintln(stderr, "proxybench: building ./bench/proxybench/floorproxy")
				if bin, err = build(ctx, dir, "floorproxy", floorproxyPkg); err != nil {
					return err
				}
			}
			records[name] = filepath.Join(dir, "floor-records.jsonl")
			s, err = start(ctx, "floor proxy", profEnv, listeningRE, false, bin, up.base, records[name])
			if err == nil {
				s.base = "http://" + s.base
			}
		case "plaininproc":
			s, err = start(ctx, "plain proxy in proxybench", append([]string{roleEnv + "=plaininproc"}, profEnv...), listeningRE, false, self, up.base)
			if err == nil {
				s.base = "http://" + s.base
			}
		case "mcpdiag", "base":
			bin := cfg.mcpdiag
			if name == "base" {
				bin = cfg.base
			}
			if bin == "" {
				fmt.Fprintln(stderr, "proxybench: building ./cmd/mcpdiag")
				if bin, err = build(ctx, dir, "mcpdiag", mcpdiagPkg); err != nil {
					return err
				}
			}
			records[name] = filepath.Join(dir, name+"-records.jsonl")
			s, err = start(ctx, name+" proxy", nil, mcpdiagRE, true, bin, "proxy",
				"--upstream", up.base+"/mcp", "--listen", "127.0.0.1:0", "--record", records[name])
		case "plainlean":
			s, err = start(ctx, "plain lean proxy", append([]string{roleEnv + "=plainlean", fmt.Sprintf("%s=%d", leanEnv, cfg.leanReadBuffer)}, profEnv...), listeningRE, false, self, up.base)
			if err == nil {
				s.base = "http://" + s.base
			}
		case "mcpdiaglean":
			records[name] = filepath.Join(dir, "mcpdiaglean-records.jsonl")
			s, err = start(ctx, "lean library proxy", append([]string{roleEnv + "=mcpdiaglean", fmt.Sprintf("%s=%d", leanEnv, cfg.leanReadBuffer)}, profEnv...), listeningRE, false, self,
				up.base+"/mcp", records[name])
			if err == nil {
				s.base = "http://" + s.base
			}
		case "lib":
			s, err = start(ctx, "library proxy", append([]string{roleEnv + "=libproxy"}, profEnv...), listeningRE, false, self,
				up.base+"/mcp", filepath.Join(dir, "lib-records.jsonl"), cfg.profile)
			if err == nil {
				s.base = "http://" + s.base
			}
		}
		if err != nil {
			return err
		}
		servers = append(servers, s)
		targets[name] = &target{name: name, base: s.base, server: s}
	}
	order := make([]*target, 0, len(cfg.targets))
	for _, n := range cfg.targets {
		order = append(order, targets[n])
	}

	// Warm-up: connections, pools, the binaries' code paths.
	for _, t := range order {
		for _, w := range []string{"json/8", "sse/8"} {
			r := runWorkload(ctx, cfg, t, up, w, 100)
			if r.errors > 0 {
				return fmt.Errorf("warm-up %s through %s: %d of %d requests failed, first: %s", w, t.name, r.errors, r.requests+r.errors, r.firstErr)
			}
		}
	}

	// results[workload][target][round]
	results := map[string]map[string][]result{}
	var sets []sampleSet // with -samples
	failed := 0
	for round := range cfg.rounds {
		for _, w := range cfg.workloads {
			if results[w] == nil {
				results[w] = map[string][]result{}
			}
			for i := range order {
				t := order[(i+round)%len(order)]
				sse, _, _ := parseWorkload(w)
				n := cfg.jsonRequests
				if sse {
					n = cfg.sseRequests
				}
				if w == "sse/1" {
					n = cfg.ttfeRequests
				}
				if ctx.Err() != nil {
					return fmt.Errorf("the run's -timeout %s passed", cfg.timeout)
				}
				r := runWorkload(ctx, cfg, t, up, w, n)
				fmt.Fprintf(stderr, "round %d/%d %-7s %-8s %7.0f req/s  p50 %-9s p99 %-9s cpu/exchange %-9s gc/1000 %-5.1f errors %d\n",
					round+1, cfg.rounds, w, t.name, r.rps(), r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.cpuPer().Round(100*time.Nanosecond), r.gcPer1000(), r.errors)
				if r.errors > 0 {
					failed += r.errors
					fmt.Fprintf(stderr, "proxybench: %s through %s: %d requests failed, first: %s\n", w, t.name, r.errors, r.firstErr)
				}
				results[w][t.name] = append(results[w][t.name], r)
				if cfg.samples != "" && len(r.samples) > 0 {
					sets = append(sets, sampleSet{w, t.name, round + 1, r.samples})
				}
			}
		}
	}

	var upTimes map[int64][3]time.Time
	if cfg.samples != "" {
		if upTimes, err = upstreamSamples(ctx, up); err != nil {
			return err
		}
	}

	idle := map[string]idleResult{}
	if cfg.idle > 0 {
		for _, t := range order {
			ir, err := idleStreams(ctx, t, up, cfg.idle, cfg.profile != "" && t.name != "mcpdiag" && t.name != "base")
			if err != nil {
				return fmt.Errorf("idle streams through %s: %w", t.name, err)
			}
			idle[t.name] = ir
		}
	}

	// Stop the proxies; check mcpdiag wrote one record per exchange.
	recordLines := map[string]string{}
	var problems []string
	for _, t := range order {
		if t.server == up {
			continue
		}
		if err := t.server.stop(30 * time.Second); err != nil {
			problems = append(problems, err.Error())
		}
		if file, ok := records[t.name]; ok {
			if m := summaryRE.FindString(t.server.tail.String()); m != "" {
				recordLines[t.name] = strings.TrimPrefix(m, "mcpdiag proxy: ")
			}
			n, err := countLines(file)
			if err != nil {
				problems = append(problems, err.Error())
			} else if n != t.sent {
				problems = append(problems, fmt.Sprintf("%s: %d requests sent, %d records in its file", t.name, t.sent, n))
			}
		}
	}
	report(stdout, cfg, order, results, idle, loadStart, loadavg(), time.Since(started), recordLines)
	if cfg.samples != "" {
		if err := writeSamples(cfg.samples, started, sets, upTimes, up, order); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if failed > 0 {
		problems = append(problems, fmt.Sprintf("%d requests failed (see above)", failed))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// upstreamSamples fetches the upstream's times of the requests that had a
// seqHeader: its handler's start, the end of the request body, the return
// of the first event's flush, by sequence number.
func upstreamSamples(ctx context.Context, up *server) (map[int64][3]time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, up.base+"/samples", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("the upstream's samples: %w", err)
	}
	defer resp.Body.Close()
	times := map[int64][3]time.Time{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var seq, a, b, c int64
		if _, err := fmt.Sscan(sc.Text(), &seq, &a, &b, &c); err != nil {
			return nil, fmt.Errorf("the upstream's samples: line %q: %w", sc.Text(), err)
		}
		times[seq] = [3]time.Time{time.Unix(0, a), time.Unix(0, b), time.Unix(0, c)}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("the upstream's samples: %w", err)
	}
	return times, nil
}

// writeSamples writes file: a line per SSE request of sets, "req WORKLOAD
// TARGET ROUND START TTFE END UPSTART UPBODY UPFIRST SEQ" (START and END
// since the run's start, whose Unix time the first line gives, TTFE after
// START; then the upstream's times of it, since the run's start: its
// handler's start, the end of the request body read, the return of the
// first event's flush, "-" when unknown; SEQ its seqHeader), then a line per collection of each child process, "gc
// PROCESS N START END" (PROCESS is a target's name, upstream for the
// upstream, which direct reaches), all times in µs, tab-separated, in order
// of START within each kind. A request slower than the others can be
// matched against the collections of the processes it went through.
func writeSamples(file string, started time.Time, sets []sampleSet, upTimes map[int64][3]time.Time, up *server, order []*target) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# proxybench -samples: times in µs since the run's start, Unix time %d ns\n", started.UnixNano())
	b.WriteString("# req\tWORKLOAD\tTARGET\tROUND\tSTART\tTTFE\tEND\tUPSTART\tUPBODY\tUPFIRST\tSEQ\n# gc\tPROCESS\tN\tSTART\tEND\n")
	// Every time on the wall clock, the one the upstream's process shares:
	// the client's times carry a monotonic reading and the upstream's
	// (Unix nanoseconds) do not, and the two clocks drift apart by up to
	// 500 ppm while NTP slews, milliseconds over a run.
	at := func(t time.Time) float64 { return float64(t.Round(0).Sub(started.Round(0)).Nanoseconds()) / 1e3 }
	for _, set := range sets {
		ss := slices.Clone(set.samples)
		slices.SortFunc(ss, func(a, b sample) int { return a.start.Compare(b.start) })
		for _, s := range ss {
			fmt.Fprintf(&b, "req\t%s\t%s\t%d\t%.1f\t%.1f\t%.1f", set.workload, set.target, set.round, at(s.start), us(s.ttfe), at(s.start.Add(s.total)))
			if u, ok := upTimes[s.seq]; ok {
				fmt.Fprintf(&b, "\t%.1f\t%.1f\t%.1f\t%d\n", at(u[0]), at(u[1]), at(u[2]), s.seq)
			} else {
				fmt.Fprintf(&b, "\t-\t-\t-\t%d\n", s.seq)
			}
		}
	}
	procs := []struct {
		name string
		s    *server
	}{{"upstream", up}}
	for _, t := range order {
		if t.server != up {
			procs = append(procs, struct {
				name string
				s    *server
			}{t.name, t.server})
		}
	}
	for _, p := range procs {
		p.s.gcMu.Lock()
		for _, g := range p.s.gcLog {
			fmt.Fprintf(&b, "gc\t%s\t%d\t%.1f\t%.1f\n", p.name, g.n, at(g.end.Add(-g.wall)), at(g.end))
		}
		p.s.gcMu.Unlock()
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("-samples: %w", err)
	}
	return nil
}

// raiseFileLimit lifts the soft limit on open files to the hard one, for
// the idle streams (children inherit it).
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	buf := make([]byte, 256<<10)
	for {
		k, err := f.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

var (
	reqBody   = toolsCall()
	firstSSE  = len(sseStream()[0])
	ssePerReq = sseSize
)

// runWorkload sends n requests of workload w through t from the workload's
// number of concurrent clients (each its own keep-alive connection) and
// measures them.
func runWorkload(ctx context.Context, cfg *config, t *target, up *server, w string, n int) result {
	sse, clients, _ := parseWorkload(w)
	path, want := "/mcp", jsonSize
	if sse {
		path, want = "/sse", ssePerReq
	}
	url := t.base + path
	tr := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients, DisableCompression: true, Proxy: nil}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	deadline := time.Now().Add(cfg.workloadTimeout)
	wctx, cancel := context.WithDeadline(ctx, deadline.Add(5*time.Second))
	defer cancel()

	type local struct {
		lat, ttfe []time.Duration
		samples   []sample
		errors    int
		firstErr  string
	}
	locals := make([]local, clients)
	var next atomic.Int64
	var truncated atomic.Bool
	cpu0, _ := cpuTicks(t.server.pid())
	io0, _ := ioCalls(t.server.pid())
	v0, iv0, _ := ctxSwitches(t.server.pid())
	up0, _ := cpuTicks(up.pid())
	gc0, gcCPU0 := t.server.gcs.Load(), t.server.gcCPU.Load()
	begin := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			l := &locals[c]
			buf := make([]byte, 32<<10)
			for next.Add(1) <= int64(n) {
				if time.Now().After(deadline) {
					truncated.Store(true)
					return
				}
				var seq int64
				if sse && cfg.samples != "" {
					seq = seqs.Add(1)
				}
				t0 := time.Now()
				sent, ttfe, err := oneRequest(wctx, client, url, want, sse, buf, seq)
				d := time.Since(t0)
				if err != nil {
					l.errors++
					if l.firstErr == "" {
						l.firstErr = err.Error()
					}
					continue
				}
				l.lat = append(l.lat, d)
				if sse {
					l.ttfe = append(l.ttfe, ttfe)
					// The sample starts where ttfe does (when the request
					// was sent), not at t0: under load the request's
					// building can be preempted, and a start before the
					// send would put the first event before it arrived.
					l.samples = append(l.samples, sample{seq, sent, ttfe, t0.Add(d).Sub(sent)})
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	cpu1, _ := cpuTicks(t.server.pid())
	io1, _ := ioCalls(t.server.pid())
	v1, iv1, _ := ctxSwitches(t.server.pid())
	up1, _ := cpuTicks(up.pid())
	// A cycle's gctrace line comes at its end, and through a pipe: wait a
	// little for those of the cycles the workload started.
	time.Sleep(gcSettle)
	gc1, gcCPU1 := t.server.gcs.Load(), t.server.gcCPU.Load()
	var r result
	var lat, ttfe []time.Duration
	for _, l := range locals {
		lat = append(lat, l.lat...)
		ttfe = append(ttfe, l.ttfe...)
		r.samples = append(r.samples, l.samples...)
		r.errors += l.errors
		if r.firstErr == "" {
			r.firstErr = l.firstErr
		}
	}
	atomic.AddInt64(&t.sent, int64(len(lat)+r.errors))
	r.requests, r.elapsed, r.truncated = len(lat), elapsed, truncated.Load()
	r.p50, r.p99 = percentile(lat, 50), percentile(lat, 99)
	r.ttfe50, r.ttfe99 = percentile(ttfe, 50), percentile(ttfe, 99)
	r.cpu = time.Duration(cpu1-cpu0) * clockTick
	r.syscalls = io1 - io0
	r.vcsw, r.ivcsw = v1-v0, iv1-iv0
	r.upCPU = time.Duration(up1-up0) * clockTick
	r.gcs, r.gcCPU = gc1-gc0, time.Duration(gcCPU1-gcCPU0)
	return r
}

// oneRequest posts the tools/call and reads the whole response, checking
// its status and length; it returns when the request was sent and, for a
// stream, the time from then to the end of the first event. A seq other
// than 0 goes in its seqHeader.
func oneRequest(ctx context.Context, client *http.Client, url string, want int, sse bool, buf []byte, seq int64) (time.Time, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(reqBody))
	if err != nil {
		return time.Time{}, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if seq != 0 {
		req.Header.Set(seqHeader, strconv.FormatInt(seq, 10))
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return time.Time{}, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	var ttfe time.Duration
	total := 0
	for {
		k, err := resp.Body.Read(buf)
		total += k
		if sse && ttfe == 0 && total >= firstSSE {
			ttfe = time.Since(t0)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return time.Time{}, 0, fmt.Errorf("after %d body bytes: %w", total, err)
		}
	}
	if total != want {
		return time.Time{}, 0, fmt.Errorf("body of %d bytes, want %d", total, want)
	}
	return t0, ttfe, nil
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := (len(d)*p + 99) / 100
	return d[min(max(i-1, 0), len(d)-1)]
}

// idleResult is the RSS a target's process grew by with n idle streams.
type idleResult struct {
	streams      int
	before, with int64 // KiB
	upBefore     int64
	upWith       int64
}

func (r idleResult) perStream() float64 { return float64(r.with-r.before) / float64(r.streams) }

// idleStreams opens n SSE streams through t that each receive a priming
// comment and one event and then wait, and measures the RSS of t's
// process before and with them. With profile, it then has t's process
// write its idle profiles (see child.ProfileEnv).
func idleStreams(ctx context.Context, t *target, up *server, n int, profile bool) (idleResult, error) {
	runtime.GC()
	time.Sleep(500 * time.Millisecond)
	var r idleResult
	r.streams = n
	r.before, _ = rssKiB(t.server.pid())
	r.upBefore, _ = rssKiB(up.pid())
	tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true, Proxy: nil}
	defer tr.CloseIdleConnections()
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	var bodies []io.ReadCloser
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
	}()
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{}}`, i+1)
		req, _ := http.NewRequestWithContext(ictx, http.MethodPost, t.base+"/idle", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := tr.RoundTrip(req)
		t.sent++
		if err != nil {
			return r, fmt.Errorf("stream %d: %w", i+1, err)
		}
		bodies = append(bodies, resp.Body)
		br := bufio.NewReaderSize(resp.Body, 256)
		for blank := 0; blank < 2; {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return r, fmt.Errorf("stream %d: %w", i+1, err)
			}
			if len(line) == 1 {
				blank++
			}
		}
	}
	time.Sleep(time.Second)
	r.with, _ = rssKiB(t.server.pid())
	r.upWith, _ = rssKiB(up.pid())
	if profile {
		if err := t.server.profileIdle(30 * time.Second); err != nil {
			return r, err
		}
	}
	for _, b := range bodies {
		b.Close()
	}
	bodies = nil
	time.Sleep(500 * time.Millisecond) // let the streams' records be written
	return r, nil
}

// profileIdle asks the child to write its idle profiles (SIGUSR1) and waits
// for its "profiled" line.
func (s *server) profileIdle(limit time.Duration) error {
	for len(s.lines) > 0 { // lines written before the request
		<-s.lines
	}
	if err := s.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case line := <-s.lines:
			if strings.HasPrefix(line, "profiled") {
				return nil
			}
		case <-s.done:
			return fmt.Errorf("%s exited while writing its idle profiles; it wrote:\n%s", s.name, s.tail)
		case <-timer.C:
			return fmt.Errorf("%s did not write its idle profiles within %s", s.name, limit)
		}
	}
}
