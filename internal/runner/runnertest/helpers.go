package runnertest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
)

// Table names a table per test and per process, so that parallel tests and concurrent
// test processes never share one.
func Table(t testing.TB) string {
	n := strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
	return fmt.Sprintf("isovet_%.40s_%d", n, os.Getpid())
}

// Check checks h at level l (within a minute), failing the test on an error.
func Check(t testing.TB, h *history.History, l check.Level) *check.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := check.Check(ctx, h, l, check.Options{})
	if err != nil {
		t.Fatalf("Check(%s): %v", l, err)
	}
	return rep
}

// Has reports whether rep names an anomaly of one of the kinds, as its kind or among the
// kinds it is also known as.
func Has(rep *check.Report, ks ...anomaly.Kind) bool {
	for _, a := range rep.Anomalies {
		if slices.Contains(ks, a.Kind) || slices.ContainsFunc(a.Also, func(k anomaly.Kind) bool { return slices.Contains(ks, k) }) {
			return true
		}
	}
	return false
}

// Quantile returns the p-quantile of xs (the element at rank ⌊p·n⌋ of the sorted values,
// the largest for p = 1); xs is not changed. It panics on an empty xs.
func Quantile(xs []float64, p float64) float64 {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[min(len(ys)-1, int(p*float64(len(ys))))]
}
