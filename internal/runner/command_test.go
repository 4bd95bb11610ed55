package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/history/historytest"
)

func runCmd(t *testing.T, o Options) (int, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code, err := RunCommand(ctx, o, &out, &errb)
	return code, out.String() + errb.String(), err
}

// TestRunCommandFindsWriteSkew is the README's main command:
//
//	isovet run --workload write-skew --check serializable
//
// on the default memdb (snapshot isolation) finds a write skew and explains it.
func TestRunCommandFindsWriteSkew(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); ; seed++ {
		code, out, err := runCmd(t, Options{Workload: "write-skew", Check: []string{"serializable"}, Seed: seed, Txns: 400})
		if err != nil {
			t.Fatalf("RunCommand: %v", err)
		}
		if code == ExitViolation {
			if !strings.Contains(out, "write skew") || !strings.Contains(out, "a contradiction") {
				t.Fatalf("exit 1 but no explained write skew:\n%s", out)
			}
			return
		}
		if seed == 5 {
			t.Fatalf("no violation in 5 seeds; last exit %d:\n%s", code, out)
		}
	}
}

func TestRunCommandDefaultPassesAndStreams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var calls, lastDone int
	o := Options{Out: dir, Txns: 500, Seed: 2, Progress: func(done, aborted, total int, _ time.Duration) {
		calls++
		lastDone = done
		if total != 504 && total != 500 {
			t.Errorf("progress total = %d", total)
		}
	}}
	code, out, err := runCmd(t, o)
	if err != nil || code != ExitOK {
		t.Fatalf("RunCommand = %d, %v; want 0:\n%s", code, err, out)
	}
	if !strings.Contains(out, "snapshot-isolation") || !strings.Contains(out, "pass") {
		t.Errorf("output lacks the verdict:\n%s", out)
	}
	f, err := os.Open(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := history.NewBuilder()
	if err := native.NewDecoder().Decode(f, "history.jsonl", b); err != nil {
		t.Fatalf("decoding the streamed history: %v", err)
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || lastDone != len(h.Txns) {
		t.Errorf("progress: %d calls, last done %d, history has %d txns", calls, lastDone, len(h.Txns))
	}
	if !h.HasTime() || !h.HasTimestamps() {
		t.Errorf("streamed history lacks client intervals or memdb timestamps")
	}
	for _, name := range []string{"report-snapshot-isolation.txt", "report-snapshot-isolation.html", "report.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("no report file: %v", err)
		}
	}
}

// TestRunCommandJSON: with JSON, stdout holds only the JSON document, one result per level
// checked, naming the database and the workload; what was recorded goes to stderr.
func TestRunCommandJSON(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	o := Options{DB: "memdb://serializable?fault=lost-update", Workload: "rmw", Txns: 400, Seed: 1, JSON: true, Check: []string{"serializable", "read-committed"}}
	code, err := RunCommand(ctx, o, &out, &errb)
	if err != nil || code != ExitViolation {
		t.Fatalf("RunCommand = %d, %v; want 1:\n%s", code, err, errb.String())
	}
	var doc struct {
		Schema  int
		Results []struct{ File, Database, Workload, Level, Verdict string }
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, out.String())
	}
	if doc.Schema != 1 || len(doc.Results) != 2 || doc.Results[0].Level != "serializable" || doc.Results[0].Verdict != "fail" ||
		doc.Results[1].Level != "read-committed" || doc.Results[0].Workload != "rmw" || !strings.Contains(doc.Results[0].Database, "memdb") || doc.Results[0].File != "" {
		t.Errorf("document %+v, want a failed serializable and a read-committed result on memdb with rmw and no file", doc)
	}
	if !strings.Contains(errb.String(), "recorded ") {
		t.Errorf("stderr does not say what was recorded:\n%s", errb.String())
	}
}

func TestRunCommandFaultExample(t *testing.T) {
	t.Parallel()
	code, out, err := runCmd(t, Options{DB: "memdb://serializable?fault=lost-update", Workload: "rmw", Txns: 400, Seed: 1})
	if err != nil || code != ExitViolation {
		t.Fatalf("RunCommand = %d, %v; want 1:\n%s", code, err, out)
	}
	if !strings.Contains(out, "lost update") {
		t.Errorf("no lost update named:\n%s", out)
	}
}

func TestRunCommandErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"scheme", Options{DB: "oracle://x"}, "no driver"},
		{"not a URL", Options{DB: "nonsense"}, "want a URL"},
		{"mode", Options{DB: "memdb://eventual"}, "unknown memdb mode"},
		{"fault", Options{DB: "memdb://snapshot-isolation?fault=nope"}, "unknown memdb fault"},
		{"workload", Options{Workload: "nope"}, "unknown workload"},
		{"level", Options{Check: []string{"nope"}}, "unknown level"},
		{"no claim", Options{DB: "memdb://read-uncommitted"}, "--check"},
		{"isolation against the URL's mode", Options{DB: "memdb://serializable", Isolation: "read-committed"}, "memdb://serializable runs at serializable, and memdb takes its mode from the URL, not --isolation read-committed: drop --isolation, or run memdb://read-committed"},
		{"isolation memdb lacks", Options{DB: "memdb://si?fault=lost-update", Isolation: "repeatable-read"}, "not --isolation repeatable-read, which is no memdb mode: drop --isolation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, err := runCmd(t, tc.o)
			if code != ExitError || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RunCommand = %d, %v, want exit 2 and an error containing %q\n%s", code, err, tc.want, out)
			}
		})
	}
}

