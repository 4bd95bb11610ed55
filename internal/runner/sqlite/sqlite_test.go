package sqlite

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/runner"
	"github.com/isovet/isovet/internal/runner/runnertest"
	"github.com/isovet/isovet/internal/workload"
)

func TestSerializablePasses(t *testing.T) {
	t.Parallel()
	for _, wl := range []string{"rw-register", "bank", "write-skew", "list-append", "rmw"} {
		t.Run(wl, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			db, target, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "run.db"), runner.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			w, err := workload.Generate(wl, workload.Options{Seed: 1, Sessions: 4, TxnsPerSess: 40, Keys: 8, OpsPerTxn: 4})
			if err != nil {
				t.Fatal(err)
			}
			res, err := runner.Run(ctx, db, w, runner.RunOptions{})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Committed != w.NumTxns() {
				t.Errorf("%d of %d templates committed (%d gave up)", res.Committed, w.NumTxns(), res.GaveUp)
			}
			rep, err := check.Check(ctx, res.History, target.Claim, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != check.Pass {
				t.Fatalf("Check(serializable) on SQLite = %v, want pass: %v", rep.Verdict, rep.Anomalies)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, db, iso, want string }{
		{"directory missing", "sqlite://" + filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"), "", "sqlite"},
		{"isolation", "sqlite://" + filepath.Join(t.TempDir(), "x.db"), "read-committed", "always serializable"},
		{"empty", "sqlite://", "", "sqlite://FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			code, err := runner.RunCommand(context.Background(), runner.Options{DB: tc.db, Isolation: tc.iso, Txns: 10}, &out, &out)
			if code != runner.ExitError || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RunCommand = %d, %v; want exit 2 and an error mentioning %q", code, err, tc.want)
			}
		})
	}
}

func TestRunCommand(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code, err := runner.RunCommand(context.Background(), runner.Options{DB: "sqlite://" + filepath.Join(t.TempDir(), "x.db"), Workload: "bank", Txns: 100, Sessions: 4, Out: t.TempDir()}, &out, &out)
	if err != nil || code != runner.ExitOK {
		t.Fatalf("RunCommand = %d, %v; want 0\n%s", code, err, out.String())
	}
	if !strings.Contains(out.String(), "bank invariant (total 800): 0 of") {
		t.Errorf("no clean bank invariant line:\n%s", out.String())
	}
}

// TestRowWorkloadsRecord: predicate reads and writes (UPDATE ... RETURNING), inserts and
// deletes on SQLite are recorded as the predicate checker expects.
func TestRowWorkloadsRecord(t *testing.T) {
	t.Parallel()
	for _, wl := range []string{"blindw-pred", "pred-write-skew"} {
		t.Run(wl, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			db, _, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "run.db"), runner.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			o := workload.Options{Seed: 1, Sessions: 4, TxnsPerSess: 25}
			if wl == "blindw-pred" {
				o.Keys, o.RangeMax = 300, 30
			}
			w, err := workload.Generate(wl, o)
			if err != nil {
				t.Fatal(err)
			}
			res, err := runner.Run(ctx, db, w, runner.RunOptions{})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			preds, rows := runnertest.CheckRowHistory(t, res.History, w)
			if preds < 100 || rows == 0 {
				t.Fatalf("%d predicate operations listing %d rows, want at least 100 and some rows", preds, rows)
			}
			rep, err := check.Check(ctx, res.History, check.Serializable, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != check.Pass {
				t.Fatalf("Check(serializable) on SQLite = %v, want pass: %v %v", rep.Verdict, rep.Anomalies, rep.Notes)
			}
		})
	}
}
