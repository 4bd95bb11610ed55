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

	"isovet/check"
	"isovet/format"
	"isovet/history"
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
	var ls []check.Level
	for _, n := range strings.Split(*levels, ",") {
		l, err := check.ParseLevel(n)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ls = append(ls, l)
	}
	hists, err := histories(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	readings := []history.FailedReading{history.FailedUncertain, history.FailedRolledBack, history.FailedSkipped}
	type cell struct{ pass, fail, unknown, errs int }
	type row struct {
		folder  string
		level   check.Level
		n       int // histories
		flagged int // with a transaction logged committed that holds a failed statement
		by      [3]cell
	}
	rows := map[string]*row{}
	start := time.Now()
	for i, p := range hists {
		h, _, err := format.Open(filepath.Join(root, p), format.Auto, format.Options{})
		if err != nil {
			fmt.Printf("%s\t-\t-\terror: %v\n", p, err)
			continue
		}
		folder := filepath.Dir(filepath.Dir(p))
		for _, l := range ls {
			key := folder + "\x00" + l.String()
			r := rows[key]
			if r == nil {
				r = &row{folder: folder, level: l}
				rows[key] = r
			}
			r.n++
			var verdicts []string
			for ri, reading := range readings {
				ctx, cancel := context.WithTimeout(context.Background(), *timeout)
				rep, err := check.Check(ctx, h, l, check.Options{FailedStatements: reading, MaxAnomalies: 1})
				cancel()
				c := &r.by[ri]
				v := "error"
				switch {
				case err != nil && rep == nil:
					c.errs++
				case rep.Verdict == check.Pass:
					c.pass++
					v = "pass"
				case rep.Verdict == check.Fail:
					c.fail++
					v = "fail:" + rep.Anomalies[0].Kind.String()
				default:
					c.unknown++
					v = "unknown"
				}
				if ri == 0 && rep != nil && rep.Failed != nil && len(rep.Failed.Committed) > 0 {
					r.flagged++
				}
				verdicts = append(verdicts, v)
			}
			fmt.Printf("%s\t%s\t%s\n", p, l, strings.Join(verdicts, "\t"))
		}
		if (i+1)%200 == 0 {
			fmt.Fprintf(os.Stderr, "%d/%d histories, %v\n", i+1, len(hists), time.Since(start).Round(time.Second))
		}
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nfolder\tlevel\thistories\twith failed statements\tuncertain pass/fail/unknown\trolled-back\tskipped")
	for _, k := range keys {
		r := rows[k]
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
	fmt.Fprintf(os.Stderr, "%d histories in %v\n", len(hists), time.Since(start).Round(time.Millisecond))
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
