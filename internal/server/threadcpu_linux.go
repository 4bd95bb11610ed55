//go:build linux

package server

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time used by the calling OS thread (the checker goroutine
// locks its thread, so this is the checker's own CPU: the serial stage that bounds
// throughput on free cores).
func threadCPU() (time.Duration, bool) {
	const clockThreadCPUTimeID = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
