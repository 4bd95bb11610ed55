// Package report holds the data every checker returns: a [Report] with its [Verdict], the
// [Anomaly]s found (each with the transactions and typed, reasoned edges that prove it) and
// statistics. It is data only; rendering (text, DOT, JSON) lives in internal/explain. The
// public package check re-exports these types.
package report

import (
	"context"
	"strings"
	"time"

	"isovet/history"
	"isovet/internal/anomaly"
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

// Caveat kinds. The zero value is invalid.
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
)

var caveatNames = [...]string{"invalid", "basic-only", "partial", "untimed", "placeholders"}

func (k CaveatKind) String() string {
	if int(k) < len(caveatNames) {
		return caveatNames[k]
	}
	return "invalid"
}

// Caveat is something a checker could not prove: no violation was found, but the search did
// not cover everything the level needs. A checker records it whatever its verdict; only
// check.Check decides what it does to the verdict (a pass that rests on a caveat is
// Unknown), and a report shows the sentence when it does.
type Caveat struct {
	Kind CaveatKind
	Note string // the sentence a report shows, e.g. "3 transactions have no client interval ..."
}

// AddCaveat records a caveat of kind k with its sentence.
func (r *Report) AddCaveat(k CaveatKind, note string) {
	r.Caveats = append(r.Caveats, Caveat{Kind: k, Note: note})
}

// Finish applies the verdict policy, the one rule every route to a verdict goes through: a
// pass that rests on a caveat is not a pass. It turns such a pass into Unknown, drops its
// follow-up, and adds each caveat's sentence to the notes. A failure stands (a caveat says
// only that the search for violations was incomplete), and so does a pass without caveats.
// Finishing a finished report changes nothing.
func Finish(r *Report) {
	if r == nil || r.Verdict != Pass || len(r.Caveats) == 0 {
		return
	}
	r.Verdict = Unknown
	r.Followup = nil
	for _, c := range r.Caveats {
		r.Notes = append(r.Notes, c.Note)
	}
}

// Proved reports whether r is a pass that rests on no caveat: the level holds.
func (r *Report) Proved() bool { return r.Verdict == Pass && len(r.Caveats) == 0 }

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
