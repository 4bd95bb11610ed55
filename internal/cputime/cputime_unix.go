//go:build unix

// Package cputime reads this process's CPU time and peak resident memory, for the
// benchmarks and the tests that log what a check cost.
package cputime

import (
	"runtime"
	"syscall"
	"time"
)

// Self returns this process's user and system CPU time.
func Self() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSS returns this process's peak resident memory in bytes.
func PeakRSS() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there, KiB elsewhere
	}
	return int64(ru.Maxrss) << 10
}
