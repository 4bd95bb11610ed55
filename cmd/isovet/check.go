package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/explain"
)

type checkFlags struct {
	in           inputFlags
	level        string
	method       string
	asJSON       bool
	out          string
	timeout      time.Duration
	clockSkew    time.Duration
	maxAnomalies int
	realtime     time.Duration
	cpuProfile   string
	memProfile   string
	failed       string
	strictExit   bool
	maxMemory    string
}

func levelHelp() string {
	var b strings.Builder
	b.WriteString(`Levels (--level), weakest first, with their aliases; status says whether a complete checker
has landed. Case does not matter, and underscores or spaces may stand for hyphens
(Serializable, SNAPSHOT_ISOLATION). A name databases use for different levels
(repeatable-read, read-uncommitted) is refused with what it means on each and which level
to check there.
`)
	for _, l := range check.Levels() {
		info := l.Info()
		status := "basic checks only (a clean result is reported as unknown)"
		if c, err := check.Supported(nil, l, check.MethodAuto); err == nil {
			status = "checked by " + c.Name
		}
		if len(info.Aliases) > 0 {
			status = "aliases " + strings.Join(info.Aliases, ", ") + "; " + status
		}
		fmt.Fprintf(&b, "  %-36s %s\n  %-36s [%s]\n", info.Name, info.Summary, "", status)
	}
	return b.String()
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	c := &cobra.Command{
		Use:   "check HISTORY...",
		Short: "Check histories against an isolation level",
		Long: `Check a history (a file, or a directory for Cobra, Vbox and Viper logs) against an isolation
level. A directory that holds histories rather than being one (such as Vbox's coo/, one
directory per case) has each of them checked, one line each, then a summary; so do several
arguments (files, history directories and such directories mixed, as a shell glob gives).
Exit codes: 0 the level holds, 1 a violation was found, 2 usage or input error, 3 unknown
(timeout, cancellation, or no complete checker for the level yet). Over several histories:
1 if any violates the level, else 2 if any could not be checked, else 3 if any is unknown,
else 0. After a pass of a level that ignores client time, the report follows up with its
real-time counterpart (--realtime-budget); that follow-up's failure is reported but leaves
the exit at 0, unless --strict-exit makes it 1, for a CI job that should fail on it (or
check the real-time level itself with --level). A follow-up that ends unknown leaves the
exit as it is.

` + levelHelp(),
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return f.profiled(func() error { return runCheck(c.Context(), c.OutOrStdout(), c.ErrOrStderr(), args, &f) })
		},
	}
	f.in.register(c)
	c.Flags().StringVarP(&f.level, "level", "l", "serializable", "isolation level to check (see the list above)")
	c.Flags().StringVar(&f.method, "method", "auto", "auto, black-box, timestamp (needs database timestamps) or basic (the linear checks only: they can find a violation, never prove a pass)")
	c.Flags().BoolVar(&f.asJSON, "json", false, "print the reports as one JSON document, a result per history (docs/report.schema.json)")
	c.Flags().StringVar(&f.out, "out", "", "write the report (text, JSON, and a web page with each anomaly drawn), prose explanations and DOT graphs to this directory")
	c.Flags().DurationVar(&f.timeout, "timeout", 0, "give up after this long with verdict unknown (exit 3); 0 means no limit")
	c.Flags().DurationVar(&f.clockSkew, "clock-skew", 0, "widen every client interval by this much on both sides (strict levels)")
	c.Flags().IntVar(&f.maxAnomalies, "max-anomalies", 20, "report at most this many anomalies")
	c.Flags().DurationVar(&f.realtime, "realtime-budget", 2*time.Second, "after a pass of a level that ignores the client time the history records, spend at most this long checking its real-time counterpart (strict-serializable, strong-snapshot-isolation) and say whether it holds; 0 skips it")
	c.Flags().StringVar(&f.failed, "failed-statements", history.FailedUncertain.String(), "how to read a transaction logged as committed that contains a failed statement (which never takes effect): uncertain (committed without it, or rolled back: sound for every database), rolled-back (PostgreSQL, CockroachDB) or skipped (committed without it: MySQL, Galera)")
	c.Flags().BoolVar(&f.strictExit, "strict-exit", false, "exit 1 when the level holds but its real-time follow-up (see --realtime-budget) fails")
	c.Flags().StringVar(&f.maxMemory, "max-memory", "", "stop a check whose Go heap passes this size (64MiB, 2GiB, 500MB) with verdict unknown (exit 3) and a sentence saying so, instead of running out of memory; default: half of the machine's memory, or of its cgroup's limit if lower; 0 means no limit")
	c.Flags().StringVar(&f.cpuProfile, "cpu-profile", "", "write a CPU profile of the whole check (reading included) to this file, for go tool pprof")
	c.Flags().StringVar(&f.memProfile, "mem-profile", "", "write a profile of the memory the check allocated (reading included) to this file, for go tool pprof")
	return c
}

