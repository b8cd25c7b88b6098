//go:build !linux

package main

import "syscall"

// childAttr: without Pdeathsig, children end when their stdin closes.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
