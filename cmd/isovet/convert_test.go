package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/isovet/isovet/format/dbcop"
)

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func writeInput(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConvertInitialStateNeedsLossy: the native history says every key starts at 0;
// Chronos and Elle cannot write that, so convert refuses, and with --lossy writes it and
// names the flag that restores it; the check of the output with that flag agrees with the
// check of the input.
func TestConvertInitialStateNeedsLossy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeInput(t, dir, "h.jsonl", `{"isovet":1,"initial":0}
{"s":1,"sts":[1,0],"cts":[2,0],"ops":[["r",1,0],["w",1,5]]}
{"s":2,"sts":[3,0],"cts":[4,0],"ops":[["r",1,5],["w",2,7]]}
`)
	for _, to := range []string{"chronos", "elle-edn", "elle-json"} {
		out := filepath.Join(dir, "h."+to)
		code, _, stderr := runCLI(t, "convert", in, "--to", to, "-o", out)
		if code != exitUsage || !strings.Contains(stderr, "initial-value: 1 reads") || !strings.Contains(stderr, "--lossy") {
			t.Errorf("convert --to %s: exit %d, stderr %q; want 2 naming the initial value and --lossy", to, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("convert --to %s refused but left %s", to, out)
		}
		code, _, stderr = runCLI(t, "convert", in, "--to", to, "-o", out, "--lossy")
		if code != 0 || !strings.Contains(stderr, "1 starts at 0 here, at nil in the format; check the output with --initial-value 0") {
			t.Errorf("convert --to %s --lossy: exit %d, stderr %q; want 0 and the warning", to, code, stderr)
		}
	}
	code, _, stderr := runCLI(t, "convert", in, "--to", "native", "-o", filepath.Join(dir, "copy.jsonl"))
	if code != 0 || stderr != "" {
		t.Errorf("convert --to native: exit %d, stderr %q; want 0 and no warning", code, stderr)
	}
	out := filepath.Join(dir, "h.chronos")
	if code, stdout, _ := runCLI(t, "check", "--method", "timestamp", "--level", "snapshot-isolation", "--initial-value", "0", out); code != 0 {
		t.Errorf("check of the Chronos copy with --initial-value 0: exit %d\n%s", code, stdout)
	}
	if code, _, _ := runCLI(t, "check", "--method", "timestamp", "--level", "snapshot-isolation", out); code != 1 {
		t.Errorf("check of the Chronos copy without the flag: exit %d, want 1 (the read of 0 has no writer)", code)
	}
}

// TestConvertKeepsTextInitialTransaction: IsoVista's pg_ser_bug.txt writes its initial state
// as transaction 0, which the text reader reads as the initial state (every key 0, per key).
// Written back as text, the initial state is the format's own 0, so nothing is lost and no
// warning is due; the copy still fails serializability, as the original does.
func TestConvertKeepsTextInitialTransaction(t *testing.T) {
	t.Parallel()
	in := filepath.Join("..", "..", "format", "text", "testdata", "pg_ser_bug.txt")
	out := filepath.Join(t.TempDir(), "copy.txt")
	code, _, stderr := runCLI(t, "convert", in, "--to", "text", "-o", out)
	if code != 0 || stderr != "" {
		t.Fatalf("convert --to text: exit %d, stderr %q; want 0 and no warning", code, stderr)
	}
	for _, p := range []string{in, out} {
		if code, stdout, _ := runCLI(t, "check", "--level", "serializable", p); code != 1 || !strings.Contains(stdout, "G2-item") {
			t.Errorf("check %s: exit %d, want 1 with a G2-item\n%s", p, code, stdout)
		}
	}
}

// vboxLike is a history whose reads name their writers and whose two writers wrote the
// same value (as Vbox logs do). T3 read T1's x=1 after T2, which ended before T3 began,
// overwrote it: a stale read, not strict serializable. Matched by value, the read could
// come from T2, and the history passes.
const vboxLike = `{"isovet":1}
{"s":1,"id":"T1","t":[0,10],"ops":[["w","x",1]]}
{"s":2,"id":"T2","t":[20,30],"ops":[["w","x",1]]}
{"s":3,"id":"T3","t":[40,50],"ops":[["r","x",1,{"src":[0,0]}]]}
`

// TestConvertRefusesLoss: each kind of loss refuses with exit 2, names what and how much
// with an example, and leaves no output file (nor a temporary one) behind; --lossy writes
// and says what it dropped; an existing output file survives a refusal untouched.
func TestConvertRefusesLoss(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, to, src string
		says          []string // in the refusal
		drops         string   // in the --lossy warning
	}{
		{"sources", "elle-edn", vboxLike,
			[]string{"read-sources: 1 reads name their writer", "txn T3 reads x=1 from txn T1 op 0; 2 writes of that value"},
			"the reads are matched to writers by value"},
		{"aborted in chronos", "chronos", `{"isovet":1}
{"s":1,"o":"a","sts":[1,0],"cts":[2,0],"ops":[["w",1,5]]}
{"s":2,"sts":[3,0],"cts":[4,0],"ops":[["w",1,6]]}
`, []string{"aborted: 1 transactions aborted (e.g. txn T0 aborted)"}, "aborted: 1 transactions aborted (e.g. txn T0 aborted): left out"},
		{"failed ops", "elle-json", `{"isovet":1}
{"s":1,"ops":[["w",1,5,{"failed":true}],["w",2,5]]}
`, []string{"failed-ops: 1 operations are marked as failed (e.g. txn T0 op 0, a write of 1)"}, "left out (a failed statement did not take effect)"},
		{"client time", "chronos", `{"isovet":1}
{"s":1,"t":[1,2],"sts":[1,0],"cts":[2,0],"ops":[["w",1,5]]}
`, []string{"client-time: 1 transactions carry a client time interval"}, "client-time"},
		{"predicates", "elle-edn", `{"isovet":1}
{"s":1,"ops":[["w","x",1]]}
{"s":2,"ops":[["pr",{"expr":"v > 0"},[["x",1]]]]}
`, []string{"predicates: 1 operations are predicate reads or writes (e.g. txn T1 op 0 is a pred-read)"}, "predicates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in := writeInput(t, dir, "in.jsonl", tc.src)
			out := filepath.Join(dir, "out")
			code, stdout, stderr := runCLI(t, "convert", in, "--to", tc.to, "-o", out)
			if code != exitUsage {
				t.Errorf("exit %d, want 2; stderr %q", code, stderr)
			}
			for _, s := range append(tc.says, "nothing was written", "--lossy") {
				if !strings.Contains(stderr, s) {
					t.Errorf("refusal does not say %q:\n%s", s, stderr)
				}
			}
			if stdout != "" {
				t.Errorf("refusal wrote to stdout: %q", stdout)
			}
			if got := dirEntries(t, dir); len(got) != 1 {
				t.Errorf("after the refusal the directory holds %v, want only in.jsonl", got)
			}
			// Without -o nothing reaches stdout either.
			if code, stdout, _ := runCLI(t, "convert", in, "--to", tc.to); code != exitUsage || stdout != "" {
				t.Errorf("to stdout: exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			// An existing file survives a refusal.
			if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			runCLI(t, "convert", in, "--to", tc.to, "-o", out)
			if b, _ := os.ReadFile(out); string(b) != "old" {
				t.Errorf("a refusal changed the existing output file to %q", b)
			}
			code, _, stderr = runCLI(t, "convert", in, "--to", tc.to, "-o", out, "--lossy")
			if code != 0 || !strings.Contains(stderr, "written without it (--lossy)") || !strings.Contains(stderr, tc.drops) {
				t.Errorf("--lossy: exit %d, stderr %q; want 0 and a warning saying %q", code, stderr, tc.drops)
			}
			if b, _ := os.ReadFile(out); len(b) == 0 || string(b) == "old" {
				t.Errorf("--lossy did not write the output: %q", b)
			}
			if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("the replaced file lost its mode: %v %v", st.Mode(), err)
			}
			if code, _, stderr := runCLI(t, "stat", out); code != 0 {
				t.Errorf("the --lossy output does not read back: %s", stderr)
			}
			if got := dirEntries(t, dir); len(got) != 2 {
				t.Errorf("after --lossy the directory holds %v, want in.jsonl and out", got)
			}
			if tc.name == "sources" {
				// Why it refuses: the verdict changes.
				if code, _, _ := runCLI(t, "check", "--level", "strict-serializable", in); code != exitViolation {
					t.Errorf("check of the input: exit %d, want 1", code)
				}
				if code, _, _ := runCLI(t, "check", "--level", "strict-serializable", out); code != exitOK {
					t.Errorf("check of the lossy output: exit %d, want 0 (the sources were what failed it)", code)
				}
			}
		})
	}
}

