package matrix

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/serve"
)

// Defaults of Options.
const (
	// DefaultSeed seeds the fault server's schedules and the built-in
	// client's backoff jitter, so that two runs decide alike.
	DefaultSeed = 1
	// MaxOutput caps what is kept of a program's stdout and of its stderr.
	MaxOutput = 64 << 10
)

// DefaultParallel is how many runs go at once (docs/decisions.md, issue
// 10). The built-in client costs a goroutine that mostly waits (hangs,
// Retry-After, backoff): max(8, 4×CPUs). An external client is a process
// whose start-up (an interpreter, a runtime) takes a CPU for up to seconds:
// one per CPU, at least 2, so that clients starting together do not starve
// each other on a small machine.
func DefaultParallel(external bool) int {
	if external {
		return max(2, runtime.GOMAXPROCS(0))
	}
	return max(8, 4*runtime.GOMAXPROCS(0))
}

// Options configure a matrix run. The zero value runs every case once with
// the built-in client.
type Options struct {
	// Cases are the cases to run; nil runs Cases().
	Cases []Case
	// Command, when set, is the client to run once per case: the program
	// and its arguments; the endpoint URL is appended as the last argument
	// (and set in MCP_URL; see Environment). nil runs the built-in client.
	Command []string
	// Env is the environment of Command (os.Environ() when nil); the MCP_
	// variables are added to it. Dir is its working directory.
	Env []string
	Dir string
	// Repeat runs every case this many times (at least once), each on a
	// fresh endpoint; the verdicts are aggregated.
	Repeat int
	// Seed seeds the fault server and the built-in client's jitter
	// (DefaultSeed when 0).
	Seed uint64
	// Parallel bounds the runs in flight (DefaultParallel when 0).
	Parallel int
	// Limits are the rules' bounds.
	Limits Limits
	// Records, when set, receives every server log line of every run and
	// the built-in client's records (JSONL), a run at a time.
	Records record.LineWriter
	// Progress, when set, is called after each run, from the run's
	// goroutine (calls are serialized).
	Progress func(*CaseResult, *RunResult)
	// Stopped, when set, is called for each run the end of ctx cut short
	// (RunResult.Interrupted: not judged, its records written and marked),
	// from the run's goroutine, serialized with Progress.
	Stopped func(*CaseResult, *RunResult)
}

// Report is the result of a matrix run.
type Report struct {
	// Seed is the seed used; Command the client ("" for the built-in one).
	Seed    uint64   `json:"seed,string"`
	Command []string `json:"command,omitempty"`
	Repeat  int      `json:"repeat"`
	// Parallel is how many runs went at once.
	Parallel int `json:"parallel"`
	// Limits are the bounds the rules used.
	Limits Limits `json:"limits"`
	// Duration is the wall time of the whole run.
	Duration time.Duration `json:"-"`
	// Cases hold the results, in case order. In an incomplete report only
	// the cases with a finished run are there, with their finished runs.
	Cases []*CaseResult `json:"cases"`
	// Incomplete is set when the run was stopped (its context ended) before
	// every run finished; nil for a complete report.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
	// LateLines counts the server log lines logged after their run was
	// judged (a request that reached the server after the run's wait):
	// not in any verdict, written to Records with the warning LateWarning.
	LateLines int `json:"lateLines,omitempty"`
}

// Incomplete says how much of an interrupted matrix ran.
type Incomplete struct {
	// Reason is why it stopped: the context's cause ("interrupt",
	// "context deadline exceeded").
	Reason string `json:"reason"`
	// Finished counts the runs that finished, of Planned. Runs that the
	// stop cut short (Interrupted) are not judged and count as not run;
	// their records are written, each marked with the warning
	// "matrix-run-interrupted".
	Finished    int `json:"finishedRuns"`
	Planned     int `json:"plannedRuns"`
	Interrupted int `json:"interruptedRuns"`
	// NotRun names the cases with a run that did not finish, in case
	// order ("name (1 of 3 runs)" when some repeats finished).
	NotRun []string `json:"notRun"`
}

// String says it in one line: "interrupt after 12 of 84 runs, 8
// interrupted".
func (in *Incomplete) String() string {
	return fmt.Sprintf("%s after %d of %d runs, %d interrupted", in.Reason, in.Finished, in.Planned, in.Interrupted)
}

// CaseResult is one case's runs and their aggregated verdicts.
type CaseResult struct {
	Case Case         `json:"case"`
	Runs []*RunResult `json:"runs"`
}

// RunResult is one run of one case.
type RunResult struct {
	// Repeat numbers the run among the case's repeats, from 1.
	Repeat int `json:"repeat"`
	// URL is the endpoint the client was given; Endpoint its key in the
	// server's log (serve.endpoint).
	URL      string `json:"url"`
	Endpoint string `json:"endpoint"`
	// Trace is what the server saw; Client what the client did.
	Trace  *judge.Trace    `json:"-"`
	Client judge.ClientRun `json:"client"`
	// Checks are the rules' verdicts.
	Checks []judge.Check `json:"checks"`
	// Lines are the server log lines of the run (JSONL), for --record.
	Lines [][]byte `json:"-"`
	// Interrupted reports a run the end of Run's context cut short: its
	// Lines are written (marked), it is not judged and not in the report.
	Interrupted bool `json:"-"`
}

// Verdict is Fail when a check failed, else NotTested when the run did not
// exercise its case (client.capability), else Pass.
func (r *RunResult) Verdict() judge.Verdict { return judge.Worst(r.Checks) }

