package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
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
