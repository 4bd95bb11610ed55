// Package memguard stops a check before the Go heap outgrows a limit: a watchdog samples the
// heap (runtime/metrics, every [Interval]) and cancels the check's context with a
// [*LimitError] once the heap holds more than the limit, so the check answers Unknown
// with a sentence instead of the runtime dying of an out-of-memory error. While a watch is
// active the runtime's soft memory limit (debug.SetMemoryLimit) is lowered to 90% of it,
// so the garbage collector works hard before the watchdog gives up: what the watchdog sees
// over the limit is then live data, not garbage waiting for a cycle.
//
// The watchdog reads no clock: it wakes on a ticker and reads only the runtime's own
// counters. Deciding the limit from the machine (physical memory, a cgroup's limit) is IO
// and belongs to the command (cmd/isovet).
package memguard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Interval is how often the watchdog samples the heap.
const Interval = 50 * time.Millisecond

// heapMetric is the bytes held by heap objects, live or not yet swept: what the collector
// can free is freed well before it passes the limit (see Watch).
const heapMetric = "/memory/classes/heap/objects:bytes"

// ErrLimit is what a [*LimitError] matches with errors.Is.
var ErrLimit = errors.New("memguard: memory limit reached")

// LimitError is the cause a watched context ends with when the heap passed its limit.
type LimitError struct {
	Limit uint64 // bytes
	Heap  uint64 // bytes the heap held when the watchdog looked
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("memory limit of %s reached (the heap held %s)", Bytes(e.Limit), Bytes(e.Heap))
}

// Is makes a LimitError match [ErrLimit].
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// IsLimit reports whether err is, or wraps, a [*LimitError].
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

// Heap returns the bytes the heap's objects hold now (live, or dead and not yet swept).
func Heap() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// Watch returns a context derived from ctx that ends with a [*LimitError] once the heap
// holds more than limit bytes, and the function that stops the watch (call it when the
// guarded work is done; it is safe to call more than once). A limit of 0 watches nothing.
func Watch(ctx context.Context, limit uint64) (context.Context, func()) {
	if limit == 0 {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancelCause(ctx)
	release := lowerSoftLimit(limit)
	done := make(chan struct{})
	go watch(wctx, limit, cancel, done)
	var once sync.Once
	return wctx, func() {
		once.Do(func() {
			close(done)
			cancel(nil)
			release()
		})
	}
}

// watch samples the heap until done is closed or ctx ends, and cancels with a LimitError
// when it holds more than limit.
func watch(ctx context.Context, limit uint64, cancel context.CancelCauseFunc, done <-chan struct{}) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	s := []metrics.Sample{{Name: heapMetric}}
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > limit {
			cancel(&LimitError{Limit: limit, Heap: s[0].Value.Uint64()})
			return
		}
	}
}

// soft tracks the watches active at once, so that the runtime's soft limit is the lowest
// they ask for and is restored when the last one ends.
var soft struct {
	mu     sync.Mutex
	active map[*uint64]bool
	saved  int64
}

// lowerSoftLimit lowers the runtime's soft memory limit to 90% of limit while the returned
// function has not been called.
func lowerSoftLimit(limit uint64) func() {
	soft.mu.Lock()
	defer soft.mu.Unlock()
	if len(soft.active) == 0 {
		soft.saved = debug.SetMemoryLimit(-1)
		soft.active = make(map[*uint64]bool)
	}
	key := new(uint64)
	*key = limit / 10 * 9
	soft.active[key] = true
	applySoftLimit()
	return func() {
		soft.mu.Lock()
		defer soft.mu.Unlock()
		delete(soft.active, key)
		if len(soft.active) == 0 {
			debug.SetMemoryLimit(soft.saved)
			return
		}
		applySoftLimit()
	}
}

// applySoftLimit sets the soft limit to the lowest one asked for (and never above the
// one set before the first watch). soft.mu is held.
func applySoftLimit() {
	lim := soft.saved
	for k := range soft.active {
		if *k < uint64(lim) {
			lim = int64(min(*k, math.MaxInt64))
		}
	}
	debug.SetMemoryLimit(lim)
}

// RuntimeLimit returns the runtime's soft memory limit when one was set (GOMEMLIMIT, or
// debug.SetMemoryLimit outside any watch), else 0.
func RuntimeLimit() uint64 {
	soft.mu.Lock()
	defer soft.mu.Unlock()
	lim := debug.SetMemoryLimit(-1)
	if len(soft.active) > 0 {
		lim = soft.saved
	}
	if lim <= 0 || lim == math.MaxInt64 {
		return 0
	}
	return uint64(lim)
}

// Bytes formats n bytes for a sentence: "64 MiB", "2 GiB", "1.5 GiB", "900 B".
func Bytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if f == math.Trunc(f) || u == 0 {
		return fmt.Sprintf("%.0f %s", f, units[u])
	}
	return fmt.Sprintf("%.3g %s", f, units[u])
}

// ParseBytes parses a size: a number of bytes, or one with a unit (B, KB, MB, GB, TB in
// powers of 1000; KiB, MiB, GiB, TiB in powers of 1024; K, M, G, T as the binary ones),
// case ignored, with or without a space: "64MiB", "2 GiB", "1.5G", "500000000".
func ParseBytes(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("size %q: want a number of bytes, optionally with a unit (64MiB, 2GiB, 500MB)", s)
	}
	mult, ok := unitBytes[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", s, unit)
	}
	v := f * mult
	if v >= math.MaxUint64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return uint64(v), nil
}

var unitBytes = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}
