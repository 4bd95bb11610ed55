package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/internal/runner/coo"
)

func init() { extraCommands = append(extraCommands, newCooCmd) }

// Default servers of `isovet coo`: the loopback services CI starts.
var cooDefaultDBs = []string{"postgres://postgres@127.0.0.1:5432/test", "mysql://root@127.0.0.1:3306/test"}

// cooFlags are the flags of `isovet coo`.
type cooFlags struct {
	o               coo.SuiteOptions
	dbs, isos, only []string
	out, dir        string
	asJSON          bool
}

func newCooCmd() *cobra.Command {
	var f cooFlags
	c := &cobra.Command{
		Use:   "coo",
		Short: "Replay the Coo/3TS anomaly scenarios against PostgreSQL and MariaDB and tabulate what isovet finds",
		Long: `Replay the 29 Coo/3TS anomaly scenarios (step-session-SQL scripts, Vbox's data/coo_origin)
against each database at each isolation level, record every history, check it at
read-committed (when a complete checker has landed), snapshot-isolation, serializable and
strict-serializable, and print the table of which database at which level shows which anomaly.

Each replay uses a table of its own (coo_<scenario>_<pg|my>_<rc|rr|ser>) and drops it at the
end. A statement that has not completed after --wait and waits for a lock is deemed blocked
and the replay goes on with the next step, as the 3TS tool does; serialization failures and deadlocks abort
the transaction (recorded as aborted, never retried).

--scenarios DIR (required) names the directory of the scenario scripts, one *.txt file per
scenario; they are not part of isovet (Vbox's repository has them in data/coo_origin).

With --out DIR the histories go to DIR/<database>/<isolation>/<scenario>.jsonl (native
format, readable by isovet check) and the table to DIR/table.md.

Exit codes: 0 every replay ran (anomalies are results, not failures), 2 usage, connection
or replay error.`,
		Example: `  isovet coo --scenarios vbox/coo_origin --out coo-out
  isovet coo --scenarios vbox/coo_origin --db postgres://postgres@127.0.0.1/test --isolation serializable --only wat_sda_lost_update_c1`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return f.run(c) },
	}
	fs := c.Flags()
	fs.StringSliceVar(&f.dbs, "db", cooDefaultDBs, "database URLs, comma-separated (postgres://, mysql:// or mariadb://)")
	fs.StringSliceVar(&f.isos, "isolation", coo.Isolations, "isolation levels to replay at: "+strings.Join(coo.AllIsolations, ", "))
	fs.StringVar(&f.out, "out", "", "directory for the histories (DIR/<database>/<isolation>/<scenario>.jsonl) and table.md")
	fs.StringVar(&f.dir, "scenarios", "", "directory of the scenario scripts, one *.txt per scenario (required)")
	fs.StringSliceVar(&f.only, "only", nil, "replay only these scenarios (names without .txt)")
	fs.DurationVar(&f.o.Replay.Wait, "wait", 150*time.Millisecond, "how long a statement may run before the replay asks whether it waits for a lock (then it is blocked and the replay goes on)")
	fs.DurationVar(&f.o.Replay.FinalWait, "final-wait", 15*time.Second, "how long to wait at the end for blocked statements before killing their connections")
	fs.IntVar(&f.o.Parallel, "parallel", 4, "concurrent replays per database")
	fs.BoolVar(&f.o.Replay.Keep, "keep", false, "keep each replay's table")
	fs.BoolVar(&f.asJSON, "json", false, `print one JSON document instead of the table, {"schema": 1, "kind": "coo", "servers": [...], "results": [...]}: a result per replay with its counts, notes and verdicts (docs/json.md)`)
	fs.BoolVar(&f.o.Replay.SetupAsInitial, "setup-as-initial", false, "record the setup's rows as the initial state rather than as a loader transaction")
	return c
}

// run replays the scenarios, prints the table (or the JSON) and writes --out; an error in
// any replay or check makes the exit a usage error after everything is printed.
func (f *cooFlags) run(c *cobra.Command) error {
	usage := func(err error) error { return &exitError{code: exitUsage, err: err} }
	scripts, err := f.scripts()
	if err != nil {
		return usage(err)
	}
	for _, s := range scripts {
		for _, w := range s.Warnings {
			fmt.Fprintf(c.ErrOrStderr(), "isovet: warning: %s\n", w)
		}
	}
	o := f.o
	o.DBs, o.Isolations = f.dbs, f.isos
	o.Check.Now = time.Now
	var mu sync.Mutex
	o.Done = func(cell *coo.Cell) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(c.ErrOrStderr(), "coo: %s %s %s: %s\n", cell.Script, cooDBName(cell.DB), cell.Isolation, coo.CellText(cell, check.Serializable))
	}
	su, err := coo.RunSuite(c.Context(), scripts, o)
	if err != nil {
		return usage(err)
	}
	var table strings.Builder
	if err := coo.WriteMarkdown(&table, su, check.Serializable, check.SnapshotIsolation, check.ReadCommitted); err != nil {
		return err
	}
	if f.out != "" {
		if err := writeCooOut(f.out, su, table.String()); err != nil {
			return usage(err)
		}
	}
	if err := f.print(c.OutOrStdout(), su, table.String()); err != nil {
		return err
	}
	if errs := cooErrors(su); len(errs) > 0 {
		return usage(errors.Join(errs...))
	}
	return nil
}

// errNoScenarios is the usage error of `isovet coo` without --scenarios.
var errNoScenarios = errors.New("--scenarios DIR is required: the directory of the Coo/3TS scenario scripts (one *.txt per scenario, as in Vbox's data/coo_origin)")

