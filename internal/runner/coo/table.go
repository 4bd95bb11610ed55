package coo

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/isovet/isovet/check"
)

var isoShort = map[string]string{"read-uncommitted": "RU", "read-committed": "RC", "repeatable-read": "RR", "serializable": "SER"}

// CellText is how the table shows one cell at level l: the verdict's [Verdict.Summary];
// for serializable, a strict-serializability violation the plain check passes is added
// ("serializable; strict: ..."); transactions the database aborted are counted
// ("[1 aborted]"). A replay that failed shows "replay error".
func CellText(c *Cell, l check.Level) string {
	if c.Err != nil || c.Result == nil {
		return "replay error"
	}
	v := c.Verdict(l)
	if v == nil {
		return "not checked"
	}
	s := v.Summary()
	if l == check.Serializable && v.Verdict == check.Pass {
		if st := c.Verdict(check.StrictSerializable); st != nil && st.Verdict == check.Fail {
			s += "; strict: " + st.Summary()
		}
	}
	if n := c.Result.AbortedByDB; n > 0 {
		s += fmt.Sprintf(" [%d aborted]", n)
	}
	return s
}

// WriteMarkdown writes one table per level in levels (scenario × database × isolation),
// each cell as [CellText] shows it. Levels no cell was checked at are left out.
func WriteMarkdown(w io.Writer, su *Suite, levels ...check.Level) error {
	var scripts []string
	var isos []string
	for _, c := range su.Cells {
		if len(scripts) == 0 || scripts[len(scripts)-1] != c.Script {
			scripts = append(scripts, c.Script)
		}
		if !slices.Contains(isos, c.Isolation) {
			isos = append(isos, c.Isolation)
		}
	}
	var b strings.Builder
	for _, l := range levels {
		if slices.ContainsFunc(su.Cells, func(c *Cell) bool { return c.Verdict(l) != nil }) {
			writeLevelTable(&b, su, l, scripts, isos)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLevelTable writes the table of level l: a header of one column per server and
// isolation, then a row per script.
func writeLevelTable(b *strings.Builder, su *Suite, l check.Level, scripts, isos []string) {
	fmt.Fprintf(b, "#### Checked at %s\n\n| scenario |", l)
	for _, srv := range su.Servers {
		for _, iso := range isos {
			fmt.Fprintf(b, " %s %s |", srv.Name, isoShort[iso])
		}
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(su.Servers)*len(isos)))
	b.WriteString("\n")
	for _, s := range scripts {
		fmt.Fprintf(b, "| %s |", s)
		for _, srv := range su.Servers {
			for _, iso := range isos {
				t := "—"
				if c := su.cell(s, srv.URL, iso); c != nil {
					t = CellText(c, l)
				}
				fmt.Fprintf(b, " %s |", t)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// cell is the cell of script on db at iso, or nil.
func (su *Suite) cell(script, db, iso string) *Cell {
	for _, c := range su.Cells {
		if c.Script == script && c.DB == db && c.Isolation == iso {
			return c
		}
	}
	return nil
}
