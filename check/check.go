// Package check decides whether a history satisfies an isolation level, and says why not.
//
//	h, _, err := format.Open("history.edn", format.Auto, format.Options{})
//	rep, err := check.Check(ctx, h, check.Serializable, check.Options{})
//	if rep.Verdict == check.Fail { ... rep.Anomalies ... }
//
// A violation is a result (Verdict Fail), not an error. An inconclusive check (timeout,
// budget, cancellation) returns Verdict Unknown together with context.Cause(ctx). An error
// means bad input.
package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/basic"
	"github.com/isovet/isovet/internal/report"
)

// The data a check returns. They are defined in an internal package that every checker
// shares and are re-exported here, so a caller names them all through package check (and
// the kinds and levels through package anomaly).
type (
	// Report is the result of checking one history against one level: the Verdict, the
	// Anomalies found with their evidence, Notes the caller should read, the Caveats the
	// checker could not prove, Stats, and the checked History (for renderers).
	Report = report.Report
	// Anomaly is one violation with its evidence: its Kind, further names (Also), the
	// transactions involved, the edges of its dependency cycle (Cycle) and a Message.
	Anomaly = report.Anomaly
	// Step is one edge of an anomaly's cycle: From must precede To because of Rel, on Key.
	Step = report.Step
	// Stats are counters a checker reports (transactions, constraints, solver work, time).
	Stats = report.Stats
	// Phase is the time one stage of a check took (Stats.Phases, with Options.Now).
	Phase = report.Phase
	// Verdict is a check's outcome: Pass, Fail or Unknown.
	Verdict = report.Verdict
	// Rel is a set of dependency relations (WW, WR, RW, SO, RT, TS, PredWR, PredRW).
	Rel = report.Rel
	// Caveat is something a checker could not prove on its way to a verdict.
	Caveat = report.Caveat
	// CaveatKind says what kind of thing a [Caveat] could not prove.
	CaveatKind = report.CaveatKind
	// Followup is what is known of a level's real-time counterpart after a pass
	// (Report.Followup, [FollowRealtime]).
	Followup = report.Followup
	// Level is an isolation level; see package anomaly.
	Level = anomaly.Level
	// Kind is an anomaly kind; see package anomaly.
	Kind = anomaly.Kind
	// Progress is what a check has done so far, given to Options.Progress: the level and
	// checker under way, the Stage (Ended when it has just ended) and its counts.
	Progress = report.Progress
	// Stage is a part of a check (basic checks, dependencies, pruning, solving, ...).
	Stage = report.Stage
)

// Stages of a check, as Options.Progress is told of them. A checker passes through the
// ones its pipeline has and stops at the first that decides.
const (
	StageBasic        = report.StageBasic        // the linear basic checks, with the proofs that need nothing built
	StageDependencies = report.StageDependencies // which writer each read read, and the edges that are certain
	StageCertifying   = report.StageCertifying   // a proof from the history's clocks on the dependencies
	StageConstructing = report.StageConstructing // building the constraints: write orders, choices of writers
	StagePruning      = report.StagePruning      // deciding the constraints one option of which closes a cycle
	StageSolving      = report.StageSolving      // the SAT solver over the constraints left
	StageExplaining   = report.StageExplaining   // a minimal set of choices, and the cycle of a violation
	StageSaturating   = report.StageSaturating   // weak levels: the edges the read atomic or causal axioms force
	StageSearching    = report.StageSearching    // weak levels: the search over the choices of writers
	StageReplaying    = report.StageReplaying    // timestamp checker: the history replayed in timestamp order
)

// Verdicts.
const (
	Unknown = report.Unknown // inconclusive: timeout, budget, cancellation, or a caveat
	Pass    = report.Pass    // the history satisfies the level
	Fail    = report.Fail    // the history violates the level; Report.Anomalies says how
)

// Dependency relations, the members of a [Rel].
const (
	WW     = report.WW     // write-write: To overwrote From's version
	WR     = report.WR     // write-read: To read From's write
	RW     = report.RW     // read-write (anti-dependency): To overwrote the version From read
	SO     = report.SO     // session order
	RT     = report.RT     // real time: From ended before To began
	TS     = report.TS     // database timestamps: From committed before To started
	PredWR = report.PredWR // predicate read-dependency
	PredRW = report.PredRW // predicate anti-dependency
)

