package check_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/memguard"
)

// shapes are the inputs whose cost was quadratic (issue #26), in the text format
// (r/w(key,value,session,txn); every key starts at 0), with the verdict each must reach:
// blind writes of one key nobody reads (any order of them explains the history), and
// transactions that read x=1 and write it back (the first of them in any order read 1
// before anyone wrote it), in 8 sessions or, the 10-identical case, 10 per key with a
// session each.
var shapes = []struct {
	name string
	line func(t int) string // the text of transaction t (from 1)
	want check.Verdict
}{
	{"blind-writes", func(t int) string { return fmt.Sprintf("w(1,1,%d,%d)\n", t%8, t) }, check.Pass},
	{"read-write-back", func(t int) string { return fmt.Sprintf("r(1,1,%d,%d)\nw(1,1,%d,%d)\n", t%8, t, t%8, t) }, check.Fail},
	{"ten-identical", func(t int) string {
		g := (t-1)/10 + 1
		return fmt.Sprintf("r(%d,1,%d,%d)\nw(%d,1,%d,%d)\n", g, t, t, g, t, t)
	}, check.Fail},
}

// writeShape writes transactions of a shape until the file holds about size bytes, in
// whole groups of 10 (a lone last member of the ten-identical shape would read a value no
// one else wrote, a thin-air read that fails the history without the shape's reason).
func writeShape(t *testing.T, line func(int) string, size int) string {
	t.Helper()
	var b strings.Builder
	for i := 1; b.Len() < size || (i-1)%10 != 0; i++ {
		b.WriteString(line(i))
	}
	p := filepath.Join(t.TempDir(), "h.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// peakHeap runs f and returns the most the heap held above what it held before, sampled
// every millisecond.
func peakHeap(f func()) uint64 {
	runtime.GC()
	base := memguard.Heap()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			peak = max(peak, memguard.Heap())
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	peak = max(peak, memguard.Heap())
	if peak < base {
		return 0
	}
	return peak - base
}

// TestCheckMemoryShapes checks each shape at 1 KB, 100 KB and (without -short) 10 MB:
// it must reach its verdict within the time limit, and the check's peak heap must grow at
// most linearly with the input: from one size to the next, at most twice the bytes per
// input byte of the smaller, plus 16 MiB. (Before, 40 KB of blind writes took 1 GB.)
func TestCheckMemoryShapes(t *testing.T) {
	sizes := []int{1 << 10, 100 << 10, 10 << 20}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			var prev uint64
			for i, size := range sizes {
				h, _, err := format.Open(writeShape(t, sh.line, size), format.Auto, format.Options{})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				var rep *check.Report
				peak := peakHeap(func() { rep, err = check.Check(ctx, h, check.Serializable, check.Options{MaxMemory: -1}) })
				cancel()
				if err != nil || rep.Verdict != sh.want {
					t.Fatalf("%d bytes: Check = %v, %v; want %v", size, rep.Verdict, err, sh.want)
				}
				if sh.want == check.Fail && (len(rep.Anomalies) == 0 || rep.Anomalies[0].Kind != anomaly.G1c) {
					t.Fatalf("%d bytes: anomalies %v; want the cycle of write-read dependencies every choice closes (G1c)", size, rep.Anomalies)
				}
				t.Logf("%d bytes, %d transactions: %v, peak heap %s (%.1f bytes per input byte)", size, len(h.Txns), rep.Verdict, memguard.Bytes(peak), float64(peak)/float64(size))
				if i > 0 {
					bound := 2*float64(prev)/float64(sizes[i-1])*float64(size) + 16<<20
					if float64(peak) > bound {
						t.Errorf("%d bytes: peak heap %s, more than linear from %d bytes (%s): bound %s", size, memguard.Bytes(peak), sizes[i-1], memguard.Bytes(prev), memguard.Bytes(uint64(bound)))
					}
				}
				prev = peak
			}
		})
	}
}

// TestCheckMaxMemoryOption: a check that outgrows Options.MaxMemory stops with verdict
// Unknown and an error matching check.ErrMemoryLimit, whose sentence names the limit.
func TestCheckMaxMemoryOption(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "r(1,1,%d,%d)\nw(1,1,%d,%d)\n", i%8, i, i%8, i)
	}
	p := filepath.Join(t.TempDir(), "h.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Read with initial value 1, every read may read the initial state or any writer: the
	// candidates grow with the square of the transactions.
	one := history.Int(1)
	h, _, err := format.Open(p, format.Auto, format.Options{Initial: &one})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	limit := memguard.Heap() + 48<<20
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{MaxMemory: int64(limit)})
	if !errors.Is(err, check.ErrMemoryLimit) || rep == nil || rep.Verdict != check.Unknown {
		t.Fatalf("Check = %v, %v; want Unknown and ErrMemoryLimit", rep, err)
	}
	if !strings.Contains(err.Error(), "memory limit of "+memguard.Bytes(limit)+" reached") {
		t.Errorf("error %q does not name the limit", err)
	}
}
