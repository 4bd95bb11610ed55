package check_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/explain"
	"github.com/isovet/isovet/internal/histtest"
)

// routeFixtures are histories that violate the levels listed with them, with client time and
// database timestamps, so that every method can run on them. The levels a fixture violates
// are the ones named and every stronger one.
var routeFixtures = []struct {
	name, src string
	violates  []check.Level
}{
	{"lost-update", "init 0\ns1: T1 @[0,10] ts[1,5] r(x,0) w(x,1)\ns2: T2 @[2,12] ts[2,6] r(x,0) w(x,2)",
		[]check.Level{check.SnapshotIsolation, check.Serializable}},
	{"write-skew", "init 0\ns1: T1 @[0,10] ts[1,5] r(x,0) r(y,0) w(x,1)\ns2: T2 @[2,12] ts[2,6] r(x,0) r(y,0) w(y,1)",
		[]check.Level{check.Serializable}},
	{"stale-read", "init 0\ns1: T1 @[0,10] ts[1,2] w(x,1)\ns2: T2 @[20,30] ts[3,4] r(x,0)",
		[]check.Level{check.StrongSI, check.StrictSerializable}},
	{"aborted-read", "init 0\ns1: T1 @[0,10] ts[1,2] w(x,1) abort\ns2: T2 @[20,30] ts[3,4] r(x,1)",
		[]check.Level{check.ReadCommitted}},
	{"fractured-read", "init 0\ns1: T1 @[0,10] ts[1,2] w(x,1) w(y,1)\ns2: T2 @[20,30] ts[3,4] r(x,1) r(y,0)",
		[]check.Level{check.ReadAtomic}},
}

// violated reports whether level is one of vs or stronger than one of them.
func violated(level check.Level, vs []check.Level) bool {
	for _, v := range vs {
		if level.Implies(v) {
			return true
		}
	}
	return false
}

var methods = []check.Method{check.MethodAuto, check.MethodBlackBox, check.MethodTimestamp, check.MethodBasic}

// TestNoRoutePassesAViolation: no method, level or follow-up passes a history that violates
// the level. Every method runs at every level it takes on every fixture; a report for a level
// the fixture violates is never a pass, and the real-time follow-up of a pass never says a
// violated counterpart holds.
func TestNoRoutePassesAViolation(t *testing.T) {
	ctx := context.Background()
	checked := 0
	for _, fx := range routeFixtures {
		h := histtest.MustParse(fx.src)
		for _, level := range check.Levels() {
			for _, m := range methods {
				rep, err := check.Check(ctx, h, level, check.Options{Method: m})
				if rep == nil {
					if !errors.Is(err, check.ErrNotImplemented) && !errors.Is(err, check.ErrNeedsTime) {
						t.Errorf("%s at %s by %s: %v", fx.name, level, m, err)
					}
					continue
				}
				checked++
				bad := violated(level, fx.violates)
				if bad && rep.Verdict == check.Pass {
					t.Errorf("%s at %s by %s: pass, but the history violates %s", fx.name, level, m, level)
				}
				if m == check.MethodAuto && bad && rep.Verdict != check.Fail {
					t.Errorf("%s at %s: %s, want the violation found", fx.name, level, rep.Verdict)
				}
				for _, fm := range methods {
					r := *rep
					check.FollowRealtime(ctx, h, &r, check.Options{Method: fm})
					if f := r.Followup; f != nil && f.Verdict == check.Pass && violated(f.Level, fx.violates) {
						t.Errorf("%s at %s by %s, follow-up by %s: says %s holds too, but the history violates it", fx.name, level, m, fm, f.Level)
					}
				}
			}
		}
	}
	if checked < len(routeFixtures)*len(check.Levels())*2 {
		t.Fatalf("only %d checks ran", checked)
	}
}

// TestLostUpdateNeverPasses: the lost update of testdata/examples, at each serializability
// level and snapshot isolation, by --method auto, basic and black-box, never exits 0 and
// never says the level holds, on the command line's route (check then follow-up).
func TestLostUpdateNeverPasses(t *testing.T) {
	h, _, err := format.Open(filepath.Join("..", "testdata", "examples", "lost-update.edn"), format.Auto, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []check.Level{check.Serializable, check.StrongSessionSerializable, check.StrictSerializable, check.SnapshotIsolation} {
		for _, m := range []check.Method{check.MethodAuto, check.MethodBasic, check.MethodBlackBox} {
			rep, err := check.Check(context.Background(), h, level, check.Options{Method: m})
			if err != nil {
				t.Fatalf("%s by %s: %v", level, m, err)
			}
			check.FollowRealtime(context.Background(), h, rep, check.Options{Method: m})
			var b strings.Builder
			if err := explain.Text(&b, rep); err != nil {
				t.Fatal(err)
			}
			if rep.Verdict == check.Pass || strings.Contains(b.String(), "holds too") {
				t.Errorf("%s by %s: %s\n%s", level, m, rep.Verdict, b.String())
			}
			if m == check.MethodBasic && !strings.Contains(b.String(), "only the basic checks ran") {
				t.Errorf("%s by basic: the report does not say why it is unknown\n%s", level, b.String())
			}
		}
	}
}

// TestChosenOrderIsNoViolation: timestamps derived from snapshots leave the order of commits
// no snapshot tells apart to isovet. T1 and T2 ran on the same snapshot; the derivation puts
// T1's commit first (by id), and in that order T2's read of x=0 fails commit-order
// serializability, yet T2, T1, T3 is a serial order. The timestamp checker's failure rests on
// the chosen order: the verdict is Unknown, with no anomaly and the caveat's sentence, and
// the black-box checker passes the history.
func TestChosenOrderIsNoViolation(t *testing.T) {
	src := `{"s":1,"id":10,"snap":"10:10:","ops":[["w","x",1]]}
{"s":2,"id":11,"snap":"10:10:","ops":[["r","x",0],["w","y",1]]}
{"s":3,"id":12,"snap":"12:12:","ops":[["r","x",1],["r","y",1]]}
`
	zero := history.Int(0)
	h, _, err := format.Read(strings.NewReader(src), "snapshots.jsonl", "native", format.Options{Initial: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if !h.DerivedTimestamps() {
		t.Fatalf("no timestamps derived: %v", h.SnapshotErr)
	}
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{Method: check.MethodTimestamp})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != check.Unknown || len(rep.Anomalies) != 0 || !rep.Undermined() {
		t.Fatalf("timestamp: %s with %d anomalies, undermined %v; notes %q", rep.Verdict, len(rep.Anomalies), rep.Undermined(), rep.Notes)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "another order may have none") }) {
		t.Errorf("the report does not say why: %q", rep.Notes)
	}
	rep, err = check.Check(context.Background(), h, check.Serializable, check.Options{Method: check.MethodBlackBox})
	if err != nil || !rep.Proved() {
		t.Errorf("black-box: %v, %v; notes %q", rep.Verdict, err, rep.Notes)
	}
}
