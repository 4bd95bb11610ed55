package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs isovet in-process and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageAndInputErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.edn")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.bin")
	if err := os.WriteFile(garbage, []byte("\x00\x01\x02 not a history at all \xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown level", []string{"check", "--level", "bogus", empty}, `unknown level "bogus" (levels: read-committed,`},
		{"ambiguous level", []string{"check", "--level", "Repeatable-Read", empty}, `"repeatable-read" means different levels on different databases, so isovet does not pick one: on PostgreSQL it is snapshot isolation: check --level snapshot-isolation; on MySQL/InnoDB it is weaker`},
		{"read-uncommitted", []string{"check", "--level", "read_uncommitted", empty}, `check --level read-committed`},
		{"isolation memdb cannot honour", []string{"run", "--db", "memdb://serializable", "--isolation", "read-committed"}, "memdb takes its mode from the URL, not --isolation read-committed: drop --isolation, or run memdb://read-committed"},
		{"unknown method", []string{"check", "--method", "magic", empty}, `unknown method "magic"`},
		{"unknown flag", []string{"check", "--bogus", empty}, "unknown flag: --bogus (see isovet check --help)"},
		{"missing file", []string{"stat", filepath.Join(dir, "nope.edn")}, "no such file or directory"},
		{"empty file", []string{"stat", empty}, "empty.edn (byte 0): format: empty history: empty file: expected a history, found 0 bytes (if the history is really empty, name its format with --format and pass --allow-empty)"},
		{"empty stdin", []string{"check", "--format", "native", "-"}, "<stdin> (byte 0): native: format: empty history: expected at least one transaction, found none in 0 bytes (if the history is really empty, pass --allow-empty)"},
		{"stdin with a directory format", []string{"stat", "--format", "vbox", "-"}, "<stdin>: format: a directory format cannot read a stream: a vbox history is a directory of *.log files"},
		{"unrecognized content", []string{"check", garbage}, "garbage.bin: format: unknown format: no reader recognizes its content (supported:"},
		{"unknown format name", []string{"stat", "--format", "nosuch", garbage}, `format: unknown format "nosuch" (supported:`},
		{"no args", []string{"check"}, "requires at least 1 arg(s), only received 0"},
		{"unknown failed-statement reading", []string{"check", "--failed-statements", "maybe", empty}, `unknown --failed-statements "maybe" (readings: uncertain, rolled-back, skipped)`},
		{"convert to unwritable", []string{"convert", "--to", "nosuch", garbage}, `cannot write format "nosuch"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCLI(t, tt.args...)
			if code != exitUsage {
				t.Errorf("isovet %s: exit %d, want %d (stderr %q)", strings.Join(tt.args, " "), code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("isovet %s: stderr %q, want it to contain %q", strings.Join(tt.args, " "), stderr, tt.wantErr)
			}
		})
	}
}

func TestHelpListsLevelsAndCommands(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "check", "--help")
	if code != 0 {
		t.Fatalf("check --help: exit %d", code)
	}
	for _, want := range []string{"strict-serializable", "strong-session-snapshot-isolation", "read-committed", "Exit codes: 0 the level holds, 1 a violation"} {
		if !strings.Contains(out, want) {
			t.Errorf("check --help does not mention %q", want)
		}
	}
	code, out, _ = runCLI(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, want := range []string{"check", "convert", "stat", "formats"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help does not list %q", want)
		}
	}
}

// TestProfilesAreWritten checks that --cpu-profile and --mem-profile leave gzipped profiles
// (the pprof format) and do not change the verdict, and that an unwritable profile path is an
// input error.
func TestProfilesAreWritten(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(h, []byte(`{"isovet":1}`+"\n"+`{"s":0,"ops":[["w",1,1]]}`+"\n"+`{"s":1,"ops":[["r",1,1]]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	if code, out, errOut := runCLI(t, "check", "--cpu-profile", cpu, "--mem-profile", mem, h); code != exitOK || !strings.Contains(out, "pass") {
		t.Fatalf("check with profiles: exit %d, stdout %q, stderr %q; want a pass", code, out, errOut)
	}
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes, not a gzipped profile", filepath.Base(p), len(b))
		}
	}
	bad := filepath.Join(dir, "no", "such", "dir", "mem.pprof")
	if code, _, errOut := runCLI(t, "check", "--mem-profile", bad, h); code != exitUsage || !strings.Contains(errOut, "memory profile") {
		t.Errorf("unwritable --mem-profile: exit %d, stderr %q; want exit %d naming the memory profile", code, errOut, exitUsage)
	}
}

