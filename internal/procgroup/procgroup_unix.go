//go:build !windows

// Package procgroup runs a command in a process group of its own, so that a
// signal meant for the command reaches its whole process tree and none
// reaches seedance twice.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Prepare makes c start in a new process group.
func Prepare(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// Signal sends sig to the process group of the started command c.
func Signal(c *exec.Cmd, sig syscall.Signal) error { return syscall.Kill(-c.Process.Pid, sig) }
