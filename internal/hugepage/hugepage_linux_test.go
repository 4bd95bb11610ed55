package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
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

// TestPopulate checks the call MakeAhead makes: fresh anonymous memory is resident after it
// (mincore), and a pattern written while it runs is intact.
func TestPopulate(t *testing.T) {
	const size = 64 << 20
	fresh := func() []byte {
		b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Munmap(b) })
		return b
	}
	resident := func(b []byte) int {
		vec := make([]byte, len(b)/4096)
		if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatalf("mincore: %v", e)
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n
	}
	b := fresh()
	if n := resident(b); n != 0 {
		t.Fatalf("%d pages of a fresh mapping resident before populate", n)
	}
	if !populate(unsafe.Pointer(&b[0]), size) {
		t.Skip("the kernel has no MADV_POPULATE_WRITE (Linux 5.14)")
	}
	if n := resident(b); n != size/4096 {
		t.Fatalf("%d of %d pages resident after populate", n, size/4096)
	}
	b = fresh()
	done := make(chan bool)
	go func() { done <- populate(unsafe.Pointer(&b[0]), size) }()
	for i := 0; i < size; i += 512 {
		b[i] = byte(i >> 9)
	}
	<-done
	for i := 0; i < size; i += 512 {
		if b[i] != byte(i>>9) {
			t.Fatalf("byte %d is %d after writing %d while populate ran", i, b[i], byte(i>>9))
		}
	}
}
