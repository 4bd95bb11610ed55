package check_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/explain"
	"github.com/isovet/isovet/internal/histtest"
)

// TestFailedStatements: a statement the source marked as failed never takes effect, and a
// transaction logged as committed that contains one is read as the reading says, by every
// method, with the transactions named in the report.
func TestFailedStatements(t *testing.T) {
	const (
		// Only T2's failed write of x would make a lost update.
		onlyFailed = "init 0\ns1: T1 r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)!"
		// T3 read T1's other write: T1 cannot have rolled back.
		readOther = "init 0\ns1: T1 w(y,5) w(z,1)!\ns2: T2 r(y,5)"
		// If T1 committed, it lost T2's update of x; if it rolled back, nothing is wrong.
		lostIfCommitted = "init 0\ns1: T1 r(x,0) w(y,1)! w(x,1)\ns2: T2 r(x,0) w(x,2)"
		// Either way a violation: committed, a lost update; rolled back, T3 read its write.
		either = "init 0\ns1: T1 w(y,5) w(z,1)! r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)\ns3: T3 r(y,5)"
	)
	type want struct{ uncertain, rolledBack, skipped check.Verdict }
	for _, tt := range []struct {
		name, src string
		level     check.Level
		want      want
		flagged   history.TxnID // the transaction logged committed with a failed statement
	}{
		{"only-failed", onlyFailed, check.Serializable, want{check.Pass, check.Pass, check.Pass}, 1},
		{"only-failed", onlyFailed, check.SnapshotIsolation, want{check.Pass, check.Pass, check.Pass}, 1},
		{"read-other", readOther, check.ReadCommitted, want{check.Pass, check.Fail, check.Pass}, 0},
		{"read-other", readOther, check.Serializable, want{check.Pass, check.Fail, check.Pass}, 0},
		{"lost-if-committed", lostIfCommitted, check.SnapshotIsolation, want{check.Pass, check.Pass, check.Fail}, 0},
		{"lost-if-committed", lostIfCommitted, check.StrongSessionSerializable, want{check.Pass, check.Pass, check.Fail}, 0},
		{"either", either, check.SnapshotIsolation, want{check.Fail, check.Fail, check.Fail}, 0},
		{"either", either, check.Serializable, want{check.Fail, check.Fail, check.Fail}, 0},
	} {
		h := histtest.MustParse(tt.src)
		for reading, v := range map[history.FailedReading]check.Verdict{
			history.FailedUncertain: tt.want.uncertain, history.FailedRolledBack: tt.want.rolledBack, history.FailedSkipped: tt.want.skipped,
		} {
			for _, m := range []check.Method{check.MethodAuto, check.MethodBlackBox} {
				rep, err := check.Check(context.Background(), h, tt.level, check.Options{Method: m, FailedStatements: reading})
				if err != nil {
					t.Fatalf("%s at %s, %s, %s: %v", tt.name, tt.level, reading, m, err)
				}
				if rep.Verdict != v {
					t.Errorf("%s at %s, reading %s, method %s: %s, want %s (%v)", tt.name, tt.level, reading, m, rep.Verdict, v, rep.Anomalies)
				}
				if rep.Failed == nil || rep.Failed.Reading != reading || len(rep.Failed.Committed) != 1 || rep.Failed.Committed[0] != tt.flagged {
					t.Errorf("%s, %s: report's failed statements %+v, want [%d] under %s", tt.name, reading, rep.Failed, tt.flagged, reading)
				}
				if rep.History != h {
					t.Errorf("%s: the report shows another history than the one recorded", tt.name)
				}
			}
		}
	}
}

// TestFailedStatementsReport: the report names the transactions logged as committed with a
// failed statement before any anomaly, in text, JSON and HTML.
func TestFailedStatementsReport(t *testing.T) {
	h := histtest.MustParse("init 0\ns1: T1 w(y,5) w(z,1)! r(x,0) w(x,1)\ns2: T2 r(x,0) w(x,2)\ns3: T3 r(y,5)")
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text, js, page bytes.Buffer
	if err := explain.Text(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := explain.JSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := explain.HTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	const sentence = "1 transaction logged as committed contains a failed statement (T1)"
	if s := text.String(); !strings.Contains(s, "Failed statements: "+sentence) || strings.Index(s, sentence) > strings.Index(s, "[1]") {
		t.Errorf("text report does not name T1 before the anomalies:\n%s", s)
	}
	for _, want := range []string{`"failed_statements": {`, `"reading": "uncertain"`, `"committed": [`, `"T1"`, `"ops": 1`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON report lacks %s:\n%s", want, js.String())
		}
	}
	if !strings.Contains(page.String(), "<h2>Failed statements</h2><p>"+sentence) {
		t.Errorf("HTML report lacks the failed statements:\n%s", page.String())
	}
}

// TestFailedStatementsSourceContradicts: a read that names a failed write as the version it
// saw contradicts its source, which is an input error, not a verdict.
func TestFailedStatementsSourceContradicts(t *testing.T) {
	h := histtest.MustParse("init 0\ns1: T1 w(x,1)!\ns2: T2 r(x,1)<-T1")
	_, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
	if !errors.Is(err, history.ErrFailedSource) {
		t.Fatalf("err = %v, want history.ErrFailedSource", err)
	}
	if !strings.Contains(err.Error(), "T2 read the version T1 wrote in its operation 0") {
		t.Errorf("error does not name the read and the write: %v", err)
	}
}

// TestFailedStatementsTimestamp: the timestamp checker, which takes an unknown outcome as
// never committed, decides the uncertain reading by checking both executions.
func TestFailedStatementsTimestamp(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      check.Verdict
	}{
		// T2 read T1's write of y: T1 committed (without its failed write of z).
		{"committed explains", "init 0\ns1: T1 ts[1,2] w(y,5) w(z,1)!\ns2: T2 ts[3,4] r(y,5)", check.Pass},
		// Nobody read T1: rolled back explains it; committed, it would be a lost update.
		{"rolled back explains", "init 0\ns1: T1 ts[1,4] r(x,0) w(y,1)! w(x,1)\ns2: T2 ts[2,3] r(x,0) w(x,2)", check.Pass},
		// Committed: a lost update; rolled back: T3 read its write. One such transaction: fail.
		{"neither", "init 0\ns1: T1 ts[1,4] w(y,5) w(z,1)! r(x,0) w(x,1)\ns2: T2 ts[2,3] r(x,0) w(x,2)\ns3: T3 ts[5,6] r(y,5)", check.Fail},
	} {
		h := histtest.MustParse(tt.src)
		rep, err := check.Check(context.Background(), h, check.SnapshotIsolation, check.Options{Method: check.MethodTimestamp})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rep.Verdict != tt.want || rep.Checker != "chronos" {
			t.Errorf("%s: %s by %s, want %s (%v %v)", tt.name, rep.Verdict, rep.Checker, tt.want, rep.Anomalies, rep.Notes)
		}
		bb, err := check.Check(context.Background(), h, check.SnapshotIsolation, check.Options{Method: check.MethodBlackBox})
		if err != nil || bb.Verdict != tt.want {
			t.Errorf("%s: black-box says %s (%v), want %s", tt.name, bb.Verdict, err, tt.want)
		}
	}
}