func TestWorse(t *testing.T) {
	if worse(ExitOK, ExitUnknown) != ExitUnknown || worse(ExitViolation, ExitUnknown) != ExitViolation || worse(ExitUnknown, ExitViolation) != ExitViolation {
		t.Error("worse orders exit codes wrongly")
	}
}

// TestMemDBIsolation: --isolation is taken where the memdb URL names no mode, and agrees
// with a URL's mode in any of its spellings.
func TestMemDBIsolation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ db, iso, want string }{
		{"memdb://", "read-committed", "on memdb read-committed"},
		{"memdb://serializable", "serializable", "on memdb serializable"},
		{"memdb://serializable", "ser", "on memdb serializable"},
		{"memdb://serializable", "SERIALIZABLE", "on memdb serializable"},
		{"memdb://", "READ_COMMITTED", "on memdb read-committed"},
		{"memdb://", "Read Committed", "on memdb read-committed"},
		{"memdb://si", "snapshot-isolation", "on memdb snapshot-isolation"},
		{"memdb://si", "", "on memdb snapshot-isolation"},
	} {
		code, out, err := runCmd(t, Options{DB: tc.db, Isolation: tc.iso, Txns: 16})
		if err != nil || code != ExitOK || !strings.Contains(out, tc.want) {
			t.Errorf("run --db %s --isolation %q = %d, %v; want 0 %s:\n%s", tc.db, tc.iso, code, err, tc.want, out)
		}
	}
}

// TestCheckLevelStrictExit: a stale read passes serializable and fails its real-time
// follow-up; that exits 0, and 1 with StrictExit.
func TestCheckLevelStrictExit(t *testing.T) {
	t.Parallel()
	h := historytest.MustParse("init 0\ns1: T1 @[0,10] w(x,1)\ns2: T2 @[20,30] r(x,0)\n")
	for _, strict := range []bool{false, true} {
		o := Options{RealtimeBudget: 10 * time.Second, StrictExit: strict}
		o.ensureDefaults()
		var out bytes.Buffer
		c := &command{o: &o, stdout: &out, stderr: &out}
		code, err := c.checkLevel(context.Background(), h, check.Serializable)
		want, say := ExitOK, "strict-serializable does not hold"
		if strict {
			want, say = ExitViolation, "serializable holds but strict-serializable does not, and --strict-exit counts that as a violation"
		}
		if err != nil || code != want || !strings.Contains(out.String(), say) {
			t.Errorf("checkLevel with StrictExit %v = %d, %v; want %d saying %q:\n%s", strict, code, err, want, say, out.String())
		}
	}
}

// TestRunCommandProgressHooks: Recorded is called once the workload stops and before the
// run's summary is printed, and each level's check gets its progress callback, which is
// told of the check's stages at that level, and is done before its report is printed: a
// terminal's bar and stage line are gone before the text they would be glued to.
func TestRunCommandProgressHooks(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	var stages []string
	o := Options{Txns: 300, Seed: 3, Check: []string{"serializable", "snapshot-isolation"},
		Progress: func(done, aborted, total int, _ time.Duration) {},
		Recorded: func() { out.WriteString("<recorded>\n") },
		Checking: func(l check.Level) (func(check.Progress), func()) {
			fmt.Fprintf(&out, "<checking %s>\n", l)
			return func(p check.Progress) {
					if !p.Ended {
						stages = append(stages, l.String()+" "+p.Stage.String())
					}
				}, func() {
					fmt.Fprintf(&out, "<checked %s>\n", l)
				}
		}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, err := RunCommand(ctx, o, &out, &out)
	if err != nil || code == ExitError {
		t.Fatalf("RunCommand = %d, %v:\n%s", code, err, out.String())
	}
	s := out.String()
	order := []string{"<recorded>", "recorded ", "<checking serializable>", "<checked serializable>", "serializable, checked by", "<checking snapshot-isolation>", "<checked snapshot-isolation>", "snapshot-isolation, checked by"}
	at := 0
	for _, want := range order {
		i := strings.Index(s[at:], want)
		if i < 0 {
			t.Fatalf("%q is not where it should be (after %q) in:\n%s", want, s[:at], s)
		}
		at += i + len(want)
	}
	if len(stages) == 0 || !strings.HasPrefix(stages[0], "serializable basic checks") {
		t.Errorf("stages the checks reported: %q", stages)
	}
}
