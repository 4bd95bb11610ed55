// Package report holds the data every checker returns: a [Report] with its [Verdict], the
// [Anomaly]s found (each with the transactions and typed, reasoned edges that prove it) and
// statistics. It is data only; rendering (text, DOT, JSON) lives in internal/explain. The
// public package check re-exports these types.
package report

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
)

// Verdict is a check's outcome.
type Verdict uint8

// Verdicts. The zero value is Unknown: inconclusive (timeout, budget, cancellation).
const (
	Unknown Verdict = iota
	Pass            // the history satisfies the level
	Fail            // the history violates the level; Report.Anomalies says how
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	default:
		return "unknown"
	}
}

// Rel is a set of dependency relations, as a bitset.
type Rel uint16

// Relations.
const (
	WW      Rel = 1 << iota // write-write: To overwrote From's version
	WR                      // write-read: To read From's write
	RW                      // read-write (anti-dependency): To overwrote the version From read
	SO                      // session order: From precedes To in one session
	RT                      // real time: From ended before To began
	TS                      // database timestamps: From committed before To started
	PredWR                  // predicate read-dependency
	PredRW                  // predicate anti-dependency
	numRels = iota
)

var relNames = [numRels]string{"ww", "wr", "rw", "so", "rt", "ts", "pwr", "prw"}

// String renders the set as names joined by "+", e.g. "ww+rw".
func (r Rel) String() string {
	if r == 0 {
		return "none"
	}
	var parts []string
	for i := range numRels {
		if r&(1<<i) != 0 {
			parts = append(parts, relNames[i])
		}
	}
	return strings.Join(parts, "+")
}

// Has reports whether r contains every relation in s.
func (r Rel) Has(s Rel) bool { return r&s == s }

// Step is one edge of a witness: From must precede To because of Rel, on Key, with the
// values involved and a sentence saying why (which order was forced, and by what).
type Step struct {
	From, To history.TxnID
	Rel      Rel
	Key      history.Key   // -1 when the edge is not about one key (so, rt)
	Value    history.Value // the value read or written that makes the edge
	Value2   history.Value // for rw/ww: the overwriting value (Nil if none)
	Why      string        // e.g. "T2 read x=3, which T1 wrote"
	// Pred is the predicate, as the source stated it, when the edge comes from a predicate
	// read or write (a row it returned, missed or changed); "" for item edges.
	Pred string `json:",omitempty"`
	// Forced says the edge is one of several options the history left open, the others
	// ruled out because each closes a cycle (pruning), not an edge the history shows
	// directly.
	Forced bool `json:",omitempty"`
}

// Anomaly is one violation with its evidence.
type Anomaly struct {
	Kind anomaly.Kind
	// Names are further names the same evidence goes by (e.g. G-single is also a read
	// skew), most specific first.
	Also []anomaly.Kind
	Txns []history.TxnID // the transactions involved, in cycle order for cycles
	Key  history.Key     // the key for single-key findings, else -1
	// Cycle holds the edges of a dependency cycle, in order; empty for non-cycle findings.
	Cycle []Step
	// Message says what was found, in one or two sentences, naming the source's ids.
	Message string
	// RuledOut lists alternative orders that were considered and why each fails (SAT/SI
	// witnesses), one sentence each.
	RuledOut []string
}

// Is reports whether the anomaly goes by kind k: its Kind, or one of its other names (Also).
// A serializability check reports two transactions that both overwrote the version they
// read as G2-item, also known as lost-update, so a test asserts a.Is(anomaly.LostUpdate).
func (a Anomaly) Is(k anomaly.Kind) bool { return a.Kind == k || slices.Contains(a.Also, k) }

// Name is the anomaly's kind with its other names: "G-single (read-skew, fractured-read)".
func (a Anomaly) Name() string {
	if len(a.Also) == 0 {
		return a.Kind.String()
	}
	also := make([]string, len(a.Also))
	for i, k := range a.Also {
		also[i] = k.String()
	}
	return a.Kind.String() + " (" + strings.Join(also, ", ") + ")"
}

// Stats are counters a checker reports for the curious and for benchmarks.
type Stats struct {
	Txns, Committed, Aborted, Unknown  int
	Sessions, Keys, Ops                int
	KnownEdges, Constraints            int // after pruning
	PrunedConstraints                  int
	Components                         int // independent parts solved separately
	SATVars, SATClauses                int
	Conflicts, Decisions, Propagations int64
	Elapsed                            time.Duration
	Phases                             []Phase // per-phase timings, in order
}

// Phase is the time one stage took.
type Phase struct {
	Name    string
	Elapsed time.Duration
}

// CaveatKind says what a checker could not prove on its way to a verdict.
type CaveatKind uint8

