package main

import "syscall"

// childAttr makes a child die with this process (Pdeathsig), so that an
// interrupted run leaves no server behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