// Caveat kinds. A caveat of the first four kinds turns a pass into Unknown; one of the last
// two turns a failure into Unknown; a stopped check is Unknown whatever it reached.
const (
	CaveatBasicOnly        = report.CaveatBasicOnly        // only the linear basic checks ran
	CaveatPartial          = report.CaveatPartial          // part of the history was not modelled
	CaveatUntimed          = report.CaveatUntimed          // transactions without a client interval
	CaveatPlaceholders     = report.CaveatPlaceholders     // writers that no log holds
	CaveatStopped          = report.CaveatStopped          // the check was stopped before it decided
	CaveatChosenOrder      = report.CaveatChosenOrder      // violations found in an order the checker chose
	CaveatUncertainOutcome = report.CaveatUncertainOutcome // violations found taking unknown outcomes one way
)

// Levels.
const (
	ReadCommitted             = anomaly.ReadCommitted
	ReadAtomic                = anomaly.ReadAtomic
	Causal                    = anomaly.Causal
	SnapshotIsolation         = anomaly.SnapshotIsolation
	StrongSessionSI           = anomaly.StrongSessionSI
	StrongSI                  = anomaly.StrongSI
	Serializable              = anomaly.Serializable
	StrongSessionSerializable = anomaly.StrongSessionSerializable
	StrictSerializable        = anomaly.StrictSerializable
)

// Method selects how a level is checked.
type Method uint8

// Methods. The zero value picks the best method the history allows.
const (
	MethodAuto      Method = iota
	MethodBlackBox         // black-box: polygraph + SAT, from what clients saw
	MethodTimestamp        // Chronos: from the database's start and commit timestamps
	MethodBasic            // only the linear basic checks
)

var methodNames = [...]string{"auto", "black-box", "timestamp", "basic"}

func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return "invalid"
}

// ParseMethod parses a method name.
func ParseMethod(s string) (Method, bool) {
	for i, n := range methodNames {
		if n == s {
			return Method(i), true
		}
	}
	return MethodAuto, false
}

// Options tune a check. The zero value is usable.
type Options struct {
	Method Method
	// ClockSkew widens every client interval by this much on both sides (strict levels).
	ClockSkew time.Duration
	// MaxAnomalies caps how many anomalies are reported (0: a default of 20).
	MaxAnomalies int
	// Parallelism bounds parallel work on independent parts (0: GOMAXPROCS).
	Parallelism int
	// FailedStatements says how a transaction logged as committed that contains a statement
	// its source marked as failed is read (a failed statement never takes effect). The zero
	// value, history.FailedUncertain, checks it as committed without its failed statements
	// or rolled back, whichever the level allows; it is sound for every database.
	FailedStatements history.FailedReading
	// Now, when set, lets checkers time their phases (Report.Stats.Phases). The core never
	// reads the clock itself; the CLI passes time.Now.
	Now func() time.Time
	// Progress, when set, is called as each stage of the check starts and ends, and during
	// the long ones every few hundred solver conflicts (or thousand events replayed), with
	// what the check has done so far. Calls come one at a time, from the goroutine running
	// Check or from goroutines it started, never after Check returns; f should return
	// quickly (store the value and draw it elsewhere). A check decided through other levels
	// (a weak level through snapshot isolation, a level through its session variant)
	// reports their stages too, each Progress naming its Level. It never changes a
	// verdict; nil costs nothing.
	Progress func(Progress)
	// implied marks a check made to decide another level through implication (imply.go),
	// which does not itself go through implication again.
	implied bool
	// unbounded lifts the bound on the weak checker's search over choices of writers (its
	// last attempt, after implication, imply.go).
	unbounded bool
}

// firstSearchConflicts bounds the weak checker's search over choices of writers before the
// stronger levels are tried (imply.go). Measured on VeriStrong's 10,000-transaction
// histories, whose causal searches are slow where strong-session snapshot isolation passes
// in seconds: HD-10k at causal 5.1 s in all with a bound of 300 conflicts, 5.8 s with
// 1,000; BL-10k at read atomic needs more than 100 to pass in the weak checker (0.27 s, not
// 2.2 s through snapshot isolation). The random histories of the differential tests need a
// few dozen at most.
var firstSearchConflicts int64 = 300