// TestConvertCannotExpress: what no drop can fix (string keys in the text format) refuses
// even with --lossy.
func TestConvertCannotExpress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeInput(t, dir, "in.jsonl", `{"isovet":1,"initial":0}
{"s":1,"ops":[["w","x",5]]}
`)
	code, _, stderr := runCLI(t, "convert", in, "--to", "text", "-o", filepath.Join(dir, "out.txt"), "--lossy")
	if code != exitUsage || !strings.Contains(stderr, "non-integers: 1 operations have a key or value that is not an integer") || !strings.Contains(stderr, "not even with --lossy") {
		t.Errorf("exit %d, stderr %q; want 2 naming the string key", code, stderr)
	}
	if got := dirEntries(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %v, want only in.jsonl", got)
	}
}

// TestConvertVboxSourcesKeepVerdict is the measured case: a Vbox log whose reads name
// writers of a repeated value passed strict serializability once converted to Elle, while
// the original fails it. Convert now refuses; with --lossy it says the sources were
// dropped.
func TestConvertVboxSourcesKeepVerdict(t *testing.T) {
	t.Parallel()
	dir := sharedData(t)
	in := filepath.Join(dir, "vbox", "coo", "rat_sda_intermediate_read")
	out := filepath.Join(t.TempDir(), "h.edn")
	code, _, stderr := runCLI(t, "convert", in, "--to", "elle-edn", "-o", out)
	if code != exitUsage || !strings.Contains(stderr, "read-sources: 2 reads") {
		t.Fatalf("exit %d, stderr %q; want 2 naming the 2 reads whose sources would be lost", code, stderr)
	}
	code, _, stderr = runCLI(t, "convert", in, "--to", "elle-edn", "-o", out, "--lossy")
	if code != 0 || !strings.Contains(stderr, "the reads are matched to writers by value") {
		t.Fatalf("--lossy: exit %d, stderr %q", code, stderr)
	}
}

