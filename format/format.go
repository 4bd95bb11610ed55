// Package format reads and writes transaction histories in every public format isovet knows,
// and sniffs which format a file is in.
//
// Each format lives in its own subpackage (format/elle, format/cobra, ...) and exports a
// Sniff function, a decoder and, where we write the format, a Write function; this package
// holds the registry table ([Formats]) that ties them together, [Open], which opens a file
// or directory, undoes gzip, sniffs and decodes, and [Read], which does the same for a
// stream such as standard input. Both read their input once, so a pipe reads as the file
// it carries, and both refuse an input that holds no transaction ([ErrEmpty]) unless
// [Options.AllowEmpty] is set.
//
// # Writing without losing meaning
//
// Each writable format lists in the registry what a history written in it can say
// ([Format.Holds], a set of [Feature]s: explicit read sources, predicates, failed flags,
// outcomes, client times, database timestamps, snapshots, the initial state, ...).
// [Losses] compares a history with a format and returns what would be lost, with counts
// and an example transaction; a read that names its writer counts only when value matching
// would not find that writer alone. [Drop] removes the droppable losses, for a caller
// (isovet convert --lossy) that chooses to write anyway. docs/formats.md has the table.
package format

import (
	"io"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/parse"
)

// ParseError is a reader's error with its location (file, line, column, byte offset).
type ParseError = parse.Error

// Decoder decodes inputs of one format into a builder. Directory formats (Cobra, Vbox) get
// one Decode call per member file, in name order; Finish runs once after the last input and
// resolves what spans files (explicit writer references, outcomes).
type Decoder interface {
	Decode(r io.Reader, name string, b *history.Builder) error
	Finish(b *history.Builder) error
}

// Options are reading options shared by every format. The zero value is usable.
type Options struct {
	// Initial, when non-nil, overrides the initial value of every key (Chronos histories
	// carry none; the authors' examples use 0).
	Initial *history.Datum
	// Progress, when set, is called as input is consumed with the bytes read so far and the
	// total size of the input files (compressed bytes for gzip files). It is not called for
	// a stream whose size is unknown (a pipe).
	Progress func(done, total int64)
	// AllowEmpty accepts an input that holds no transaction, as an empty history. Without
	// it, such an input is an error wrapping [ErrEmpty]: an empty or cut file, or a directory
	// of empty logs, is far more often a mistake than a history.
	AllowEmpty bool
	_          struct{}
}

// Format describes one history format.
type Format struct {
	Name    string   // canonical name, as given to --format and --to
	Aliases []string // other accepted names
	Summary string   // one line for --help
	// Dir is set for formats whose history is a directory of files; Members matches the
	// member file names (path.Match syntax, e.g. "T*.log").
	Dir     bool
	Members string
	// DirFile, for a single-file format, is the name under which a tool writes one history
	// of this format into a directory of its own (dbcop's history.bincode): [Open] reads
	// such a directory as that file.
	DirFile string
	// Sniff reports whether a file with this name and first bytes (up to 4 KiB) looks like
	// this format. Sniffers must be cheap and must not accept other formats' files.
	Sniff func(name string, head []byte) bool
	// New returns a fresh decoder.
	New func(o Options) Decoder
	// Write writes h in this format, or is nil when isovet does not write it (or writes it
	// as a directory: WriteDir).
	Write func(w io.Writer, h *history.History) error
	// WriteDir writes h as the member files of a directory format, calling create once per
	// file, in order, with its base name (T0.log), and writing the file to the writer it
	// returns; nil when isovet does not write the format so. Opening, closing and placing
	// the files is the caller's: the writer never touches the file system.
	WriteDir func(h *history.History, create func(name string) (io.Writer, error)) error
	// Holds lists what a written history of this format can say ([Feature]); [Losses]
	// compares a history with it before writing.
	Holds Features
	// HoldsIn lists features the format holds in some histories only (dbcop holds per-key
	// initial values when it can write them as an initial transaction its reader takes for
	// the initial state): for a feature not in Holds, HoldsIn[ft](h) reports whether
	// writing h keeps it. Where it says false, [Losses] measures the feature as for a
	// format that lacks it.
	HoldsIn map[Feature]func(h *history.History) bool
	// Initial is the value every key starts with when a reader of this format reads it
	// (nil for most formats; 0 for the text format).
	Initial history.Datum
}

// Writable reports whether isovet writes the format, as a file (Write) or as a directory
// (WriteDir).
func (f Format) Writable() bool { return f.Write != nil || f.WriteDir != nil }
