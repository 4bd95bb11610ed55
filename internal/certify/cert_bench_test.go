package certify

import (
	"context"
	"testing"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
)

// certBenchFiles are the shared histories the certificate benchmarks run on: predicate
// rows (newReplayDB's decoding), many item writes, and a mixed workload.
var certBenchFiles = []string{"blindw_pred_1000", "blindw_wr_100000", "ctwitter_10000"}

func openCertBench(b *testing.B, name string) *history.History {
	b.Helper()
	path := corpus.Path(b, "bench/vbox/"+name)
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		b.Fatalf("open %s: %v", path, err)
	}
	return h
}

// BenchmarkRowCert decodes a history and certifies it with the row certificate.
func BenchmarkRowCert(b *testing.B) {
	for _, name := range certBenchFiles {
		b.Run(name, func(b *testing.B) {
			h := openCertBench(b, name)
			for b.Loop() {
				newRowDB(h).certifyRows(context.Background(), 0)
			}
		})
	}
}

// BenchmarkSnapCert decodes a history and certifies it with the snapshot certificate.
func BenchmarkSnapCert(b *testing.B) {
	for _, name := range certBenchFiles {
		b.Run(name, func(b *testing.B) {
			h := openCertBench(b, name)
			for b.Loop() {
				newRowDB(h).certifySnapshots(context.Background(), 0)
			}
		})
	}
}
