// Command satbench generates CNF benchmark files and compares isovet's SAT
// solver with another solver (Debian's minisat) on them.
//
//	go run ./bench/sat gen DIR            write the suites into DIR
//	go run ./bench/sat solve FILE         solve FILE with isovet (like `isovet sat`)
//	go run ./bench/sat compare DIR [-minisat PATH] [-timeout 60s] [-self BIN]
//
// compare runs both solvers as subprocesses on every DIR/*.cnf, one file at a
// time, checks that they agree, and prints a Markdown table with per-suite
// medians of the CPU-time ratio isovet/minisat. CPU time (user + system of
// the child) rather than wall time is compared because benchmark machines
// are shared; times below 1 ms count as 1 ms. Runs where either solver
// timed out are listed but left out of the medians.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/isovet/isovet/internal/sat/dimacs"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: satbench gen DIR | solve FILE | compare DIR [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2])
	case "solve":
		var code int
		code, err = solve(os.Args[2])
		if err == nil {
			os.Exit(code)
		}
	case "compare":
		err = compare(os.Args[2], os.Args[3:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "satbench:", err)
		os.Exit(2)
	}
}

func solve(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 2, err
	}
	defer f.Close()
	return dimacs.RunCommand(context.Background(), f, os.Stdout, dimacs.CommandOptions{NoModel: true, Stats: true})
}

// gen writes random 3-SAT at ratio 4.26 (n = 200..350 step 25, 6 to 2
// seeds each, see seeds) and pigeonhole PHP(n+1, n) for n = 6..10.
func gen(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for n := 200; n <= 350; n += 25 {
		for seed := range seeds(n) {
			if err := writeFile(filepath.Join(dir, fmt.Sprintf("uf3-n%d-s%d.cnf", n, seed)), random3SAT(n, seed)); err != nil {
				return err
			}
		}
	}
	for n := 6; n <= 10; n++ {
		if err := writeFile(filepath.Join(dir, fmt.Sprintf("php-n%02d.cnf", n)), pigeonhole(n)); err != nil {
			return err
		}
	}
	return nil
}

// random3SAT is a random 3-SAT formula over n variables with round(4.26 n)
// clauses of three distinct variables, from the PCG seeded with (n, seed).
func random3SAT(n, seed int) *dimacs.CNF {
	m := int(4.26*float64(n) + 0.5)
	r := rand.New(rand.NewPCG(uint64(n), uint64(seed)))
	cnf := &dimacs.CNF{Vars: n}
	for range m {
		var c []int
		for len(c) < 3 {
			v := 1 + r.IntN(n)
			if slices.Contains(c, v) || slices.Contains(c, -v) {
				continue
			}
			if r.IntN(2) == 0 {
				v = -v
			}
			c = append(c, v)
		}
		cnf.Clauses = append(cnf.Clauses, c)
	}
	return cnf
}

// pigeonhole is PHP(n+1, n): every one of n+1 pigeons sits in one of n
// holes, and no hole holds two (unsatisfiable).
func pigeonhole(n int) *dimacs.CNF {
	x := func(p, h int) int { return p*n + h + 1 }
	cnf := &dimacs.CNF{Vars: n * (n + 1)}
	for p := 0; p <= n; p++ {
		var c []int
		for h := range n {
			c = append(c, x(p, h))
		}
		cnf.Clauses = append(cnf.Clauses, c)
	}
	for h := range n {
		for p := 0; p <= n; p++ {
			for q := p + 1; q <= n; q++ {
				cnf.Clauses = append(cnf.Clauses, []int{-x(p, h), -x(q, h)})
			}
		}
	}
	return cnf
}

// seeds is the number of instances of size n: hard UNSAT instances at 350
// variables take minutes, so larger sizes get fewer.
func seeds(n int) int {
	switch {
	case n <= 250:
		return 6
	case n <= 300:
		return 4
	}
	return 2
}

