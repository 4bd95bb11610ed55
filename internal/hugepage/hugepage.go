// Package hugepage asks the operating system to back isovet's large tables with huge
// pages.
//
// Reading and checking a history of millions of rows fills hundreds of megabytes of fresh
// tables. With the kernel's usual 4 KiB pages, every page costs a fault the first time it
// is written, and every random probe of a large hash table misses the TLB. On Linux
// machines whose transparent huge pages are set to "madvise" (Debian's default), neither
// Go's runtime nor the kernel uses 2 MiB pages unless asked; a table advised here gets
// them.
//
// The advice is off unless turned on (SetEnabled; the isovet command reads
// ISOVET_HUGEPAGES=1), because what it buys depends on the machine. On our 2-vCPU VM, whose
// hypervisor takes back free memory a few seconds after the guest frees it (free page
// reporting), a huge page taken after such a pause costs the hypervisor 512 faults of its
// own: the 400 MB predicate history of docs/benchmarks.md took 1.7-2.1 s on ordinary pages
// and 2.8-3.3 s advised, when runs were 3 s apart (advised runs back to back, which reuse
// memory the hypervisor still backs, took 1.6-2.6 s). On a machine without that, huge pages
// save faults and TLB misses; measure before turning them on.
//
// The advice changes how memory is backed, never what it holds, so results are the same
// with or without it. On other systems it does nothing.
package hugepage

import (
	"sync/atomic"
	"unsafe"
)

// Min is the smallest table worth advising: below it, the table may not hold a whole
// aligned huge page, and the saving is small anyway.
const Min = 4 << 20

// enabled is set when the advice is turned on.
var enabled atomic.Bool

// SetEnabled turns the advice on or off (the default).
func SetEnabled(on bool) { enabled.Store(on) }

// Make returns make([]T, n, c), with the kernel asked to back its memory with huge pages
// if the advice is on and it holds at least Min bytes. The advice is given before anything touches the fresh
// memory, so the first write of each 2 MiB gets a huge page. Only the whole huge pages
// inside the array are advised, so memory around it is not affected.
func Make[T any](n, c int) []T {
	s := make([]T, n, c)
	var z T
	if size := uintptr(c) * unsafe.Sizeof(z); enabled.Load() && size >= Min {
		advise(unsafe.Pointer(unsafe.SliceData(s[:c])), size)
	}
	return s
}
