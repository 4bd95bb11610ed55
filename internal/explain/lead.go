package explain

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// placeholder matches one {name} of a words template.
var placeholder = regexp.MustCompile(`\{([a-z0-9]+)\}`)

// lead is the sentence an anomaly opens with: the first template of the words table
// ([anomaly.Kind.Words]) whose facts a's evidence gives, for its most specific name first
// ([byDetail]); else, with filled false, the meaning of that name.
func lead(h *history.History, a report.Anomaly) (sentence string, filled bool) {
	f := factsOf(h, a)
	names := byDetail(a)
	for _, k := range names {
		for _, w := range k.Words() {
			if s, ok := f.fill(w); ok {
				return s, true
			}
		}
	}
	m := names[0].Info().Meaning
	if m == "" {
		return "", false
	}
	return strings.ToUpper(m[:1]) + m[1:] + ".", false
}

// byDetail returns a's names, the shapes engineers name (write skew, stale read) before
// Adya's cycle classes (G-single, G2-item), which say less about what happened; otherwise in
// the report's order, kind first.
func byDetail(a report.Anomaly) []anomaly.Kind {
	names := append([]anomaly.Kind{a.Kind}, a.Also...)
	slices.SortStableFunc(names, func(x, y anomaly.Kind) int {
		return cmp.Compare(b2i(isClass(x)), b2i(isClass(y)))
	})
	return names
}

