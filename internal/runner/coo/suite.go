package coo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/isovet/isovet/check"
)

// Levels are the levels every replayed history is checked against, when a complete checker
// for the level has landed ([check.Supported]). Strict serializability is there because
// several scenarios (the lost updates among them) overwrite with a blind write: plain
// serializability may then order the final reader before the overwriting writer, and only
// the real-time order (the reader began after both writers committed) rules that out.
var Levels = []check.Level{check.ReadCommitted, check.SnapshotIsolation, check.Serializable, check.StrictSerializable}

// Verdict is one level's check of one replayed history.
type Verdict struct {
	Level   check.Level
	Checker string
	Verdict check.Verdict
	// Kinds are the anomaly kinds reported, in report order, without repeats.
	Kinds []check.Kind
	// Report is the full report (nil when the check could not run; Err says why).
	Report *check.Report
	Err    error
}

// Summary is how the table shows the verdict: the level's name when it holds; when it
// fails, each anomaly kind reported with the further names of its first instance, e.g.
// "G-single (read-skew)", joined by " + "; "unknown", or "error".
func (v *Verdict) Summary() string {
	switch {
	case v.Err != nil:
		return "error"
	case v.Verdict == check.Pass:
		return v.Level.String()
	case v.Verdict == check.Fail && v.Report != nil:
		var parts []string
		for _, k := range v.Kinds {
			for _, a := range v.Report.Anomalies {
				if a.Kind != k {
					continue
				}
				parts = append(parts, a.Name())
				break
			}
		}
		return strings.Join(parts, " + ")
	}
	return "unknown"
}

// Cell is one replay of one script at one level on one database, with its checks.
type Cell struct {
	Script    string
	DB        string // the URL it ran against
	Isolation string
	Result    *Result // nil when the replay could not start
	Err       error   // the replay's error, if any
	Verdicts  []Verdict
}

// Verdict returns the cell's verdict at level l, or nil if it was not checked.
func (c *Cell) Verdict(l check.Level) *Verdict {
	for i := range c.Verdicts {
		if c.Verdicts[i].Level == l {
			return &c.Verdicts[i]
		}
	}
	return nil
}

// SuiteOptions configure [RunSuite].
type SuiteOptions struct {
	// DBs are the servers' URLs.
	DBs []string
	// Isolations to replay at (default [Isolations]).
	Isolations []string
	// Levels to check (default [Levels]); a level no complete checker supports is skipped.
	Levels []check.Level
	// Replay configures every replay; its Isolation and Table are set per cell.
	Replay Options
	// Parallel bounds concurrent replays per database (default 4). Replays of different
	// databases always run concurrently.
	Parallel int
	// Check options for every check.
	Check check.Options
	// Done, if set, is called once per finished cell, from the goroutine that ran it.
	Done func(*Cell)
	_    struct{}
}

// Suite is the outcome of [RunSuite].
type Suite struct {
	// Servers describes each database as "PostgreSQL 15.20", in the order of DBs.
	Servers []Server
	// Cells in order: script, then database, then isolation.
	Cells []*Cell
}

// Server is one database a suite ran against.
type Server struct {
	URL, Name, Version string
}

// RunSuite replays every script at every isolation level against every database and checks
// each history. Replays that fail are cells with Err set; RunSuite returns an error only
// when a database cannot be opened or ctx ends.
func RunSuite(ctx context.Context, scripts []*Script, o SuiteOptions) (*Suite, error) {
	o.ensureDefaults()
	levels := o.checkedLevels()
	dbs, servers, err := openAll(ctx, o.DBs)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, d := range dbs {
			d.Close()
		}
	}()
	su := &Suite{Servers: servers}
	for _, s := range scripts {
		for _, u := range o.DBs {
			for _, iso := range o.Isolations {
				su.Cells = append(su.Cells, &Cell{Script: s.Name, DB: u, Isolation: iso})
			}
		}
	}
	byName := make(map[string]*Script, len(scripts))
	for _, s := range scripts {
		byName[s.Name] = s
	}
	var wg sync.WaitGroup
	for i, db := range dbs {
		sem := make(chan struct{}, o.Parallel)
		for _, c := range su.Cells {
			if c.DB != o.DBs[i] {
				continue
			}
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				runCell(ctx, db, c, byName[c.Script], levels, &o)
			})
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return su, context.Cause(ctx)
	}
	return su, nil
}

func (o *SuiteOptions) ensureDefaults() {
	if len(o.Isolations) == 0 {
		o.Isolations = Isolations
	}
	if len(o.Levels) == 0 {
		o.Levels = Levels
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
}

// checkedLevels are the levels of o.Levels a complete checker supports with o's method.
func (o *SuiteOptions) checkedLevels() []check.Level {
	var levels []check.Level
	for _, l := range o.Levels {
		if _, err := check.Supported(nil, l, o.Check.Method); err == nil {
			levels = append(levels, l)
		}
	}
	return levels
}

// openAll opens the database at each of urls and describes its server; if one cannot be
// opened, those opened before it are closed.
func openAll(ctx context.Context, urls []string) ([]*DB, []Server, error) {
	dbs := make([]*DB, len(urls))
	var servers []Server
	for i, u := range urls {
		db, err := Open(ctx, u)
		if err != nil {
			for _, d := range dbs[:i] {
				d.Close()
			}
			return nil, nil, err
		}
		dbs[i] = db
		servers = append(servers, Server{URL: u, Name: db.Name(), Version: db.Version()})
	}
	return dbs, servers, nil
}

// runCell replays s on db for the cell c and checks its history at each of levels, unless
// ctx has ended; then it tells o.Done.
func runCell(ctx context.Context, db *DB, c *Cell, s *Script, levels []check.Level, o *SuiteOptions) {
	if ctx.Err() != nil {
		c.Err = context.Cause(ctx)
		return
	}
	ro := o.Replay
	ro.Isolation, ro.Table = c.Isolation, ""
	c.Result, c.Err = db.Replay(ctx, s, ro)
	if c.Result != nil && c.Result.History != nil && c.Err == nil {
		for _, l := range levels {
			c.Verdicts = append(c.Verdicts, checkOne(ctx, c.Result, l, o.Check))
		}
	}
	if o.Done != nil {
		o.Done(c)
	}
}

func checkOne(ctx context.Context, r *Result, l check.Level, o check.Options) Verdict {
	v := Verdict{Level: l}
	rep, err := check.Check(ctx, r.History, l, o)
	if err != nil {
		v.Err = fmt.Errorf("checking %s at %s: %w", r.Script.Name, l, err)
	}
	if rep != nil {
		v.Report, v.Checker, v.Verdict = rep, rep.Checker, rep.Verdict
		for _, a := range rep.Anomalies {
			if !slices.Contains(v.Kinds, a.Kind) {
				v.Kinds = append(v.Kinds, a.Kind)
			}
		}
	}
	return v
}