// scripts loads the scenario scripts from --scenarios, keeps those --only names, and checks
// that every --isolation is known.
func (f *cooFlags) scripts() ([]*coo.Script, error) {
	dir := f.dir
	if dir == "" {
		return nil, errNoScenarios
	}
	scripts, err := coo.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(f.only) > 0 {
		scripts = slices.DeleteFunc(scripts, func(s *coo.Script) bool { return !slices.Contains(f.only, s.Name) })
		if len(scripts) < len(f.only) {
			return nil, fmt.Errorf("--only names scenarios not under %s: %s", dir, strings.Join(f.only, ", "))
		}
	}
	for _, iso := range f.isos {
		if !slices.Contains(coo.AllIsolations, iso) {
			return nil, fmt.Errorf("unknown isolation %q (isolations: %s)", iso, strings.Join(coo.AllIsolations, ", "))
		}
	}
	return scripts, nil
}

// print writes the suite to w: with --json one object per replay, else the servers' versions
// and the table.
func (f *cooFlags) print(w io.Writer, su *coo.Suite, table string) error {
	if f.asJSON {
		return writeJSONDoc(w, cooDocument(su, f.out))
	}
	for _, srv := range su.Servers {
		fmt.Fprintf(w, "%s %s at %s\n", srv.Name, srv.Version, cooDBName(srv.URL))
	}
	fmt.Fprintf(w, "\n%s", table)
	return nil
}

// cooErrors lists the errors of the suite's replays and of their checks, each naming its
// scenario, database and isolation.
func cooErrors(su *coo.Suite) []error {
	var errs []error
	for _, cell := range su.Cells {
		where := fmt.Sprintf("%s on %s at %s", cell.Script, cooDBName(cell.DB), cell.Isolation)
		if cell.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, cell.Err))
		}
		for _, v := range cell.Verdicts {
			if v.Err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, v.Err))
			}
		}
	}
	return errs
}

// cooDBName is a URL without its user and password, as the table shows it.
func cooDBName(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return scheme + "://" + rest
}

// writeCooOut writes every recorded history and the table under dir.
func writeCooOut(dir string, su *coo.Suite, table string) error {
	names := make(map[string]string)
	for _, srv := range su.Servers {
		names[srv.URL] = strings.ToLower(srv.Name)
	}
	for _, cell := range su.Cells {
		if cell.Result == nil || cell.Result.History == nil {
			continue
		}
		d := filepath.Join(dir, names[cell.DB], cell.Isolation)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		p := filepath.Join(d, cell.Script+".jsonl")
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		err = native.Write(f, cell.Result.History)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return os.WriteFile(filepath.Join(dir, "table.md"), []byte(table), 0o644)
}

// cooDoc is the coo document: the servers replayed against, then a result per replay.
type cooDoc struct {
	jsonHead
	Servers []cooServer `json:"servers"`
	Results []cooCell   `json:"results"`
}

// cooServer is one database of the suite.
type cooServer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	URL     string `json:"url"` // without user and password
}

// cooCell is the JSON form of one replay.
type cooCell struct {
	Scenario    string       `json:"scenario"`
	File        string       `json:"file,omitempty"` // the history's file under --out
	Database    string       `json:"database"`
	Version     string       `json:"version"`
	Isolation   string       `json:"isolation"`
	Committed   int          `json:"committed"`
	Aborted     int          `json:"aborted"`
	AbortedByDB int          `json:"aborted_by_db"`
	Unknown     int          `json:"unknown"`
	Blocked     int          `json:"blocked"`
	Skipped     int          `json:"skipped"`
	Notes       []string     `json:"notes"`
	Verdicts    []cooVerdict `json:"verdicts"`
	Error       string       `json:"error,omitempty"`
}

// cooVerdict is one level checked of a replay's history.
type cooVerdict struct {
	Level   string   `json:"level"`
	Checker string   `json:"checker,omitempty"`
	Verdict string   `json:"verdict"`
	Kinds   []string `json:"kinds"`
	Error   string   `json:"error,omitempty"`
}

// cooDocument is the suite as the coo document; out is --out ("" without), under which
// each replay's history was written.
func cooDocument(su *coo.Suite, out string) cooDoc {
	doc := cooDoc{jsonHead: newHead("coo"), Servers: []cooServer{}, Results: make([]cooCell, 0, len(su.Cells))}
	names := make(map[string]string)
	for _, srv := range su.Servers {
		doc.Servers = append(doc.Servers, cooServer{Name: srv.Name, Version: srv.Version, URL: cooDBName(srv.URL)})
		names[srv.URL] = strings.ToLower(srv.Name)
	}
	for _, c := range su.Cells {
		j := cooCell{Scenario: c.Script, Database: cooDBName(c.DB), Isolation: c.Isolation, Notes: []string{}, Verdicts: []cooVerdict{}}
		if c.Err != nil {
			j.Error = c.Err.Error()
		}
		if r := c.Result; r != nil {
			j.Database, j.Version = r.DB, r.Version
			j.Committed, j.Aborted, j.AbortedByDB, j.Unknown = r.Committed, r.Aborted, r.AbortedByDB, r.Unknown
			j.Blocked, j.Skipped, j.Notes = r.Blocked, r.Skipped, nonNil(r.Notes)
			if out != "" && r.History != nil {
				j.File = filepath.Join(out, names[c.DB], c.Isolation, c.Script+".jsonl")
			}
		}
		for _, v := range c.Verdicts {
			jv := cooVerdict{Level: v.Level.String(), Checker: v.Checker, Verdict: v.Verdict.String(), Kinds: []string{}}
			for _, k := range v.Kinds {
				jv.Kinds = append(jv.Kinds, k.String())
			}
			if v.Err != nil {
				jv.Error = v.Err.Error()
			}
			j.Verdicts = append(j.Verdicts, jv)
		}
		doc.Results = append(doc.Results, j)
	}
	return doc
}
