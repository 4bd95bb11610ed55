package histtest

import (
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/history/historytest"
)

// Parse reads a history in the notation of package historytest; see [historytest.Parse].
func Parse(src string) (*history.History, error) { return historytest.Parse(src) }

// MustParse is [Parse] for fixtures written in Go source; it panics on error.
func MustParse(src string) *history.History { return historytest.MustParse(src) }

// Format prints h in the notation; see [historytest.Format].
func Format(h *history.History) string { return historytest.Format(h) }

// Atom renders a datum as the notation writes it; see [historytest.Atom].
func Atom(d history.Datum) string { return historytest.Atom(d) }
