// Package cputime reads the CPU time the test process has used, the
// measure of the benchmarks that report CPU (docs/performance.md: CPU as
// ratios against baselines in the same run).
package cputime

import (
	"syscall"
	"time"
)

// Process is the process' user and system time so far; zero where the
// system does not say.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
