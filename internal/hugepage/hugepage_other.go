//go:build !linux

package hugepage

import "unsafe"

func advise(unsafe.Pointer, uintptr) {}

func populate(unsafe.Pointer, uintptr) bool { return false }
