// Package native reads and writes isovet's own history format: JSON Lines carrying the
// whole [history.History] model, one transaction per line, so that a running workload can
// append to it and a server can receive it line by line.
//
// # Format
//
// An optional first line is the header; every other non-blank line is one transaction, in
// transaction-id order:
//
//	{"isovet":1,"initial":0}
//	{"s":1,"id":17,"t":[100,250],"ops":[["w","x",1],["r","y",null]]}
//	{"s":2,"o":"u","sts":[5,0],"cts":[9,1],"ops":[["a",3,7],["r",3,[1,7]]]}
//
// Keys, values and ids are JSON scalars kept as they are: integers stay integers (int64),
// strings stay strings, null is the absent value. Transaction keys: "s" session id, "si"
// session index into the header's "sessions" (only when ids repeat), "id" source id, "o"
// outcome ("c" committed, the default; "a" aborted; "u" unknown), "t" client interval
// [begin, end] in ns, "sts"/"cts" start and commit timestamps [physical, logical], "ops".
//
// Operations are arrays: ["r",k,v] read, ["r",k,[v...]] list read, ["w",k,v] write,
// ["a",k,v] append, ["i",k,v] insert, ["d",k] delete, ["pr",pred,rows] and
// ["pw",pred,rows] predicate read and write, where pred is {"rel","expr","range":[field,
// lo,hi]} and each row is [k,v] or [k,v,{"match":false,"src":...}]. An op may end with an
// options object {"src":"init"|"none"|[txn,op], "failed":true, "t":[begin,end]}; a
// [txn,op] source names the writing op by its transaction's 0-based position in the
// stream. docs/formats.md is the full specification and docs/native.schema.json its JSON
// Schema.
//
// # Reading fast
//
// [Decoder] is a hand-written scanner over bytes (no reflection): each line is parsed into
// reusable scratch space and only then added to the builder, so a bad line leaves the
// builder untouched and [DecodeLine] can serve an online endpoint. Errors are
// [parse.Error]s naming the line, the byte column and what was expected. Lines in the
// compact form the writers emit, item and predicate ops alike, take a one-pass fast path to
// the same result; a large stream is read in two stages, one goroutine parsing blocks of
// lines while the other builds, with the same result and errors as serial reading. String
// values are interned through a small per-key cache of recent values (the fast path sends
// a predicate op's misses to the builder in one batch, and sizes the builder's value table
// from the start of the stream), and predicate rows are carved from shared arrays, so a
// history of millions of rows costs few allocations.
//
// # Writing
//
// [Write] writes a whole history; [Encoder] writes one line per call, from a history
// ([Encoder.Encode]) or from a self-contained [Txn] with original keys and values
// ([Encoder.EncodeTxn]), which is what the workload runner records.
package native