// TestCheckFollowsRealtime: a serializable pass of a Vbox history with a stale read says
// that strict-serializable does not hold, in prose and in JSON, and keeps exit 0 (the level
// asked for holds); --realtime-budget 0 leaves only the note that client time was ignored.
func TestCheckFollowsRealtime(t *testing.T) {
	p := filepath.Join(sharedData(t), "vbox", "coo", "wat_sda_lost_update_c1")
	code, out, stderr := runCLI(t, "check", "--level", "serializable", p)
	if code != 0 || !strings.Contains(out, "serializable, checked by ser: pass") ||
		!strings.Contains(out, "strict-serializable does not hold") || !strings.Contains(out, "stale read") {
		t.Errorf("check: exit %d, stdout:\n%s\nstderr: %s\nwant a pass that says strict-serializable does not hold (a stale read)", code, out, stderr)
	}
	code, out, _ = runCLI(t, "check", "--json", "--level", "serializable", p)
	var doc struct {
		Results []struct {
			File     string
			Verdict  string
			Followup struct {
				Level, Verdict string
				Anomaly        struct{ Kind string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Results) != 1 {
		t.Fatalf("check --json: exit %d, %v:\n%s", code, err, out)
	}
	rep := doc.Results[0]
	if rep.File != p {
		t.Errorf("check --json: file %q, want %q", rep.File, p)
	}
	if rep.Verdict != "pass" || rep.Followup.Level != "strict-serializable" || rep.Followup.Verdict != "fail" || rep.Followup.Anomaly.Kind == "" {
		t.Errorf("check --json: %+v, want a pass with a failed strict-serializable follow-up naming its anomaly", rep)
	}
	code, out, _ = runCLI(t, "check", "--realtime-budget", "0", "--level", "serializable", p)
	if code != 0 || strings.Contains(out, "does not hold") || !strings.Contains(out, "which serializable ignores") {
		t.Errorf("check --realtime-budget 0: exit %d:\n%s\nwant only the note that client time was ignored", code, out)
	}
}

// TestCheckOutWritesReports: --out writes the report as text, JSON and a web page that
// draws the anomaly, with a DOT graph and prose per anomaly.
func TestCheckOutWritesReports(t *testing.T) {
	p := filepath.Join(sharedData(t), "elle", "elle", "paper-example.edn")
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "check", "--out", out, p); code != exitViolation {
		t.Fatalf("check --out: exit %d (%s), want %d", code, stderr, exitViolation)
	}
	for _, name := range []string{"report.txt", "report.json", "report.html", "report.dot", "anomaly-01-G-single.dot", "anomaly-01-G-single.txt"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", name, err, len(b))
		}
	}
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !bytes.Contains(page, []byte("<svg")) || !bytes.Contains(page, []byte("G-single")) {
		t.Errorf("report.html draws no graph of the G-single:\n%s", page)
	}
}

// TestCheckCollection: a directory of histories (Vbox's coo/, a directory per case; Plume's
// text fixtures, a file per case) is checked history by history, with a summary, in text
// and JSON, and an unreadable member is reported without stopping the others.
func TestCheckCollection(t *testing.T) {
	data := sharedData(t)
	coo := filepath.Join(data, "vbox", "coo")
	code, out, stderr := runCLI(t, "check", "--level", "serializable", coo)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitViolation || len(lines) != 31 ||
		!strings.Contains(out, "29 histories in "+coo+" at serializable: 10 pass (10 of them not strict-serializable), 19 fail, 0 unknown") ||
		!strings.Contains(out, "wat_sda_lost_update_c1                     pass; not strict-serializable: G-single (stale-read)") {
		t.Errorf("check coo/: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
	code, out, _ = runCLI(t, "check", "--json", "--level", "serializable", coo)
	var doc struct {
		Schema  int
		Results []struct{ File, Format, Verdict string }
	}
	err := json.Unmarshal([]byte(out), &doc)
	if entries := doc.Results; err != nil || code != exitViolation || doc.Schema != 1 || len(entries) != 29 ||
		entries[0].File != filepath.Join(coo, "iat_dda_read_skew_committed") || entries[0].Format != "vbox" || entries[0].Verdict != "fail" {
		t.Errorf("check --json coo/: exit %d, %v, %d entries:\n%.400s", code, err, len(entries), out)
	}

	dir := t.TempDir()
	for _, c := range []string{"tap-e.txt", "tap-n.txt"} {
		b, err := os.ReadFile(filepath.Join(data, "plume", "testcase", "text", c))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("r(1,1,0,0)\nw(1,x,0,0)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := t.TempDir()
	code, out, _ = runCLI(t, "check", "--out", out2, "--level", "serializable", dir)
	if code != exitViolation || !strings.Contains(out, "bad.txt    unreadable:") || !strings.Contains(out, "tap-e.txt  fail: internal") ||
		!strings.Contains(out, "3 histories in "+dir+" at serializable: 1 pass, 1 fail, 0 unknown, 1 could not be checked") {
		t.Errorf("check of a directory of files: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(out2, "tap-n.txt", "report.html")); err != nil {
		t.Errorf("--out wrote no report per history: %v", err)
	}
	index, err := os.ReadFile(filepath.Join(out2, "index.html"))
	if err != nil || !bytes.Contains(index, []byte(`<a href="tap-n.txt/report.html"><code>tap-n.txt</code></a>`)) || !bytes.Contains(index, []byte("unreadable:")) {
		t.Errorf("--out index.html (%v) does not link each report and name the unreadable file:\n%s", err, index)
	}
}

// TestStatSnapshots: stat says whether a history's snapshots gave it timestamps, and why
// not when they did not.
func TestStatSnapshots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "crossed.jsonl")
	files := map[string]string{
		good: `{"isovet":1}
{"s":"load","id":700,"snap":"700:700:","ops":[["w","x",0]]}
{"s":1,"id":702,"snap":"701:701:","ops":[["r","x",0],["w","x",1]]}
{"s":2,"snap":"703:703:","ops":[["r","x",1]]}
`,
		bad: `{"isovet":1}
{"s":1,"id":10,"snap":"10:10:","ops":[["w","x",1]]}
{"s":2,"id":11,"snap":"10:10:","ops":[["w","y",1]]}
{"s":3,"snap":"10:12:11","ops":[["r","x",1]]}
{"s":4,"snap":"10:12:10","ops":[["r","y",1]]}
`,
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ path, want string }{
		{good, "db time     all txns have start/commit timestamps, derived from the snapshots"},
		{bad, "db time     none (history: snapshots do not give timestamps: the snapshots are not nested: T2's snapshot 10:12:11 sees the commit of T10 (id 10), which T3's snapshot 10:12:10, seeing as many or more committed writers, does not)"},
	} {
		code, out, stderr := runCLI(t, "stat", tt.path)
		if code != 0 || !strings.Contains(out, "snapshots   all txns have a database snapshot\n") || !strings.Contains(out, tt.want+"\n") {
			t.Errorf("stat %s: exit %d, stderr %q, output:\n%s\nwant a line %q", filepath.Base(tt.path), code, stderr, out, tt.want)
		}
	}
	code, out, _ := runCLI(t, "stat", "--json", bad)
	var doc struct {
		Results []struct {
			Snapshots   int    `json:"txns_with_db_snapshots"`
			SnapshotErr string `json:"snapshots_gave_no_timestamps"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Results) != 1 || doc.Results[0].Snapshots != 4 || !strings.Contains(doc.Results[0].SnapshotErr, "not nested") {
		t.Errorf("stat --json: exit %d, %v, %+v", code, err, doc)
	}
}

// TestCheckSeveral: several arguments (files and a directory of histories, as a shell glob
// gives) are all checked, one line each and a summary, with the worst exit: a violation
// over an unknown over a pass; an unreadable argument is named without stopping the rest.
func TestCheckSeveral(t *testing.T) {
	data := sharedData(t)
	paper := filepath.Join(data, "elle", "elle", "paper-example.edn")
	sia := filepath.Join(data, "elle", "elle", "si-without-g-single.edn")
	dir := t.TempDir()
	pass := writeInput(t, dir, "pass.jsonl", `{"isovet":1}
{"s":0,"ops":[["w",1,1]]}
{"s":1,"ops":[["r",1,1]]}
`)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeInput(t, sub, "a.jsonl", `{"isovet":1}
{"s":0,"ops":[["w",1,1]]}
`)
	writeInput(t, sub, "b.jsonl", `{"isovet":1}
{"s":0,"ops":[["w",2,1]]}
`)

	code, out, stderr := runCLI(t, "check", "--level", "snapshot-isolation", paper, sia, pass, sub)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitViolation || len(lines) != 7 || !strings.HasPrefix(lines[0], paper+" ") || !strings.Contains(lines[0], "fail") ||
		!strings.HasPrefix(lines[3], filepath.Join(sub, "a.jsonl")+" ") ||
		!strings.Contains(out, "5 histories at snapshot-isolation: ") {
		t.Errorf("check a.edn b.edn c.jsonl dir/: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}

	code, out, _ = runCLI(t, "check", pass, filepath.Join(sub, "a.jsonl"))
	if code != exitOK || !strings.Contains(out, "2 histories at serializable: 2 pass, 0 fail, 0 unknown") {
		t.Errorf("check of two passing files: exit %d:\n%s", code, out)
	}

	missing := filepath.Join(dir, "missing.edn")
	code, out, _ = runCLI(t, "check", pass, missing)
	if code != exitUsage || !strings.Contains(out, "missing.edn  unreadable:") || !strings.Contains(out, "1 could not be checked") {
		t.Errorf("check of a file and a missing one: exit %d, want %d:\n%s", code, exitUsage, out)
	}
	code, _, _ = runCLI(t, "check", "--level", "snapshot-isolation", paper, missing)
	if code != exitViolation {
		t.Errorf("check of a violation and a missing file: exit %d, want %d (a violation comes first)", code, exitViolation)
	}

	out2 := t.TempDir()
	rel := filepath.Join("..", "pass.jsonl")
	t.Chdir(sub)
	code, _, stderr = runCLI(t, "check", "--out", out2, rel, "a.jsonl")
	if code != exitOK {
		t.Fatalf("check --out of two files: exit %d: %s", code, stderr)
	}
	for _, p := range []string{filepath.Join(out2, "__", "pass.jsonl", "report.json"), filepath.Join(out2, "a.jsonl", "report.html"), filepath.Join(out2, "index.html")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("check --out of several files: %v", err)
		}
	}
}
