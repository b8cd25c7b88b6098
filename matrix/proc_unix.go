//go:build unix

package matrix

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in its own process group, and makes stopping it kill
// the whole group: a client started through a shell or a runtime (sh -c,
// node, npx) stops with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup stops what is left of cmd's process group after the client
// exited: helpers it started in the background end with the run.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// diedOf names the signal that ended the process ("signal 9 (killed)"),
// or "" when it exited.
func diedOf(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return ""
}

// shellReported names the signal a shell reports with exit code 128+N
// (129-159: signals 1-31) for a child that died of signal N, as "signal 11
// (segmentation fault), as its shell reports (exit code 139)"; "" for any
// other code. A wrapper script whose client crashed exits so by itself
// (docs/decisions.md, matrix9).
func shellReported(code int) string {
	if code < 129 || code > 159 {
		return ""
	}
	n := syscall.Signal(code - 128)
	return fmt.Sprintf("signal %d (%s), as its shell reports (exit code %d)", int(n), n, code)
}