// TestConvertOutputTargets: -o through a symbolic link replaces the link's target (the
// link stays), a directory is an input error, and a device is written directly.
func TestConvertOutputTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeInput(t, dir, "in.jsonl", `{"isovet":1}
{"s":1,"ops":[["w",1,5]]}
`)
	target := filepath.Join(dir, "target.jsonl")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if code, _, stderr := runCLI(t, "convert", in, "--to", "native", "-o", link); code != 0 {
		t.Fatalf("through a link: exit %d: %s", code, stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), `"isovet":1`) {
		t.Errorf("the link's target holds %q", b)
	}
	if code, _, stderr := runCLI(t, "convert", in, "--to", "native", "-o", dir); code != exitUsage || !strings.Contains(stderr, "is a directory") {
		t.Errorf("to a directory: exit %d, stderr %q; want 2", code, stderr)
	}
	if code, _, stderr := runCLI(t, "convert", in, "--to", "native", "-o", os.DevNull); code != 0 {
		t.Errorf("to %s: exit %d: %s", os.DevNull, code, stderr)
	}
	if got := dirEntries(t, dir); len(got) != 3 {
		t.Errorf("the directory holds %v, want in.jsonl, link.jsonl, target.jsonl", got)
	}
}

// TestConvertToDBCopAndCobra converts the write skew (dbcop) to Cobra logs and the lost
// update (Cobra) to dbcop and back, and checks that each copy gives the original's verdict
// at a level it fails and at one it passes.
func TestConvertToDBCopAndCobra(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		in, to, out  string
		fails, holds string // levels
	}{
		{"dbcop-write-skew", "cobra", "skew-cobra", "serializable", "snapshot-isolation"},
		{"cobra-lost-update", "dbcop", "lost.bincode", "snapshot-isolation", "read-committed"},
		{"cobra-lost-update", "cobra", "lost-cobra", "snapshot-isolation", "read-committed"},
		{"dbcop-write-skew", "dbcop", "skew.bincode", "serializable", "snapshot-isolation"},
	}
	for _, tc := range tests {
		in := filepath.Join("..", "..", "testdata", "readers", tc.in)
		out := filepath.Join(dir, tc.out)
		code, stdout, stderr := runCLI(t, "convert", in, "--to", tc.to, "-o", out)
		if code != 0 || stdout != "" || stderr != "" {
			t.Errorf("convert %s --to %s: exit %d, stdout %q, stderr %q; want 0 and silence", tc.in, tc.to, code, stdout, stderr)
			continue
		}
		for _, p := range []string{in, out} {
			if code, stdout, _ := runCLI(t, "check", "--level", tc.fails, p); code != exitViolation {
				t.Errorf("check --level %s %s: exit %d, want 1\n%s", tc.fails, p, code, stdout)
			}
			if code, stdout, _ := runCLI(t, "check", "--level", tc.holds, p); code != exitOK {
				t.Errorf("check --level %s %s: exit %d, want 0\n%s", tc.holds, p, code, stdout)
			}
		}
	}
	if got := dirEntries(t, filepath.Join(dir, "skew-cobra")); !slices.Equal(got, []string{"T0.log", "T1.log"}) {
		t.Errorf("the Cobra copy of the write skew holds %v, want T0.log and T1.log (one per session)", got)
	}
	// The dbcop copy of the dbcop fixture is the fixture but for its header.
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "readers", "dbcop-write-skew", "history.bincode"))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile(filepath.Join(dir, "skew.bincode"))
	if err != nil {
		t.Fatal(err)
	}
	if oh, ch := headerSize(t, orig), headerSize(t, cp); !bytes.Equal(orig[oh:], cp[ch:]) {
		t.Errorf("the dbcop copy's sessions differ from the fixture's:\n% x\nwant\n% x", cp[ch:], orig[oh:])
	}
}

