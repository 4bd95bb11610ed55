package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/explain"
	"github.com/isovet/isovet/internal/workload"
)

// Exit codes of `isovet run`, as `isovet check`.
const (
	ExitOK        = 0 // every checked level holds
	ExitViolation = 1 // some level is violated
	ExitError     = 2 // usage, input, connection or database error
	ExitUnknown   = 3 // some verdict is unknown (and none failed)
)

// DefaultDB is the database `isovet run` drives when none is given.
const DefaultDB = "memdb://snapshot-isolation"

// Options are the flags of `isovet run`. The zero value runs rw-register on memdb at
// snapshot isolation and checks snapshot isolation.
type Options struct {
	DB        string // URL; default DefaultDB
	Workload  string // generator name; default "rw-register"
	Isolation string // level to ask a server for; default serializable (memdb: the URL's mode)
	Txns      int    // transactions in all, rounded up to a multiple of Sessions (retries come on top); default 1000
	Sessions  int    // concurrent sessions; default 8
	Seed      uint64
	// Gen tunes the generator (keys, mix, distribution, duplicates); Seed, Sessions and the
	// per-session count are set from the fields above.
	Gen workload.Options
	// Out is a directory for history.jsonl, the database sidecar, one report per level
	// (report-LEVEL.txt, report-LEVEL.html) and report.json, every level's report as one
	// JSON document (explain.JSONResults); empty: nothing is written to disk.
	Out string
	// JSON prints the reports to stdout as that JSON document instead of prose; what the
	// run recorded then goes to stderr.
	JSON bool
	// Check lists levels to check; empty: the level the database claims.
	Check []string
	// Method picks the checker (default auto).
	Method check.Method
	// CheckTimeout bounds each check (0: none); a check that runs out says unknown.
	CheckTimeout time.Duration
	// RealtimeBudget bounds the follow-up at a passed level's real-time counterpart
	// (check.FollowRealtime); 0 skips it.
	RealtimeBudget time.Duration
	// StrictExit counts a pass whose real-time follow-up fails as a violation (ExitViolation).
	StrictExit bool
	// Table is the table SQL drivers create (default isovet_kv); Keep leaves it in place.
	Table string
	Keep  bool
	// Sink, when set, receives every transaction as it completes, for a service that
	// checks them online (`isovet run --serve`); a database that cannot give it the
	// timestamps the online checker needs is refused before the run starts.
	Sink Sink
	// Progress, when set, is called while the workload runs (see RunOptions.Progress).
	Progress func(done, aborted, total int, elapsed time.Duration)
	// Recorded, when set, is called once the workload has stopped, before anything about
	// the run is printed: a progress display ends there.
	Recorded func()
	// Checking, when set, is called as the check of each level begins: progress is given
	// to that check and its follow-up (check.Options.Progress; nil: none), and done is
	// called before its report is printed.
	Checking func(l check.Level) (progress func(check.Progress), done func())
	Logger   *slog.Logger
	// Version is isovet's version, for the header of the reports' web pages.
	Version string
	_       struct{}
}

// RunCommand runs `isovet run`: it generates the workload, drives the database, streams the
// history to Out, checks each level and prints the verdicts with their explanations to
// stdout. It returns the exit code; when the code is ExitError, err says why (RunCommand
// does not print it). stderr receives notes meant for people watching a terminal.
func RunCommand(ctx context.Context, o Options, stdout, stderr io.Writer) (int, error) {
	o.ensureDefaults()
	levels, err := parseLevels(o.Check)
	if err != nil {
		return ExitError, err
	}
	g := o.Gen
	g.Seed, g.Sessions = o.Seed, o.Sessions
	g.TxnsPerSess = (o.Txns + o.Sessions - 1) / o.Sessions
	w, err := workload.Generate(o.Workload, g)
	if err != nil {
		return ExitError, err
	}
	db, target, err := Open(ctx, o.DB, OpenOptions{Isolation: o.Isolation, Table: o.Table, Seed: o.Seed, Logger: o.Logger})
	if err != nil {
		return ExitError, err
	}
	defer db.Close()
	if len(levels) == 0 {
		if target.Claim == 0 {
			return ExitError, fmt.Errorf("%s claims no level isovet checks; say which with --check", target.Description)
		}
		levels = []check.Level{target.Claim}
	}
	c := &command{o: &o, stdout: stdout, stderr: stderr, prose: stdout, target: target}
	if o.JSON {
		c.prose = stderr
	}
	res, err := c.record(ctx, db, target, w)
	if err != nil {
		return ExitError, err
	}
	code := ExitOK
	for _, l := range levels {
		lc, err := c.checkLevel(ctx, res.History, l)
		if err != nil {
			return ExitError, err
		}
		code = worse(code, lc)
	}
	if err := c.writeJSON(); err != nil {
		return ExitError, err
	}
	if c.sinkErr != nil {
		return ExitError, c.sinkErr
	}
	return code, nil
}