// Verdict is Fail when any run failed, else NotTested when any run did not
// test the case, else Pass.
func (c *CaseResult) Verdict() judge.Verdict {
	v := judge.Pass
	for _, r := range c.Runs {
		switch r.Verdict() {
		case judge.Fail:
			return judge.Fail
		case judge.NotTested:
			v = judge.NotTested
		}
	}
	return v
}

// NotTested counts the runs that did not test the case.
func (c *CaseResult) NotTested() int {
	n := 0
	for _, r := range c.Runs {
		if r.Verdict() == judge.NotTested {
			n++
		}
	}
	return n
}

// Failures counts the runs that failed.
func (c *CaseResult) Failures() int {
	n := 0
	for _, r := range c.Runs {
		if r.Verdict() == judge.Fail {
			n++
		}
	}
	return n
}

// Checks aggregates the runs' checks by rule: fail if a run failed (with
// its evidence, and which run when there were several), pass if one
// passed, else n/a.
func (c *CaseResult) Checks() []judge.Check {
	if len(c.Runs) == 1 {
		return c.Runs[0].Checks
	}
	var out []judge.Check
	idx := map[string]int{}
	for _, r := range c.Runs {
		for _, ch := range r.Checks {
			i, ok := idx[ch.Rule]
			if !ok {
				idx[ch.Rule] = len(out)
				out = append(out, ch)
				if ch.Verdict == judge.Fail {
					out[len(out)-1].Evidence = fmt.Sprintf("run %d: %s", r.Repeat, ch.Evidence)
				}
				continue
			}
			switch {
			case ch.Verdict == judge.Fail && out[i].Verdict != judge.Fail:
				out[i] = ch
				out[i].Evidence = fmt.Sprintf("run %d: %s", r.Repeat, ch.Evidence)
			case ch.Verdict == judge.Fail:
				out[i].Evidence += fmt.Sprintf(" | run %d: %s", r.Repeat, ch.Evidence)
			case ch.Verdict == judge.Pass && out[i].Verdict == judge.NotApplicable:
				out[i] = ch
			}
		}
	}
	return out
}

// Failed reports whether any case failed.
func (r *Report) Failed() bool {
	for _, c := range r.Cases {
		if c.Verdict() == judge.Fail {
			return true
		}
	}
	return false
}