// Caveat kinds. The zero value is invalid. What each does to a verdict is in caveatSpecs.
const (
	_ CaveatKind = iota
	// CaveatBasicOnly: only the linear basic checks ran; they find no cycle.
	CaveatBasicOnly
	// CaveatPartial: part of the history (predicate operations) was not, or only partly,
	// modelled.
	CaveatPartial
	// CaveatUntimed: transactions without a client interval took no part in the real-time
	// order.
	CaveatUntimed
	// CaveatPlaceholders: writers that reads name but no log holds; their other operations
	// are unknown.
	CaveatPlaceholders
	// CaveatStopped: the check was stopped (a deadline, a signal, a caller's cancellation)
	// before it decided.
	CaveatStopped
	// CaveatChosenOrder: the violations were found in an order the checker chose where the
	// history does not record one (timestamps derived from snapshots order concurrent
	// commits arbitrarily), so another order may have none.
	CaveatChosenOrder
	// CaveatUncertainOutcome: the violations were found taking transactions of unknown
	// outcome one way (committed or not) where the history does not say which.
	CaveatUncertainOutcome
	// CaveatUnloggedWriters: the only violations found were thin-air reads, in a history
	// whose log misses writers that may have committed (placeholders of unknown outcome):
	// any of them may have written the value.
	CaveatUnloggedWriters
)

// caveatSpecs is the verdict policy, one row per kind: its name, and which verdicts a caveat
// of that kind undermines. A pass resting on a caveat that undermines passes proves nothing
// (the search did not cover everything the level needs); a failure resting on one that
// undermines failures proves nothing either (what was found is not a violation of the
// history as recorded); a stopped check decided nothing, whatever it had reached.
var caveatSpecs = [...]struct {
	name                string
	pass, fail, unknown bool
}{
	{name: "invalid"},
	CaveatBasicOnly:        {name: "basic-only", pass: true},
	CaveatPartial:          {name: "partial", pass: true},
	CaveatUntimed:          {name: "untimed", pass: true},
	CaveatPlaceholders:     {name: "placeholders", pass: true},
	CaveatStopped:          {name: "stopped", pass: true, fail: true, unknown: true},
	CaveatChosenOrder:      {name: "chosen-order", fail: true},
	CaveatUncertainOutcome: {name: "uncertain-outcome", fail: true},
	CaveatUnloggedWriters:  {name: "unlogged-writers", pass: true, fail: true},
}

func (k CaveatKind) String() string {
	if int(k) < len(caveatSpecs) {
		return caveatSpecs[k].name
	}
	return "invalid"
}

// MarshalText writes the kind's name, as in JSON reports.
func (k CaveatKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// undermines reports whether a caveat of kind k leaves a verdict v unproved.
func (k CaveatKind) undermines(v Verdict) bool {
	if int(k) >= len(caveatSpecs) {
		return v != Unknown
	}
	s := caveatSpecs[k]
	switch v {
	case Pass:
		return s.pass
	case Fail:
		return s.fail
	default:
		return s.unknown
	}
}

// Caveat is something a checker could not prove on its way to a verdict. A checker records
// it whatever its verdict; only [Finish] decides what it does to the verdict (caveatSpecs),
// and a report shows the sentence when it does.
type Caveat struct {
	Kind    CaveatKind
	Note    string // the sentence a report shows, e.g. "3 transactions have no client interval ..."
	applied bool   // Finish has applied it (and shown its sentence)
}

// AddCaveat records a caveat of kind k with its sentence.
func (r *Report) AddCaveat(k CaveatKind, note string) {
	r.Caveats = append(r.Caveats, Caveat{Kind: k, Note: note})
}

// Stopped records that the check was stopped by cause (context.Cause of the check's
// context) before it could decide; [Finish] makes the verdict Unknown.
func (r *Report) Stopped(cause error) {
	r.AddCaveat(CaveatStopped, "the check was stopped before it could decide: "+cause.Error())
}

// StoppedBy reports whether err, which a check returned under ctx, means the check was
// stopped rather than failed: a cancellation or deadline, or any error once ctx ended.
func StoppedBy(ctx context.Context, err error) bool {
	return err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil)
}

