//go:build unix

package matrix_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/matrix"
)

// A client command that leaves a process behind holding its stdout (a
// helper started with &) ends when the command does: the run does not wait
// on the helper's output, and the helper is stopped with the command's
// process group, not left running after the matrix.
func TestClientLeftoverProcessStopped(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "helper.pid")
	script := `sleep 60 & echo $! > "$HELPER_PID"; echo "outcome: TOOL_SUCCESS"`
	rep := run(t, matrix.Options{
		Cases:   selectCases(t, matrix.Era2025, "baseline"),
		Command: []string{"/bin/sh", "-c", script, "sh"},
		Env:     append(os.Environ(), "HELPER_PID="+pidFile),
	})
	if len(rep.Cases) != 1 {
		t.Fatalf("%d cases", len(rep.Cases))
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	// A killed helper is gone once its new parent reaps it; poll for that
	// (bounded), a zombie counts as stopped.
	for i := 0; ; i++ {
		if stopped(pid) {
			return
		}
		if i == 100 {
			t.Fatalf("the client's helper (pid %d) still runs after the matrix ended", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopped reports whether process pid no longer runs (absent, or a zombie).
func stopped(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) S …: the state follows the command name's closing paren.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z'
	}
	return false
}
