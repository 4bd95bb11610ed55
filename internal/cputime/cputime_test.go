package cputime

import (
	"runtime"
	"testing"
)

func TestSelfGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no getrusage here")
	}
	before := Self()
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	_ = x
	if after := Self(); after <= before {
		t.Errorf("CPU time %v after a busy loop, %v before", after, before)
	}
}
