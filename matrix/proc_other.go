//go:build !unix

package matrix

import (
	"os"
	"os/exec"
)

// ownGroup leaves cmd as it is: stopping it kills the process only.
func ownGroup(*exec.Cmd) {}

// killGroup does nothing: the process was its own group.
func killGroup(*exec.Cmd) {}

// diedOf returns "": the exit code says how the process ended.
func diedOf(*os.ProcessState) string { return "" }

// shellReported returns "": without POSIX signals, 128+N means nothing.
func shellReported(int) string { return "" }
