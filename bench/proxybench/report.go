package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func each(rs []result, f func(result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func fmtUS(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f ms", v/1000)
	}
	return fmt.Sprintf("%.0f µs", v)
}

// spread formats the median of v and, over several rounds, its range.
func spread(v []float64, format string) string {
	s := fmt.Sprintf(format, median(v))
	if len(v) > 1 {
		s += fmt.Sprintf(" ("+format+"–"+format+")", slices.Min(v), slices.Max(v))
	}
	return s
}

func report(w io.Writer, cfg *config, order []*target, results map[string]map[string][]result, idle map[string]idleResult,
	loadStart, loadEnd string, took time.Duration, recordLines map[string]string) {
	fmt.Fprintf(w, "# proxybench: %s %s/%s, %d CPUs, GOMAXPROCS %d; %d round(s); load average %s at the start, %s at the end; %s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), cfg.rounds, loadStart, loadEnd, took.Round(time.Second))
	fmt.Fprintf(w, "# each server its own process on 127.0.0.1; requests: %d B tools/call; responses: %d B JSON, %d B SSE of %d events; medians over rounds (range)\n\n",
		requestSize, jsonSize, sseSize, sseEvents)
	fmt.Fprintln(w, "| workload | target | requests/s | p50 | p99 | CPU/exchange | GC cycles/1,000 exchanges (their CPU/exchange) | upstream CPU/exchange | read+write calls/exchange | context switches/exchange (voluntary, involuntary) | first SSE event p50 | p99 |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, wl := range cfg.workloads {
		for _, t := range order {
			rs := results[wl][t.name]
			if len(rs) == 0 {
				continue
			}
			ttfe50, ttfe99 := "", ""
			if strings.HasPrefix(wl, "sse/") {
				ttfe50 = fmtUS(median(each(rs, func(r result) float64 { return us(r.ttfe50) })))
				ttfe99 = fmtUS(median(each(rs, func(r result) float64 { return us(r.ttfe99) })))
			}
			name := t.name
			switch name {
			case "mcpdiag":
				name = "mcpdiag proxy"
			case "base":
				name = "mcpdiag proxy (base)"
			}
			trunc := ""
			for _, r := range rs {
				if r.truncated {
					trunc = " (cut by -workload-timeout)"
				}
			}
			fmt.Fprintf(w, "| %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", wl, name, trunc,
				spread(each(rs, result.rps), "%.0f"),
				fmtUS(median(each(rs, func(r result) float64 { return us(r.p50) }))),
				fmtUS(median(each(rs, func(r result) float64 { return us(r.p99) }))),
				fmt.Sprintf("%.1f µs", median(each(rs, func(r result) float64 { return us(r.cpuPer()) }))),
				fmt.Sprintf("%.1f (%.1f µs)", median(each(rs, result.gcPer1000)), median(each(rs, func(r result) float64 { return us(r.gcCPUPer()) }))),
				fmt.Sprintf("%.1f µs", median(each(rs, func(r result) float64 { return us(r.upCPU) / float64(max(r.requests, 1)) }))),
				fmt.Sprintf("%.1f", median(each(rs, func(r result) float64 { return float64(r.syscalls) / float64(max(r.requests, 1)) }))),
				fmt.Sprintf("%.2f, %.2f", median(each(rs, func(r result) float64 { return float64(r.vcsw) / float64(max(r.requests, 1)) })),
					median(each(rs, func(r result) float64 { return float64(r.ivcsw) / float64(max(r.requests, 1)) }))),
				ttfe50, ttfe99)
		}
	}
	has := func(name string) bool {
		return slices.ContainsFunc(order, func(t *target) bool { return t.name == name })
	}
	for _, pair := range [][2]string{{"mcpdiag", "plain"}, {"floor", "plain"}, {"mcpdiag", "floor"}, {"lib", "floor"}, {"base", "plain"}, {"lib", "plain"}, {"mcpdiag", "base"}, {"plaininproc", "plain"}, {"plainlean", "plain"}, {"mcpdiaglean", "plainlean"}} {
		name, ref := pair[0], pair[1]
		if !has(name) || !has(ref) {
			continue
		}
		labels := map[string]string{"mcpdiag": "mcpdiag proxy", "base": "mcpdiag proxy (base, -base)", "lib": "library proxy (profiled)", "plain": "the plain reverse proxy", "floor": "the floor proxy (plain + the guarantees' work)", "plaininproc": "the plain proxy inside proxybench's image",
			"plainlean": "the plain proxy over the lean prototype transport", "mcpdiaglean": "the library proxy over the lean prototype transport"}
		fmt.Fprintf(w, "\n%s against %s, per round (median, range):\n\n", labels[name], labels[ref])
		goals := ref == "plain" && name != "plainlean" && name != "plaininproc" // a proxy that records, against the plain one
		if goals {
			fmt.Fprintln(w, "| workload | throughput ratio (goal ≥ 0.90) | added p50 | added p99 (goal ≤ 1 ms) | added mean from throughput (N ÷ req/s) | CPU/exchange ratio (goal ≤ 1.25) | GC cycles ratio | GC CPU/exchange difference | first event p99 − direct's (goal ≤ 1 ms) |")
		} else {
			fmt.Fprintln(w, "| workload | throughput ratio | p50 difference | p99 difference | mean difference from throughput (N ÷ req/s) | CPU/exchange ratio | GC cycles ratio | GC CPU/exchange difference | first event p99 difference |")
		}
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, wl := range cfg.workloads {
			ours, theirs, direct := results[wl][name], results[wl][ref], results[wl]["direct"]
			k := min(len(ours), len(theirs))
			if k == 0 {
				continue
			}
			// N clients in a closed loop: each waits for its answer before
			// it sends again, so the mean latency is N ÷ throughput, and the
			// difference of the two is the part of the added latency that
			// the throughput gap alone explains.
			_, clients, _ := parseWorkload(wl)
			var thr, a50, a99, mean, cpu, gc, gcCPU, ttfe []float64
			for i := range k {
				thr = append(thr, ours[i].rps()/theirs[i].rps())
				mean = append(mean, 1e6*(float64(clients)/ours[i].rps()-float64(clients)/theirs[i].rps()))
				a50 = append(a50, us(ours[i].p50-theirs[i].p50))
				a99 = append(a99, us(ours[i].p99-theirs[i].p99))
				cpu = append(cpu, float64(ours[i].cpuPer())/float64(max(theirs[i].cpuPer(), 1)))
				gcCPU = append(gcCPU, us(ours[i].gcCPUPer()-theirs[i].gcCPUPer()))
				if theirs[i].gcs > 0 { // collections per exchange, ours ÷ theirs
					gc = append(gc, ours[i].gcPer1000()/theirs[i].gcPer1000())
				}
				switch {
				case !strings.HasPrefix(wl, "sse/"):
				case !goals:
					// Two proxies of the same kind (two mcpdiag binaries,
					// or over the lean transport): the first event's p99,
					// one against the other, round by round.
					ttfe = append(ttfe, us(ours[i].ttfe99-theirs[i].ttfe99))
				case i < len(direct):
					ttfe = append(ttfe, us(ours[i].ttfe99-direct[i].ttfe99))
				}
			}
			tt := ""
			if len(ttfe) > 0 {
				tt = spread(ttfe, "%+.0f µs")
			}
			gcs := "–" // no collection of the reference in some round
			if len(gc) == k {
				gcs = spread(gc, "%.2f×")
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", wl, spread(thr, "%.2f×"), spread(a50, "%+.0f µs"), spread(a99, "%+.0f µs"), spread(mean, "%+.0f µs"), spread(cpu, "%.2f×"), gcs, spread(gcCPU, "%+.1f µs"), tt)
		}
	}
	if len(idle) > 0 {
		fmt.Fprintf(w, "\nIdle SSE streams (a priming comment and one event each, then waiting), RSS of the target's process (goal: ≤ 32 KiB per stream with recording):\n\n")
		fmt.Fprintln(w, "| target | streams | RSS before | RSS with them | per stream | upstream per stream |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
		for _, t := range order {
			ir, ok := idle[t.name]
			if !ok {
				continue
			}
			up := float64(ir.upWith-ir.upBefore) / float64(ir.streams)
			fmt.Fprintf(w, "| %s | %d | %.1f MiB | %.1f MiB | %.1f KiB | %.1f KiB |\n", t.name, ir.streams, float64(ir.before)/1024, float64(ir.with)/1024, ir.perStream(), up)
		}
	}
	for _, name := range []string{"mcpdiag", "base"} {
		if l, ok := recordLines[name]; ok {
			fmt.Fprintf(w, "\n%s proxy's own summary at exit: %s\n", name, l)
		}
	}
}
