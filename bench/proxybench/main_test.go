package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets this test binary play the server roles the orchestrator
// starts it in (it runs its own executable).
func TestMain(m *testing.M) {
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
// 127.0.0.1 (the upstream, the plain proxy, the mcpdiag binary built from
// ./cmd/mcpdiag), every workload, the idle streams, one record per
// exchange. It asserts that the run succeeds and reports every row, never
// a time.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpdiag and runs three servers")
	}
	var out, errs bytes.Buffer
	if code := run([]string{"-smoke"}, &out, &errs); code != 0 {
		t.Fatalf("proxybench -smoke exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	report := out.String()
	for _, w := range []string{"json/64", "json/8", "sse/64", "sse/8", "sse/1"} {
		for _, target := range []string{"direct", "plain", "mcpdiag proxy"} {
			if !strings.Contains(report, "| "+w+" | "+target+" |") {
				t.Errorf("report has no row for %s through %s:\n%s", w, target, report)
			}
		}
	}
	for _, want := range []string{"throughput ratio", "Idle SSE streams", "| mcpdiag | 20 |", "records written"} {
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

// TestSmokeIdleProfiles: with -profile DIR, each child of this binary (the
// upstream, the plain proxy, the library proxy) writes its heap profile,
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
