package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/memdb"
	"github.com/isovet/isovet/internal/workload"
)

// flaky wraps memdb: successful commit number unknownAt reports a lost connection (after committing),
// and commit number failAt fails with an unclassified error.
type flaky struct {
	MemDB
	commits           atomic.Int64
	unknownAt, failAt int64
	sessions          atomic.Int64
}

func (f *flaky) Session(ctx context.Context) (Session, error) {
	f.sessions.Add(1)
	s, err := f.MemDB.Session(ctx)
	return flakySession{s, f}, err
}

type flakySession struct {
	Session
	f *flaky
}

func (s flakySession) Begin(ctx context.Context) (Tx, error) {
	tx, err := s.Session.Begin(ctx)
	return &flakyTx{tx.(*memTx), s.f}, err
}

type flakyTx struct {
	*memTx
	f *flaky
}

func (t *flakyTx) Commit(ctx context.Context) error {
	err := t.memTx.Commit(ctx)
	if err != nil {
		return err
	}
	switch n := t.f.commits.Add(1); {
	case n == t.f.unknownAt:
		return errors.Join(ErrUnknownOutcome, errors.New("connection reset"))
	case n == t.f.failAt:
		return errors.New("disk on fire")
	}
	return nil
}

func TestUnknownOutcomeReconnects(t *testing.T) {
	t.Parallel()
	f := &flaky{MemDB: MemDB{Opts: memdb.Options{Mode: memdb.Serializable}}, unknownAt: 10, failAt: -1}
	w := gen(t, "rw-register", workload.Options{Seed: 1, Sessions: 2, TxnsPerSess: 30, Keys: 50})
	res, err := Run(context.Background(), f, w, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unknown != 1 || res.Committed != w.NumTxns()-1 {
		t.Errorf("unknown %d, committed %d; want 1 and %d", res.Unknown, res.Committed, w.NumTxns()-1)
	}
	if f.sessions.Load() != 3 {
		t.Errorf("%d sessions opened, want 3 (one reconnect)", f.sessions.Load())
	}
}

// A run that stops on an error leaves a history file holding exactly what was recorded.
func TestStopLeavesCompleteHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := &flaky{MemDB: MemDB{Opts: memdb.Options{Mode: memdb.SnapshotIsolation}}, unknownAt: -1, failAt: 40}
	w := gen(t, "rw-register", workload.Options{Seed: 1, Sessions: 4, TxnsPerSess: 100, Keys: 50})
	path := filepath.Join(dir, "h.jsonl")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), f, w, RunOptions{Out: fh})
	fh.Close()
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("Run error = %v, want the commit failure", err)
	}
	b := history.NewBuilder()
	data, _ := os.ReadFile(path)
	if err := native.NewDecoder().Decode(bytes.NewReader(data), path, b); err != nil {
		t.Fatalf("the history on disk does not decode: %v", err)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != len(res.History.Txns) || len(h.Txns) >= w.NumTxns() {
		t.Fatalf("disk has %d txns, memory %d, workload %d", len(h.Txns), len(res.History.Txns), w.NumTxns())
	}
	unknown := 0
	for _, tx := range h.Txns {
		if tx.Outcome == history.OutcomeUnknown {
			unknown++
		}
	}
	if unknown != 1 {
		t.Errorf("%d transactions with unknown outcome on disk, want the failed commit", unknown)
	}
}

func TestRunCommandReportsStop(t *testing.T) {
	t.Parallel()
	Register("flaky-test", func(context.Context, string, OpenOptions) (DB, Target, error) {
		return &flaky{MemDB: MemDB{Opts: memdb.Options{Mode: memdb.Serializable}}, unknownAt: -1, failAt: 5}, Target{Claim: check.Serializable, Description: "flaky memdb"}, nil
	})
	dir := t.TempDir()
	code, out, err := runCmd(t, Options{DB: "flaky-test://", Out: dir, Txns: 100})
	if code != ExitError || err == nil || !strings.Contains(err.Error(), "complete up to the error in "+filepath.Join(dir, "history.jsonl")) {
		t.Fatalf("RunCommand = %d, %v; want exit 2 naming the partial history\n%s", code, err, out)
	}
}

// A run whose context is cancelled says so: its history is partial.
func TestCancelledRunReportsIt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := gen(t, "rw-register", workload.Options{Seed: 1, Sessions: 2, TxnsPerSess: 30, Keys: 50})
	res, err := Run(ctx, &MemDB{Opts: memdb.Options{Mode: memdb.Serializable}}, w, RunOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want the cancellation", err)
	}
	if res == nil || len(res.History.Txns) >= w.NumTxns() {
		t.Fatalf("result %+v: want a partial history", res)
	}
}
