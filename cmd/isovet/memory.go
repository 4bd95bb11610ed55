package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/isovet/isovet/internal/memguard"
)

// machineMemory returns the memory this process may use, in bytes: the machine's physical
// memory (/proc/meminfo's MemTotal), or its cgroup's limit (cgroup v2 memory.max, or v1
// memory.limit_in_bytes) if lower; 0 if neither can be read.
func machineMemory() uint64 {
	total := memTotal("/proc/meminfo")
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if lim := cgroupLimit(p); lim > 0 && (total == 0 || lim < total) {
			total = lim
		}
	}
	return total
}

// memTotal reads MemTotal from a meminfo file, in bytes (0 if absent).
func memTotal(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupLimit reads a cgroup memory limit file, in bytes (0: none, "max", or unreadable).
func cgroupLimit(path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v >= 1<<62 { // v1 says "no limit" with a huge number
		return 0
	}
	return v
}

// maxMemory is the heap bound --max-memory asks for, in bytes, as check.Options.MaxMemory
// takes it: empty for half of machineMemory (no bound if that is unknown), "0" or "none"
// for no bound.
func maxMemory(flag string) (int64, error) {
	switch strings.ToLower(strings.TrimSpace(flag)) {
	case "":
		return int64(machineMemory() / 2), nil
	case "0", "none":
		return -1, nil
	}
	n, err := memguard.ParseBytes(flag)
	if err != nil {
		return 0, fmt.Errorf("--max-memory: %w", err)
	}
	if n == 0 {
		return -1, nil
	}
	return int64(min(n, 1<<62)), nil
}
