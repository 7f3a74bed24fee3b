//go:build windows

// Package procgroup runs a command in a process group of its own, so that a
// signal meant for the command reaches its whole process tree and none
// reaches seedance twice.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Prepare makes c start in a new process group.
func Prepare(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Signal stops the started command c: Windows has no signals to forward,
// so every signal ends the process.
func Signal(c *exec.Cmd, _ syscall.Signal) error { return c.Process.Kill() }
