package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/internal/cputime"
)

// TestBenchServeAccounting: the per-process CPU and memory figures bench/serve reports come
// from /proc and agree with the process's own accounting.
func TestBenchServeAccounting(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system: bench/serve reports no per-process figures here")
	}
	for cputime.Self() < 100*time.Millisecond { // enough CPU for /proc's 10 ms ticks to show
		for x := 0; x < 1e5; x++ {
			_ = x * x
		}
	}
	pid := os.Getpid()
	self, proc := cputime.Self(), procCPU(pid)
	if proc <= 0 || proc > self+50*time.Millisecond || self-proc > 100*time.Millisecond {
		t.Errorf("procCPU = %v, getrusage = %v; want about the same and positive", proc, self)
	}
	if rss := procRSS(pid); rss < 1<<20 {
		t.Errorf("procRSS = %d, want at least 1 MiB", rss)
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	if got := findProcess(strings.TrimSpace(string(comm))); got <= 0 {
		t.Errorf("findProcess(%q) = %d", strings.TrimSpace(string(comm)), got)
	}
	if procCPU(0) != 0 || findProcess("no such process name") != 0 {
		t.Error("unknown processes must give 0")
	}
	if l := loadavg(); len(strings.Fields(l)) != 3 {
		t.Errorf("loadavg = %q", l)
	}
}