// writeJSON writes every level's report as one JSON document to Out/report.json, when
// there is an output directory, and to stdout with JSON.
func (c *command) writeJSON() error {
	if c.o.Out != "" {
		err := writeReport(filepath.Join(c.o.Out, "report.json"), nil, func(w io.Writer, _ *check.Report) error {
			return explain.JSONResults(w, c.results)
		})
		if err != nil {
			return err
		}
	}
	if c.o.JSON {
		return explain.JSONResults(c.stdout, c.results)
	}
	return nil
}

// ensureDefaults fills in the defaults of the zero fields of o.
func (o *Options) ensureDefaults() {
	if o.DB == "" {
		o.DB = DefaultDB
	}
	if o.Workload == "" {
		o.Workload = "rw-register"
	}
	if o.Txns <= 0 {
		o.Txns = 1000
	}
	if o.Sessions <= 0 {
		o.Sessions = 8
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// parseLevels parses the --check arguments, each a comma-separated list of levels.
func parseLevels(args []string) ([]check.Level, error) {
	var levels []check.Level
	for _, name := range args {
		for n := range strings.SplitSeq(name, ",") {
			if n = strings.TrimSpace(n); n == "" {
				continue
			}
			l, err := check.ParseLevel(n)
			if err != nil {
				return nil, err
			}
			levels = append(levels, l)
		}
	}
	return levels, nil
}

// command is one `isovet run` after its setup: the options with defaults, and where it
// writes.
type command struct {
	o              *Options
	stdout, stderr io.Writer
	prose          io.Writer // where what was recorded and the text reports go: stdout, or stderr with JSON
	target         Target
	results        []explain.Result // one per level checked, for the JSON document
	sinkErr        error            // what failed in streaming to the service
}

// record drives the workload through db, streaming the history to the output directory
// if there is one, and prints what was recorded. It fails when nothing ran or the run
// stopped early.
func (c *command) record(ctx context.Context, db DB, target Target, w *workload.Workload) (*Result, error) {
	o := c.o
	var hist, side *lazyFile
	ro := RunOptions{Progress: o.Progress, Logger: o.Logger}
	if o.Out != "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return nil, fmt.Errorf("creating the output directory: %w", err)
		}
		hist = &lazyFile{path: filepath.Join(o.Out, "history.jsonl")}
		side = &lazyFile{path: filepath.Join(o.Out, "db-timestamps.jsonl")}
		ro.Out, ro.Sidecar = hist, side
	}
	if o.Sink != nil {
		initial, err := streamable(db, target.Description, schemaOf(w))
		if err != nil {
			return nil, fmt.Errorf("cannot stream to the service: %w", err)
		}
		if err := o.Sink.Open(ctx, initial); err != nil {
			return nil, fmt.Errorf("cannot stream to the service: %w (nothing was run)", err)
		}
		ro.Sink = o.Sink
	}
	fmt.Fprintf(c.prose, "running %s (%d transactions, %d sessions, seed %d) on %s\n", o.Workload, w.NumTxns(), o.Sessions, o.Seed, target.Description)
	res, runErr := Run(ctx, db, w, ro)
	if o.Recorded != nil {
		o.Recorded()
	}
	if o.Sink != nil {
		c.sinkErr = o.Sink.Close()
		if res != nil && res.Unknown > 0 {
			fmt.Fprintf(c.stderr, "note: %d transactions of unknown outcome were streamed as such: the online checker takes them as not committed, the offline check as committed when a read saw what only they wrote, so an online violation through one may be a false alarm; the verdicts below are the offline check's\n", res.Unknown)
		}
	}
	closeErr := errors.Join(hist.Close(), side.Close())
	c.cleanup(ctx, db)
	if res == nil {
		// Nothing ran (preparing the database or connecting failed): nothing was written.
		return nil, fmt.Errorf("%s: %w (nothing was run and no history was written)", target.Description, runErr)
	}
	written := hist != nil && hist.f != nil
	c.summarize(res, w, written, hist)
	if runErr != nil || closeErr != nil {
		err := errors.Join(runErr, closeErr)
		where := "it was not written to disk (no --out)"
		if written {
			where = "it is complete up to the error in " + hist.path
		}
		return nil, fmt.Errorf("the run stopped after %d transactions: %w; %s", len(res.History.Txns), err, where)
	}
	return res, nil
}