// profiled runs check under the profiles --cpu-profile and --mem-profile ask for; a profile
// that cannot be written is a usage error, check's own error coming first.
func (f *checkFlags) profiled(check func() error) error {
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		defer stop()
	}
	var writeMem func() error
	if f.memProfile != "" {
		w, err := startAllocProfile(f.memProfile)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		writeMem = w
	}
	err := check()
	if writeMem != nil {
		if werr := writeMem(); werr != nil && err == nil {
			err = &exitError{code: exitUsage, err: werr}
		}
	}
	return err
}

// runCheck checks the histories args name: one history alone gets its whole report;
// several, or a directory of histories, get one line each and a summary (runCheckAll).
func runCheck(ctx context.Context, stdout, stderr io.Writer, args []string, f *checkFlags) error {
	level, opts, err := f.options()
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if len(args) > 1 {
		var items []checkItem
		for _, a := range args {
			items = append(items, expandArg(a, f.in.format)...)
		}
		return runCheckAll(ctx, stdout, stderr, "", items, level, opts, f)
	}
	path := args[0]
	if names := collection(path, f.in.format); len(names) > 0 {
		items := make([]checkItem, len(names))
		for i, n := range names {
			items[i] = checkItem{name: n, path: filepath.Join(path, n)}
		}
		return runCheckAll(ctx, stdout, stderr, path, items, level, opts, f)
	}
	h, ft, err := f.in.open(path)
	if err != nil {
		return f.failedJSON(stdout, displayName(path), "", level, "unreadable", err)
	}
	path = displayName(path)
	rep, err := checkOne(ctx, stderr, path, h, level, opts, f)
	if err != nil {
		return f.failedJSON(stdout, path, ft.Name, level, "cannot be checked", err)
	}
	if err := f.in.vacuous(path, rep); err != nil {
		return f.failedJSON(stdout, path, ft.Name, level, "refused", &exitError{code: exitUsage, err: err})
	}
	if err := f.writeReport(stdout, path, ft.Name, rep); err != nil {
		return err
	}
	if f.strictExit && followupFailed(rep) {
		return &exitError{code: exitViolation, err: fmt.Errorf("%s holds but %s does not, and --strict-exit counts that as a violation", rep.Level, rep.Followup.Level)}
	}
	return verdictExit(rep.Verdict)
}

// failedJSON returns err, the reason the history at path was not checked; with --json it
// first prints the one document every check prints, its one result naming the error (as
// for each of several histories), so a consumer always gets the same shape.
func (f *checkFlags) failedJSON(stdout io.Writer, path, formatName string, level check.Level, what string, err error) error {
	if !f.asJSON {
		return err
	}
	res := explain.Result{File: path, Format: formatName, Level: level, Err: fmt.Errorf("%s: %w", what, err)}
	if jerr := writeReportJSON(stdout, []explain.Result{res}); jerr != nil {
		return jerr
	}
	return err
}

// followupFailed reports whether rep passed its level and failed its real-time follow-up.
func followupFailed(rep *check.Report) bool {
	return rep.Verdict == check.Pass && rep.Followup != nil && rep.Followup.Verdict == check.Fail
}

// options parses the level, method and failed-statement reading the flags name into the
// level and the check's options; an error is a usage error.
func (f *checkFlags) options() (check.Level, check.Options, error) {
	level, err := check.ParseLevel(f.level)
	if err != nil {
		return level, check.Options{}, err
	}
	method, ok := check.ParseMethod(f.method)
	if !ok {
		return level, check.Options{}, fmt.Errorf("unknown method %q (methods: auto, black-box, timestamp, basic)", f.method)
	}
	reading, ok := history.ParseFailedReading(f.failed)
	if !ok {
		return level, check.Options{}, fmt.Errorf("unknown --failed-statements %q (readings: %s)", f.failed, strings.Join(history.FailedReadings(), ", "))
	}
	mem, err := maxMemory(f.maxMemory)
	if err != nil {
		return level, check.Options{}, err
	}
	return level, check.Options{Method: method, ClockSkew: f.clockSkew, MaxAnomalies: f.maxAnomalies, FailedStatements: reading, Now: time.Now, MaxMemory: mem}, nil
}

// checkOne checks the history h read from path under the --timeout and follows a pass with
// its real-time counterpart. A report stopped early is returned with verdict unknown and a
// note saying why; an error is an *exitError with its exit code.
func checkOne(ctx context.Context, stderr io.Writer, path string, h *history.History, level check.Level, opts check.Options, f *checkFlags) (*check.Report, error) {
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, f.timeout, fmt.Errorf("timeout of %v reached", f.timeout))
		defer cancel()
	}
	start := time.Now()
	rep, err := checkAndFollow(ctx, ctx, stderr, h, level, opts, f.realtime, "")
	if rep == nil {
		return nil, noReportExit(ctx, path, err)
	}
	if rep.Stats.Elapsed == 0 {
		rep.Stats.Elapsed = time.Since(start)
	}
	if err != nil && rep.Verdict == check.Unknown {
		rep.Notes = append(rep.Notes, "stopped: "+err.Error())
	} else if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return rep, nil
}

