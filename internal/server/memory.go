package server

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// Memory bound defaults (see [DefaultMaxMemory] and [Options.MaxMemory]).
const (
	minDefaultMemory      = 256 << 20
	maxDefaultMemory      = 3 << 30
	unknownDefaultMemory  = 1 << 30
	unlimitedCgroupMemory = 1 << 60 // cgroup v1 writes "no limit" as a number near 2^63
)

// DefaultMaxMemory is the bound [Serve] puts on the server's memory when
// [Options.MaxMemory] is 0: a quarter of the memory the process may use (the smaller of
// its cgroup's limit, where one is set, and the machine's memory), at least 256 MiB and at
// most 3 GiB; 1 GiB where neither can be read. The cgroup files read are those at the root
// of /sys/fs/cgroup as the process sees it (memory.max for cgroup v2,
// memory/memory.limit_in_bytes for v1), which is the process's own cgroup inside a
// container.
func DefaultMaxMemory() int64 { return defaultMaxMemory(availableMemory(os.ReadFile)) }

func defaultMaxMemory(avail int64) int64 {
	if avail <= 0 {
		return unknownDefaultMemory
	}
	return min(max(avail/4, minDefaultMemory), maxDefaultMemory)
}

// availableMemory returns the smaller of the cgroup's memory limit and the machine's
// memory (MemTotal), in bytes; 0 if neither is known.
func availableMemory(read func(string) ([]byte, error)) int64 {
	var avail int64
	take := func(n int64) {
		if n > 0 && n < unlimitedCgroupMemory && (avail == 0 || n < avail) {
			avail = n
		}
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := read(p); err == nil {
			// "max" (v2's no limit) does not parse, and is skipped.
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil {
				take(n)
			}
		}
	}
	if b, err := read("/proc/meminfo"); err == nil {
		take(memTotal(b))
	}
	return avail
}

// memTotal parses the MemTotal line of /proc/meminfo ("MemTotal:  24684092 kB"), in
// bytes; 0 if absent or malformed.
func memTotal(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemTotal:" {
			n, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil || n <= 0 {
				return 0
			}
			if len(f) >= 3 && string(f[2]) == "kB" {
				n <<= 10
			}
			return n
		}
	}
	return 0
}

// checkerBytes is the part of a memory bound the checker's estimate may fill: half. The
// other half is room for garbage between collections (with the runtime's memory limit at
// the bound, the collector runs when the heap reaches it, so at least half the bound is
// freed by each cycle and collections stay infrequent), for batches in flight and for the
// estimate's error.
func checkerBytes(bound int64) int64 { return bound / 2 }

// goMemoryLimit is the Go runtime's soft memory limit for a bound: 1/16 below it (at
// least 32 MiB below, but no more than a quarter), for what the runtime does not count
// (the program's code and data) and what it overshoots.
func goMemoryLimit(bound int64) int64 { return bound - max(bound/16, min(32<<20, bound/4)) }
