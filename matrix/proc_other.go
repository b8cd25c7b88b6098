//go:build !unix

package matrix

import "os/exec"

// ownGroup leaves cmd as it is: stopping it kills the process only.
func ownGroup(*exec.Cmd) {}

// killGroup does nothing: the process was its own group.
func killGroup(*exec.Cmd) {}