// weakConflicts is the weak checker's bound on its search (0: none).
func (o Options) weakConflicts() int64 {
	if o.unbounded {
		return 0
	}
	return firstSearchConflicts
}

// Errors.
var (
	// ErrNotImplemented is returned for a level or method whose checker has not landed.
	ErrNotImplemented = errors.New("check: not implemented yet")
	// ErrNeedsTime is returned when a level or method needs time data the history lacks.
	ErrNeedsTime = errors.New("check: history lacks the time data this check needs")
)

// ParseLevel parses a level name or alias, in any case ([anomaly.ParseLevel]). For a name
// databases use for different levels (repeatable-read, read-uncommitted) the error says
// what it means on each and which level to check instead.
func ParseLevel(name string) (Level, error) {
	l, ok := anomaly.ParseLevel(name)
	if d, amb := anomaly.LookupDatabaseName(name); !ok && amb {
		return 0, errors.New(d.String())
	}
	if !ok {
		var names []string
		for _, l := range anomaly.Levels() {
			names = append(names, l.String())
		}
		return 0, fmt.Errorf("unknown level %q (levels: %s)", name, strings.Join(names, ", "))
	}
	return l, nil
}

// Levels returns every level isovet knows, weakest first.
func Levels() []Level { return anomaly.Levels() }

// Checker checks histories against the levels it supports.
type Checker struct {
	Name    string
	Method  Method
	Levels  []Level
	Summary string
	// Decides says that the checker's pass proves the level. The basic checks' does not:
	// they find no dependency cycle, so check.Check reads their pass as Unknown.
	Decides bool
	// Run checks h against level. It must honour ctx: on cancellation it returns a report
	// with Verdict Unknown and context.Cause(ctx).
	Run func(ctx context.Context, h *history.History, level Level, o Options) (*Report, error)
}

// Supports reports whether c checks level l.
func (c *Checker) Supports(l Level) bool {
	for _, x := range c.Levels {
		if x == l {
			return true
		}
	}
	return false
}

// Checkers returns the registered checkers in preference order. The slice and each
// checker's Levels are copies the caller owns: changing them changes no check.
func Checkers() []Checker {
	out := slices.Clone(checkers)
	for i := range out {
		out[i].Levels = slices.Clone(out[i].Levels)
	}
	return out
}

// Supported reports which checker would run for level l and method m, or an error saying why
// none can (not implemented yet, or the method is unknown).
//
// With MethodAuto the black-box checkers come first; the timestamp checker is chosen only
// when h carries database timestamps (h may be nil to ask about levels alone).
func Supported(h *history.History, l Level, m Method) (*Checker, error) {
	for i := range checkers {
		if c := &checkers[i]; c.offered(h, m) && c.Supports(l) {
			return c, nil
		}
	}
	if m == MethodAuto {
		return nil, fmt.Errorf("%w: no checker for level %s has landed yet; run the basic checks with --method basic", ErrNotImplemented, l)
	}
	return nil, fmt.Errorf("%w: method %s does not check level %s", ErrNotImplemented, m, l)
}

// offered reports whether Supported may choose c for method m on h: c's own method, or
// with MethodAuto any but the basic checks (the timestamp checker only when h carries
// database timestamps).
func (c *Checker) offered(h *history.History, m Method) bool {
	if m != MethodAuto {
		return c.Method == m
	}
	if c.Method == MethodTimestamp && (h == nil || !h.HasTimestamps()) {
		return false
	}
	return c.Method != MethodBasic
}

// Check checks h against level with the checker opts.Method selects. Every route to a
// verdict goes through it, in one order: the history is read as recorded (a statement
// marked failed took no effect, opts.FailedStatements says what became of its transaction),
// the checker is chosen, it runs, and finish applies the verdict policy (a pass that rests
// on a caveat, or on checks that cannot decide the level, is Unknown) and says what the
// report should.
func Check(ctx context.Context, h *history.History, level Level, opts Options) (*Report, error) {
	if opts.MaxAnomalies == 0 {
		opts.MaxAnomalies = 20
	}
	recorded := h
	h, failed, err := history.ResolveFailed(h, opts.FailedStatements)
	if err != nil {
		return nil, err
	}
	c, err := route(h, level, opts.Method)
	if err != nil {
		return nil, err
	}
	var rep *Report
	if c.Method == MethodTimestamp && len(failed.Committed) > 0 && failed.Reading == history.FailedUncertain {
		rep, err = runBothOutcomes(ctx, c, recorded, level, opts, len(failed.Committed))
	} else {
		rep, err = c.Run(ctx, h, level, opts)
	}
	if rep != nil && err == nil && rep.Verdict == Unknown {
		rep, err = byImplication(ctx, h, level, opts, rep)
	}
	if rep != nil {
		finish(rep, c, level, recorded, h, failed)
	}
	return rep, err
}

