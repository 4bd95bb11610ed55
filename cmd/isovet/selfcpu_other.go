//go:build !unix

package main

import "time"

// selfCPU is 0 where getrusage does not exist: bench-serve's CPU figures come from it and
// from /proc, so they are measured on Unix (and the server's on Linux) only.
func selfCPU() time.Duration { return 0 }
