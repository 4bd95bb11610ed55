package format

import (
	"github.com/isovet/isovet/history"

	"github.com/isovet/isovet/format/chronos"
	"github.com/isovet/isovet/format/cobra"
	"github.com/isovet/isovet/format/dbcop"
	"github.com/isovet/isovet/format/elle"
	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/format/text"
	"github.com/isovet/isovet/format/vbox"
	"github.com/isovet/isovet/format/veristrong"
	"github.com/isovet/isovet/format/viper"
)

// elleHolds is what a Jepsen history holds: either workload (one per history), outcomes
// (:ok, :fail, :info), a client interval per transaction (:time of the invoke and the
// completion) and a process per session (numbered when ids repeat).
var elleHolds = Holding(Registers, Lists, NonInteger, Aborted, AbortedMany, Unknown, ClientTime, SharedSessionIDs, EmptyTxns)

// formats is the registry: one entry per format, in sniffing order (most specific first).
// Each format's owner adds its entry here.
var formats = []Format{
	{
		Name: "dbcop", Aliases: []string{"dbcop-bincode", "bincode"},
		Summary: "dbcop history.bincode (OOPSLA'19 dbcop, PolySI, VeriStrong), or a directory holding one",
		DirFile: "history.bincode",
		Sniff:   dbcop.Sniff,
		New:     func(Options) Decoder { return dbcop.NewDecoder() },
		Write:   dbcop.Write,
		Holds:   Holding(Registers, FailedOps, Aborted, AbortedMany, SharedSessionIDs, EmptyTxns),
		// Initial values other than 0 are written as PolySI's initial session where the
		// reader takes it back for the initial state.
		HoldsIn: map[Feature]func(*history.History) bool{Initial: dbcop.HoldsInitial, InitialPerKey: dbcop.HoldsInitial},
		Initial: history.Int(0),
	},
	{
		Name:    "dbcop-json",
		Summary: "dbcop JSON history (the 2025 dbcop rewrite)",
		Sniff:   dbcop.SniffJSON,
		New:     func(Options) Decoder { return dbcop.NewJSONDecoder() },
	},
	{
		Name: "elle-edn", Aliases: []string{"elle", "edn", "jepsen"},
		Summary: "Jepsen/Elle EDN history (list-append or rw-register)",
		Sniff:   elle.SniffEDN,
		New:     func(Options) Decoder { return elle.NewEDNDecoder() },
		Write:   elle.WriteEDN,
		Holds:   elleHolds,
	},
	{
		Name: "elle-json", Aliases: []string{"jepsen-json"},
		Summary: "Elle JSON history, as elle-cli reads it (list-append or rw-register)",
		Sniff:   elle.SniffJSON,
		New:     func(Options) Decoder { return elle.NewJSONDecoder() },
		Write:   elle.WriteJSON,
		Holds:   elleHolds,
	},
	{
		Name:    "cobra",
		Summary: "Cobra binary client logs: a directory of T*.log",
		Dir:     true, Members: "T*.log",
		Sniff:    cobra.Sniff,
		New:      func(Options) Decoder { return cobra.NewDecoder() },
		WriteDir: cobra.WriteDir,
		Holds:    Holding(Registers, Sources, SharedSessionIDs, EmptyTxns),
		// Reads of nothing are nil (NULL); aborted transactions only as placeholders, which
		// reads name; client times per log, on all its transactions or none.
		HoldsIn: map[Feature]func(*history.History) bool{
			NonInteger: cobra.HoldsValues, Aborted: cobra.HoldsAborted, ClientTime: cobra.HoldsTimes,
			Initial: cobra.HoldsInitial, InitialPerKey: cobra.HoldsInitial, Placeholders: cobra.HoldsPlaceholders,
		},
	},
	{
		Name:    "viper",
		Summary: "Viper/ViperBench JSON client logs (also written by IsoVista and Plume): a directory of J*.log",
		Dir:     true, Members: viper.Members,
		Sniff: viper.Sniff,
		New:   func(Options) Decoder { return viper.NewDecoder() },
	},
	{
		Name:    "vbox",
		Summary: "Vbox binary session logs with per-op intervals: a directory of *.log",
		Dir:     true, Members: "*.log",
		Sniff: vbox.Sniff,
		New:   func(Options) Decoder { return vbox.NewDecoder() },
	},
	{
		Name: "native", Aliases: []string{"isovet", "jsonl"},
		Summary: "isovet native JSON Lines: the whole history model, one transaction per line",
		Sniff:   native.Sniff,
		// isovet run --out DIR writes the history as DIR/history.jsonl.
		DirFile: "history.jsonl",
		New:     func(Options) Decoder { return native.NewDecoder() },
		Write:   native.Write,
		Holds:   Everything,
	},
	{
		Name: "chronos", Aliases: []string{"aion", "timekiller"},
		Summary: "Chronos/Aion JSON array with HLC start/commit timestamps (kv or list)",
		Sniff:   chronos.Sniff,
		New:     func(o Options) Decoder { return chronos.NewDecoder(o.Initial) },
		Write:   chronos.Write,
		Holds:   Holding(Registers, Lists, NonInteger, Timestamps, SharedSessionIDs, EmptyTxns),
	},
	{
		Name: "text", Aliases: []string{"polysi", "plume"},
		Summary: "PolySI/Plume text lines r(key,value,session,txn) and w(...)",
		Sniff:   text.Sniff,
		New:     func(Options) Decoder { return text.NewDecoder() },
		Write:   text.Write,
		Holds:   Holding(Registers, Aborted, SharedSessionIDs),
		Initial: history.Int(0),
	},
	{
		Name: "veristrong", Aliases: []string{"veristrong-text"},
		Summary: "VeriStrong list-append text: a count, then sess txn R key n v... / sess txn A key v",
		Sniff:   veristrong.Sniff,
		New:     func(Options) Decoder { return veristrong.NewDecoder() },
		Write:   veristrong.Write,
		Holds:   Holding(Lists, SharedSessionIDs),
	},
}

// Formats returns the registered formats in sniffing order. The slice is shared: do not
// modify it.
func Formats() []Format { return formats }

// Lookup returns the format with the given name or alias.
func Lookup(name string) (Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
		for _, a := range f.Aliases {
			if a == name {
				return f, true
			}
		}
	}
	return Format{}, false
}

// Names returns the canonical names of every registered format.
func Names() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}
