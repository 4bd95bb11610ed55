//go:build !unix

// Package cputime reads this process's CPU time, for the benchmarks that report a
// client's cost beside a server's.
package cputime

import "time"

// Self returns 0 where getrusage does not exist: CPU figures are measured on Unix only.
func Self() time.Duration { return 0 }
