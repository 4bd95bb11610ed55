package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// Notes returns what r's notes say, and, for a pass of a level that ignores the client time
// the history records when nothing is known of the level's real-time counterpart (no
// follow-up), a sentence saying that the counterpart also requires real time.
func Notes(r *report.Report) []string {
	rt, ok := r.Level.RealtimeCounterpart()
	if !ok || r.Verdict != report.Pass || r.Followup != nil || r.History == nil || !r.History.HasTime() {
		return r.Notes
	}
	what := "the serial order"
	if rt == anomaly.StrongSI {
		what = "each snapshot"
	}
	return append(slices.Clip(r.Notes), fmt.Sprintf("the history records client time, which %s ignores: %s also requires %s to respect real time (a transaction that began after another ended sees its effects)", r.Level, rt, what))
}

// maxFailedNames is how many transactions a failed-statement sentence names.
const maxFailedNames = 8

// Failed says, in a few sentences, what the check made of the statements r's history marks
// as failed ("" when there are none): which transactions were logged as committed although
// one of their statements failed, that this is a defect of the recording, and how they were
// read. Reports put it before any anomaly.
func Failed(r *report.Report) string {
	f := r.Failed
	if f == nil || f.Ops == 0 {
		return ""
	}
	var b strings.Builder
	if len(f.Committed) == 0 {
		fmt.Fprintf(&b, "%s marked as failed %s left out: a failed statement does not take effect (each was in a transaction that did not commit).",
			count(f.Ops, "statement"), wasWere(f.Ops))
		return b.String()
	}
	fmt.Fprintf(&b, "%s logged as committed %s a failed statement (%s). This is a defect of the recording, not of the database: a failed statement does not take effect, and on the PostgreSQL protocol (PostgreSQL, CockroachDB) a COMMIT after an error is a rollback, so check your recorder. ",
		count(len(f.Committed), "transaction"), containVerb(len(f.Committed)), failedNames(r.History, f.Committed))
	switch f.Reading {
	case history.FailedRolledBack:
		b.WriteString("They were checked as rolled back (--failed-statements=rolled-back).")
	case history.FailedSkipped:
		b.WriteString("They were checked as committed without their failed statements, as MySQL and Galera do (--failed-statements=skipped).")
	default:
		b.WriteString("Each was checked as either committed without its failed statements (MySQL, Galera) or rolled back (--failed-statements=uncertain; rolled-back or skipped choose one).")
	}
	return b.String()
}

func failedNames(h *history.History, ts []history.TxnID) string {
	n := namer{h}
	var names []string
	for i, t := range ts {
		if i == maxFailedNames {
			names = append(names, fmt.Sprintf("and %d more", len(ts)-i))
			break
		}
		names = append(names, n.txn(t))
	}
	return strings.Join(names, ", ")
}

func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func containVerb(n int) string {
	if n == 1 {
		return "contains"
	}
	return "contain"
}
