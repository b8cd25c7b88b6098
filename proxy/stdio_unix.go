//go:build unix

package proxy

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in its own process group, so that a
// signal meant for the proxy's group (Ctrl-C in a terminal) reaches the
// server once, forwarded by the proxy, and not twice.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the server's whole process group: a server started
// through a wrapper (npx, uv run, sh -c) would otherwise survive its
// wrapper and keep stdout open.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		_ = cmd.Process.Kill()
	}
}
