package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/internal/runner"
	_ "github.com/isovet/isovet/internal/runner/all" // postgres://, mysql://, sqlite:// drivers
	"github.com/isovet/isovet/internal/server"
	"github.com/isovet/isovet/internal/workload"
)

func init() { extraCommands = append(extraCommands, newRunCmd) }

func newRunCmd() *cobra.Command {
	var o runner.Options
	var method, dist, logLevel string
	var checks []string
	var so server.StreamOptions
	var serveURL, natsURL string
	c := &cobra.Command{
		Use:   "run",
		Short: "Drive a database with a workload, record the history and check it",
		Long: `Drive a database with a generated workload, record the history (client intervals, and the
database's own ids and timestamps where it exposes them), stream it to --out as it runs, then
check it and explain every anomaly found.

Databases (--db): memdb://MODE[?fault=FAULT], the embedded reference database (the default,
memdb://snapshot-isolation; modes serializable, snapshot-isolation, read-committed,
read-uncommitted; faults lost-update, stale-read, fractured-read, long-fork, aborted-read,
intermediate-read, phantom), postgres://user@host/db, mysql://user@host:port/db (or
mysql:// followed by the driver's user@tcp(host:port)/db), sqlite://FILE. A database that
cannot run at exactly the --isolation asked for refuses it (exit 2), saying what it
offers, rather than run another level: memdb runs at its URL's mode (memdb:// with no mode
takes --isolation); MySQL and MariaDB have no snapshot-isolation (their REPEATABLE READ
loses updates); PostgreSQL runs READ UNCOMMITTED as READ COMMITTED, so it refuses
read-uncommitted; SQLite is always serializable (docs/runner.md, "Isolation levels").

Row workloads (blindw-pred, pred-write-skew) create a table (k, v1, v2, w), fill it with
logged loader transactions, and record predicate reads and writes with the rows they
returned or updated; --keys sets the rows (blindw-pred) or the ranges (pred-write-skew).

Exit codes: 0 every checked level holds, 1 a violation, 2 usage, connection or database
error, 3 unknown. A passed level's real-time follow-up (--realtime-budget) that fails is
reported and leaves the exit at 0, unless --strict-exit makes it 1.`,
		Example: `  isovet run --workload write-skew --db memdb://snapshot-isolation --check serializable
  isovet run --workload pred-write-skew --db 'memdb://serializable?fault=phantom'
  isovet run --db postgres://postgres@127.0.0.1/test --isolation repeatable-read --workload write-skew --check snapshot-isolation,serializable`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			m, ok := check.ParseMethod(method)
			if !ok {
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown method %q (methods: auto, black-box, timestamp, basic)", method)}
			}
			o.Method, o.Check, o.Version = m, checks, version()
			if dist != "" {
				d, err := workload.ParseDist(dist)
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				o.Gen.Dist = d
			}
			var err error
			if o.Logger, err = newLogger(c.ErrOrStderr(), logLevel); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			if o.Sink, err = newRunSink(so, serveURL, natsURL, o.Logger, c.ErrOrStderr()); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			var finish func()
			o.Progress, finish = runProgress(c.ErrOrStderr())
			o.Recorded = finish
			o.Checking = func(l check.Level) (func(check.Progress), func()) {
				line := startStageLine(c.ErrOrStderr(), "", l)
				return line.progress(), line.stop
			}
			code, err := runner.RunCommand(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
			finish()
			if code != 0 || err != nil {
				return &exitError{code: code, err: err}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.DB, "db", runner.DefaultDB, "database URL (see above)")
	f.StringVarP(&o.Workload, "workload", "w", "rw-register", "workload: "+strings.Join(workload.Names(), ", "))
	f.StringVar(&o.Isolation, "isolation", "", "isolation level to ask a server for, in any case: serializable (the default), repeatable-read, snapshot-isolation (PostgreSQL only), read-committed or read-uncommitted (MySQL and MariaDB only); a level the database does not have exactly is refused; memdb takes its mode from the URL and refuses an --isolation that disagrees; sqlite takes only serializable")
	f.IntVarP(&o.Txns, "txns", "n", 1000, "transactions to run")
	f.IntVar(&o.Sessions, "sessions", 8, "concurrent sessions")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the workload generator")
	f.IntVar(&o.Gen.Keys, "keys", 0, "number of keys (default depends on the workload)")
	f.StringVar(&dist, "dist", "", "key distribution: uniform, zipfian or hotspot")
	f.BoolVar(&o.Gen.Duplicates, "duplicates", false, "write duplicate values on some keys (as VeriStrong's workloads do)")
	f.IntVar(&o.Gen.RangeMax, "range-max", 0, "blindw-pred: predicates match 1 to this many rows (default rows/10)")
	f.IntVar(&o.Gen.PredOps, "pred-ops", 0, "blindw-pred: predicate operations per transaction (default 1)")
	f.StringVar(&o.Out, "out", "", "directory for the history (history.jsonl, written as the run goes) and the reports (report-LEVEL.txt and .html per level, report.json for all)")
	f.BoolVar(&o.JSON, "json", false, "print the reports as one JSON document (docs/report.schema.json) on stdout; what the run recorded goes to stderr")
	f.StringSliceVar(&checks, "check", nil, "levels to check, comma-separated (default: the level the database was asked for)")
	f.StringVar(&method, "method", "auto", "checker method: auto, black-box, timestamp or basic")
	f.DurationVar(&o.CheckTimeout, "check-timeout", 0, "give up on a check after this long (verdict unknown)")
	f.DurationVar(&o.RealtimeBudget, "realtime-budget", 2*time.Second, "after a pass of a level that ignores client time, spend at most this long checking its real-time counterpart (strict-serializable, strong-snapshot-isolation) and say whether it holds; 0 skips it")
	f.BoolVar(&o.StrictExit, "strict-exit", false, "exit 1 when a checked level holds but its real-time follow-up fails")
	f.StringVar(&o.Table, "table", "", "table the SQL drivers create (default isovet_kv)")
	f.BoolVar(&o.Keep, "keep", false, "leave the table in place after the run")
	f.StringVar(&logLevel, "log-level", "warn", "debug, info, warn or error")
	f.StringVar(&serveURL, "serve", "", "stream every transaction as it completes to isovet serve at this URL, e.g. http://127.0.0.1:7474, for the online check (memdb only: docs/timestamp.md)")
	f.StringVar(&natsURL, "nats", "", "stream every transaction as it completes to this NATS JetStream server, e.g. nats://127.0.0.1:4222, for isovet serve --nats")
	f.StringVar(&so.Stream, "stream", "ISOVET", "with --nats: the JetStream stream, used if it exists and takes --subject, created if no stream does")
	f.StringVar(&so.Subject, "subject", "isovet.txns", "with --nats: the subject to publish to")
	f.StringVar(&so.Token, "token", "", "with --serve: the token of a service that requires one (default $ISOVET_TOKEN)")
	return c
}

// runSink streams a run's transactions to a service: a [server.Streamer] that says, when
// closed, what it sent.
type runSink struct {
	*server.Streamer
	to     string
	stderr io.Writer
}

// newRunSink returns the sink of --serve or --nats, or nil when neither is given.
func newRunSink(o server.StreamOptions, serveURL, natsURL string, log *slog.Logger, stderr io.Writer) (runner.Sink, error) {
	switch {
	case serveURL != "" && natsURL != "":
		return nil, errors.New("--serve and --nats name two services: give one")
	case serveURL != "":
		if !strings.HasPrefix(serveURL, "http://") && !strings.HasPrefix(serveURL, "https://") {
			return nil, fmt.Errorf("--serve %q: want http://host:port", serveURL)
		}
		o.To = serveURL
	case natsURL != "":
		if !strings.HasPrefix(natsURL, "nats://") {
			return nil, fmt.Errorf("--nats %q: want nats://host:port", natsURL)
		}
		o.To = natsURL
	default:
		return nil, nil
	}
	o.Logger = log
	o.Token = cmp.Or(o.Token, os.Getenv("ISOVET_TOKEN"))
	return &runSink{Streamer: server.NewStreamer(o), to: o.To, stderr: stderr}, nil
}

// Close sends what is left and says what was sent, or fails with what went wrong.
func (s *runSink) Close() error {
	st, err := s.Streamer.Close()
	where := s.to
	if st.Stream != "" {
		how := "existing stream"
		if st.Created {
			how = "stream created"
		}
		where += fmt.Sprintf(" (%s %s)", how, st.Stream)
	}
	if err != nil {
		return fmt.Errorf("streaming to %s failed after it accepted %d transactions (%d not sent): %w; the run's own history (--out) and checks are complete and unaffected", where, st.Sent, st.NotSent, err)
	}
	fmt.Fprintf(s.stderr, "streamed %d transactions to %s\n", st.Sent, where)
	return nil
}

// runProgress draws, on a terminal, the workload's templates done of all, their rate and
// the aborts so far; finish takes the bar to its end, which clears it, so that what is
// printed next starts on a line of its own. finish may be called more than once.
func runProgress(w io.Writer) (report func(done, aborted, total int, elapsed time.Duration), finish func()) {
	if !isTerminal(w) {
		return nil, func() {}
	}
	var bar *progressbar.ProgressBar
	report = func(done, aborted, total int, elapsed time.Duration) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("running"),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("txn"),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish(), progressbar.OptionSetWidth(30))
		}
		bar.Describe(fmt.Sprintf("running (%d aborted)", aborted))
		// done counts every transaction recorded, retries of aborted ones too: the templates
		// finished are those that did not abort (a template that gave up is finished too,
		// and the bar's end counts it).
		_ = bar.Set(min(done-aborted, total))
	}
	finish = func() {
		if bar != nil {
			_ = bar.Finish()
			bar = nil
		}
	}
	return report, finish
}
