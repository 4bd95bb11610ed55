package hugepage

import (
	"syscall"
	"unsafe"
)

// hugeSize is the size of a transparent huge page on the architectures Go runs Linux on
// with them (2 MiB on amd64 and arm64 with 4 KiB base pages). A larger real size only
// means fewer whole pages are advised.
const hugeSize = 2 << 20

func advise(p unsafe.Pointer, n uintptr) {
	beg := (uintptr(p) + hugeSize - 1) &^ (hugeSize - 1)
	end := (uintptr(p) + n) &^ (hugeSize - 1)
	if beg >= end {
		return
	}
	// The error is ignored on purpose: a kernel without transparent huge pages (EINVAL)
	// backs the memory as before.
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, beg-uintptr(p))), end-beg), syscall.MADV_HUGEPAGE)
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the syscall package lacks.
const madvPopulateWrite = 23

// populate backs the n bytes at p with writable pages, a few megabytes at a time, and reports
// whether the kernel could.
func populate(p unsafe.Pointer, n uintptr) bool {
	const step = 4 << 20
	for off := uintptr(0); off < n; off += step {
		if syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, off)), min(step, n-off)), madvPopulateWrite) != nil {
			return false
		}
	}
	return true
}
