//go:build unix

// Package cputime reads this process's CPU time, for the benchmarks that report a
// client's cost beside a server's.
package cputime

import (
	"syscall"
	"time"
)

// Self returns this process's user and system CPU time.
func Self() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