// route returns the checker for level and method m. With MethodAuto and no checker that
// decides the level, it falls back to the basic checks, which can prove a violation but
// never a pass.
func route(h *history.History, level Level, m Method) (*Checker, error) {
	c, err := Supported(h, level, m)
	if err == nil {
		return c, nil
	}
	if m != MethodAuto || !errors.Is(err, ErrNotImplemented) {
		return nil, err
	}
	if b, berr := Supported(h, level, MethodBasic); berr == nil {
		return b, nil
	}
	return nil, err
}

// finish applies the verdict policy to rep, which checker c gave for level on h (the
// history as checked; recorded is the history as read), and completes what the report
// says: a pass of a checker that cannot decide the level is Unknown (report.Finish), and so
// is any pass that rests on a caveat; then the notes a reader needs, the reader's own
// decisions first.
func finish(rep *Report, c *Checker, level Level, recorded, h *history.History, failed history.Failed) {
	if !c.Decides {
		rep.AddCaveat(report.CaveatBasicOnly, fmt.Sprintf("only the basic checks ran (aborted, intermediate and thin-air reads, internal consistency, list orders): they find no dependency cycle, so finding nothing does not show that %s holds", level))
	}
	placeholderCaveat(rep, h)
	report.Finish(rep)
	addHistoryNotes(rep, h)
	placeholdersLast(rep, h)
	if failed.Ops > 0 {
		rep.Failed = &failed
	}
	rep.History = recorded
	rep.Level = level
	if rep.Checker == "" {
		rep.Checker = c.Name
	}
}

// placeholderCaveat records, for a checker that did not, that h holds placeholder writers:
// their other operations were never recorded (a read, a write the recorded transactions
// would conflict with), so no pass at any level can rest on them.
func placeholderCaveat(rep *Report, h *history.History) {
	if len(h.Placeholders()) == 0 || slices.ContainsFunc(rep.Caveats, func(c Caveat) bool { return c.Kind == CaveatPlaceholders }) {
		return
	}
	rep.AddCaveat(CaveatPlaceholders, report.PlaceholderFinding(h))
}

// placeholdersLast lists rep's anomalies among recorded transactions before those through
// placeholders (writers no log holds, [history.PlaceholderSession]), and adds the one finding
// on the reads of placeholders (report.PlaceholderFinding), unless a caveat already gave it.
func placeholdersLast(rep *Report, h *history.History) {
	ph := report.PlaceholdersOf(h)
	if ph.Len() == 0 {
		return
	}
	ph.Last(rep.Anomalies)
	if f := report.PlaceholderFinding(h); !slices.Contains(rep.Notes, f) {
		rep.Notes = append(rep.Notes, f)
	}
}

// addHistoryNotes adds the notes rep needs on h: that a pass holds vacuously, the hint on
// the initial value that thin-air reads may need (first), and the reader's own notes
// (before all).
func addHistoryNotes(rep *Report, h *history.History) {
	if rep.Verdict == Pass && !h.AnyCommitted() {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the history holds no committed transaction (%s in %s), so the level holds vacuously: check that the right files were read", count(len(h.Txns), "transaction"), count(len(h.Sessions), "session")))
	}
	if slices.ContainsFunc(rep.Anomalies, func(a Anomaly) bool { return a.Kind == anomaly.ThinAirRead || a.Kind == anomaly.ExtViolation }) {
		if hint := basic.InitialHint(h); hint != "" {
			rep.Notes = append([]string{hint}, rep.Notes...)
		}
	}
	if len(h.Notes) > 0 {
		rep.Notes = append(slices.Clip(h.Notes), rep.Notes...)
	}
}

