// Package workload generates transactional workloads: pure, seeded programs of key-value
// operations that the runner executes against a database and records as a history.
//
// # Model
//
// A [Workload] is a list of sessions, each a list of [Txn] templates. A template is a list of
// [Op]s on string keys: register reads and writes, list appends and list reads. A write may
// depend on an earlier read of the same transaction ([Op.From]): its payload is the read's
// payload plus [Op.Delta], which is how read-modify-write transactions (bank transfers,
// counters, TPC-C's next order id) are expressed without leaving the key-value model, as
// CobraBench runs TPC-C, C-Twitter and RUBiS over a key-value interface.
//
// # Values
//
// A stored value is payload*[TagBase] + tag. The payload is what the application means (a
// balance, a counter); the tag is a number the runner draws fresh for every executed write,
// so written values are unique per key by default (the "UniqueValue" assumption of Cobra,
// PolySI and Elle) even when a transaction is retried. Plain rw-register writes have payload
// 0, so their values are just tags. With [Options.Duplicates] a share of the keys receives
// values drawn from a small Zipfian value space instead ([Op.Dup]), as VeriStrong's
// "general workloads" do (value space 100, θ = 0.5). The initial value of every key is 0
// unless [Workload.Initial] says otherwise.
//
// # Generators
//
// Every generator is a pure function of its [Options] (seeded with math/rand/v2 PCG):
//
//	rw-register   YCSB-like reads and writes: read-heavy (RH, 95% reads), balanced (BL, 50%),
//	              write-heavy (WH, 30% reads), as VeriStrong §6.1 (defaults 20 sessions,
//	              100 txns per session, 20 ops per txn; we default to 8 ops)
//	blindw        BlindW-RW (Cobra): an even mix of read-only and write-only txns, 8 ops each
//	list-append   Elle: appends of unique elements and whole-list reads
//	bank          transfers between accounts plus whole-bank reads; total balance invariant
//	tpcc          a TPC-C subset, 1 warehouse and 10 districts: new-order, payment,
//	              order-status, delivery, stock-level
//	twitter       C-Twitter: tweet, follow, timeline
//	rubis         a RUBiS subset: register, bid, buy-now, view-item, comment
//	write-skew    pairs of keys with a constraint each txn checks and then writes one side of
//	rmw           read-modify-write increments of a few hot counters (lost updates)
//	blindw-pred   Vbox's BlindW-Pred: range reads and range updates over a (k, v1, v2) table
//	pred-write-skew  range reads that insert into or delete from the range they read
//	              (phantoms under snapshot isolation)
//
// # Rows and predicates
//
// Row workloads set [Workload.Table] (an int64 key, value columns and a tag column) and
// [Workload.Load], loader transactions of inserts that the runner runs first and records.
// Their templates hold row operations ([RowOp]): predicate reads and writes over a [Range]
// of one column, inserts, and deletes of a row an earlier predicate read returned. An
// insert or delete may be conditional on how many rows that read returned, which is how
// pred-write-skew keeps a range at about three rows. An update sets every value column to
// a per-row function of the key ([Assign]), so the new image of every row it updates is
// known, and the tag column to a fresh number, so every image written is unique per key.
//
// Key distributions ([Dist]) are uniform, Zipfian (θ configurable, default 0.99 as in YCSB)
// and hotspot (a fraction of the keys receives most accesses).
//
// Deviations: TPC-C, C-Twitter and RUBiS are reduced to their key-value access patterns;
// rows created at run time (orders, order lines, bids) are modelled as appends to per-district
// or per-item lists, so every key is known before the run.
//
// # Local names
//
// w Workload, t Txn, o Op, s session index, k key, r the seeded source.
package workload
