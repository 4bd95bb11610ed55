// Package certify holds the proof shortcuts: certificates that pass a history without the
// checkers' general pipelines (dependency graph, polygraph, SAT), each by finding an
// execution and replaying it against everything the history recorded. They only ever
// prove a pass: a certificate that is not found proves nothing, and the caller's pipeline
// then decides, with its witnesses. So a verdict is the same with them or without them
// ([SkipShortcuts] turns them off, and the checkers' tests compare both ways).
//
// # Which proof proves which level, and why
//
//   - The row certificate (rowcert.go, rowsearch.go) guesses a serial order from the
//     history's clocks (database commit timestamps, client commit times), repairs it where
//     the replay shows a transaction out of place, and replays it on whole rows: every read
//     must see the value, and every predicate the rows, that a serial execution in that
//     order gives. A serial order proves serializable; strong-session serializable when it
//     keeps each session's order; strict serializable when it also keeps client real time.
//     It proves the snapshot isolation levels with the same orders too, each snapshot taken
//     just before its transaction ([anomaly.Level.Implies]).
//   - The snapshot certificate (snapcert.go) replays the execution the clocks describe
//     (each transaction reads the snapshot at its start point and installs its writes at
//     its commit point, no two concurrent writers of one row): a snapshot-isolated
//     execution, so it proves snapshot isolation, strong-session SI when each snapshot
//     follows the session predecessor's commit, strong SI when it follows every commit that
//     ended before the transaction began. It has no serial order, and proves no
//     serializability level.
//   - The strict fast path (strict.go) finds a serial order that respects client real time
//     and session order on the dependency analysis of a history with client time (Vbox's
//     compact time closure), and replays it read by read (and on whole rows where the
//     analysis left predicate evaluations open: predreplay.go) before it answers. Run on the
//     strict level's own analysis ([Strict]) it proves strict serializability; run on an
//     analysis of its own ([Time], the time certificate) it proves every level strict
//     serializability implies (the snapshot isolation levels too, each snapshot just before
//     its transaction): on predicate histories, where the levels without real time leave
//     every row a predicate did not return with many candidate versions, and on blind
//     writes, where they leave a write-order choice per pair of writers of a key, it is the
//     cheap proof.
//
// Each proof is a replay of the execution it found against the history as recorded, not
// a consequence of the analysis that found it, so a mistake in the search can only cost a
// proof, never make one; and each declines what it does not model exactly, leaving those
// histories to the pipelines: the row and snapshot certificates transactions of unknown
// outcome, failed operations, lists, predicates that are not ranges over a column, and row
// images that are not whole (rowcert.go); the fast path transactions of unknown outcome,
// lists and guarded reads (strict.go).
//
// [Try] tries the proofs that need nothing built in cost order (rows, then snapshots at the
// snapshot isolation levels, then time on predicate histories with client time); [Time]
// and [Strict] are the time certificate and the fast path a checker runs after its own
// dependency analysis. A [Proof] says which route passed, which orders its execution keeps
// and so which levels it proves ([Proof.Proves]), and the sentence for the report.
package certify

import (
	"context"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
)

// Skip turns off shortcuts (and the tested stages around them), one bit each; the zero
// value skips nothing. Tests use it to compare the paths.
type Skip uint16

// The bits of [Skip].
const (
	SkipBasic     Skip = 1 << iota // the basic checks (to test the graph stages alone)
	SkipRows                       // the row certificate
	SkipSnapshots                  // the snapshot certificate
	SkipTime                       // the time certificate
	SkipFastPath                   // the strict fast path on the strict level's analysis
	// SkipSession: a plain level (serializable, snapshot isolation) is not passed by passing
	// its strong-session level.
	SkipSession
	// SkipRefusal: a history the dependency analysis refuses at a level without real time
	// is not settled through the level's real-time counterpart.
	SkipRefusal
	// SkipSchedule: si does not try the scheduled witness, and always builds the pairwise
	// write-order choices.
	SkipSchedule

	// SkipShortcuts turns off every route that can pass a history without the level's own
	// general pipeline.
	SkipShortcuts = SkipRows | SkipSnapshots | SkipTime | SkipFastPath | SkipSession | SkipRefusal
)

