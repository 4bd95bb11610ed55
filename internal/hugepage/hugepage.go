// Package hugepage asks the operating system to back isovet's large tables with huge
// pages.
//
// Reading and checking a history of millions of rows fills hundreds of megabytes of fresh
// tables. With the kernel's usual 4 KiB pages, every page costs a fault the first time it
// is written, and every random probe of a large hash table misses the TLB. On Linux
// machines whose transparent huge pages are set to "madvise" (Debian's default), neither
// Go's runtime nor the kernel uses 2 MiB pages unless asked; a table advised here gets
// them. On the 400 MB predicate history of docs/benchmarks.md this took the whole check
// from 4.3-4.6 s to 2.0-2.3 s (230,000 page faults to 20,000), before the session's other
// changes.
//
// The advice changes how memory is backed, never what it holds, so results are the same
// with or without it. The isovet command turns it off when ISOVET_HUGEPAGES=0 is set, for
// comparison (SetEnabled: the core reads no environment); on other systems it does
// nothing.
package hugepage

import (
	"sync/atomic"
	"unsafe"
)

// Min is the smallest table worth advising: below it, the table may not hold a whole
// aligned huge page, and the saving is small anyway.
const Min = 4 << 20

// disabled is set when the advice is turned off.
var disabled atomic.Bool

// SetEnabled turns the advice on (the default) or off.
func SetEnabled(on bool) { disabled.Store(!on) }

// Make returns make([]T, n, c), with the kernel asked to back its memory with huge pages
// if it holds at least Min bytes. The advice is given before anything touches the fresh
// memory, so the first write of each 2 MiB gets a huge page. Only the whole huge pages
// inside the array are advised, so memory around it is not affected.
func Make[T any](n, c int) []T {
	s := make([]T, n, c)
	var z T
	if size := uintptr(c) * unsafe.Sizeof(z); !disabled.Load() && size >= Min {
		advise(unsafe.Pointer(unsafe.SliceData(s[:c])), size)
	}
	return s
}
