package memguard

import (
	"context"
	"errors"
	"runtime/debug"
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for _, tt := range []struct {
		n    uint64
		want string
	}{{900, "900 B"}, {64 << 20, "64 MiB"}, {2 << 30, "2 GiB"}, {3 << 29, "1.5 GiB"}} {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want uint64
	}{{"64MiB", 64 << 20}, {"2 GiB", 2 << 30}, {"500MB", 500e6}, {"1.5G", 3 << 29}, {"123", 123}, {"4k", 4096}} {
		if got, err := ParseBytes(tt.s); err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.s, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1", "3 parsecs", "1e400"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) took it", bad)
		}
	}
}

// TestWatch: a heap past the limit ends the watched context with a LimitError within a
// few samples, and the soft limit is lowered while the watch lasts and restored after.
func TestWatch(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	ctx, stop := Watch(context.Background(), 1) // any heap is over one byte
	if got := debug.SetMemoryLimit(-1); got >= before {
		t.Errorf("soft limit %d during the watch, want below %d", got, before)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * Interval):
		t.Fatal("the watch did not end the context")
	}
	if err := context.Cause(ctx); !errors.Is(err, ErrLimit) || !IsLimit(err) {
		t.Errorf("cause %v, want a LimitError", err)
	}
	stop()
	stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("soft limit %d after the watch, want %d restored", got, before)
	}
	// A limit far above the heap leaves the context alone.
	ctx, stop = Watch(context.Background(), 1<<50)
	defer stop()
	select {
	case <-ctx.Done():
		t.Fatalf("ended: %v", context.Cause(ctx))
	case <-time.After(3 * Interval):
	}
}
