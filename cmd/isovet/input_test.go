package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The test binary runs as isovet itself when ISOVET_TEST_AS_CLI=1, for the tests that need
// a process of its own: a history read from the process's standard input as /dev/stdin.
func init() {
	if os.Getenv("ISOVET_TEST_AS_CLI") == "1" {
		ctx, stop := interruptible(context.Background()) // as main does
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
}

// runProcess runs isovet as a child process with the given standard input and returns
// its exit code, stdout and stderr.
func runProcess(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "ISOVET_TEST_AS_CLI=1")
	cmd.Stdin = stdin
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	case err != nil:
		t.Fatalf("running isovet %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String(), errOut.String()
}

// runWithPipe runs isovet in-process while a goroutine copies the file p into the write end
// of a pipe; args gets the pipe's read end, as stdin (nil: the pipe is given as standard
// input) or as a path naming it (/dev/fd/N, what a shell's <(...) passes).
func runWithPipe(t *testing.T, p string, asPath bool, args ...string) (int, string, string, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := feed(w, p)
	arg, name := "-", stdinName
	if asPath {
		arg = fmt.Sprintf("/dev/fd/%d", r.Fd())
		name = arg
	}
	var out, errOut bytes.Buffer
	code := runWithStdin(context.Background(), append(args, arg), r, &out, &errOut)
	r.Close() // a reader that stopped early must not leave the writer blocked
	if err := <-done; err != nil && !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("feeding the pipe: %v", err)
	}
	return code, out.String(), errOut.String(), name
}

// feed copies the file p into w in a goroutine and closes w; the channel gets the result.
func feed(w io.WriteCloser, p string) <-chan error {
	done := make(chan error, 1)
	go func() {
		f, err := os.Open(p)
		if err == nil {
			_, err = io.Copy(w, f)
			f.Close()
		}
		w.Close()
		done <- err
	}()
	return done
}

// runWithFIFO runs isovet in-process on a FIFO that a goroutine fills with the file p.
func runWithFIFO(t *testing.T, p string, args ...string) (int, string, string, string) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		done <- <-feed(w, p)
	}()
	code, out, errOut := runCLI(t, append(args, fifo)...)
	// Had isovet not opened the FIFO, the writer would still wait for a reader: open and
	// close one, which ends its write with EPIPE.
	if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		r.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("feeding the FIFO: %v", err)
	}
	return code, out, errOut, fifo
}

// outcome is what a run says, with the name it gave the history replaced and timings
// dropped, so that runs on the same history compare equal.
type outcome struct {
	Code   int
	Report map[string]any
	Stderr string
}

func normalize(t *testing.T, code int, stdout, stderr, name string) outcome {
	t.Helper()
	o := outcome{Code: code, Stderr: strings.ReplaceAll(stderr, name, "HISTORY")}
	if strings.TrimSpace(stdout) == "" {
		return o
	}
	quoted, _ := json.Marshal(name) // "<stdin>" is "\u003cstdin\u003e" in JSON
	stdout = strings.ReplaceAll(stdout, string(quoted[1:len(quoted)-1]), "HISTORY")
	if err := json.Unmarshal([]byte(strings.ReplaceAll(stdout, name, "HISTORY")), &o.Report); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	results, _ := o.Report["results"].([]any) // check's document; stat's is flat
	for _, r := range append(results, any(o.Report)) {
		r, _ := r.(map[string]any)
		if s, ok := r["stats"].(map[string]any); ok {
			delete(s, "elapsed_ns")
			delete(s, "phases")
		}
	}
	return o
}

