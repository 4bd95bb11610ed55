package format

import (
	"isovet/format/cobra"
	"isovet/format/dbcop"
	"isovet/format/elle"
	"isovet/format/vbox"
)

// formats is the registry: one entry per format, in sniffing order (most specific first).
// Each format's owner adds its entry here.
var formats = []Format{
	{
		Name: "dbcop", Aliases: []string{"dbcop-bincode", "bincode"},
		Summary: "dbcop history.bincode (OOPSLA'19 dbcop, PolySI, VeriStrong)",
		Sniff:   dbcop.Sniff,
		New:     func(Options) Decoder { return dbcop.NewDecoder() },
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
	},
	{
		Name: "elle-json", Aliases: []string{"jepsen-json"},
		Summary: "Elle JSON history, as elle-cli reads it (list-append or rw-register)",
		Sniff:   elle.SniffJSON,
		New:     func(Options) Decoder { return elle.NewJSONDecoder() },
		Write:   elle.WriteJSON,
	},
	{
		Name:    "cobra",
		Summary: "Cobra binary client logs: a directory of T*.log",
		Dir:     true, Members: "T*.log",
		Sniff: cobra.Sniff,
		New:   func(Options) Decoder { return cobra.NewDecoder() },
	},
	{
		Name:    "vbox",
		Summary: "Vbox binary session logs with per-op intervals: a directory of *.log",
		Dir:     true, Members: "*.log",
		Sniff: vbox.Sniff,
		New:   func(Options) Decoder { return vbox.NewDecoder() },
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