// Run starts the fault server on 127.0.0.1, runs the client against every
// case on its own endpoint (a bounded number at once), judges each run
// from the server's log, and returns the report. The error is non-nil
// when the matrix itself could not run (no listener, no fixture listing,
// bad options; the report is then nil), and when ctx ended before every
// run finished: the runs in flight are stopped and dropped, and Run
// returns the report of the runs that finished, marked Incomplete, with
// an error wrapping context.Cause(ctx). Every client failure is a verdict
// in the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	start := time.Now()
	cases := opts.Cases
	if cases == nil {
		cases = Cases()
	}
	repeat := max(1, opts.Repeat)
	if n := len(cases) * repeat; n >= serve.MaxEndpoints {
		return nil, fmt.Errorf("matrix: %d runs (%d cases × %d repeats): at most %d endpoints fit on one fault server", n, len(cases), repeat, serve.MaxEndpoints-1)
	}
	if opts.Seed == 0 {
		opts.Seed = DefaultSeed
	}
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultParallel(opts.Command != nil)
	}
	opts.Limits = opts.Limits.WithDefaults()
	if opts.Command != nil && len(opts.Command) == 0 {
		return nil, errors.New("matrix: an empty command")
	}
	if opts.Command != nil {
		if err := CheckCommand(opts.Command); err != nil {
			return nil, fmt.Errorf("matrix: %w", err)
		}
	}

	sink := newLogSink()
	srv := serve.New(serve.Options{Seed: opts.Seed, LogFile: sink, LogLimit: 1000})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("matrix: listening on 127.0.0.1: %w", err)
	}
	// The fault server, behind a handler that notes when each run's first
	// request arrives: the time bounds count from there.
	arr := newArrivals()
	hctx, cancelCause := context.WithCancelCause(context.Background())
	// Hangs and slow streams the end of the run cuts note the shutdown as
	// their cause, not a client that left.
	cancelHandlers := func() { cancelCause(faults.ErrShutdown) }
	hs := &http.Server{
		Handler:           arr.wrap(srv),
		ConnState:         arr.connState,
		ConnContext:       arr.connContext,
		ReadHeaderTimeout: serve.DefaultReadHeaderTimeout,
		IdleTimeout:       serve.DefaultIdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return hctx },
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(arr.listen(ln)) }()
	defer func() {
		cancelHandlers() // ends hangs and slow streams
		_ = hs.Close()
		<-served
	}()
	base := "http://" + ln.Addr().String()

	safety, err := toolSafety(ctx, base+serve.MainPath)
	if err != nil {
		return nil, err
	}
	// The listing is the matrix's own, no run's: not recorded (and not
	// a late line). Its line is written when its handler ends, which may
	// be after the client read its answer.
	for deadline := time.Now().Add(lateWait); srv.InFlight(serve.MainPath) > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	_ = sink.take(serve.MainPath)

	rep := &Report{Seed: opts.Seed, Command: RedactArgs(opts.Command), Repeat: repeat, Parallel: opts.Parallel, Limits: opts.Limits}
	for _, c := range cases {
		rep.Cases = append(rep.Cases, &CaseResult{Case: c, Runs: make([]*RunResult, repeat)})
	}
	type job struct {
		cr  *CaseResult
		idx int // case index
		n   int // repeat, from 0
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex // serializes Progress and Records
	var recErr error
	interrupted := 0
	for range min(opts.Parallel, len(cases)*repeat) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				rr := runCase(ctx, srv, sink, arr, base, &j.cr.Case, j.idx, j.n+1, safety, opts)
				if !rr.Interrupted {
					j.cr.Runs[j.n] = rr
				}
				mu.Lock()
				if opts.Records != nil {
					// Every line is tried, also after a failure, so
					// that the sink counts each loss ("10 of 10
					// records lost", not "1 of 1").
					if err := writeRecords(opts.Records, rr); err != nil && recErr == nil {
						recErr = err
					}
				}
				if rr.Interrupted {
					interrupted++
					if opts.Stopped != nil {
						opts.Stopped(j.cr, rr)
					}
				} else if opts.Progress != nil {
					opts.Progress(j.cr, rr)
				}
				mu.Unlock()
			}
		}()
	}
	// Longest first: the runs that hold or wait start at once.
	order := make([]job, 0, len(cases)*repeat)
	for i, cr := range rep.Cases {
		for n := range repeat {
			order = append(order, job{cr, i, n})
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return slow(&order[a].cr.Case) && !slow(&order[b].cr.Case) })
feed:
	for _, j := range order {
		select {
		case jobs <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	// A request may reach the server after its run was judged (its head
	// still coming when the run's wait ended): its line is not in the
	// verdicts, but it is written, marked, and counted (nothing is
	// silently lost).
	for _, raw := range lateLines(sink, arr, cancelHandlers) {
		rep.LateLines++
		if opts.Records != nil {
			if err := opts.Records.WriteLine(raw); err != nil && recErr == nil {
				recErr = err
			}
		}
	}
	rep.Duration = time.Since(start)
	var err2 error
	if ctx.Err() != nil {
		rep.markIncomplete(context.Cause(ctx).Error(), len(cases)*repeat, interrupted)
		err2 = fmt.Errorf("matrix: stopped (%s): %w", rep.Incomplete, context.Cause(ctx))
	}
	if recErr != nil {
		err2 = errors.Join(err2, fmt.Errorf("matrix: writing records: %w", recErr))
	}
	return rep, err2
}

// markIncomplete drops the runs that did not finish (and the cases left
// with none) and says so.
func (r *Report) markIncomplete(reason string, planned, interrupted int) {
	in := &Incomplete{Reason: reason, Planned: planned, Interrupted: interrupted, NotRun: []string{}}
	var kept []*CaseResult
	for _, c := range r.Cases {
		var runs []*RunResult
		for _, rr := range c.Runs {
			if rr != nil {
				runs = append(runs, rr)
			}
		}
		in.Finished += len(runs)
		switch {
		case len(runs) == len(c.Runs):
		case len(runs) == 0:
			in.NotRun = append(in.NotRun, c.Case.Name)
		default:
			in.NotRun = append(in.NotRun, fmt.Sprintf("%s (%d of %d runs)", c.Case.Name, len(runs), len(c.Runs)))
		}
		if len(runs) > 0 {
			c.Runs = runs
			kept = append(kept, c)
		}
	}
	r.Cases, r.Incomplete = kept, in
}

// slow reports the cases that take seconds: hangs and Retry-After waits.
func slow(c *Case) bool { return c.Holds || strings.HasPrefix(c.Scenario(), "errors.rate_limited") }

// toolSafety reads the fixture's tools/list and maps each tool to the
// safety its annotations give (the fixture is trusted).
func toolSafety(ctx context.Context, u string) (map[string]retry.Safety, error) {
	c, err := client.New(client.Options{URL: u, Protocol: client.Protocol2026, Timeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	l := c.ListTools(ctx)
	if !l.OK {
		reason := "no answer"
		if l.Final != nil {
			reason = l.Final.Reason
		}
		return nil, fmt.Errorf("matrix: listing the fixture's tools: %s", reason)
	}
	out := map[string]retry.Safety{}
	for _, t := range l.Tools {
		a := t.Annotations
		out[t.Name] = retry.SafetyFromHints(a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint)
	}
	return out, nil
}

// endpointFor returns the URL and the log key of a case's endpoint for one
// repeat: /s/{id}/mcp with the params and a run tag, so every run has its
// own counters.
func endpointFor(base string, c *Case, n int) (u, key string) {
	q := url.Values{"run": {runTag(c, n)}}
	if len(c.Params) > 0 {
		q.Set("params", string(c.Params))
	}
	path := "/s/" + c.Scenario() + "/mcp"
	return base + path + "?" + q.Encode(), path + "?" + q.Encode()
}

// ArrivalSlack is how much sooner than the server saw its first request
// arrive a client program may have started its call's clock (it starts it
// as it sends, then connects and writes; on a loaded machine its
// scheduling adds more). A program that exits by itself within
// MCP_TIMEOUT_MS - ArrivalSlack of its first request did not run out of
// that limit; one that exits later may have (docs/decisions.md,
// matrixna22).
const ArrivalSlack = time.Second

func runCase(ctx context.Context, srv *serve.Server, sink *logSink, arr *arrivals, base string, c *Case, idx, n int, safety map[string]retry.Safety, opts Options) *RunResult {
	u, key := endpointFor(base, c, n)
	rr := &RunResult{Repeat: n, URL: u, Endpoint: key}
	first := arr.expect(runTag(c, n))
	defer arr.forget(runTag(c, n))
	var recs []*record.Record
	begin := time.Now()
	if opts.Command == nil {
		rr.Client, recs = runBuiltin(ctx, c, u, opts.Seed, uint64(idx)<<16|uint64(n))
	} else {
		rr.Client = runCommand(ctx, c, u, first, opts)
	}
	end := time.Now()
	// Stopped by the end of ctx, not finished: not judged, but what the
	// server saw is written, marked (nothing is silently lost).
	rr.Interrupted = ctx.Err() != nil && (opts.Command == nil || !rr.Client.Exited)
	// A request is logged when it ends, which may be after its client left;
	// one still in a socket buffer when the client exited starts a moment
	// later, and one whose head was still coming (a child of the client
	// holding its connection) later still. Wait until the endpoint is idle
	// and no connection is waiting for a request's head, twice in a row.
	settle(lateWait, func() bool { return srv.InFlight(key) == 0 && arr.handled(runTag(c, n)) == 0 && arr.unread() == 0 })
	// A request of the run still served when the wait ended at its limit
	// is in no verdict: the run says so, not that the server saw nothing.
	rr.Client.Unsettled = max(srv.InFlight(key), arr.handled(runTag(c, n)))
	// The first request as the server saw it arrive, once every request
	// is in: one that came after the client exited is still its request
	// (read before the wait, it was "no request" or "did not start" in
	// one run and an ordinary run in the next).
	if at, ok := first.at(); ok {
		rr.Client.Startup, rr.Client.Active = max(0, at.Sub(begin)), max(0, end.Sub(at))
		if opts.Command != nil {
			// The limit the program was given (MCP_TIMEOUT_MS, the
			// call's) had passed when it exited by itself: a program
			// that honours it may have printed that limit's report.
			// A call starts no sooner than the program's first
			// request, so one that exits before first+Timeout did not
			// run out of it (a timeout reported then is its own
			// mistake), however long it took to start (matrixna22:
			// counted from its start, a 9.5 s start-up made a
			// misclassification 0.5 s after the first request "out
			// of time"). ArrivalSlack allows for the program's clock
			// starting before its first request reached the server.
			rr.Client.OutOfTime = rr.Client.Exited && c.Timeout > 0 && rr.Client.Active+ArrivalSlack >= c.Timeout
		}
		// A request that came as the start-up limit passed: the
		// client started, and the rules judge what it did.
		rr.Client.NotStarted = false
	} else {
		rr.Client.NoRequest = true
	}
	lines := sink.take(key)
	mark := func(l *serverLine) []byte {
		if rr.Interrupted {
			return interruptedLine(l, context.Cause(ctx))
		}
		return l.raw
	}
	for _, l := range lines {
		rr.Lines = append(rr.Lines, mark(l))
	}
	// The lines of the endpoint's authorization server (each written
	// before its answer left, so all are in once the client is done).
	asLines := sink.takeAuth(record.RedactURL(key))
	for _, l := range asLines {
		rr.Lines = append(rr.Lines, mark(l))
	}
	for _, r := range recs {
		if rr.Interrupted {
			r.Warnings = append(r.Warnings, interruptedWarning(context.Cause(ctx)))
		}
		b, err := (&record.Encoder{BodyLimit: 16 << 10}).Encode(r)
		if err == nil {
			rr.Lines = append(rr.Lines, b)
		}
	}
	if rr.Interrupted {
		return rr
	}
	served := make([]*record.Record, 0, len(lines)+len(asLines))
	for _, l := range append(lines, asLines...) {
		served = append(served, l.rec)
	}
	rr.Trace = judge.NewTrace(c.Name, served, c.facts())
	rr.Trace.Client, rr.Trace.Safety, rr.Trace.Limits = &rr.Client, safety, opts.Limits
	rr.Checks = judge.Judge(rr.Trace)
	return rr
}

// InterruptedWarning is the warning code on each record of a run the
// matrix's stop cut short: written, not judged.
const InterruptedWarning = record.WarnRunInterrupted

func interruptedWarning(cause error) record.Warning {
	return record.Warning{Code: InterruptedWarning, Message: fmt.Sprintf("the matrix was stopped (%v) while this run was in flight: the run was not judged", cause)}
}

// LateWarning is the warning code on a server log line logged after its
// run was judged: the request reached the server after the run's wait
// (its verdicts do not include it).
const LateWarning = record.WarnLineLate

// lateWait bounds each wait for requests still coming: a run's, and each
// of lateLines'.
const lateWait = 3 * time.Second

// settle waits until done holds twice in a row 10 ms apart, or for at most
// limit.
func settle(limit time.Duration, done func() bool) {
	idle := 0
	for deadline := time.Now().Add(limit); idle < 2 && time.Now().Before(deadline); {
		if done() {
			idle++
		} else {
			idle = 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lateLines waits (up to lateWait) until no connection is partway through
// a request's head, ends the handlers (stop), waits (up to lateWait) until
// no request is being served, and returns the lines no run took, each
// marked LateWarning, in the order they were logged per endpoint
// (endpoints sorted).
func lateLines(sink *logSink, arr *arrivals, stop func()) [][]byte {
	settle(lateWait, func() bool { return arr.unread() == 0 && arr.serving() == 0 })
	stop()
	settle(lateWait, func() bool { return arr.serving() == 0 })
	w := record.Warning{Code: LateWarning, Message: "the server logged this request after its run was judged (it arrived after the run's wait): the run's verdicts do not include it"}
	var out [][]byte
	for _, m := range sink.rest() {
		for _, l := range m {
			out = append(out, withWarning(l, w))
		}
	}
	return out
}

// interruptedLine returns a server log line with the warning
// InterruptedWarning added.
func interruptedLine(l *serverLine, cause error) []byte {
	return withWarning(l, interruptedWarning(cause))
}

// withWarning returns a server log line with the warning w added: inserted
// before the closing brace when the line has no warnings (its bytes
// otherwise as logged), else the line encoded again with w appended.
func withWarning(l *serverLine, w record.Warning) []byte {
	raw := bytes.TrimRight(l.raw, " \r\n")
	if len(l.rec.Warnings) == 0 && len(raw) > 1 && raw[len(raw)-1] == '}' {
		ws, err := json.Marshal([]record.Warning{w})
		if err == nil {
			out := append(bytes.Clone(raw[:len(raw)-1]), `,"warnings":`...)
			out = append(append(out, ws...), '}')
			return append(out, l.raw[len(raw):]...)
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(l.raw, &m) != nil {
		return l.raw
	}
	ws := append(slices.Clone(l.rec.Warnings), w)
	b, err := json.Marshal(ws)
	if err != nil {
		return l.raw
	}
	m["warnings"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return l.raw
	}
	return append(out, l.raw[len(raw):]...)
}

// runBuiltin runs mcpdiag's own client with its default retry policy.
func runBuiltin(ctx context.Context, c *Case, u string, seed, stream uint64) (judge.ClientRun, []*record.Record) {
	cr := judge.ClientRun{Builtin: true}
	pol := retry.DefaultPolicy()
	opts := client.Options{URL: u, Protocol: c.Protocol, Policy: &pol, Timeout: c.Timeout, Rand: rand.New(rand.NewPCG(seed, stream))}
	if c.Entry.UsesOAuth() {
		// The endpoint is behind mcpdiag serve's own authorization
		// server: the chain runs with its defaults (dynamic
		// registration, the code fetched from the loopback test user),
		// as `mcpdiag call` runs it.
		opts.Auth = &client.AuthOptions{}
	}
	if len(c.Input) > 0 {
		in, err := client.ReadInputs(bytes.NewReader(c.Input))
		if err != nil {
			cr.Error = err.Error()
			return cr, nil
		}
		opts.Inputs = in
	}
	cl, err := client.New(opts)
	if err != nil {
		cr.Error = err.Error()
		return cr, nil
	}
	start := time.Now()
	// The call's own limit, on a context of the matrix's (the client's
	// own, made a moment later, ends no sooner): its cause says afterwards
	// whether the limit passed before the call returned.
	limit := c.Timeout
	if limit <= 0 {
		limit = client.DefaultTimeout
	}
	cctx, cancel := context.WithTimeoutCause(ctx, limit, errCallLimit)
	call, err := cl.CallTool(cctx, c.Tool, c.Args)
	cr.Duration = time.Since(start)
	cr.OutOfTime = context.Cause(cctx) == errCallLimit
	cancel()
	if err != nil {
		cr.Error = err.Error()
		return cr, nil
	}
	cr.Outcome, cr.ExitCode = call.Outcome, call.ExitCode()
	cr.Retries, cr.Rounds, cr.Recoveries = call.Retries, call.Rounds, call.Recoveries
	cr.Decision = string(call.Decision.Action)
	if call.Decision.Reason != "" {
		cr.Decision += ": " + call.Decision.Reason
	}
	ex, sum := call.Records(record.Record{Client: client.DefaultClientInfo.Name + "@" + client.DefaultClientInfo.Version, Scenario: c.Scenario()}, u)
	return cr, append(ex, sum)
}

// Environment returns the variables a client program gets for case c at
// endpoint u: MCP_URL, MCP_SCENARIO, MCP_CASE, MCP_TOOL, MCP_ARGS,
// MCP_TIMEOUT_MS, and MCP_PROTOCOL and MCP_INPUT when the case has them.
func Environment(c *Case, u string) []string {
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	env := []string{
		"MCP_URL=" + u,
		"MCP_SCENARIO=" + c.Scenario(),
		"MCP_CASE=" + c.Name,
		"MCP_TOOL=" + c.Tool,
		"MCP_ARGS=" + string(args),
		"MCP_TIMEOUT_MS=" + strconv.FormatInt(c.Timeout.Milliseconds(), 10),
	}
	if c.Protocol != "" {
		env = append(env, "MCP_PROTOCOL="+c.Protocol)
	}
	if len(c.Input) > 0 {
		env = append(env, "MCP_INPUT="+string(c.Input))
	}
	return env
}

// contract lists the variables Environment sets.
var contract = []string{"MCP_URL", "MCP_SCENARIO", "MCP_CASE", "MCP_TOOL", "MCP_ARGS", "MCP_TIMEOUT_MS", "MCP_PROTOCOL", "MCP_INPUT"}

// inherited returns env without the contract's variables, so that a value
// left in the matrix's own environment never reaches a case that sets none.
func inherited(env []string) []string {
	var out []string
next:
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		for _, c := range contract {
			if k == c {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// runTag is the run query parameter of a case's endpoint for repeat n.
func runTag(c *Case, n int) string { return fmt.Sprintf("%s#%d", c.Name, n) }

// arrivals notes when the first request of each expected run arrives.
type arrivals struct {
	mu   sync.Mutex
	runs map[string]*arrival
	// waiting holds the connections that wait for a request's head (new
	// or idle), true once bytes of it were read: a request on its way,
	// which the server has not seen. A client's pool may hold a new
	// connection it never uses (false): no request is on its way there.
	waiting map[net.Conn]bool
	// active holds the connections whose request's head was read and
	// whose answer is not done (its handler runs or is about to).
	active map[net.Conn]struct{}
	// heads holds the active connections whose handler has not started:
	// a request the server has read but not yet counted in flight.
	heads map[net.Conn]struct{}
	// ln is the listener whose accept queue may hold a connection (and
	// its request) the server has not accepted yet.
	ln net.Listener
	// handling counts, by run tag, the requests wrap took from heads whose
	// handler has not returned: a request leaves heads and enters this
	// count under one lock, so it is never counted by neither (between
	// wrap and the server's own in-flight count there was a gap).
	handling map[string]int
	// accepted counts the connections the kernel's accept handed over that
	// Accept has not put in waiting yet: taken from the accept queue and
	// counted under one lock (acceptCounted), so that a connection is never
	// in neither (a goroutine that waits for a CPU between the two let the
	// run's wait see nothing on its way).
	accepted int
	// afterAccept and afterRead, when set (tests), run between the
	// kernel's accept or read and its note, as a stalled goroutine waits.
	afterAccept, afterRead func()
}

// arrival is one run's first request: ch is closed when it arrived, at t.
type arrival struct {
	once sync.Once
	ch   chan struct{}
	t    time.Time
}

func newArrivals() *arrivals {
	return &arrivals{runs: map[string]*arrival{}, waiting: map[net.Conn]bool{}, active: map[net.Conn]struct{}{},
		heads: map[net.Conn]struct{}{}, handling: map[string]int{}}
}

// listen returns ln with each connection's reads noted: a connection that
// waits for a request's head and has read bytes of it holds a request
// the server has not seen yet.
func (a *arrivals) listen(ln net.Listener) net.Listener {
	a.mu.Lock()
	a.ln = ln
	a.mu.Unlock()
	return &headListener{Listener: ln, a: a}
}

type headListener struct {
	net.Listener
	a *arrivals
	// dup is the duplicate of the listener's descriptor that
	// acceptCounted accepts on (Linux), raw its RawConn; closed with the
	// listener.
	dupOnce sync.Once
	dup     *os.File
	raw     syscall.RawConn
}

// Close closes the listener and the duplicate of its descriptor (a
// pending Accept on it returns).
func (l *headListener) Close() error {
	err := l.Listener.Close()
	l.dupOnce.Do(func() {}) // no duplicate is made after this
	if l.dup != nil {
		_ = l.dup.Close()
	}
	return err
}

func (l *headListener) Accept() (net.Conn, error) {
	c, err := acceptCounted(l)
	if err != nil {
		return nil, err
	}
	if h := l.a.afterAccept; h != nil {
		h()
	}
	hc := &headConn{Conn: c, a: l.a}
	// Waiting from the moment it leaves the accept queue, not only from
	// the server's StateNew a moment later.
	l.a.mu.Lock()
	l.a.waiting[hc] = false
	l.a.accepted--
	l.a.mu.Unlock()
	return hc, nil
}

type headConn struct {
	net.Conn
	a *arrivals
	// noted counts the bytes Read returned and noted (under a.mu): the
	// kernel's count of bytes received past it is a request's bytes on
	// their way, in the socket or taken by a read not noted yet.
	noted int64
}

func (c *headConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if h := c.a.afterRead; h != nil {
		h()
	}
	if n > 0 {
		c.a.mu.Lock()
		c.noted += int64(n)
		if started, ok := c.a.waiting[c]; ok && !started {
			c.a.waiting[c] = true
		}
		c.a.mu.Unlock()
	}
	return n, err
}

// pending reports whether bytes reached c's socket that its reads have not
// noted: waiting in the socket, or taken by a read that has not noted them
// yet (the kernel's count of bytes received, where it is known; else the
// bytes waiting in the socket). Called under a.mu.
func (c *headConn) pending() bool {
	if got, ok := receivedBytes(c.Conn); ok {
		return got > c.noted
	}
	return queuedBytes(c.Conn) > 0
}

// connState is the server's http.Server.ConnState: a new or idle
// connection waits for a request's head; an active one has it (its
// handler runs next), a closed or hijacked one has none coming.
func (a *arrivals) connState(c net.Conn, s http.ConnState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.active, c)
	delete(a.heads, c)
	switch s {
	case http.StateNew, http.StateIdle:
		a.waiting[c] = false
	case http.StateActive:
		delete(a.waiting, c)
		a.active[c] = struct{}{}
		a.heads[c] = struct{}{}
	default:
		delete(a.waiting, c)
	}
}

// connContext is the server's http.Server.ConnContext: the request's
// connection, for wrap to say its handler started.
func (a *arrivals) connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

type connKey struct{}

// serving counts the connections with a request being served.
func (a *arrivals) serving() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.active)
}

// unread counts the requests on their way that no handler has started:
// connections in the listener's accept queue or accepted and not noted
// yet, connections with bytes of a request's head read, or received and
// not noted (in their socket, or taken by a read that has not noted them),
// and requests read whose handler has not started. A client that writes
// its request and exits leaves it in the kernel's queues; on a loaded
// machine the server may not have accepted or read it when the run's wait
// looks, or its goroutine may wait for a CPU between the kernel's accept
// or read and its note.
func (a *arrivals) unread() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.heads) + a.accepted
	for c, started := range a.waiting {
		if hc, ok := c.(*headConn); started || ok && hc.pending() {
			n++
		}
	}
	if a.ln != nil {
		n += acceptQueue(a.ln)
	}
	return n
}

// handled counts the requests of the run tagged tag that wrap passed on
// and whose handler has not returned.
func (a *arrivals) handled(tag string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.handling[tag]
}

// expect starts watching for the first request of the run tagged tag.
func (a *arrivals) expect(tag string) *arrival {
	ar := &arrival{ch: make(chan struct{})}
	a.mu.Lock()
	a.runs[tag] = ar
	a.mu.Unlock()
	return ar
}

func (a *arrivals) forget(tag string) {
	a.mu.Lock()
	delete(a.runs, tag)
	a.mu.Unlock()
}

// wrap returns next behind a handler that notes each run's first request
// (any HTTP method) before next sees it.
func (a *arrivals) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tag := r.URL.Query().Get("run")
		a.mu.Lock()
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			delete(a.heads, c)
		}
		a.handling[tag]++
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			if a.handling[tag]--; a.handling[tag] <= 0 {
				delete(a.handling, tag)
			}
			a.mu.Unlock()
		}()
		if tag != "" {
			a.mu.Lock()
			ar := a.runs[tag]
			a.mu.Unlock()
			if ar != nil {
				ar.once.Do(func() {
					ar.t = time.Now()
					close(ar.ch)
				})
			}
		}
		next.ServeHTTP(w, r)
	})
}

// at returns when the first request arrived, if one did.
func (ar *arrival) at() (time.Time, bool) {
	select {
	case <-ar.ch:
		return ar.t, true
	default:
		return time.Time{}, false
	}
}

// The reasons the matrix stops a client.
var (
	errStartLimit = errors.New("start-up limit")
	errRunLimit   = errors.New("run limit")
	// errCallLimit is the cause of the built-in client's call context
	// when the case's timeout passed.
	errCallLimit = errors.New("the call's time limit")
)

// runCommand runs the client program once, with the endpoint as its last
// argument, and keeps its exit code and (capped) output. It stops the
// program when it sent no request within the start-up limit, or when its
// run limit passed since its first request (first).
func runCommand(ctx context.Context, c *Case, u string, first *arrival, opts Options) judge.ClientRun {
	cr := judge.ClientRun{Command: RedactArgs(append(append([]string(nil), opts.Command...), u))}
	limit := opts.Limits.RunTimeout
	if c.Holds {
		// Past its bound the verdict is known: stop it a second later.
		limit = min(limit, c.Timeout+opts.Limits.LivenessGrace+time.Second)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	defer close(done)
	go func() {
		startup := time.NewTimer(opts.Limits.StartTimeout)
		defer startup.Stop()
		select {
		case <-done:
			return
		case <-startup.C:
			cancel(errStartLimit)
			return
		case <-first.ch:
		}
		run := time.NewTimer(limit - time.Since(first.t))
		defer run.Stop()
		select {
		case <-done:
		case <-run.C:
			cancel(errRunLimit)
		}
	}()
	// A fresh slice: runs go in parallel, and appending to Command[1:]
	// would write every run's URL into one shared array.
	cmd := exec.CommandContext(rctx, opts.Command[0], append(slices.Clone(opts.Command[1:]), u)...)
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(inherited(env), Environment(c, u)...)
	cmd.Dir = opts.Dir
	var stdout, stderr capped
	ownGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err := runOwningOutput(cmd, &stdout, &stderr)
	cr.Duration = time.Since(start)
	killGroup(cmd)
	stdout.wait(outputDrain)
	stderr.wait(outputDrain)
	// A client's output goes into --json and --junit (CI artifacts): it
	// passes through the records' redactor first (issue 11).
	cr.Stdout, cr.Stderr = record.Scrub(stdout.String()), record.Scrub(stderr.String())
	// Exited: the program ended by itself, before anything stopped it.
	cr.Exited = rctx.Err() == nil
	why := context.Cause(rctx)
	cr.Killed = rctx.Err() != nil && ctx.Err() == nil && (why == errStartLimit || why == errRunLimit)
	if cmd.ProcessState != nil {
		cr.ExitCode = cmd.ProcessState.ExitCode()
		if cr.Exited {
			// A signal the matrix did not send: a crash (the OOM
			// killer, a segmentation fault, an abort).
			cr.Signal = diedOf(cmd.ProcessState)
			if cr.Signal == "" {
				// A shell (a wrapper script) reports a child
				// that died of signal N with the exit code
				// 128+N: the same crash, one process removed.
				cr.Signal = shellReported(cr.ExitCode)
			}
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil, errors.As(err, &ee):
	case cmd.ProcessState == nil:
		cr.Error, cr.Duration, cr.ExitCode = err.Error(), 0, -1
	default:
		cr.Error = err.Error()
	}
	switch {
	case cr.Killed && why == errStartLimit:
		cr.NotStarted = true
		cr.Error = fmt.Sprintf("killed: no request within %s of starting (the start-up limit)", ms(opts.Limits.StartTimeout))
	case cr.Killed:
		cr.Error = fmt.Sprintf("killed %s after its first request (the run's limit)", ms(limit))
	}
	cr.Outcome = PrintedOutcome(cr.Stdout)
	// OutOfTime is set by runCase, once the first request's arrival is
	// known (the limit counts from it).
	return cr
}

// capped keeps the first MaxOutput bytes written to it.
type capped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	cut  bool
	r    *os.File      // the pipe's read end, while copied
	done chan struct{} // closed when the copy ended
}

// outputDrain bounds the wait for a client's output after it exited and its
// process group was stopped (a process that left the group may hold it).
const outputDrain = 2 * time.Second

// runOwningOutput runs cmd with its stdout and stderr on pipes this process
// copies into out and errOut itself, so that cmd.Wait returns when the
// client exits, not when every process that inherited its output (a helper
// it started in the background) has closed it. The caller stops the group
// and waits for the copies.
func runOwningOutput(cmd *exec.Cmd, out, errOut *capped) error {
	var ends []*os.File // the write ends: the child gets its own copies
	defer func() {
		for _, w := range ends {
			w.Close()
		}
	}()
	for _, c := range []*capped{out, errOut} {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		ends = append(ends, w)
		c.r, c.done = r, make(chan struct{})
		go func() {
			defer close(c.done)
			_, _ = io.Copy(c, r)
		}()
	}
	cmd.Stdout, cmd.Stderr = ends[0], ends[1]
	err := cmd.Start()
	for _, w := range ends {
		w.Close()
	}
	ends = nil
	if err != nil {
		return err
	}
	return cmd.Wait()
}

// wait waits up to d for the copy of the output to end, then closes the
// pipe (a process outside the group may still hold its write end).
func (c *capped) wait(d time.Duration) {
	if c.done == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.r.Close()
		<-c.done
	}
	c.r.Close()
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := MaxOutput - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	if c.buf.Len() >= MaxOutput && len(p) > 0 {
		c.cut = true
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.buf.String()
	if c.cut {
		s += "\n[output cut at 64 KiB]"
	}
	return s
}

// The lines PrintedOutcome looks for, compiled on first use (a process
// that runs no matrix does not hold them).
var (
	outcomeLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\s*(?:mcp_)?outcome\s*[:=]\s*"?([A-Z_]+)"?\s*$`)
	})
	reportLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Z_]+) \((?:[a-z]+ )?layer\)`) })
)