// Ended returns err, or ctx's cause when ctx ended and the check found no violation: a pass
// reached as ctx ended is not returned as one (the caller stopped waiting).
func Ended(ctx context.Context, r *Report, err error) error {
	if err == nil && r != nil && r.Verdict != Fail && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// Settle ends a check whose report r ended with err under ctx: a stopped check records the
// stopped caveat, and [Finish] applies the policy. It returns r and ctx's cause for a
// stopped check, no report and err for another error, else r.
func Settle(ctx context.Context, r *Report, err error) (*Report, error) {
	stopped := StoppedBy(ctx, err)
	if stopped {
		r.Stopped(err)
	}
	Finish(r)
	switch {
	case stopped:
		return r, context.Cause(ctx)
	case err != nil:
		return nil, err
	}
	return r, nil
}

// Finish applies the verdict policy, the one rule every route to a verdict goes through: a
// verdict that rests on a caveat undermining it (caveatSpecs) is Unknown. A pass becomes
// Unknown and loses its follow-up; a failure becomes Unknown and loses its anomalies; the
// sentence of each caveat that did this is added to the notes, once. Caveats that undermine
// nothing the report claims change nothing. Finishing again applies only the caveats added
// since.
func Finish(r *Report) {
	if r == nil {
		return
	}
	v := r.Verdict
	var notes []string
	for i := range r.Caveats {
		c := &r.Caveats[i]
		if c.applied || !c.Kind.undermines(v) {
			continue
		}
		c.applied = true
		notes = append(notes, c.Note)
	}
	if len(notes) == 0 {
		return
	}
	r.Verdict = Unknown
	r.Followup = nil
	if v == Fail {
		r.Anomalies = nil
	}
	r.Notes = append(r.Notes, notes...)
}

// Undermined reports whether r's verdict rests on a caveat that undermines it: [Finish]
// will make it Unknown, or made it Unknown.
func (r *Report) Undermined() bool {
	for _, c := range r.Caveats {
		if c.applied || c.Kind.undermines(r.Verdict) {
			return true
		}
	}
	return false
}

// Applied returns the caveats [Finish] applied: those that made the verdict Unknown.
func (r *Report) Applied() []Caveat {
	var out []Caveat
	for _, c := range r.Caveats {
		if c.applied {
			out = append(out, c)
		}
	}
	return out
}

// StoppedOnly reports whether r is Unknown only because its check was stopped: the stopped
// caveat is the one Finish applied (a check run again without the bound that stopped it may
// decide).
func (r *Report) StoppedOnly() bool {
	a := r.Applied()
	return r.Verdict == Unknown && len(a) == 1 && a[0].Kind == CaveatStopped
}

// Proved reports whether r is a pass that rests on no caveat undermining it: the level holds.
func (r *Report) Proved() bool { return r.Verdict == Pass && !r.Undermined() }

// Report is the result of checking one history against one level.
type Report struct {
	Level     anomaly.Level
	Checker   string // which checker produced it, e.g. "basic", "ser-sat", "chronos"
	Verdict   Verdict
	Anomalies []Anomaly
	// Notes are what the user should know: the reading of failed events chosen, clock skew
	// used, transactions dropped unchecked, why the verdict is unknown.
	Notes []string
	// Caveats are what the checker could not prove ([Caveat]); check.Check turns a pass
	// with any into Unknown and moves their sentences to Notes.
	Caveats []Caveat `json:",omitempty"`
	Stats   Stats
	// Followup, when set, says whether the level's real-time counterpart (strict-serializable
	// for the serializable levels, strong-snapshot-isolation for the snapshot isolation
	// ones) holds too, for a pass of a level that ignores the client time the history
	// records: the checker's own evidence may prove it, or check.FollowRealtime checks it.
	Followup *Followup
	// Failed, when the history holds statements its source marked as failed, says what the
	// check made of them: which transactions logged as committed contain one (a defect of
	// the recording, named before any anomaly) and which reading was used
	// ([history.ResolveFailed]). Nil when there are none.
	Failed *history.Failed `json:",omitempty"`
	// History is the checked history, so renderers can name keys, values and transactions.
	History *history.History `json:"-"`
}

// Followup is what is known of a stronger level after a pass (see [Report.Followup]).
type Followup struct {
	Level   anomaly.Level
	Verdict Verdict
	// Anomaly is the first anomaly found at Level, when it fails there.
	Anomaly *Anomaly
	// Why says how a pass was proved, or why the verdict is unknown.
	Why string
}

// Merge folds o's findings into r: the verdict is Fail if either fails, else Unknown if
// either is unknown, else Pass.
func (r *Report) Merge(o *Report) {
	switch {
	case r.Verdict == Fail || o.Verdict == Fail:
		r.Verdict = Fail
	case r.Verdict == Unknown || o.Verdict == Unknown:
		r.Verdict = Unknown
	}
	r.Anomalies = append(r.Anomalies, o.Anomalies...)
	r.Notes = append(r.Notes, o.Notes...)
	r.Caveats = append(r.Caveats, o.Caveats...)
}

// ByStronger returns, as the report of level, the report check gives for a stronger level
// that implies it, when that is a pass resting on no caveat (with note first among its notes) or an Unknown
// because ctx ended; ok is false otherwise (a violation of the stronger level need not be
// one of level), and the caller decides level itself. Checkers use it to pass a weak level
// on a stronger level's certificate when that is much cheaper to decide.
func ByStronger(ctx context.Context, level anomaly.Level, note string, check func() (*Report, error)) (rep *Report, ok bool, err error) {
	sub, err := check()
	if sub != nil && ctx.Err() != nil {
		sub.Level = level
		return sub, true, err
	}
	if err != nil || !sub.Proved() {
		return nil, false, nil
	}
	sub.Level = level
	sub.Notes = append([]string{note}, sub.Notes...)
	return sub, true, nil
}