// Has reports whether s skips every shortcut of x.
func (s Skip) Has(x Skip) bool { return s&x == x }

// Route names the proof that passed a history.
type Route uint8

// The routes of [Proof].
const (
	RouteInvalid Route = iota
	ByRows             // the row certificate
	BySnapshots        // the snapshot certificate
	ByTime             // the time certificate: the strict fast path on an analysis of its own
	ByFastPath         // the strict fast path on the strict level's own analysis
)

// routeNames are the routes' names, as the report's phase that found each is named.
var routeNames = [...]string{RouteInvalid: "invalid", ByRows: "row-certificate", BySnapshots: "snapshot-certificate", ByTime: "time-certificate", ByFastPath: "strict-fast"}

// String returns r's name, as the report's phase that found it is named.
func (r Route) String() string {
	if int(r) >= len(routeNames) {
		return routeNames[RouteInvalid]
	}
	return routeNames[r]
}

// Proof is what a shortcut proved.
type Proof struct {
	Route Route
	// By names the order (row certificate) or the clocks (snapshot certificate) that
	// replayed.
	By string
	// Keeps says which orders the execution keeps besides the one it proves: session order,
	// client real time.
	Keeps
	// Stats are the strict fast path's, for ByTime and ByFastPath (and the reason it gave up
	// when [Strict] found no proof).
	Stats Stats
}

// Serial reports whether p is a serial order (every route but the snapshot certificate).
func (p Proof) Serial() bool { return p.Route != BySnapshots }

// strongest lists the strongest level a proof proves, by whether it is serial, then by
// the orders it keeps: none, session order, session order and real time.
var strongest = [2][3]anomaly.Level{
	{anomaly.SnapshotIsolation, anomaly.StrongSessionSI, anomaly.StrongSI},
	{anomaly.Serializable, anomaly.StrongSessionSerializable, anomaly.StrictSerializable},
}

// Level returns the strongest level p proves; it proves every level that one implies.
func (p Proof) Level() anomaly.Level {
	serial, kept := 0, 0
	if p.Serial() {
		serial = 1
	}
	if p.Session {
		kept = 1
		if p.Realtime {
			kept = 2
		}
	}
	return strongest[serial][kept]
}

// Proves reports whether p proves level.
func (p Proof) Proves(level anomaly.Level) bool {
	return p.Route != RouteInvalid && p.Level().Implies(level)
}

// serializability reports whether level is a serializability level (one that implies
// plain serializability), as against a snapshot isolation level.
func serializability(level anomaly.Level) bool { return level.Implies(anomaly.Serializable) }

// timeNotes are the sentences a pass on the time certificate adds, by whether the level is
// a serializability level.
var timeNotes = map[bool]string{
	true:  "passed with a serial order that also respects the client intervals and session order (found by the strict fast path and replayed): the history is strict-serializable too",
	false: "passed with a serial order that respects the client intervals and session order (found by the strict serializability fast path and replayed): the history is strict-serializable, which implies this level",
}

// Note says how p passed level, in a sentence for a report ("" for the strict fast path
// on the strict level's own analysis, which is that level's pipeline).
func (p Proof) Note(level anomaly.Level) string {
	switch p.Route {
	case ByRows:
		n := rowCert{By: p.By, Keeps: p.Keeps}.Note()
		if !serializability(level) {
			n += "; a serial order is snapshot isolated at this level (each snapshot taken just before its transaction)"
		}
		return n
	case BySnapshots:
		return snapCert{By: p.By, Keeps: p.Keeps}.Note()
	case ByTime:
		return timeNotes[serializability(level)]
	}
	return ""
}