// headerSize is the size of a history.bincode's header.
func headerSize(t *testing.T, data []byte) int {
	t.Helper()
	h, err := dbcop.ReadHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	return 5*8 + 3*8 + len(h.Info) + len(h.Start) + len(h.End)
}

// TestConvertToCobraOutput: Cobra logs need -o DIR, a new or empty directory; anything
// else is refused (exit 2) and leaves nothing behind.
func TestConvertToCobraOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeInput(t, dir, "in.jsonl", `{"isovet":1,"initial":0}
{"s":1,"id":5,"ops":[["r",1,0],["w",1,5]]}
{"s":2,"id":6,"ops":[["r",1,5],["w",2,9]]}
`)
	if code, stdout, stderr := runCLI(t, "convert", in, "--to", "cobra"); code != exitUsage || stdout != "" || !strings.Contains(stderr, "-o DIR") {
		t.Errorf("to stdout: exit %d, stdout %q, stderr %q; want 2 asking for -o DIR", code, stdout, stderr)
	}
	full := filepath.Join(dir, "full")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	writeInput(t, full, "T9.log", "old")
	if code, _, stderr := runCLI(t, "convert", in, "--to", "cobra", "-o", full); code != exitUsage || !strings.Contains(stderr, "not empty") {
		t.Errorf("into a non-empty directory: exit %d, stderr %q; want 2", code, stderr)
	}
	if code, _, stderr := runCLI(t, "convert", in, "--to", "cobra", "-o", in); code != exitUsage || !strings.Contains(stderr, "not a directory") {
		t.Errorf("onto a file: exit %d, stderr %q; want 2", code, stderr)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{empty, filepath.Join(dir, "new")} {
		if code, _, stderr := runCLI(t, "convert", in, "--to", "cobra", "-o", out); code != 0 {
			t.Errorf("into %s: exit %d: %s", out, code, stderr)
		}
		if got := dirEntries(t, out); !slices.Equal(got, []string{"T-1.log", "T1.log", "T2.log"}) {
			t.Errorf("%s holds %v, want T-1.log (key 2 starts at 0, which no read says), T1.log, T2.log", out, got)
		}
		if code, stdout, _ := runCLI(t, "check", "--level", "serializable", out); code != exitOK {
			t.Errorf("check of %s: exit %d\n%s", out, code, stdout)
		}
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"empty", "full", "in.jsonl", "new"}) {
		t.Errorf("after the conversions the directory holds %v (a temporary directory left?)", got)
	}
}

