package check_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/internal/corpus"
	"github.com/isovet/isovet/internal/explain"
	"github.com/isovet/isovet/internal/histtest"
)

// TestFollowRealtime checks the follow-up at the real-time counterpart of a passed level:
// a stale read passes serializable and snapshot isolation but not their real-time levels,
// and the follow-up says so with the anomaly; a history without client time gets none.
func TestFollowRealtime(t *testing.T) {
	const (
		stale = "init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,0)"
		fresh = "init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,1)"
		timed = "init 0\ns1: T1 w(x,1)\ns2: T2 r(x,0)"
	)
	for _, tt := range []struct {
		src   string
		level check.Level
		want  check.Verdict // the follow-up's verdict; Unknown: no follow-up
		rt    check.Level
	}{
		{stale, check.Serializable, check.Fail, check.StrictSerializable},
		{stale, check.StrongSessionSerializable, check.Fail, check.StrictSerializable},
		{stale, check.SnapshotIsolation, check.Fail, check.StrongSI},
		{fresh, check.Serializable, check.Pass, check.StrictSerializable},
		{fresh, check.SnapshotIsolation, check.Pass, check.StrongSI},
		{timed, check.Serializable, check.Unknown, 0},
	} {
		h := histtest.MustParse(tt.src)
		rep, err := check.Check(context.Background(), h, tt.level, check.Options{})
		if err != nil || rep.Verdict != check.Pass {
			t.Fatalf("%s at %s: verdict %v, err %v; want a pass", tt.src, tt.level, rep.Verdict, err)
		}
		check.FollowRealtime(context.Background(), h, rep, check.Options{})
		f := rep.Followup
		if tt.want == check.Unknown {
			if f != nil {
				t.Errorf("%s at %s: follow-up %+v on a history without client time", tt.src, tt.level, f)
			}
			continue
		}
		if f == nil || f.Level != tt.rt || f.Verdict != tt.want {
			t.Fatalf("%s at %s: follow-up %+v, want %s %s", tt.src, tt.level, f, tt.rt, tt.want)
		}
		if tt.want == check.Fail && (f.Anomaly == nil || len(f.Anomaly.Txns) < 2) {
			t.Errorf("%s at %s: failed follow-up without its anomaly: %+v", tt.src, tt.level, f)
		}
		if rep.Verdict != check.Pass || len(rep.Anomalies) != 0 {
			t.Errorf("%s at %s: the follow-up changed the verdict to %s", tt.src, tt.level, rep.Verdict)
		}
		if slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "which "+tt.level.String()+" ignores") }) {
			t.Errorf("%s at %s: the note that real time was ignored outlived the follow-up: %q", tt.src, tt.level, rep.Notes)
		}
	}
}

// TestFollowRealtimeNote checks that without a follow-up, a pass that ignored client time
// says so, and that a follow-up cut short is unknown, not a verdict.
func TestFollowRealtimeNote(t *testing.T) {
	h := histtest.MustParse("init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,0)")
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
	if err != nil || rep.Verdict != check.Pass {
		t.Fatalf("verdict %v, err %v; want a pass", rep.Verdict, err)
	}
	if !slices.ContainsFunc(explain.Notes(rep), func(n string) bool {
		return strings.Contains(n, "which serializable ignores: strict-serializable also requires")
	}) {
		t.Errorf("notes %q do not say that client time was ignored", explain.Notes(rep))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	check.FollowRealtime(ctx, h, rep, check.Options{})
	if f := rep.Followup; f == nil || f.Verdict == check.Pass {
		t.Fatalf("follow-up under a cancelled context: %+v, want unknown or a found violation", f)
	} else if f.Verdict == check.Unknown && !strings.Contains(f.Why, "not decided") {
		t.Errorf("unknown follow-up says %q, want why", f.Why)
	}
}

// TestCooFollowRealtime: every one of the 29 Coo histories (MySQL READ COMMITTED, recorded
// by Vbox) is rejected at serializable either outright or, for the ten that plain
// serializability allows, by the follow-up at strict-serializable, which is what Vbox
// itself checks.
func TestCooFollowRealtime(t *testing.T) {
	dir := corpus.Path(t, "vbox/coo")
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 29 {
		t.Fatalf("%s holds %d cases, want 29", dir, len(es))
	}
	passed := 0
	for _, e := range es {
		h, _, err := format.Open(filepath.Join(dir, e.Name()), format.Auto, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if rep.Verdict == check.Fail {
			continue
		}
		passed++
		check.FollowRealtime(context.Background(), h, rep, check.Options{})
		if f := rep.Followup; f == nil || f.Verdict != check.Fail || f.Anomaly == nil {
			t.Errorf("%s: serializable %s, follow-up %+v; want strict-serializable to fail with an anomaly", e.Name(), rep.Verdict, f)
		}
	}
	if passed != 10 {
		t.Errorf("%d Coo histories pass plain serializability, want the ten internal/check/ser.TestCoo lists", passed)
	}
}

// TestInitialValueHint checks that a report whose thin-air reads all read 0 (or all nil)
// says which --initial-value the history probably needs.
func TestInitialValueHint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		src, want string
	}{
		{"s1: T1 r(x,0) w(y,1)\ns2: T2 r(y,0) w(x,1)", "--initial-value 0"},
		{"init 0\ns1: T1 r(x,nil) w(y,1)", "--initial-value null"},
		{"s1: T1 r(x,3) w(y,1)", ""},
	} {
		h := histtest.MustParse(tt.src)
		rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
		if err != nil || rep.Verdict != check.Fail {
			t.Fatalf("Check(%q) = %v, %v; want a thin-air failure", tt.src, rep.Verdict, err)
		}
		got := slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "--initial-value") })
		if want := tt.want != ""; got != want || want && !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, tt.want) }) {
			t.Errorf("Check(%q) notes %q, want a hint %q", tt.src, rep.Notes, tt.want)
		}
	}
}

// TestInitialValueHintChronos checks the hint on Chronos's format-kv.json, whose 891 thin-air
// reads (with the reader's nil initial value; the basic checks count them) all read 0.
func TestInitialValueHintChronos(t *testing.T) {
	t.Parallel()
	path := corpus.Path(t, "chronos/format-kv.json")
	h, _, err := format.Open(path, format.Auto, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []check.Method{check.MethodAuto, check.MethodTimestamp} {
		rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{Method: m})
		if err != nil {
			t.Fatalf("Check(%s) error: %v", m, err)
		}
		if rep.Verdict != check.Fail || !slices.ContainsFunc(rep.Notes, func(n string) bool {
			return strings.Contains(n, "all 891 thin-air reads read 0") && strings.Contains(n, "--initial-value 0")
		}) {
			t.Errorf("Check(%s) = %v, notes %q; want a failure with the --initial-value 0 hint for 891 reads", m, rep.Verdict, rep.Notes)
		}
	}
}
