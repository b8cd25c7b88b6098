package probe_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
)

var (
	badOnce sync.Once
	badBin  string
	badErr  error
)

// badServer builds probe/testdata/badserver once and starts it in mode on
// 127.0.0.1; it returns its MCP URL and its stderr (where it says when its
// destructive tool ran).
func badServer(t *testing.T, mode string) (string, *strings.Builder) {
	t.Helper()
	badOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpdiag-badserver-")
		if err != nil {
			badErr = err
			return
		}
		badBin = filepath.Join(dir, "badserver")
		if out, err := exec.Command("go", "build", "-o", badBin, "./testdata/badserver").CombinedOutput(); err != nil {
			badErr = err
			badBin = string(out)
		}
	})
	if badErr != nil {
		t.Fatalf("go build ./testdata/badserver: %v\n%s", badErr, badBin)
	}
	cmd := exec.Command(badBin, "-listen", "127.0.0.1:0", "-mode", mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &syncWriter{b: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("badserver said %q (%v)", line, err)
	}
	return url, &stderr
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestProbeBadServer: each mode of the bad server makes one mistake, and
// exactly the rules about that mistake fail, with evidence that names it;
// the healthy mode fails none. The destructive tool never runs.
func TestProbeBadServer(t *testing.T) {
	tests := []struct {
		mode     string
		fail     []string
		evidence string
	}{
		{"healthy", nil, ""},
		{"dressed", []string{"probe.invalid-arguments", "probe.is-error-missing"}, "Python traceback"},
		{"accepts", []string{"probe.invalid-arguments"}, "accepted as a success"},
		{"unknown-as-tool", []string{"probe.unknown-tool"}, "TOOL_ERROR, not a JSON-RPC error"},
		{"malformed-ok", []string{"probe.malformed-call"}, "TOOL_SUCCESS, not a JSON-RPC error"},
		{"id-type", []string{"probe.id-type"}, "(number), the answer's id is \""},
		{"notification-200", []string{"probe.notification-202"}, "HTTP 200 with"},
		{"bad-shape", []string{"probe.answer-shape"}, "INVALID_TOOL_RESULT"},
		{"hang", []string{"probe.answered"}, "no answer"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			url, stderr := badServer(t, tc.mode)
			opts := probe.Options{Timeout: 2 * time.Second}
			if tc.mode == "hang" {
				// Every argument probe waits for the timeout: keep one.
				opts.MaxPerTool, opts.Timeout = 1, 300*time.Millisecond
			}
			rep := run(t, url, "2026-07-28", opts)
			var failed []string
			for _, c := range rep.Checks {
				if c.Verdict == judge.Fail {
					failed = append(failed, c.Rule)
					if !strings.Contains(c.Evidence, tc.evidence) {
						t.Errorf("%s evidence %q does not say %q", c.Rule, c.Evidence, tc.evidence)
					}
				}
			}
			if strings.Join(failed, ",") != strings.Join(tc.fail, ",") {
				t.Errorf("failed rules %v, want %v\n%s", failed, tc.fail, checks(rep.Checks))
			}
			if strings.Contains(stderr.String(), "drop_table RAN") {
				t.Errorf("the destructive tool ran")
			}
		})
	}
}
