package reliability

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

var (
	full  = flag.Bool("reliability.full", false, "run the full counts of docs/reliability.md (scripts/reliability.sh), not the short form")
	tmpfs = flag.String("reliability.tmpfs", "", "a small mounted tmpfs for the full-disk experiment (scripts/reliability.sh mounts one when it can)")
)

// env builds mcpdiag and returns the experiments' environment.
func env(t *testing.T) *Env {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpdiag")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mcpdiag/mcpdiag/cmd/mcpdiag").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if *full {
		if d := os.Getenv("RELIABILITY_KEEP"); d != "" {
			dir = d
		}
	}
	return &Env{Bin: bin, Dir: dir, Logf: t.Logf}
}

// pick is the short count, or the full one with -reliability.full.
func pick(short, long int) int {
	if *full {
		return long
	}
	return short
}

func truths(t *testing.T, what string, tr Truths) {
	t.Helper()
	for _, m := range tr {
		t.Errorf("%s: %s", what, m)
	}
}

func TestReliability(t *testing.T) {
	e := env(t)
	t.Run("load", func(t *testing.T) {
		r, err := e.Load(LoadConfig{Workers: pick(6, 16), PerWorker: pick(20, 200)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("load: %d calls %v in %s; serve received %d; %d records %v; %q; exit %d; proxy %s; %s",
			r.Sent, r.ByKind, r.Elapsed.Round(1e6), r.Forwarded, r.Records, r.Outcomes, r.Summary.Line, r.Exit, r.Proxy, Uptime())
		truths(t, "load", r.Truths)
	})
	for _, cfg := range signalConfigs() {
		t.Run(cfg.Name, func(t *testing.T) {
			r, err := e.Signal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s; %s", r, Uptime())
			truths(t, cfg.Name, r.Truths)
		})
	}
	for _, cfg := range e.DiskConfigs(pick(30, 300), pick(3, 8), *tmpfs) {
		t.Run("full disk "+cfg.Name, func(t *testing.T) {
			r, err := e.Disk(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s; %s", r, Uptime())
			truths(t, "full disk "+cfg.Name, r.Truths)
		})
	}
	t.Run("slowloris", func(t *testing.T) {
		r, err := e.Slowloris(pick(20, 1000), pick(5, 100))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("slowloris: %s; %s", r, Uptime())
		truths(t, "slowloris", r.Truths)
	})
	t.Run("idle SSE streams", func(t *testing.T) {
		r, err := e.Streams(pick(50, 2000))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("streams: %s; %s", r, Uptime())
		truths(t, "idle SSE streams", r.Truths)
	})
}

func signalConfigs() []SignalConfig {
	quick, long, before := pick(4, 8), pick(3, 8), pick(40, 400)
	return []SignalConfig{
		{Name: "SIGTERM", Signals: []syscall.Signal{syscall.SIGTERM}, Quick: quick, Long: long, Before: before, ShutdownTimeout: "1s"},
		{Name: "SIGINT", Signals: []syscall.Signal{syscall.SIGINT}, Quick: quick, Long: long, Before: before, ShutdownTimeout: "1s"},
		{Name: "SIGINT twice", Signals: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, Quick: quick, Long: long, Before: before, ShutdownTimeout: "60s"},
		{Name: "SIGTERM twice", Signals: []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM}, Quick: quick, Long: long, Before: before, ShutdownTimeout: "60s"},
		{Name: "kill -9", Signals: []syscall.Signal{syscall.SIGKILL}, Quick: quick, Long: long, Before: before, ShutdownTimeout: "1s"},
	}
}