// PrintedOutcome returns the last classification a client printed on
// stdout, or "": a line "outcome: NAME" or "MCP_OUTCOME=NAME", the first
// line of mcpdiag call's report ("NAME (transport layer) — …"), or a
// record of kind "call" (mcpdiag call --json). Only the classifier's
// outcome names (and the client's call-level ones) count.
func PrintedOutcome(stdout string) classify.Outcome {
	var found classify.Outcome
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, MaxOutput+1)
	for sc.Scan() {
		line := sc.Text()
		var name string
		if m := outcomeLine().FindStringSubmatch(line); m != nil {
			name = strings.ToUpper(m[1])
		} else if m := reportLine().FindStringSubmatch(line); m != nil {
			name = m[1]
		} else if strings.HasPrefix(strings.TrimSpace(line), "{") {
			var r struct {
				Kind    string `json:"kind"`
				Outcome string `json:"outcome"`
			}
			if json.Unmarshal([]byte(line), &r) == nil && r.Kind == string(record.KindCall) {
				name = r.Outcome
			}
		}
		if known(classify.Outcome(name)) {
			found = classify.Outcome(name)
		}
	}
	return found
}

func known(o classify.Outcome) bool { return o.Layer() != "" }

// logSink receives every server log line and keeps the lines of each
// endpoint until its run takes them.
type logSink struct {
	mu    sync.Mutex
	lines map[string][]*serverLine
	auth  map[string][]*serverLine // authorization server lines, by auth.for
}