// TestStdinPipesAndFIFOsReadAsTheFile: for every single-file public history, reading it
// from a pipe as -, from a pipe named /dev/fd/N (a shell's <(cat F)), from a FIFO, from
// /dev/stdin redirected from the file (isovet check /dev/stdin < F) and from /dev/stdin
// fed by a pipe (cat F | isovet check /dev/stdin) gives exactly what reading the file
// gives: the same exit code, report or error. Histories are checked at read committed;
// the 10,000-transaction VeriStrong benchmarks, slow to check, are compared by stat,
// which reads them the same way. Directory histories cannot come through a stream.
func TestStdinPipesAndFIFOsReadAsTheFile(t *testing.T) {
	dir := sharedData(t)
	n := 0
	for _, rel := range sharedHistories(t, dir) {
		p := filepath.Join(dir, rel)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			continue
		}
		n++
		args := []string{"check", "--json", "--level", "read-committed", "--realtime-budget", "0"}
		if strings.HasPrefix(rel, "bench/") {
			args = []string{"stat", "--json"}
		}
		t.Run(rel, func(t *testing.T) {
			code, out, errOut := runCLI(t, append(args, p)...)
			want := normalize(t, code, out, errOut, p)
			if code == exitUnknown {
				t.Fatalf("%s: unknown verdict, nothing to compare:\n%s", rel, out)
			}
			type run struct {
				how  string
				exec func() (int, string, string, string)
			}
			runs := []run{
				{"cat F | isovet check -", func() (int, string, string, string) { return runWithPipe(t, p, false, args...) }},
				{"isovet check <(cat F)", func() (int, string, string, string) { return runWithPipe(t, p, true, args...) }},
				{"isovet check FIFO", func() (int, string, string, string) { return runWithFIFO(t, p, args...) }},
				{"isovet check /dev/stdin < F", func() (int, string, string, string) {
					f, err := os.Open(p)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					code, out, errOut := runProcess(t, f, append(args, "/dev/stdin")...)
					return code, out, errOut, "/dev/stdin"
				}},
				{"cat F | isovet check /dev/stdin", func() (int, string, string, string) {
					r, w, err := os.Pipe()
					if err != nil {
						t.Fatal(err)
					}
					done := feed(w, p)
					code, out, errOut := runProcess(t, r, append(args, "/dev/stdin")...)
					r.Close()
					<-done
					return code, out, errOut, "/dev/stdin"
				}},
			}
			for _, r := range runs {
				code, out, errOut, name := r.exec()
				got := normalize(t, code, out, errOut, name)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s differs from isovet check F (-file +%s):\n%s", r.how, r.how, diff)
				}
			}
		})
	}
	if n < 80 {
		t.Errorf("compared %d single-file histories, want the 81 the shared data holds", n)
	}
}

// copyDir copies the regular files of src into a new directory, each through edit (the
// identity when nil), and returns the directory.
func copyDir(t *testing.T, src string, edit func(name string, b []byte) []byte) string {
	t.Helper()
	dst := t.TempDir()
	es, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b = edit(e.Name(), b)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestDirectoryHistoriesCutEmptyOrCopied: for each directory format, a public history whose
// log files are cut inside a record, emptied, or joined by a copy of one of them (under
// another name of its client, or as another client) is an input error, exit 2, naming the
// file and the byte offset (and, for a copy, both files); before, each passed or merged the
// copy silently. --allow-empty accepts the emptied one, and its pass says it is vacuous.
func TestDirectoryHistoriesCutEmptyOrCopied(t *testing.T) {
	data := sharedData(t)
	tests := []struct {
		format, src string
		cut         int // length every member is cut to
		cutWant     string
		first       string // a member that writes something
		sameClient  string // another name of first's client
		otherClient string
	}{
		{"cobra", "cobra/ser-violation/cock-G2", 100, "T0.log (byte 100): cobra: unexpected end of input: expected the 'C' record of txn", "T0.log", "T00.log", "T99.log"},
		{"viper", "plume/testcase/viper/tap-h", 20, "J24.log:1:", "J24.log", "J024.log", "J99.log"},
		{"vbox", "vbox/coo/rat_sda_dirty_read", 30, "1.log (byte 21): vbox: unexpected end of input: 'S' record needs 20 bytes after its tag, 8 left", "1.log", "01.log", "99.log"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			src := filepath.Join(data, tt.src)
			expect := func(what string, args []string, code int, wants ...string) {
				t.Helper()
				got, out, stderr := runCLI(t, args...)
				if got != code {
					t.Errorf("%s: isovet %s: exit %d, want %d\nstdout: %s\nstderr: %s", what, strings.Join(args, " "), got, code, out, stderr)
					return
				}
				for _, w := range wants {
					if !strings.Contains(stderr+out, w) {
						t.Errorf("%s: isovet %s: output does not say %q:\nstdout: %s\nstderr: %s", what, strings.Join(args, " "), w, out, stderr)
					}
				}
			}
			if code, out, stderr := runCLI(t, "check", "--level", "read-committed", src); code != 0 && code != 1 {
				t.Fatalf("the intact history: exit %d\n%s%s", code, out, stderr)
			}
			cut := copyDir(t, src, func(_ string, b []byte) []byte { return b[:min(len(b), tt.cut)] })
			empty := copyDir(t, src, func(string, []byte) []byte { return nil })
			for _, cmd := range [][]string{{"check"}, {"stat"}, {"convert", "--to", "native"}} {
				expect("cut", append(cmd, cut), exitUsage, tt.cutWant)
				expect("empty", append(cmd, empty), exitUsage, "(byte 0)", "format: empty history: expected at least one transaction in the", "--allow-empty")
				expect("empty, format named", append(cmd, "--format", tt.format, empty), exitUsage, "(byte 0): "+tt.format+": format: empty history", "pass --allow-empty")
			}
			expect("empty, allowed", []string{"check", "--allow-empty", "--format", tt.format, empty}, exitOK, "0 transactions", "the level holds vacuously")
			expect("empty, allowed", []string{"stat", "--allow-empty", "--format", tt.format, empty}, exitOK, "txns        0")

			first, err := os.ReadFile(filepath.Join(src, tt.first))
			if err != nil {
				t.Fatal(err)
			}
			for _, copyAs := range []string{tt.sameClient, tt.otherClient} {
				dir := copyDir(t, src, nil)
				if err := os.WriteFile(filepath.Join(dir, copyAs), first, 0o644); err != nil {
					t.Fatal(err)
				}
				expect("a copy as "+copyAs, []string{"check", dir}, exitUsage, "(byte ", tt.format+": duplicate log: ", tt.first, copyAs)
			}
		})
	}
}

