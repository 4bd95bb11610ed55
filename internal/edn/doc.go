// Package edn is a schema-agnostic, streaming decoder for EDN (extensible data notation, the
// Clojure data syntax Jepsen writes its histories in) and, in JSON mode, for JSON, both into
// one [Value] tree. It also prints values back as EDN ([Append]).
//
// # What it reads
//
// EDN mode reads maps, vectors, lists and sets; keywords and symbols; strings with escapes;
// integers (int64, or [BigInt] text when they do not fit or carry the N suffix); floats,
// BigDecimals (M suffix), ratios; characters; nil, true and false; ##Inf, ##-Inf and ##NaN.
// Tagged literals (#inst, #uuid, #object, Jepsen's #jepsen.history.Op{...} records) are kept
// as [Tagged] values; nothing is interpreted. #_ discards the next form; ';' starts a comment
// to the end of the line; commas are whitespace.
//
// JSON mode ([Options.JSON]) reads RFC 8259 JSON strictly (separators required, no comments)
// into the same tree: objects are [Map]s, arrays [Vector]s, strings [String]s, null [Nil].
//
// # Streaming
//
// [Decoder.Next] returns one top-level form at a time, so a file of one map per line streams.
// A file holding one big vector of maps streams too: [Decoder.Enter] opens it and
// [Decoder.More] tells whether another element follows. With [Options.Reuse] the storage
// behind a returned value's Items is recycled by the next call, which keeps a streaming
// reader's memory flat.
//
// # Positions
//
// Every value carries its [Pos] (byte offset, 1-based line, 1-based column counted in bytes),
// and every syntax error is a *parse.Error (format.ParseError) with the same location and a
// message saying what was expected.
//
// # Local names
//
//	d Decoder   v Value   p Pos   c current byte   tok token bytes
package edn
