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