// runBothOutcomes runs the timestamp checker c, which takes a transaction of unknown outcome
// as never committed, on the uncertain reading of recorded's failed statements: once with
// every transaction logged committed with a failed statement rolled back, once with each
// committed without its failed statements. Either passing proves the level (that execution
// explains the history); both failing disproves it when they are the only two executions
// (one such transaction); otherwise the mixed executions are unchecked and the verdict is
// Unknown, saying how to decide.
func runBothOutcomes(ctx context.Context, c *Checker, recorded *history.History, level Level, opts Options, n int) (*Report, error) {
	var reps [2]*Report
	for i, r := range []history.FailedReading{history.FailedRolledBack, history.FailedSkipped} {
		h, _, err := history.ResolveFailed(recorded, r)
		if err != nil {
			return nil, err
		}
		rep, err := c.Run(ctx, h, level, opts)
		if err != nil || rep.Proved() {
			if rep != nil && err == nil {
				rep.Notes = append(rep.Notes, fmt.Sprintf("the transactions logged as committed with a failed statement were taken as %s: that execution explains the history", map[bool]string{true: "rolled back", false: "committed without their failed statements"}[i == 0]))
			}
			return rep, err
		}
		reps[i] = rep
	}
	for _, rep := range reps {
		if rep.Verdict == Unknown {
			return rep, nil
		}
	}
	return bothFailed(reps[1], n), nil
}

// bothFailed is runBothOutcomes' report when both readings of the n transactions logged
// committed with a failed statement fail the level (rep: the second one's): the level
// fails when there is one, else the mixes are unchecked and it is Unknown.
func bothFailed(rep *Report, n int) *Report {
	if n == 1 {
		rep.Notes = append(rep.Notes, "the level fails whether the transaction logged as committed with a failed statement committed without it (the anomalies shown) or rolled back")
		return rep
	}
	rep.Verdict, rep.Anomalies = Unknown, nil
	rep.Notes = append(rep.Notes, fmt.Sprintf("the timestamp checker fails the level both when the %d transactions logged as committed with a failed statement all rolled back and when all committed without it, but not every mix of the two was checked: --failed-statements=rolled-back or skipped, or --method black-box, decides", n))
	return rep
}

// count says n things: "1 session", "0 sessions".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// FollowRealtime checks, after rep passed a level that ignores the client time h records,
// that level's real-time counterpart (strict-serializable, strong-snapshot-isolation) with
// opts, and records in rep.Followup whether it holds there: a database that promises the
// weaker level seldom means to serve stale reads, and checkers that always order by client
// time (Vbox) report such a history as a violation. It changes neither rep's verdict nor its
// anomalies. ctx bounds the extra check (the caller gives it a deadline); when it ends first,
// the follow-up's verdict is Unknown. It does nothing when rep did not pass, when the
// checker's own evidence already settled the stronger level, or when h records no client
// time.
func FollowRealtime(ctx context.Context, h *history.History, rep *Report, opts Options) {
	rt, ok := rep.Level.RealtimeCounterpart()
	if !ok || rep.Verdict != Pass || rep.Followup != nil || !h.HasTime() {
		return
	}
	opts.MaxAnomalies = 1
	opts.Now = nil
	sub, err := Check(ctx, h, rt, opts)
	rep.Followup = followup(ctx, rt, sub, err)
}

// followup is what the check of rt (sub, err) says of it: its verdict and first anomaly,
// or why it has none.
func followup(ctx context.Context, rt Level, sub *Report, err error) *report.Followup {
	f := &report.Followup{Level: rt, Verdict: Unknown}
	switch {
	case sub != nil && err == nil && sub.Verdict == Fail && len(sub.Anomalies) > 0:
		f.Verdict = Fail
		f.Anomaly = &sub.Anomalies[0]
	case sub != nil && err == nil && sub.Verdict == Pass:
		f.Verdict = Pass
		f.Why = "checked separately"
	case ctx.Err() != nil:
		f.Why = "not decided in the time given to it; --level " + rt.String() + " decides it"
	case err != nil:
		f.Why = err.Error()
	default:
		f.Why = "the check there was inconclusive; --level " + rt.String() + " says why"
	}
	return f
}