// cleanup drops the test table unless told to keep it; a failure is a note, not an error.
func (c *command) cleanup(ctx context.Context, db DB) {
	cl, ok := db.(Cleaner)
	if !ok || c.o.Keep {
		return
	}
	if err := cl.Cleanup(context.WithoutCancel(ctx)); err != nil {
		c.o.Logger.Warn("cleanup failed", "err", err)
		fmt.Fprintf(c.stderr, "note: could not drop the test table: %v\n", err)
	}
}

// summarize prints what the run recorded, where the history is (when written), and the
// bank invariant of a bank workload.
func (c *command) summarize(res *Result, w *workload.Workload, written bool, hist *lazyFile) {
	out := c.prose
	fmt.Fprintf(out, "recorded %d transactions (%d committed, %d aborted and retried, %d unknown) in %v: %.0f txns/s\n",
		len(res.History.Txns), res.Committed, res.Aborted, res.Unknown, res.Elapsed.Round(time.Millisecond), float64(len(res.History.Txns))/res.Elapsed.Seconds())
	if written {
		fmt.Fprintf(out, "history: %s\n", hist.path)
	}
	if res.GaveUp > 0 {
		fmt.Fprintf(out, "note: %d transactions gave up after repeated aborts\n", res.GaveUp)
	}
	if w.Invariant != nil {
		bad, reads := bankInvariant(res.History, w)
		fmt.Fprintf(out, "bank invariant (total %d): %d of %d committed whole-bank reads saw another total\n", *w.Invariant, bad, reads)
	}
}

// checkLevel checks h at level l, prints the report and writes it to the output
// directory, and returns the level's exit code. An error is returned only when the check
// failed for a reason other than running out of time, or a report could not be written.
func (c *command) checkLevel(ctx context.Context, h *history.History, l check.Level) (int, error) {
	o := c.o
	progress, done := c.checking(l)
	rep, stopped, err := c.check(ctx, h, l, progress)
	if rep == nil {
		done()
		if err != nil && !stopped {
			return ExitError, fmt.Errorf("checking %s: %w", l, err)
		}
		fmt.Fprintf(c.prose, "\n%s: unknown (%v)\n", l, err)
		c.keep(&check.Report{Level: l, Verdict: check.Unknown, History: h, Notes: []string{"stopped: " + err.Error()}})
		return ExitUnknown, nil
	}
	if err != nil {
		rep.Notes = append(rep.Notes, "stopped: "+err.Error())
	}
	if o.RealtimeBudget > 0 && rep.Verdict == check.Pass {
		fctx, cancel := context.WithTimeout(ctx, o.RealtimeBudget)
		check.FollowRealtime(fctx, h, rep, check.Options{Method: o.Method, Progress: progress})
		cancel()
	}
	done()
	if err := c.report(rep, l); err != nil {
		return ExitError, err
	}
	o.Logger.Info("checked", "level", l.String(), "verdict", rep.Verdict.String(), "checker", rep.Checker, "elapsed", rep.Stats.Elapsed)
	if fu := rep.Followup; o.StrictExit && rep.Verdict == check.Pass && fu != nil && fu.Verdict == check.Fail {
		fmt.Fprintf(c.stdout, "%s holds but %s does not, and --strict-exit counts that as a violation\n", l, fu.Level)
		return ExitViolation, nil
	}
	return verdictExits[rep.Verdict], nil
}

// checking is Options.Checking for level l, or no progress and a done that does nothing.
func (c *command) checking(l check.Level) (progress func(check.Progress), done func()) {
	if c.o.Checking == nil {
		return nil, func() {}
	}
	progress, done = c.o.Checking(l)
	if done == nil {
		done = func() {}
	}
	return progress, done
}

