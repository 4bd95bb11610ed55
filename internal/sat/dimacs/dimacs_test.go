package dimacs

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/internal/sat"
)

func TestRead(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *CNF
		err  error
	}{
		{"simple", "c x\np cnf 3 2\n1 -2 0\n2 3 0\n", &CNF{3, [][]int{{1, -2}, {2, 3}}}, nil},
		{"multiline", "p cnf 3 1\n1\n-2\n 3 0", &CNF{3, [][]int{{1, -2, 3}}}, nil},
		{"empty clause", "p cnf 1 1\n0\n", &CNF{1, [][]int{nil}}, nil},
		{"percent", "p cnf 1 1\n1 0\n%\n0\n", &CNF{1, [][]int{{1}}}, nil},
		{"crlf", "p cnf 2 1\r\n1 2 0\r\n", &CNF{2, [][]int{{1, 2}}}, nil},
		{"no header", "1 2 0\n", nil, ErrHeader},
		{"bad header", "p dnf 1 1\n1 0\n", nil, ErrHeader},
		{"two headers", "p cnf 1 0\np cnf 1 0\n", nil, ErrHeader},
		{"bad literal", "p cnf 1 1\n1x 0\n", nil, ErrLiteral},
		{"range", "p cnf 1 1\n2 0\n", nil, ErrRange},
		{"count", "p cnf 1 2\n1 0\n", nil, ErrCount},
		{"trailing", "p cnf 1 1\n1\n", nil, ErrTrailing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Read(strings.NewReader(tt.in))
			if !errors.Is(err, tt.err) {
				t.Fatalf("Read(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Read(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	_, err := Read(strings.NewReader("p cnf 1 1\n\n\nz 0\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4 {
		t.Errorf("Read error = %v, want a ParseError at line 4", err)
	}
}

// TestRunCommand solves every fixture in testdata, plain and gzipped; the
// name says the answer (-sat or -unsat). A SAT answer's model is checked.
func TestRunCommand(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.cnf")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(data)
		zw.Close()
		wantCode := ExitSat
		if strings.HasSuffix(f, "-unsat.cnf") {
			wantCode = ExitUnsat
		}
		for name, in := range map[string][]byte{"plain": data, "gzip": gz.Bytes()} {
			t.Run(filepath.Base(f)+"/"+name, func(t *testing.T) {
				var out bytes.Buffer
				code, err := RunCommand(context.Background(), bytes.NewReader(in), &out, CommandOptions{Stats: true})
				if err != nil || code != wantCode {
					t.Fatalf("RunCommand = %d, %v, want %d\n%s", code, err, wantCode, out.String())
				}
				if code == ExitSat {
					cnf, _ := Read(bytes.NewReader(data))
					checkModel(t, cnf, out.String())
				}
				if !strings.Contains(out.String(), "c conflicts ") {
					t.Errorf("no statistics in output:\n%s", out.String())
				}
			})
		}
	}
}

// checkModel parses the v lines of out and checks them against cnf.
func checkModel(t *testing.T, cnf *CNF, out string) {
	t.Helper()
	val := map[int]bool{}
	ended := false
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "v") {
			continue
		}
		if len(line) > 80 {
			t.Errorf("v line longer than 80 characters: %q", line)
		}
		for _, f := range strings.Fields(line)[1:] {
			x, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("bad v line %q", line)
			}
			if x == 0 {
				ended = true
				continue
			}
			val[x] = true
		}
	}
	if !ended || len(val) != cnf.Vars {
		t.Fatalf("model has %d literals (ended %v), want %d", len(val), ended, cnf.Vars)
	}
	for _, c := range cnf.Clauses {
		ok := false
		for _, x := range c {
			ok = ok || val[x]
		}
		if !ok {
			t.Fatalf("model falsifies %v", c)
		}
	}
}

func TestRunCommandUnknownAndErrors(t *testing.T) {
	php, err := os.ReadFile("testdata/php-6-5-unsat.cnf")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code, err := RunCommand(context.Background(), bytes.NewReader(php), &out,
		CommandOptions{Solver: sat.Options{ConflictBudget: 1}})
	if code != ExitUnknown || err != nil || !strings.HasPrefix(out.String(), "s UNKNOWN\nc reason: ") {
		t.Errorf("RunCommand with budget = %d, %v, %q; want UNKNOWN with a reason", code, err, out.String())
	}
	out.Reset()
	code, err = RunCommand(context.Background(), strings.NewReader("p cnf 1 1\n2 0\n"), &out, CommandOptions{})
	var pe *ParseError
	if code != ExitError || !errors.As(err, &pe) || out.Len() != 0 {
		t.Errorf("RunCommand(bad input) = %d, %v, %q; want 2 and a ParseError", code, err, out.String())
	}
	code, err = RunCommand(context.Background(), strings.NewReader("\x1f\x8bnot gzip"), &out, CommandOptions{})
	if code != ExitError || err == nil {
		t.Errorf("RunCommand(bad gzip) = %d, %v; want 2 and an error", code, err)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	cnf := &CNF{Vars: 4, Clauses: [][]int{{1, -4}, nil, {2, 3, -1}}}
	var b bytes.Buffer
	if err := Write(&b, cnf); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cnf, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

// FuzzDIMACS checks that Read never panics and that what it accepts
// survives a Write/Read round trip, and that Load accepts it.
func FuzzDIMACS(f *testing.F) {
	for _, s := range []string{"p cnf 3 2\n1 -2 0\n2 3 0\n", "c\np cnf 1 1\n0\n", "p cnf 2 1\n1\n-2 0 %", "p cnf 0 0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cnf, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := Write(&b, cnf); err != nil {
			t.Fatal(err)
		}
		again, err := Read(&b)
		if err != nil {
			t.Fatalf("re-reading written CNF: %v\n%s", err, b.String())
		}
		if diff := cmp.Diff(cnf, again); diff != "" {
			t.Fatalf("round trip mismatch (-want +got):\n%s", diff)
		}
		if cnf.Vars <= 1000 {
			if err := Load(sat.New(sat.Options{}), cnf); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func ExampleRunCommand() {
	in := strings.NewReader("p cnf 2 2\n1 2 0\n-1 0\n")
	code, err := RunCommand(context.Background(), in, os.Stdout, CommandOptions{})
	fmt.Println(code, err)
	// Output:
	// s SATISFIABLE
	// v -1 2 0
	// 10 <nil>
}
