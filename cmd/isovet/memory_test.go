package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// growingHistory writes n transactions r(x,1) w(x,1) in the text format to a file and
// returns its path. Checked with --initial-value 1 (every read may read the initial state
// or any other writer), each read has n candidate writers: the check's memory grows with
// n², more than a gigabyte for 3,000 of them.
func growingHistory(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "r(1,1,%d,%d)\nw(1,1,%d,%d)\n", i%8, i, i%8, i)
	}
	p := filepath.Join(t.TempDir(), "rw.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckMaxMemory: a check that outgrows --max-memory stops with verdict unknown (exit 3)
// and says which limit it reached, instead of running out of memory. It runs in a process
// of its own, so that the heap the watchdog samples is the check's alone.
func TestCheckMaxMemory(t *testing.T) {
	p := growingHistory(t, 3000)
	start := time.Now()
	code, out, errOut := runProcess(t, nil, "check", "--max-memory", "64MiB", "--initial-value", "1", "--timeout", "60s", p)
	if code != exitUnknown {
		t.Fatalf("exit %d, want %d (unknown)\nstdout:\n%s\nstderr:\n%s", code, exitUnknown, out, errOut)
	}
	if !strings.Contains(out, "stopped: memory limit of 64 MiB reached") || !strings.Contains(out, "unknown") {
		t.Errorf("the report does not say the memory limit stopped it:\n%s", out)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v: the limit should stop it long before the timeout", d)
	}
}

// TestCheckMaxMemoryFlag: --max-memory takes sizes with units, and 0 or none for no
// limit; anything else is a usage error.
func TestCheckMaxMemoryFlag(t *testing.T) {
	for _, tt := range []struct {
		flag string
		want int64
	}{{"64MiB", 64 << 20}, {"2 GiB", 2 << 30}, {"500MB", 500e6}, {"1g", 1 << 30}, {"0", -1}, {"none", -1}} {
		got, err := maxMemory(tt.flag)
		if err != nil || got != tt.want {
			t.Errorf("maxMemory(%q) = %d, %v; want %d", tt.flag, got, err, tt.want)
		}
	}
	if got, err := maxMemory(""); err != nil || got < 0 {
		t.Errorf(`maxMemory("") = %d, %v; want half the machine's memory (or 0 if unknown)`, got, err)
	}
	for _, bad := range []string{"lots", "12 parsecs", "-5MiB"} {
		if _, err := maxMemory(bad); err == nil {
			t.Errorf("maxMemory(%q) took it; want a usage error", bad)
		}
	}
	code, _, errOut := runCLI(t, "check", "--max-memory", "lots", "x.txt")
	if code != exitUsage || !strings.Contains(errOut, "--max-memory") {
		t.Errorf("--max-memory lots: exit %d, stderr %q; want a usage error naming the flag", code, errOut)
	}
}

// TestCheckInterrupt: the first SIGINT stops a check, which prints its report with verdict
// unknown and exits 3 promptly; a second one exits at once (130) if the first has not
// ended it yet.
func TestCheckInterrupt(t *testing.T) {
	p := growingHistory(t, 3000)
	for _, twice := range []bool{false, true} {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "check", "--max-memory", "0", "--initial-value", "1", "--timeout", "60s", p)
		cmd.Env = append(os.Environ(), "ISOVET_TEST_AS_CLI=1")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		sent := time.Now()
		_ = cmd.Process.Signal(syscall.SIGINT)
		if twice {
			_ = cmd.Process.Signal(syscall.SIGINT)
		}
		err = cmd.Wait()
		took := time.Since(sent)
		code := cmd.ProcessState.ExitCode()
		// Twice: the first interrupt may have stopped the check before the second arrives.
		if code != exitUnknown && (!twice || code != exitInterrupted) {
			t.Errorf("twice=%v: exit %d (%v), want %d (or %d after two)\nstdout:\n%s\nstderr:\n%s", twice, code, err, exitUnknown, exitInterrupted, out.String(), errOut.String())
		}
		if !twice && !strings.Contains(out.String(), "stopped: interrupted") {
			t.Errorf("the report does not say it was interrupted:\n%s", out.String())
		}
		if took > 3*time.Second {
			t.Errorf("twice=%v: exited %v after the interrupt", twice, took)
		}
	}
}
