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

func TestPeakRSSSeesATouchedTable(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no getrusage here")
	}
	before := PeakRSS()
	b := make([]byte, 256<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := PeakRSS()
	runtime.KeepAlive(b)
	if after < before || after < int64(len(b)) {
		t.Errorf("peak RSS %d bytes after touching %d bytes (%d before)", after, len(b), before)
	}
}
