package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviceReachesTheKernel finds the mapping of a large table in /proc/self/smaps and
// checks that the kernel recorded the advice (VmFlags "hg"). (Whether memory is not advised
// cannot be tested in one process: freed tables are reused, advice and all.)
func TestAdviceReachesTheKernel(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skipf("the kernel has no transparent huge pages: %v", err)
	}
	SetEnabled(true)
	defer SetEnabled(false)
	big := Make[byte](0, 64<<20)
	mid := uintptr(unsafe.Pointer(unsafe.SliceData(big[:1]))) + 32<<20
	if flags := vmFlags(t, mid); !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the middle of a 64 MiB table has VmFlags %q, want hg", flags)
	}
}

// vmFlags returns the VmFlags of the mapping holding address a.
func vmFlags(t *testing.T, a uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		ln := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(ln, "%x-%x", &lo, &hi); n == 2 && strings.Contains(ln[:strings.IndexByte(ln, ' ')], "-") {
			in = lo <= a && a < hi
			continue
		}
		if in && strings.HasPrefix(ln, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(ln, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping holds %#x", a)
	return ""
}