func newLogSink() *logSink {
	return &logSink{lines: map[string][]*serverLine{}, auth: map[string][]*serverLine{}}
}

// WriteLine implements record.LineWriter. It is called under the server's
// log lock, so it only parses and files the line: an endpoint's by its
// key, an authorization server's by the MCP endpoint it serves.
func (s *logSink) WriteLine(line []byte) error {
	l, err := parseServerLine(bytes.Clone(line))
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch a := l.rec.Auth; {
	case l.endpoint() != "":
		s.lines[l.endpoint()] = append(s.lines[l.endpoint()], l)
	case a != nil && a.Server != "" && a.For != "":
		s.auth[a.For] = append(s.auth[a.For], l)
	}
	return nil
}

// takeAuth returns (and forgets) the authorization server lines of the
// MCP endpoint named forKey (as their auth.for names it).
func (s *logSink) takeAuth(forKey string) []*serverLine { return s.takeFrom(s.auth, forKey) }

// Close implements record.LineWriter.
func (s *logSink) Close() error { return nil }

// take returns (and forgets) the lines of an endpoint.
func (s *logSink) take(endpoint string) []*serverLine { return s.takeFrom(s.lines, endpoint) }

// rest returns (and forgets) every line no run took: the endpoints' (keys
// sorted), then the authorization servers' (keys sorted).
func (s *logSink) rest() [][]*serverLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]*serverLine
	for _, m := range []map[string][]*serverLine{s.lines, s.auth} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, m[k])
			delete(m, k)
		}
	}
	return out
}

// takeFrom returns (and forgets) m's lines under key, under the sink's lock.
func (s *logSink) takeFrom(m map[string][]*serverLine, key string) []*serverLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls := m[key]
	delete(m, key)
	return ls
}

// writeRecords writes every line of the run and returns the first error.
func writeRecords(w record.LineWriter, rr *RunResult) error {
	var first error
	for _, l := range rr.Lines {
		if err := w.WriteLine(l); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// RedactArgs returns a client's command line as outputs show it (the
// table, --json, JUnit): record.Default's Args (issue 11).
func RedactArgs(args []string) []string { return record.Default.Args(args) }

// acceptThenCount accepts from ln and counts the connection in a.accepted
// after (the caller notes it and takes it off).
func acceptThenCount(ln net.Listener, a *arrivals) (net.Conn, error) {
	c, err := ln.Accept()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.accepted++
	a.mu.Unlock()
	return c, nil
}