// TestConvertToDBCopAndCobraRefuses: what dbcop or Cobra cannot hold refuses, naming it;
// with --lossy the copy leaves it out, and an aborted or unknown-outcome transaction is
// never written as committed.
func TestConvertToDBCopAndCobraRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeInput(t, dir, "in.jsonl", `{"isovet":1,"initial":0}
{"s":1,"id":1,"ops":[["w",1,5]]}
{"s":2,"id":2,"o":"a","ops":[["w",1,6]]}
{"s":3,"id":3,"o":"u","ops":[["w",1,7]]}
{"s":4,"id":4,"ops":[["r",1,5]]}
`)
	for _, tc := range []struct{ to, out, says string }{
		{"dbcop", "h.bincode", "unknown-outcome: 1 transactions"},
		{"cobra", "logs", "aborted: 1 transactions"},
	} {
		out := filepath.Join(dir, tc.out)
		code, _, stderr := runCLI(t, "convert", in, "--to", tc.to, "-o", out)
		if code != exitUsage || !strings.Contains(stderr, tc.says) || !strings.Contains(stderr, "nothing was written") {
			t.Errorf("--to %s: exit %d, stderr %q; want 2 saying %q", tc.to, code, stderr, tc.says)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--to %s refused but wrote %s", tc.to, out)
		}
		if code, _, stderr := runCLI(t, "convert", in, "--to", tc.to, "-o", out, "--lossy"); code != 0 || !strings.Contains(stderr, "left out") {
			t.Errorf("--to %s --lossy: exit %d, stderr %q", tc.to, code, stderr)
		}
		code, stdout, _ := runCLI(t, "stat", "--json", out)
		var doc struct {
			Results []struct{ Txns, Committed, Aborted, Unknown int }
		}
		if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil || len(doc.Results) != 1 {
			t.Fatalf("stat of the --to %s copy: exit %d, %v\n%s", tc.to, code, err, stdout)
		}
		st := doc.Results[0]
		// Transactions 1 and 4 commit; dbcop keeps the aborted 2; neither writes 3.
		want := struct{ Txns, Committed, Aborted, Unknown int }{3, 2, 1, 0}
		if tc.to == "cobra" {
			want = struct{ Txns, Committed, Aborted, Unknown int }{2, 2, 0, 0}
		}
		if st != want {
			t.Errorf("the --to %s copy holds %+v, want %+v", tc.to, st, want)
		}
	}
}