// Try tries, in cost order, the proofs of level that need nothing built: the row
// certificate (client intervals widened by skew on each side), then, at the snapshot
// isolation levels, the snapshot certificate (sharing the row certificate's database),
// then, on predicate histories with client time, the time certificate ([Time]). Without
// real time, a row a predicate read did not return can have read any of the row's
// non-matching versions, and the dependency analysis's expansion can take gigabytes
// (BlindW-Pred with 1-100 rows a predicate: 20 million reads); with real time almost every
// read has one candidate. At strict serializability the time certificate is left to
// [Strict], which runs on the level's own analysis with its skew.
//
// ok says p proves level. !ok proves nothing; err is ctx's cause when it ended.
func Try(ctx context.Context, h *history.History, level anomaly.Level, skew int64, skip Skip) (p Proof, ok bool, err error) {
	db := newRowDB(h) // the row and snapshot certificates share it, one after the other
	if !skip.Has(SkipRows) {
		if p, ok, err := db.rowsProof(ctx, level, skew); ok || err != nil {
			return p, ok, err
		}
	}
	if !serializability(level) && !skip.Has(SkipSnapshots) {
		if p, ok, err := db.snapshotsProof(ctx, level, skew); ok || err != nil {
			return p, ok, err
		}
	}
	if skip.Has(SkipTime) || !timeApplies(h, level) {
		return Proof{}, false, nil
	}
	return Time(ctx, h)
}

// rowsProof is the row certificate's proof of level, if it finds one; err is ctx's cause
// when it ended.
func (r *rowDB) rowsProof(ctx context.Context, level anomaly.Level, skew int64) (Proof, bool, error) {
	info := level.Info()
	if rc, ok := r.certifyRows(ctx, skew); ok && rc.Proves(info.Session, info.Realtime) {
		return Proof{Route: ByRows, By: rc.By, Keeps: rc.Keeps}, true, nil
	}
	return Proof{}, false, context.Cause(ctx)
}

// snapshotsProof is the snapshot certificate's proof of level, if it finds one; err is
// ctx's cause when it ended.
func (r *rowDB) snapshotsProof(ctx context.Context, level anomaly.Level, skew int64) (Proof, bool, error) {
	info := level.Info()
	if sc, ok := r.certifySnapshots(ctx, skew); ok && sc.Proves(info.Session, info.Realtime) {
		return Proof{Route: BySnapshots, By: sc.By, Keeps: sc.Keeps}, true, nil
	}
	return Proof{}, false, context.Cause(ctx)
}

// timeApplies reports whether [Try] tries the time certificate on h at level: on predicate
// histories with client time, except at strict serializability, where [Strict] runs on the
// level's own analysis.
func timeApplies(h *history.History, level anomaly.Level) bool {
	return h.HasTime() && len(h.Preds) > 0 && !(serializability(level) && level.Info().Realtime)
}

// Time is the time certificate: the strict fast path run on a dependency analysis of its
// own, at strict serializability with unwidened client intervals. ok says it found and
// replayed a serial order that respects client real time and session order, which proves
// every level strict serializability implies. It only ever proves a pass: when it cannot
// (the history is not strict-serializable, or is outside the fast path's scope), the
// caller's pipeline decides, so the verdict is the same either way. err is ctx's cause
// when it ended.
func Time(ctx context.Context, h *history.History) (p Proof, ok bool, err error) {
	ok, fs, err := certifyStrict(ctx, h, 0)
	if !ok || err != nil {
		return Proof{}, false, err
	}
	return Proof{Route: ByTime, Keeps: Keeps{Session: true, Realtime: true}, Stats: fs}, true, nil
}

// Strict is the strict fast path on d, the dependency analysis of the strict level (built
// with deps.Options.NoEdges): ok says it found and replayed a serial order that respects
// real time (as d widened it) and session order. Otherwise p.Stats.Why says where it
// stopped, and the general pipeline must decide.
func Strict(ctx context.Context, d *deps.Deps) (p Proof, ok bool, err error) {
	ok, fs, err := strictFast(ctx, d)
	p = Proof{Route: ByFastPath, Keeps: Keeps{Session: true, Realtime: true}, Stats: fs}
	return p, ok, err
}
