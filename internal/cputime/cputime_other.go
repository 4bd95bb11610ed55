//go:build !unix

// Package cputime reads this process's CPU time and peak resident memory, for the
// benchmarks and the tests that log what a check cost.
package cputime

import "time"

// Self returns 0 where getrusage does not exist: CPU figures are measured on Unix only.
func Self() time.Duration { return 0 }

// PeakRSS returns 0 where getrusage does not exist.
func PeakRSS() int64 { return 0 }
