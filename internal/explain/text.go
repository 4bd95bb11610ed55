package explain

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/isovet/isovet/internal/report"
)

// Text writes r as prose: a header with the level, checker and verdict, then each anomaly
// in Elle's manner ("Let: T1 = {...} ... Then: - T1 < T2, because ...; - However, T2 < T1,
// because ...: a contradiction!"), then the notes.
func Text(w io.Writer, r *report.Report) error {
	bw := bufio.NewWriter(w)
	n := len(r.Anomalies)
	plural := "ies"
	if n == 1 {
		plural = "y"
	}
	fmt.Fprintf(bw, "%s, checked by %s: %s (%d anomal%s)\n", r.Level, checkerName(r), r.Verdict, n, plural)
	writeFollowup(bw, r)
	if f := Failed(r); f != "" {
		fmt.Fprintf(bw, "\nFailed statements: %s\n", f)
	}
	for i, a := range r.Anomalies {
		fmt.Fprintf(bw, "\n[%d] ", i+1)
		writeExplanation(bw, Explain(r.History, a), "    ")
	}
	if notes := Notes(r); len(notes) > 0 {
		bw.WriteString("\nNotes:\n")
		for _, note := range notes {
			fmt.Fprintf(bw, "  - %s\n", note)
		}
	}
	return bw.Flush()
}

// writeFollowup writes what is known of the level's real-time counterpart after a pass.
func writeFollowup(w *bufio.Writer, r *report.Report) {
	f := r.Followup
	if f == nil || r.Verdict != report.Pass {
		return
	}
	switch f.Verdict {
	case report.Pass:
		fmt.Fprintf(w, "%s holds too: %s\n", f.Level, f.Why)
	case report.Fail:
		fmt.Fprintf(w, "%s does not hold (the history records client time, which %s ignores; --level %s explains it):\n    ", f.Level, r.Level, f.Level)
		e := Explain(r.History, *f.Anomaly)
		info := e.Kind.Info()
		fmt.Fprintf(w, "%s: %s", info.Name, info.Title)
		if names := alsoNames(e); len(names) > 0 {
			fmt.Fprintf(w, ", also known as %s", strings.Join(names, ", "))
		}
		w.WriteString("\n")
		for _, line := range opening(e) {
			fmt.Fprintf(w, "    %s\n", line)
		}
	default:
		fmt.Fprintf(w, "%s: unknown (%s)\n", f.Level, f.Why)
	}
}

// TextAnomaly writes one explanation as prose, as [Text] writes each anomaly.
func TextAnomaly(w io.Writer, e Explanation) error {
	bw := bufio.NewWriter(w)
	writeExplanation(bw, e, "")
	return bw.Flush()
}

func checkerName(r *report.Report) string {
	if r.Checker == "" {
		return "an unnamed checker"
	}
	return r.Checker
}

// opening is what an anomaly opens with: its lead, then the checker's message when the
// lead is only the kind's meaning or no step of a proof follows (the message is then the
// evidence). A lead filled from the words table says what the message would say again.
func opening(e Explanation) []string {
	var lines []string
	if e.Lead != "" {
		lines = append(lines, e.Lead)
	}
	if e.showsMessage() {
		lines = append(lines, strings.TrimSuffix(e.Message, ".")+".")
	}
	return lines
}

// showsMessage reports whether the checker's message is shown after the lead: when the
// lead is only the kind's meaning, or no step of a proof follows (the message is then the
// evidence). Text and HTML share the rule.
func (e Explanation) showsMessage() bool {
	return e.Message != "" && (!e.leadFilled || len(e.Steps) == 0)
}

func writeExplanation(w *bufio.Writer, e Explanation, indent string) {
	info := e.Kind.Info()
	fmt.Fprintf(w, "%s: %s\n", info.Name, info.Title)
	lines := opening(e)
	if len(lines) > 0 {
		fmt.Fprintf(w, "%s%s\n", indent, lines[0])
		lines = lines[1:]
	}
	if names := alsoNames(e); len(names) > 0 {
		fmt.Fprintf(w, "%sAlso known as: %s.\n", indent, strings.Join(names, ", "))
	}
	for _, line := range lines {
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
	writeLet(w, e.Txns, indent)
	writeThen(w, e, indent)
	if len(e.RuledOut) > 0 {
		fmt.Fprintf(w, "\n%sRuled out:\n", indent)
		for _, s := range e.RuledOut {
			fmt.Fprintf(w, "%s  - %s\n", indent, s)
		}
	}
}

// writeLet writes the "Let:" section: the transactions the history describes, their names
// aligned.
func writeLet(w *bufio.Writer, txns []Txn, indent string) {
	var known []Txn
	for _, t := range txns {
		if t.tx != nil {
			known = append(known, t)
		}
	}
	if len(known) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%sLet:\n", indent)
	width := 0
	for _, t := range known {
		width = max(width, len(t.Name))
	}
	for _, t := range known {
		fmt.Fprintf(w, "%s  %-*s = %s\n", indent, width, t.Name, txnText(t))
	}
}

// writeThen writes the "Then:" section: the steps, separated by semicolons, the last ending
// in a full stop (a cycle's last step, the contradiction, has its own ending).
func writeThen(w *bufio.Writer, e Explanation, indent string) {
	if len(e.Steps) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%sThen:\n", indent)
	for i, s := range e.Steps {
		end := ";"
		if i == len(e.Steps)-1 && !e.Cycle {
			end = "."
		}
		if e.Cycle && i == len(e.Steps)-1 {
			end = ""
		}
		fmt.Fprintf(w, "%s  - %s%s\n", indent, s.Sentence, end)
	}
}

// alsoNames returns the titles of e's other names that its own title does not already say.
func alsoNames(e Explanation) []string {
	title := e.Kind.Info().Title
	var names []string
	for _, k := range e.Also {
		if t := k.Info().Title; !strings.Contains(title, t) {
			names = append(names, t)
		}
	}
	return names
}

// txnText renders a transaction as "{w(x,1), r(y,0)} (session s1, committed, time [1,5])".
func txnText(t Txn) string {
	var b strings.Builder
	b.WriteByte('{')
	b.WriteString(strings.Join(t.Ops, ", "))
	if t.Elided > 0 {
		if len(t.Ops) > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "... %d more ops", t.Elided)
	}
	b.WriteByte('}')
	var attrs []string
	if t.Session != "" {
		attrs = append(attrs, "session "+t.Session)
	}
	if t.Outcome != "" {
		attrs = append(attrs, t.Outcome)
	}
	if t.Time != "" {
		attrs = append(attrs, "time "+t.Time)
	}
	if t.Timestamps != "" {
		attrs = append(attrs, "timestamps "+t.Timestamps)
	}
	if len(attrs) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(attrs, ", "))
	}
	return b.String()
}
