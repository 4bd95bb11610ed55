// Package elle reads and writes Jepsen histories in the shape Elle checks (Kingsbury and
// Alvaro, "Elle: Inferring Isolation Anomalies from Experimental Observations", VLDB 2020;
// jepsen-io/elle and ligurio/elle-cli), in EDN ("elle-edn") and in JSON ("elle-json").
//
// # Input
//
// A history is a sequence of operation maps, one per line or inside one vector (or list):
//
//	{:type :invoke, :f :txn, :value [[:append 3 7] [:r 4 nil]], :process 1, :time 5, :index 10}
//	{:type :ok,     :f :txn, :value [[:append 3 7] [:r 4 [1 2]]], :process 1, :time 9, :index 11}
//
// JSON has the same structure with strings: {"type":"ok","f":"txn","value":[["append",3,7],
// ["r",4,[1,2]]],"process":1}. Jepsen's #jepsen.history.Op{...} records are read as maps.
// Micro-ops are list-append ([:append k v], [:r k [v ...]]) or rw-register ([:w k v],
// [:r k v]); one history holds one of the two workloads. Keys and values may be any EDN
// value Elle compares by text: integers stay integers, keywords keep their colon (":x"),
// strings and symbols their text, and anything else (vectors such as [:anti 1], maps, sets,
// ...) is a string datum holding its canonical EDN rendering (lists as vectors, map entries
// and set elements sorted). Floats, ratios, decimals, tagged literals and nil values are
// refused, as is a string that renders like another kind of value in the same history
// ([ErrAmbiguousDatum]).
//
// # Pairing
//
// Operations pair by :process, as Jepsen defines it: a process runs one operation at a time.
//   - :invoke then :ok: a committed transaction whose micro-ops (and read results) are the
//     :ok's. A completion without :value takes the invoke's.
//   - :invoke then :fail: an aborted transaction.
//   - :invoke then :info: outcome unknown. The process never returns: if its id shows up
//     again, that is a new session (history.Builder.NewSession).
//   - an :invoke still open at the end of the input: outcome unknown.
//   - a completion with no invoke before it (Plume writes such histories): a transaction of
//     that completion alone, with no client interval.
//
// A process may have several open invokes (a recorder that pipelines transactions; Jepsen's
// own history library refuses them). A completion then completes the oldest open invoke
// whose micro-ops it repeats (functions, keys, written values; with one open invoke, that
// one). Each open invoke runs in a lane of the process (the lane freed last, or a new one),
// a session of its own, so that session order links a transaction only to ones that
// completed before it was invoked. Alike open invokes cannot be told apart, so when one
// completes, the others' beginnings move back to its own.
//
// Each process is a session (one per lane). Operations of non-client processes (:process
// :nemesis, any keyword) are skipped, as Elle skips them. Operations without :process
// belong to one session of their own (the Elle paper's example history has none).
//
// A transaction's source id ([history.Txn.Source]) is the :index of its invoke, or of its
// completion when there is no invoke (nil when the input has no :index).
//
// Reads whose result is unknown are dropped: in an aborted or unknown transaction a read of
// nil only repeats the invoke's placeholder, so it says nothing about the database. In a
// committed transaction, [:r k nil] is a read of the initial state: an empty list in a
// list-append history, [history.Nil] in an rw-register one.
//
// # Time
//
// With :time on every invoke and every completion of an invoke, a transaction's client
// interval is [invoke :time, completion :time] in nanoseconds (closed). Otherwise, as Elle
// orders transactions in real time by their place in the history, every interval is made of
// positions: operations are numbered 0, 1, 2, ... in input order, and the interval is
// [invoke's number, completion's number], so that one ends before another begins exactly when
// its completion comes before the other's invoke; the history gets [PositionsNote]. A
// transaction with an unknown outcome may take effect at any time after its invoke, so its
// interval ends at the end of the history (the latest :time, or past the last operation)
// instead of at its :info. A completion alone has no interval. Decode calls on one Decoder
// continue one history: positions keep counting.
//
// # Non-transactional histories
//
// Jepsen's bank, counter, set, cas-register and mutex workloads (any :f other than :txn
// whose :value is not a list of micro-ops) are refused with [ErrNotTransactional], naming
// the file, line and the :f found. An operation with another :f whose :value is a list of
// micro-ops (Jepsen's long-fork :read) is read as a transaction.
//
// # Output
//
// [WriteEDN] and [WriteJSON] write one invoke and one completion per transaction, in id
// order, one map per line, which Elle and elle-cli accept, with the client interval as
// :time; a transaction without one is written as its completion alone. A session that shares
// its process with an earlier one it would join on reading back is written with a fresh
// process; a collection key or value is written as the collection. The writers keep source ids when
// they can serve as Jepsen indices (integers, increasing by at least 2); otherwise they
// number operations 0, 1, 2, ... and the ids read back are those.
//
// # Local names
//
//	d Decoder   pr proc (a Jepsen process)   l lane (a session of a process)   m mop (micro-op)
//	v edn.Value   b Builder   at, sp positions (of an operation, of a transaction)
package elle
