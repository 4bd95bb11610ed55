package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startCPUProfile starts a CPU profile written to path; the returned stop ends it and closes
// the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// startAllocProfile creates path at once, so that a path that cannot be written fails before
// a long check, and returns a write that puts there what the process allocated until then (the
// "allocs" profile: every sampled allocation with its call stack, live or freed). Tables of
// half a megabyte and more are always sampled, so it accounts for the memory a check takes
// fresh from the system.
func startAllocProfile(path string) (write func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("memory profile: %w", err)
	}
	return func() error {
		runtime.GC() // the profile is as of the last collection
		err := pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("memory profile %s: %w", path, err)
		}
		return nil
	}, nil
}