// TestCopiedCobraLogIsRefused: copying the VeriStrong TPC-C history's T20.log to T020.log
// made a serializable history fail with a lost update of a transaction with itself; now it
// is an input error naming both files.
func TestCopiedCobraLogIsRefused(t *testing.T) {
	src := filepath.Join(sharedData(t), "bench", "veristrong-10k", "tpcc-10k")
	dir := copyDir(t, src, nil)
	b, err := os.ReadFile(filepath.Join(dir, "T20.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "T020.log"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "check", "--level", "serializable", dir)
	if code != exitUsage || !strings.Contains(stderr, "T20.log (byte 0): cobra: duplicate log: "+filepath.Join(dir, "T020.log")+" and "+filepath.Join(dir, "T20.log")+" both hold the log of client 20") {
		t.Errorf("check of tpcc-10k with T20.log copied to T020.log: exit %d\nstdout: %s\nstderr: %s\nwant exit 2 naming both files", code, out, stderr)
	}
}

// TestVacuousPassNeedsAllowEmpty: a history whose transactions all aborted passes every
// level only vacuously: without --allow-empty that is an input error saying so; with it,
// the pass stands and its report says it is vacuous.
func TestVacuousPassNeedsAllowEmpty(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "aborted.jsonl")
	if err := os.WriteFile(p, []byte("{\"isovet\":1}\n{\"s\":1,\"o\":\"a\",\"ops\":[[\"w\",1,1]]}\n{\"s\":2,\"o\":\"u\",\"ops\":[[\"r\",1,1]]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "check", p)
	if code != exitUsage || !strings.Contains(stderr, "expected a committed transaction, found none (2 transactions: 1 aborted, 1 of unknown outcome, in 2 sessions), so serializable would hold only vacuously (if that is really the history, pass --allow-empty)") {
		t.Errorf("check: exit %d, stderr %q; want exit 2 saying the pass would be vacuous", code, stderr)
	}
	code, out, _ := runCLI(t, "check", "--allow-empty", p)
	if code != exitOK || !strings.Contains(out, "the level holds vacuously") {
		t.Errorf("check --allow-empty: exit %d:\n%s\nwant a pass that says it is vacuous", code, out)
	}
	if code, _, stderr := runCLI(t, "stat", p); code != exitOK {
		t.Errorf("stat: exit %d (%s); counting a history with nothing committed is not checking it", code, stderr)
	}
}
