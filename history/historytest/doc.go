// Package historytest reads and writes histories in a short notation made for tests, fixtures
// and bug reports, the one isovet's own tests and docs use:
//
//	h := historytest.MustParse(`
//		init x=0
//		s1: T1 r(x,0) w(x,1)
//		s2: T2 r(x,0) w(x,2)`)
//
// [Parse] reads it into a [history.History] (errors name the line and column), [MustParse]
// panics instead (for histories written in Go source), and [Format] prints a history back.
//
// # The notation
//
// A history is a list of statements separated by newlines or ";". "#" starts a comment that
// runs to the end of the line. A statement is either an initial-state declaration or one
// transaction:
//
//	init 0                  # every key starts at 0 (default: nil)
//	init x=5, y=6           # per-key initial values (commas optional)
//	s1: T1 w(x,1) w(y,1) c  # session s1, transaction T1, two writes, committed
//	s2: T2 r(x,1) r(y,0)    # outcome omitted: committed
//	T3 a(x,2) r(x,[1,2]) abort   # no session label: stays in the last session (s2)
//	T4 w(z,9) info          # unknown outcome (a Jepsen :info)
//
// A transaction is
//
//	[session ":"] [txn-id] {op} [outcome] {"@[" begin "," end "]" | "ts[" start "," commit "]"}
//
// where:
//   - session is a word or integer followed by ":". The session stays current for the
//     following transactions until another label appears. Transactions before any label go
//     to the session "s0".
//   - txn-id is a word or integer that is not followed by "(" and is not an outcome keyword.
//     It becomes [history.Txn.Source], so reports name it; without one, reports say "T<n>"
//     with n the dense id. Ids must be unique.
//   - outcome is c, commit or ok (committed, the default); abort or fail (aborted); info,
//     unknown or ? (unknown outcome).
//   - "@[b,e]" right after an op is that op's client interval ([history.Txn.OpTimes]);
//     anywhere else (after the id, or after the outcome) it is the transaction's client
//     interval ([history.Txn.Time]). Integers, nanoseconds, closed.
//   - "ts[s,c]" sets the database start and commit timestamps; each may be "p" or "p.l"
//     (hybrid logical clock: physical p, logical l).
//
// Operations (keys and values are integers, words, "quoted strings" or nil):
//
//	r(k,v)        read k = v (v may be nil: the key was absent)
//	r(k,[v1,v2])  list read of k (also rl(k,[...])); r(k,[]) is an empty list
//	w(k,v)        write
//	a(k,v)        list append (also append(k,v))
//	ins(k,v)      insert
//	del(k)        delete
//	pr("v > 2", [x=3, y=5])           predicate read: the expression and the rows it returned
//	pw("v > 2", [x=4], [y=1])         predicate write: rows it matched (and wrote), then rows
//	                                  it evaluated but did not match (optional)
//	pr("accounts", "v > 2", [x=3])    with a relation name first
//
// Predicate rows may name their source like reads ("x=3<-T1"); a row source may also be a
// predicate write of T1 with a row for the key. An expression that is a range over one
// integer column ("v = 2", "v in [1, 3]", "v >= 2", "v > 2", "v <= 2", "v < 2",
// "1 <= v <= 3") also sets the predicate's Field, Lo and Hi, so checkers can evaluate it.
//
// Each op may carry suffixes, in any order: "!" marks it failed ([history.OpFailed]);
// "<-T1" names the read's source explicitly ([history.SrcTxn]: T1's last write of the key
// with the value read, or else its last write of the key; only writes before the read if T1
// is the reader itself), "<-init" the initial state
// ([history.SrcInit]), "<-none" a read that found nothing ([history.SrcNone]); "@[b,e]" is
// the op's interval.
//
// [Format] prints a history back in this notation, one transaction per line, each with its
// session label, so that Parse(Format(h)) rebuilds h.
package historytest
