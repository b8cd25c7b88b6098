//go:build !unix

package proxy

import "os/exec"

func setProcessGroup(*exec.Cmd) {}
