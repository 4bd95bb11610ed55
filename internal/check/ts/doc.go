// Package ts checks snapshot isolation and serializability from the database's own start and
// commit timestamps: Chronos offline ([Check], [Run]) and Aion online ([Online]), after Li,
// Wei et al., "Online Timestamp-based Transactional Isolation Checking of Database Systems"
// (ICDE 2025).
//
// # What it computes
//
// With timestamps the abstract execution is fixed rather than searched for: arbitration
// (AR) is commit order and T1 is visible to T2 when T1 committed no later than T2 started
// (Defs 5 and 6). Snapshot isolation then reduces to four axioms checked in one replay:
//
//   - SESSION: each transaction of a session starts no earlier than the previous one
//     committed (strong-session levels only, or when [Options.Session] asks for it);
//   - INT: a read after the transaction's own read or write of the key returns that value;
//   - EXT: the first read of a key returns the value of the last writer, in commit order,
//     visible at the snapshot (the initial value when there is none), per (transaction, key);
//   - NOCONFLICT: two writers of one key never overlap.
//
// Serializability (Aion-SER) replaces the snapshot with the commit point: every external
// read returns the state left by all transactions that committed before it, start
// timestamps are ignored and NOCONFLICT is not checked.
//
// # Event order (deviation: ties)
//
// The paper assumes unique timestamps; HLC databases and read-only transactions produce
// ties. Every transaction gets a commit position and a snapshot position, compared by
// (timestamp, phase, source id, dense id):
//
//	phase 0  the commit of a transaction with start < commit
//	phase 1  a point transaction (start == commit): its reads, then its writes
//	phase 2  the start (snapshot) of a transaction with start < commit
//
// so a commit at t is visible to a start at t (Def 6, commit_ts <= start_ts), and a point
// transaction reads before it writes. A reader sees exactly the writers whose commit
// position is below its snapshot position. Two writers of one key with the same commit
// timestamp contradict the unique-timestamp assumption and are reported as
// [anomaly.TimestampOrder]; their AR order is then the tie-break above.
//
// # Other deviations from the paper
//
//   - EXT is tracked per (transaction, key), never as one flag per transaction.
//   - INT, the external reads and the final writes of a transaction are derived once, when
//     it is first seen; nothing like int_val is reset or re-walked.
//   - Lists are checked whole: the snapshot of a list key is the concatenation, in commit
//     order, of every visible writer's appends, and an external read must equal it plus
//     the transaction's own earlier appends. The authors' artifact compares only the last
//     element.
//   - Online, versions are kept per key (ordered by commit position) instead of a frontier
//     copied at every commit; a late writer re-checks only the readers of its keys whose
//     snapshot it now precedes.
//
// # Local names
//
//	h History   t Txn/TxnID   k Key   v Value   s Session   p pos   w writer/version
//	r read      x compiled txn   o Online
package ts