// verdictExits are the exit codes of the verdicts other than a pass (ExitOK).
var verdictExits = map[check.Verdict]int{check.Fail: ExitViolation, check.Unknown: ExitUnknown}

// check checks h at l within --check-timeout and returns the report and error of
// [check.Check], the report's elapsed time filled in. stopped says whether ctx or the
// check's own context has ended; with --check-timeout the latter is cancelled once the
// check returns, so a report-less error then counts as unknown too.
func (c *command) check(ctx context.Context, h *history.History, l check.Level, progress func(check.Progress)) (rep *check.Report, stopped bool, err error) {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if c.o.CheckTimeout > 0 {
		cctx, cancel = context.WithTimeoutCause(ctx, c.o.CheckTimeout, fmt.Errorf("check timeout of %v reached", c.o.CheckTimeout))
	}
	start := time.Now()
	rep, err = check.Check(cctx, h, l, check.Options{Method: c.o.Method, Now: time.Now, Progress: progress})
	cancel()
	if rep != nil && rep.Stats.Elapsed == 0 {
		rep.Stats.Elapsed = time.Since(start)
	}
	return rep, ctx.Err() != nil || cctx.Err() != nil, err
}

// report prints rep to stdout and writes it, as text and HTML, to the output directory if
// there is one.
func (c *command) report(rep *check.Report, l check.Level) error {
	c.keep(rep)
	if !c.o.JSON {
		fmt.Fprintln(c.stdout)
		if err := explain.Text(c.stdout, rep); err != nil {
			return err
		}
	}
	if c.o.Out == "" {
		return nil
	}
	if err := writeReport(filepath.Join(c.o.Out, "report-"+l.String()+".txt"), rep, explain.Text); err != nil {
		return err
	}
	return writeReport(filepath.Join(c.o.Out, "report-"+l.String()+".html"), rep, func(w io.Writer, rep *check.Report) error {
		return explain.HTMLWith(w, rep, c.page())
	})
}

// page is what the web page of a level's report says about the run: the history file, the
// database with its version (as the driver described it), the isolation asked, the
// workload, isovet's version and the time now.
func (c *command) page() explain.HTMLOptions {
	o := c.o
	p := explain.HTMLOptions{
		Format: "native", Version: o.Version, Date: time.Now(),
		Database: c.target.Description, Isolation: o.Isolation,
		Workload: fmt.Sprintf("%s: %d transactions in %d sessions, seed %d", o.Workload, o.Txns, o.Sessions, o.Seed),
	}
	if o.Out != "" {
		p.File = filepath.Join(o.Out, "history.jsonl")
		if st, err := os.Stat(p.File); err == nil {
			p.Bytes = st.Size()
		}
	}
	return p
}

// keep adds rep to the results of the JSON document, naming the history file (when the run
// writes one), the database and the workload.
func (c *command) keep(rep *check.Report) {
	r := explain.Result{Report: rep, Database: c.target.Description, Workload: c.o.Workload}
	if c.o.Out != "" {
		r.File, r.Format = filepath.Join(c.o.Out, "history.jsonl"), "native"
	}
	c.results = append(c.results, r)
}

// worse orders exit codes: violation > unknown > ok.
func worse(a, b int) int {
	rank := func(c int) int {
		switch c {
		case ExitViolation:
			return 2
		case ExitUnknown:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func writeReport(path string, rep *check.Report, render func(io.Writer, *check.Report) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = render(bw, rep)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// lazyFile creates its file at the first Write, so a run that never starts leaves nothing.
type lazyFile struct {
	path string
	f    *os.File
}

func (l *lazyFile) Write(p []byte) (int, error) {
	if l.f == nil {
		f, err := os.Create(l.path)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(p)
}

func (l *lazyFile) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close()
}

// bankInvariant counts committed transactions that read every account and whose balances do
// not add up to the invariant total.
func bankInvariant(h *history.History, w *workload.Workload) (bad, reads int) {
	for _, t := range h.All() {
		if !t.Committed() || len(t.Ops) != len(w.Keys) {
			continue
		}
		sum, all := int64(0), true
		for _, op := range t.Ops {
			v, ok := h.Value(op.Value).Int()
			if op.Kind != history.OpRead || !ok {
				all = false
				break
			}
			sum += workload.Payload(v)
		}
		if !all {
			continue
		}
		reads++
		if sum != *w.Invariant {
			bad++
		}
	}
	return bad, reads
}