// isClass reports whether k is one of Adya's cycle classes.
func isClass(k anomaly.Kind) bool {
	switch k {
	case anomaly.G0, anomaly.G1c, anomaly.GSingle, anomaly.G2Item, anomaly.G2:
		return true
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// facts are what the words table's placeholders name, as far as an anomaly's evidence says;
// a missing fact leaves every template that names it unfilled.
type facts map[string]string

// fill fills template w, or reports that a fact it names is missing.
func (f facts) fill(w string) (string, bool) {
	ok := true
	s := placeholder.ReplaceAllStringFunc(w, func(m string) string {
		v, found := f[m[1:len(m)-1]]
		ok = ok && found && v != ""
		return v
	})
	if !ok {
		return "", false
	}
	return strings.ToUpper(s[:1]) + s[1:], true
}

// factsOf gathers a's facts from its transactions and the steps of its proof (see
// [anomaly.Kind.Words] for what each names).
func factsOf(h *history.History, a report.Anomaly) facts {
	n := namer{h}
	f := facts{}
	var names []string
	for _, t := range involved(a) {
		names = append(names, n.txn(t))
	}
	f["txns"] = joinAnd(names)
	if len(a.Cycle) > 0 && !slices.ContainsFunc(a.Cycle, func(s report.Step) bool { return s.Rel&report.WW == 0 }) {
		f["writers"] = f["txns"]
	}
	if len(a.Txns) > 0 {
		f["a"] = n.txn(a.Txns[0])
	}
	if len(a.Txns) > 1 {
		f["b"] = n.txn(a.Txns[1])
	}
	if a.Key >= 0 && h != nil && int(a.Key) < len(h.Keys) {
		f["key"] = keyWord(h.Key(a.Key))
	}
	var rws []report.Step
	for _, s := range a.Cycle {
		if s.Rel&(report.RW|report.PredRW) != 0 && s.Key >= 0 {
			rws = append(rws, s)
		}
	}
	if len(rws) > 0 {
		f.antiDependency(h, n, a.Cycle, rws)
	}
	f.readDependency(h, n, a.Cycle, rws)
	return f
}

// antiDependency gathers the facts of the first anti-dependency (and of the second).
func (f facts) antiDependency(h *history.History, n namer, cyc, rws []report.Step) {
	s := rws[0]
	t := newStepText(h, n, s)
	f["reader"], f["writer"], f["key"] = t.from, t.to, keyWord(n.key(s.Key))
	f["read"] = t.readText()
	f["missed"] = t.missed()
	if s.Pred != "" {
		f["pred"] = fmt.Sprintf("%q", s.Pred)
	}
	if len(rws) > 1 {
		r2 := rws[1]
		f["reader2"], f["writer2"], f["key2"] = n.txn(r2.From), n.txn(r2.To), keyWord(n.key(r2.Key))
		if r2.Key == s.Key && r2.Value == s.Value {
			f["both"] = f["read"]
		}
	}
	for _, o := range cyc {
		switch {
		case o.Rel&report.WW != 0 && o.From == s.To && o.To == s.From && o.Key == s.Key:
			f["lost"] = t.to
		case o.Rel&report.RT != 0 && o.From == s.To && o.To == s.From:
			f.times(h, s)
		}
	}
}

// times gathers when s's writer ended and its reader began, when both have client times.
func (f facts) times(h *history.History, s report.Step) {
	if h == nil || !validTxn(h, s.From) || !validTxn(h, s.To) {
		return
	}
	r, w := h.Txn(s.From), h.Txn(s.To)
	if r.HasTime && w.HasTime {
		f["ended"], f["began"] = sinceStart(h, w.Time.End), sinceStart(h, r.Time.Begin)
	}
}

// readDependency gathers the facts of a read dependency: the one from the first
// anti-dependency's writer to its reader when there is one, else (when there is no
// anti-dependency) the first.
func (f facts) readDependency(h *history.History, n namer, cyc, rws []report.Step) {
	for _, s := range cyc {
		if s.Rel&report.WR == 0 || s.Key < 0 {
			continue
		}
		if len(rws) > 0 && (s.From != rws[0].To || s.To != rws[0].From) {
			continue
		}
		t := newStepText(h, n, s)
		f["observer"], f["source"], f["skey"] = t.to, t.from, keyWord(n.key(s.Key))
		f["seen"] = t.seenText()
		return
	}
}

// readText is what an anti-dependency's reader read: "x=1", "l=[1 2]".
func (t stepText) readText() string {
	if l, _, ok := listRead(t.h, t.s.From, t.s.Key, t.s.Value, true); ok {
		return fmt.Sprintf("%v=%s", t.n.key(t.s.Key), markedList(t.h, l, -1))
	}
	return t.kv(t.s.Value)
}

// seenText is what a read dependency's reader read: "x=1", "l=[1 2 *3*]".
func (t stepText) seenText() string {
	if l, mark, ok := listRead(t.h, t.s.To, t.s.Key, t.s.Value, false); ok {
		return fmt.Sprintf("%v=%s", t.n.key(t.s.Key), markedList(t.h, l, mark))
	}
	return t.kv(t.s.Value)
}

// keyWord names key k in a sentence: "x", or "key 1" for an integer key, which alone
// would read like a value.
func keyWord(k history.Datum) string {
	if _, ok := k.Int(); ok {
		return "key " + k.String()
	}
	return k.String()
}

// missed is the write an anti-dependency's reader did not see: "T2's write of x", "T2's
// append of 3 to l", "T2's write of row 5" (through a predicate).
func (t stepText) missed() string {
	k := keyWord(t.n.key(t.s.Key))
	switch {
	case t.s.Pred != "" || t.s.Rel&report.RW == 0:
		return fmt.Sprintf("%s's write of row %v", t.to, t.n.key(t.s.Key))
	case appends(t.h, t.s.To, t.s.Key):
		return fmt.Sprintf("%s to %v", t.appendOf(t.to, t.s.Value2), k)
	}
	return fmt.Sprintf("%s's write of %v", t.to, k)
}

// joinAnd joins names as "T1", "T1 and T2", "T1, T2 and T3".
func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// restateIn replaces, in a checker's sentence (its message, a ruled-out alternative), each
// step's reason as the checker gave it by the step's reason here, so that the sentence
// says the steps as the proof does. A reason is replaced only where it stands as a whole
// (not inside a longer name).
func restateIn(text string, steps []Step) string {
	for _, s := range steps {
		if s.rawWhy == "" || s.rawWhy == s.Why {
			continue
		}
		text = replaceWhole(text, s.rawWhy, s.Why)
	}
	return text
}

// replaceWhole replaces each occurrence of old in s that does not follow a letter or digit.
func replaceWhole(s, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if i > 0 && isWordByte(s[i-1]) {
			b.WriteString(old)
		} else {
			b.WriteString(new)
		}
		s = s[i+len(old):]
	}
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
