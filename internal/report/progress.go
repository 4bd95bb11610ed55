package report

import (
	"sync"

	"github.com/isovet/isovet/anomaly"
)

// Stage is a part of a check, as a progress callback is told of it ([Progress]).
type Stage uint8

// Stages, in the order a check may pass through them. A checker goes through the ones its
// pipeline has, and stops at the first that decides; a check decided through another level
// (check.Check's implication, a session level tried first) goes through that level's
// stages too, Progress.Level saying which level they are for.
const (
	StageNone         Stage = iota // invalid
	StageBasic                     // the linear basic checks (and the proofs that need nothing built)
	StageDependencies              // which writer each read read, and the edges that are certain
	StageCertifying                // a proof from the history's clocks on the dependencies
	StageConstructing              // building the constraints: write orders and choices of writers
	StagePruning                   // deciding the constraints one option of which closes a cycle
	StageSolving                   // the SAT solver over the constraints left
	StageExplaining                // a minimal set of choices, and the cycle of a violation
	StageSaturating                // weak levels: the edges the read atomic or causal axioms force
	StageSearching                 // weak levels: the search over the choices of writers
	StageReplaying                 // timestamp checker: the history replayed in timestamp order
)

var stageNames = [...]string{"none", "basic checks", "dependencies", "certifying", "constructing", "pruning", "solving", "explaining", "saturating", "searching", "replaying"}

// String is the stage's name as a person reads it ("dependencies", "solving").
func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return "invalid"
}

// Progress is what a check has done so far, given to a progress callback at the start and
// end of each stage and now and then during a long one. The counts are those of the
// checker under way (Checker, at Level); a count the checker has not reached is zero.
type Progress struct {
	// Level is the level being checked: the one asked for, or one a check decides it
	// through.
	Level anomaly.Level
	// Checker names the checker under way ("ser", "si", "weak", "chronos", "basic").
	Checker string
	// Stage is the stage under way; Ended says it has just ended (its counts are final).
	Stage Stage
	Ended bool
	// Txns is the number of transactions in the history checked.
	Txns int
	// Edges counts the dependency edges known so far.
	Edges int
	// Constraints counts the choices built (write orders, writers of reads), and Pruned
	// those pruning decided.
	Constraints, Pruned int
	// Conflicts and Decisions are the SAT solver's, summed over the solvers of this
	// checker so far.
	Conflicts, Decisions int64
	// Tries counts the choices of writers the weak checker's search has tried.
	Tries int
	// Replayed counts the events (starts and commits) the timestamp checker has replayed,
	// of Events.
	Replayed, Events int
	// Anomalies counts the anomalies found so far.
	Anomalies int
	_         struct{}
}

// Meter gives a check's progress to a callback, one call at a time, whichever goroutine of
// the check reports it. A nil *Meter reports nothing, at the cost of a nil check: checkers
// call it unconditionally, and install the per-conflict hooks only when it is not nil.
type Meter struct {
	mu sync.Mutex
	f  func(Progress)
	p  Progress
}

// NewMeter returns a meter that calls f with the progress of checker at level on a history
// of txns transactions, or nil when f is nil.
func NewMeter(f func(Progress), level anomaly.Level, checker string, txns int) *Meter {
	if f == nil {
		return nil
	}
	return &Meter{f: f, p: Progress{Level: level, Checker: checker, Txns: txns}}
}

// Start ends the stage under way, if any, and starts s.
func (m *Meter) Start(s Stage) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.endLocked()
	m.p.Stage = s
	m.f(m.p)
}

// End ends the stage under way, if any.
func (m *Meter) End() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.endLocked()
}

func (m *Meter) endLocked() {
	if m.p.Stage == StageNone || m.p.Ended {
		return
	}
	m.p.Ended = true
	m.f(m.p)
	m.p.Ended = false
	m.p.Stage = StageNone
}

// Update changes the counts with set and, in a stage, reports them.
func (m *Meter) Update(set func(*Progress)) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	set(&m.p)
	if m.p.Stage != StageNone {
		m.f(m.p)
	}
}

// Solver returns a hook for one SAT solver's counters (its cumulative conflicts and
// decisions): each call adds what the solver did since the hook's last call to the meter's
// sums and reports them. Each solver needs its own hook; nil for a nil meter.
func (m *Meter) Solver() func(conflicts, decisions int64) {
	if m == nil {
		return nil
	}
	var lastC, lastD int64
	return func(c, d int64) {
		dc, dd := c-lastC, d-lastD
		lastC, lastD = c, d
		m.Update(func(p *Progress) {
			p.Conflicts += dc
			p.Decisions += dd
		})
	}
}
