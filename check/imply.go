package check

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/history"
)

// Levels imply levels (Level.Implies): a history that satisfies a level satisfies every level
// it implies, and one that violates a level violates every level that implies it. So when a
// checker cannot decide its level, a decision at a neighbouring level may settle it:
//
//   - a weak level (read committed, read atomic, causal) left Unknown passes when a stronger
//     level that implies it, decided by a black-box checker that searches every choice of
//     writers (snapshot isolation, serializability), passes;
//   - any level left Unknown fails when a weak level it implies fails (read committed for
//     read atomic, both for causal, all three for the serializability and snapshot isolation
//     levels): the anomaly found there is one here too.
//
// Only the black-box route (MethodAuto, MethodBlackBox) does this: the timestamp and basic
// methods answer for the checker the user chose.

// strongerFor lists, for each weak level, the stronger levels tried in turn to pass it: the
// nearest first. A failure of one ends the list (every later one implies it, so fails too);
// an Unknown goes on to the next.
var strongerFor = map[Level][]Level{
	ReadCommitted: {SnapshotIsolation, Serializable},
	ReadAtomic:    {SnapshotIsolation, Serializable},
	Causal:        {StrongSessionSI, StrongSessionSerializable},
}

// weakLevels are the levels tried, cheapest first, to fail a level left Unknown that
// implies them.
var weakLevels = []Level{ReadCommitted, ReadAtomic, Causal}

// byImplication tries to decide rep, an Unknown report of level on h (the history as
// checked), at the levels that imply it or that it implies. It returns the deciding report,
// labelled with level, or rep with a note on what was tried; when ctx ends on the way, rep
// stopped and ctx's cause. A weak level whose checker's bounded search stopped, and that no
// other level decides, is checked again without the bound.
func byImplication(ctx context.Context, h *history.History, level Level, opts Options, rep *Report) (*Report, error) {
	if opts.Method != MethodAuto && opts.Method != MethodBlackBox || opts.implied {
		return rep, nil
	}
	sub := opts
	sub.implied = true
	r, tried := throughStronger(ctx, h, level, sub)
	if r == nil {
		r = throughWeaker(ctx, h, level, sub)
	}
	switch {
	case ctx.Err() != nil:
		return stopped(ctx, rep)
	case r != nil:
		return r, nil
	case slices.Contains(weakLevels, level) && rep.StoppedOnly():
		sub.unbounded = true
		return Check(ctx, h, level, sub)
	}
	if len(tried) > 0 {
		rep.Notes = append(rep.Notes, "the stronger levels that would imply it did not pass either ("+strings.Join(tried, "; ")+")")
	}
	return rep, nil
}

// throughStronger returns the pass of level a stronger level gives (strongerFor), or nil
// and what each level tried said.
func throughStronger(ctx context.Context, h *history.History, level Level, sub Options) (*Report, []string) {
	var tried []string
	for _, s := range strongerFor[level] {
		r, err := Check(ctx, h, s, sub)
		if ctx.Err() != nil {
			return nil, tried
		}
		if err != nil || r == nil {
			tried = append(tried, fmt.Sprintf("%s: %v", s, err))
			continue
		}
		if r.Proved() {
			return passedThrough(level, s, r), nil
		}
		tried = append(tried, fmt.Sprintf("%s: %s", s, r.Verdict))
		if r.Verdict == Fail {
			break
		}
	}
	return nil, tried
}

// throughWeaker returns the failure of level a weaker level it implies gives, or nil.
func throughWeaker(ctx context.Context, h *history.History, level Level, sub Options) *Report {
	for _, w := range weakLevels {
		if w == level || !level.Implies(w) {
			continue
		}
		r, err := Check(ctx, h, w, sub)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil && r != nil && r.Verdict == Fail && len(r.Anomalies) > 0 {
			return failedThrough(level, w, r)
		}
	}
	return nil
}

// stopped is rep of a check that ctx stopped while it was being decided through another
// level, and ctx's cause.
func stopped(ctx context.Context, rep *Report) (*Report, error) {
	rep.Stopped(context.Cause(ctx))
	return rep, context.Cause(ctx)
}

// passedThrough is the pass of level that r, a proved pass of the stronger level s, gives.
func passedThrough(level, s Level, r *Report) *Report {
	r.Level = level
	r.Followup = nil
	r.Notes = append([]string{fmt.Sprintf("passed by passing %s, which implies %s: the %s checker could not choose between the writers some reads may have read from, and the %s checker searches every choice", s, level, level, s)}, r.Notes...)
	return r
}

// failedThrough is the failure of level that r, a failure of the weaker level w, gives.
func failedThrough(level, w Level, r *Report) *Report {
	r.Level = level
	r.Notes = append([]string{fmt.Sprintf("fails because %s, which %s implies, fails: the anomalies below violate both", w, level)}, r.Notes...)
	return r
}
