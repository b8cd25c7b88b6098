package reliability

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// DiskConfig is one full-disk experiment: where the records go.
type DiskConfig struct {
	// Name says how the disk is full: "/dev/full", "ulimit -f 16" or
	// "tmpfs 64k".
	Name string
	// Path is the --record file; Prefix a shell prefix that sets a limit.
	Path   string
	Prefix []string
	// Calls is the number of tool calls, by Workers clients.
	Calls, Workers int
}

// DiskResult is what a full-disk experiment saw.
type DiskResult struct {
	Config   DiskConfig
	Calls    int // tool calls made
	Answered int // calls the client got whole and successful
	Lines    int // complete lines in the record file
	Partial  bool
	Named    int // lost records named on stderr
	Summary  Summary
	Exit     int
	Truths   Truths
}

// Disk runs Calls healthy tool calls through a proxy whose record file
// cannot hold them, then SIGTERM. Truths: every call answered whole; the
// summary counts the calls, the complete lines as written and the rest as
// lost; every loss named (up to the proxy's cap of 20); exit 1.
func (e *Env) Disk(cfg DiskConfig) (*DiskResult, error) {
	res := &DiskResult{Config: cfg}
	name := "disk-" + strings.NewReplacer(" ", "-", "/", "").Replace(cfg.Name)
	up, err := e.StartServe(name)
	if err != nil {
		return nil, err
	}
	defer up.Kill()
	px, err := e.StartProxy(name, up, cfg.Path, cfg.Prefix, "--record-queue", "4")
	if err != nil {
		return nil, err
	}
	defer px.Kill()
	hc := newClient(cfg.Workers)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range cfg.Workers {
		wg.Go(func() {
			for i := w; i < cfg.Calls; i += cfg.Workers {
				r := do(context.Background(), hc, px.Base, i+1, kindOK, false)
				mu.Lock()
				res.Calls++
				if r.Complete && r.Status == 200 && strings.Contains(string(r.Body), `"result"`) {
					res.Answered++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	_ = px.Signal(syscall.SIGTERM)
	if res.Exit, err = px.Wait(stopLimit); err != nil {
		return nil, err
	}
	_, _ = up.Stop()
	path := cfg.Path
	if path == "/dev/full" {
		res.Lines = 0
	} else {
		l, err := ReadLines(path)
		if err != nil {
			return nil, err
		}
		res.Lines, res.Partial = l.Complete, l.Partial
		res.Truths.Check(l.Bad == 0, "%d complete lines do not decode", l.Bad)
	}
	res.Summary, _ = px.Summary()
	res.Named = strings.Count(px.Stderr(), "mcpdiag proxy: record lost: exchange ")
	t := &res.Truths
	t.Check(res.Answered == res.Calls, "%d of %d calls answered whole: a failing record sink touched the traffic", res.Answered, res.Calls)
	t.Check(res.Exit == 1, "exit %d, want 1 (records were lost)", res.Exit)
	t.Check(res.Summary.Exchanges == res.Calls && res.Summary.Written == res.Lines && res.Summary.Lost == res.Calls-res.Lines && res.Summary.Lost > 0,
		"summary %q: want %d exchanges, %d written (the complete lines), %d lost", res.Summary.Line, res.Calls, res.Lines, res.Calls-res.Lines)
	t.Check(res.Named == min(res.Summary.Lost, 20), "%d losses named on stderr, want %d", res.Named, min(res.Summary.Lost, 20))
	return res, nil
}

// DiskConfigs are the full-disk experiments: /dev/full, a file size
// limit (ulimit -f, RLIMIT_FSIZE), and a small tmpfs when dir is one.
func (e *Env) DiskConfigs(calls, workers int, tmpfsDir string) []DiskConfig {
	out := []DiskConfig{
		{Name: "/dev/full", Path: "/dev/full", Calls: calls, Workers: workers},
		{Name: "ulimit -f 16", Path: filepath.Join(e.Dir, "fsize.records.jsonl"), Prefix: []string{"sh", "-c", `ulimit -f 16 && exec "$0" "$@"`}, Calls: calls, Workers: workers},
	}
	if tmpfsDir != "" {
		out = append(out, DiskConfig{Name: "tmpfs " + tmpfsDir, Path: filepath.Join(tmpfsDir, "records.jsonl"), Calls: calls, Workers: workers})
	}
	return out
}

func (r *DiskResult) String() string {
	s := fmt.Sprintf("%s: %d calls, %d answered whole; %d complete lines in the file; %d losses named; exit %d; %s",
		r.Config.Name, r.Calls, r.Answered, r.Lines, r.Named, r.Exit, strings.TrimPrefix(r.Summary.Line, "mcpdiag proxy: "))
	if r.Partial {
		s += "; the file ends in a partial line"
	}
	return s
}