func writeFile(path string, cnf *dimacs.CNF) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := dimacs.Write(f, cnf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type result struct {
	answer string
	secs   float64 // CPU time (user + system) of the process
	wall   float64
}

// run executes a solver and returns its answer line and wall time.
func run(timeout time.Duration, name string, args ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start).Seconds()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return result{}, err
	}
	secs := wall
	if ps := cmd.ProcessState; ps != nil {
		secs = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	if ctx.Err() != nil {
		return result{"TIMEOUT", secs, wall}, nil
	}
	return result{answer(out), secs, wall}, nil
}

// answer is the last answer line of a solver's output: the DIMACS "s ..."
// line or minisat's own; UNKNOWN when there is none.
func answer(out []byte) string {
	ans := "UNKNOWN"
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "s "):
			ans = strings.TrimPrefix(line, "s ")
		case line == "SATISFIABLE" || line == "UNSATISFIABLE" || line == "INDETERMINATE":
			ans = line // minisat's own format
		}
	}
	return ans
}

func compare(dir string, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	minisat := fs.String("minisat", "/usr/bin/minisat", "reference solver")
	self := fs.String("self", "", "isovet solver binary (default: this binary's solve command)")
	timeout := fs.Duration("timeout", 120*time.Second, "per-run timeout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	me := *self
	if me == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		me = exe
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.cnf"))
	if err != nil {
		return err
	}
	slices.Sort(files)
	ratios := map[string][]float64{}
	fmt.Println("| file | answer | isovet CPU s | minisat CPU s | ratio |")
	fmt.Println("|---|---|---:|---:|---:|")
	for _, f := range files {
		if err := compareFile(f, *timeout, me, *minisat, ratios); err != nil {
			return err
		}
	}
	printMedians(ratios)
	return nil
}

// compareFile runs both solvers on the file f, checks that they agree,
// prints its row and adds its ratio to its suite's and family's unless a
// solver timed out.
func compareFile(f string, timeout time.Duration, me, minisat string, ratios map[string][]float64) error {
	a, err := run(timeout, me, "solve", f)
	if err != nil {
		return err
	}
	b, err := run(timeout, minisat, "-verb=0", f)
	if err != nil {
		return err
	}
	timedOut := a.answer == "TIMEOUT" || b.answer == "TIMEOUT"
	if a.answer != b.answer && !timedOut {
		return fmt.Errorf("%s: isovet says %s, minisat says %s", f, a.answer, b.answer)
	}
	ratio := max(a.secs, 0.001) / max(b.secs, 0.001)
	if !timedOut {
		suite, family := suiteOf(f)
		ratios[suite] = append(ratios[suite], ratio)
		ratios["all-"+family] = append(ratios["all-"+family], ratio)
	}
	answer := a.answer
	if b.answer == "TIMEOUT" {
		answer += " (minisat TIMEOUT)"
	}
	fmt.Printf("| %s | %s | %.3f | %.3f | %.2f |\n", filepath.Base(f), answer, a.secs, b.secs, ratio)
	return nil
}

// suiteOf names the suite of a generated file (uf3-n200, php) and its
// family (uf3, php).
func suiteOf(f string) (suite, family string) {
	suite = strings.SplitN(filepath.Base(f), "-", 2)[0]
	if strings.HasPrefix(suite, "uf3") {
		suite = strings.Join(strings.SplitN(filepath.Base(f), "-", 3)[:2], "-")
	}
	return suite, strings.SplitN(suite, "-", 2)[0]
}

// printMedians prints the table of median ratios, by suite name.
func printMedians(ratios map[string][]float64) {
	fmt.Println()
	fmt.Println("| suite | files | median ratio isovet/minisat |")
	fmt.Println("|---|---:|---:|")
	for _, k := range slices.Sorted(maps.Keys(ratios)) {
		rs := ratios[k]
		slices.Sort(rs)
		med := rs[len(rs)/2]
		if len(rs)%2 == 0 {
			med = (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
		}
		fmt.Printf("| %s | %d | %.2f |\n", k, len(rs), med)
	}
}
