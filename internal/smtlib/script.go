package smtlib

import (
	"io"
	"strings"
)

// lineWidth is the width under which the printer keeps a term on one line.
const lineWidth = 100

// Script is a sequence of SMT-LIB commands, each a [Term] such as
// (declare-fun f (T) Int), optionally preceded by comment lines.
type Script struct {
	items []item
}

type item struct {
	comment string
	cmd     Term
}

// Comment appends a comment line ("; text").
func (s *Script) Comment(text string) { s.items = append(s.items, item{comment: text}) }

// Add appends commands.
func (s *Script) Add(cmds ...Term) {
	for _, c := range cmds {
		s.items = append(s.items, item{cmd: c})
	}
}

// Assert appends (assert t), skipping the trivial assertion true.
func (s *Script) Assert(t Term) {
	if t.isTrue() {
		return
	}
	s.Add(App("assert", t))
}

// Append appends every item of o.
func (s *Script) Append(o *Script) { s.items = append(s.items, o.items...) }

// Clone returns a copy of s that can be extended independently.
func (s *Script) Clone() *Script { return &Script{items: append([]item(nil), s.items...)} }

// Len returns the number of commands and comments.
func (s *Script) Len() int { return len(s.items) }

// String renders s as [Script.WriteTo] does.
func (s *Script) String() string {
	var b strings.Builder
	for _, it := range s.items {
		if it.cmd.isL || it.cmd.atom != "" {
			pretty(&b, it.cmd, 0)
			b.WriteByte('\n')
			continue
		}
		for _, line := range strings.Split(it.comment, "\n") {
			b.WriteString("; ")
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// WriteTo writes s, one command per line; commands wider than 100 columns are
// broken with two-space indentation. Output depends only on s.
func (s *Script) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, s.String())
	return int64(n), err
}

// firstLine is how many elements of the list t pretty keeps on its first
// line: 2 for a binder or a function declaration or definition (the head and
// the variable or argument list), else 1 (the head).
func firstLine(t Term) int {
	if h := t.Head(); (h == "forall" || h == "exists" || h == "declare-fun" || h == "define-fun") && len(t.list) > 2 {
		return 2
	}
	return 1
}

func pretty(b *strings.Builder, t Term, indent int) {
	if !t.isL || indent+t.width() <= lineWidth || len(t.list) < 2 {
		t.flat(b)
		return
	}
	// Keep binders' variable lists and the head on the first line.
	b.WriteByte('(')
	t.list[0].flat(b)
	start := firstLine(t)
	if start == 2 {
		b.WriteByte(' ')
		t.list[1].flat(b)
	}
	for _, e := range t.list[start:] {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", indent+2))
		pretty(b, e, indent+2)
	}
	b.WriteByte(')')
}
