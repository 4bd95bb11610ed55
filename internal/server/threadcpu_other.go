//go:build !linux

package server

import "time"

// threadCPU is not available here: the checker's CPU is not reported.
func threadCPU() (time.Duration, bool) { return 0, false }
