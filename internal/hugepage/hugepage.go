// Package hugepage allocates isovet's large tables and tells the kernel how to back them:
// with huge pages (off by default), and, for tables one stage of a pipeline fills while the
// other has time to spare, with pages made ahead of the filling, from another goroutine.
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
// Backing tables ahead (MakeAhead) moves page faults, 19% of the reader's cycles on the
// 400 MB history and most of them in its committing stage, to the parsing stage's core,
// which had a third of its time to spare. The check of that history, in two series on a
// busy host (10-12 runs each, alternating): median 1.99 -> 1.88 s and 2.12 -> 1.77 s, for
// 35-50 MB more resident (a table's estimated capacity is backed whole).
//
// Neither changes what memory holds, only how it is backed, so results are the same with or
// without them. On other systems they do nothing.
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
// if the advice is on and it holds at least Min bytes. The advice is given before anything
// touches the fresh memory, so the first write of each 2 MiB gets a huge page. Only the
// whole huge pages inside the array are advised, so memory around it is not affected.
func Make[T any](n, c int) []T {
	s := make([]T, n, c)
	var z T
	if size := uintptr(c) * unsafe.Sizeof(z); enabled.Load() && size >= Min {
		advise(unsafe.Pointer(unsafe.SliceData(s[:c])), size)
	}
	return s
}

// MakeAhead is Make, with the kernel asked, from another goroutine, to back the whole table
// with pages (Linux's MADV_POPULATE_WRITE, a few megabytes at a time): for a table that will
// be filled whole, by one stage of a pipeline while the other has time to spare, so that the
// page faults fall on the spare core. The kernel makes the pages without touching what they
// hold, so the table may be written meanwhile.
func MakeAhead[T any](n, c int) []T {
	s := Make[T](n, c)
	var z T
	if size := uintptr(c) * unsafe.Sizeof(z); size >= Min {
		go populate(unsafe.Pointer(unsafe.SliceData(s[:c])), size)
	}
	return s
}