// noReportExit is the exit of a check that returned no report with err: unknown (3) if ctx
// ended it, a usage error (2) otherwise (a level or method that cannot be checked, bad input).
func noReportExit(ctx context.Context, path string, err error) error {
	if errors.Is(err, check.ErrNotImplemented) || errors.Is(err, check.ErrNeedsTime) {
		return &exitError{code: exitUsage, err: err}
	}
	if err != nil && ctx.Err() != nil {
		return &exitError{code: exitUnknown, err: fmt.Errorf("check of %s ended with verdict unknown: %w", path, err)}
	}
	return &exitError{code: exitUsage, err: err}
}

// writeReport writes rep to the --out directory if one is given, then to stdout as text or,
// with --json, as JSON.
func (f *checkFlags) writeReport(stdout io.Writer, path, formatName string, rep *check.Report) error {
	if f.out != "" {
		if err := writeReportDir(f.out, path, formatName, "", rep); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	if f.asJSON {
		return writeReportJSON(stdout, []explain.Result{{File: path, Format: formatName, Report: rep}})
	}
	return writeReportText(stdout, path, rep)
}

// verdictExit is the exit of one history's check: 0 if the level holds, 1 if it is violated,
// 3 if unknown.
func verdictExit(v check.Verdict) error {
	switch v {
	case check.Pass:
		return nil
	case check.Fail:
		return &exitError{code: exitViolation}
	default:
		return &exitError{code: exitUnknown}
	}
}

// checkAndFollow checks h at level with opts under cctx and, after a pass, spends up to
// budget (under fctx) on the level's real-time counterpart (check.FollowRealtime). While
// each runs, a terminal stderr shows which stage it is in (the stage line, after prefix,
// which names the history among several), cleared before returning.
func checkAndFollow(cctx, fctx context.Context, stderr io.Writer, h *history.History, level check.Level, opts check.Options, budget time.Duration, prefix string) (*check.Report, error) {
	line := startStageLine(stderr, prefix, level)
	defer line.stop()
	opts.Progress = line.progress()
	rep, err := check.Check(cctx, h, level, opts)
	if rep != nil && err == nil && rep.Verdict == check.Pass && budget > 0 {
		ctx, cancel := context.WithTimeout(fctx, budget)
		defer cancel()
		if rt, ok := rep.Level.RealtimeCounterpart(); ok {
			line.follow(rt)
		}
		check.FollowRealtime(ctx, h, rep, opts)
	}
	return rep, err
}

// collection returns the histories inside directory p when p is a directory that holds
// histories rather than being one (format.Collection); nil otherwise.
func collection(p, formatName string) []string {
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return nil
	}
	return format.Collection(p, formatName)
}

// expandArg is what one of several history arguments names: the histories inside it when
// it is a directory of histories, else itself.
func expandArg(a, formatName string) []checkItem {
	names := collection(a, formatName)
	if len(names) == 0 {
		return []checkItem{{name: displayName(a), path: a}}
	}
	items := make([]checkItem, len(names))
	for i, n := range names {
		p := filepath.Join(a, n)
		items[i] = checkItem{name: p, path: p}
	}
	return items
}

// writeReportDir writes rep, the report of the history at path read as formatName, to
// directory dir as text, JSON, a web page and DOT graphs. index, when not "", is the
// summary page of the histories checked with it, relative to dir; the web page links to it.
func writeReportDir(dir, path, formatName, index string, rep *check.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, render func(io.Writer) error) error {
		return writeFile(filepath.Join(dir, name), render)
	}
	if err := write("report.txt", func(w io.Writer) error { return writeReportText(w, "", rep) }); err != nil {
		return err
	}
	result := []explain.Result{{File: path, Format: formatName, Report: rep}}
	if err := write("report.json", func(w io.Writer) error { return writeReportJSON(w, result) }); err != nil {
		return err
	}
	page := pageOptions(path, formatName)
	page.Index = index
	if err := write("report.html", func(w io.Writer) error { return explain.HTMLWith(w, rep, page) }); err != nil {
		return err
	}
	return writeReportGraphs(dir, rep, write)
}

// pageOptions is what the web page of the report of the history at path, read as
// formatName, says about where it came from: the file, its format and size, isovet's
// version and the time now.
func pageOptions(path, formatName string) explain.HTMLOptions {
	return explain.HTMLOptions{File: path, Format: formatName, Bytes: historyBytes(path), Version: version(), Date: time.Now()}
}

// historyBytes is the size of the history at path: of the file, or of every file in the
// directory (a log directory); 0 for standard input or what cannot be read.
func historyBytes(path string) int64 {
	st, err := os.Stat(path)
	if err != nil || path == stdinName {
		return 0
	}
	if !st.IsDir() {
		return st.Size()
	}
	var n int64
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// writeFile creates the file at path and writes it through render, buffered.
func writeFile(path string, render func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeBuffered(fh, render); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
