// Command readings checks every history under a directory at the given levels under each
// reading of failed statements (--failed-statements: uncertain, rolled-back, skipped) and
// prints one line per history and level, then a table of verdicts by folder and reading.
// It is how docs/failed-statements.md's table of VeriStrong's public corpus is made:
//
//	go run ./bench/readings -levels strong-session-serializable,strong-session-snapshot-isolation DIR
//
// A history is a file, or a directory holding history.bincode (dbcop) or log files; the
// folder a history is counted under is its path below DIR without its last two elements
// (dbcop's "<params>/hist-NNNNN").
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
)

func main() {
	levels := flag.String("levels", "strong-session-serializable,strong-session-snapshot-isolation", "levels to check, comma-separated")
	timeout := flag.Duration("timeout", time.Minute, "time limit of one check")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: readings [-levels L1,L2] [-timeout D] DIR")
		os.Exit(2)
	}
	root := flag.Arg(0)
	ls, err := parseLevels(*levels)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	hists, err := histories(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	t := table{rows: map[string]*row{}}
	start := time.Now()
	for i, p := range hists {
		h, _, err := format.Open(filepath.Join(root, p), format.Auto, format.Options{})
		if err != nil {
			fmt.Printf("%s\t-\t-\terror: %v\n", p, err)
			continue
		}
		folder := filepath.Dir(filepath.Dir(p))
		for _, l := range ls {
			verdicts := t.row(folder, l).check(h, l, *timeout)
			fmt.Printf("%s\t%s\t%s\n", p, l, strings.Join(verdicts, "\t"))
		}
		if (i+1)%200 == 0 {
			fmt.Fprintf(os.Stderr, "%d/%d histories, %v\n", i+1, len(hists), time.Since(start).Round(time.Second))
		}
	}
	t.print()
	fmt.Fprintf(os.Stderr, "%d histories in %v\n", len(hists), time.Since(start).Round(time.Millisecond))
}

// parseLevels reads the comma-separated -levels.
func parseLevels(s string) ([]check.Level, error) {
	var ls []check.Level
	for _, n := range strings.Split(s, ",") {
		l, err := check.ParseLevel(n)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// readings are the readings of failed statements every history is checked under, in the
// table's order.
var readings = []history.FailedReading{history.FailedUncertain, history.FailedRolledBack, history.FailedSkipped}

// cell counts the verdicts of one folder and level under one reading.
type cell struct{ pass, fail, unknown, errs int }

// row is one folder at one level.
type row struct {
	folder  string
	level   check.Level
	n       int // histories
	flagged int // with a transaction logged committed that holds a failed statement
	by      [3]cell
}

// table is the rows by folder and level.
type table struct {
	rows map[string]*row
}

// row is the row of folder at level l, made on first use.
func (t *table) row(folder string, l check.Level) *row {
	key := folder + "\x00" + l.String()
	r := t.rows[key]
	if r == nil {
		r = &row{folder: folder, level: l}
		t.rows[key] = r
	}
	return r
}

// check checks h at l under each reading, each within timeout, counts the verdicts in r
// and returns them as the history's line shows them.
func (r *row) check(h *history.History, l check.Level, timeout time.Duration) []string {
	r.n++
	var verdicts []string
	for ri, reading := range readings {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		rep, err := check.Check(ctx, h, l, check.Options{FailedStatements: reading, MaxAnomalies: 1})
		cancel()
		verdicts = append(verdicts, r.by[ri].add(rep, err))
		if ri == 0 && rep != nil && rep.Failed != nil && len(rep.Failed.Committed) > 0 {
			r.flagged++
		}
	}
	return verdicts
}

// add counts the outcome of one check and says it: pass, fail:<first anomaly>, unknown or
// error.
func (c *cell) add(rep *check.Report, err error) string {
	switch {
	case err != nil && rep == nil:
		c.errs++
		return "error"
	case rep.Verdict == check.Pass:
		c.pass++
		return "pass"
	case rep.Verdict == check.Fail:
		c.fail++
		return "fail:" + rep.Anomalies[0].Kind.String()
	default:
		c.unknown++
		return "unknown"
	}
}

// print writes the table, sorted by folder and level, to stdout.
func (t *table) print() {
	keys := make([]string, 0, len(t.rows))
	for k := range t.rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nfolder\tlevel\thistories\twith failed statements\tuncertain pass/fail/unknown\trolled-back\tskipped")
	for _, k := range keys {
		r := t.rows[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d", r.folder, r.level, r.n, r.flagged)
		for _, c := range r.by {
			fmt.Fprintf(tw, "\t%d/%d/%d", c.pass, c.fail, c.unknown)
			if c.errs > 0 {
				fmt.Fprintf(tw, " (%d errors)", c.errs)
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// histories lists the histories under root, relative to it, sorted: directories holding a
// history.bincode or .log files are one history each; other files are one each.
func histories(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if !d.IsDir() {
			if filepath.Base(p) == "history.bincode" || strings.HasSuffix(p, ".log") {
				return nil // counted with its directory
			}
			out = append(out, rel)
			return nil
		}
		if _, err := os.Stat(filepath.Join(p, "history.bincode")); err == nil {
			out = append(out, rel)
			return filepath.SkipDir
		}
		if logs, _ := filepath.Glob(filepath.Join(p, "*.log")); len(logs) > 0 {
			out = append(out, rel)
			return filepath.SkipDir
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}
