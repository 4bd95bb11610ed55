package polygraph

import (
	"context"

	"github.com/isovet/isovet/internal/deps"
	"github.com/isovet/isovet/internal/graph"
)

// Pruning is the same procedure for every polygraph (PolySI Alg. 2; VeriStrong Alg. 5): each
// pass asks, for every option of every open constraint, whether one of its edges closes a
// cycle with the known graph (one batch of reachability queries), then drops the options
// that do, fixes the constraints left with one, and stops at a constraint left with none.
// What differs between graphs is how an option's edges become queries; the passes and the
// decisions below are shared with snapshot isolation's pruner (internal/check/si).

// Fixpoint runs pass until it proves a violation or changes nothing, counting passes. ctx
// is polled between passes; on cancellation it returns context.Cause(ctx).
func Fixpoint(ctx context.Context, passes *int, pass func() (*Violation, bool, error)) (*Violation, error) {
	for {
		*passes++
		v, changed, err := pass()
		if v != nil || err != nil || !changed {
			return v, err
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
	}
}

// Span is the range [Q0, Q1) of the queries of one option; Loop says the option closes a
// cycle by itself, without asking.
type Span struct {
	Q0, Q1 int32
	Loop   bool
}

// Answers are one pass's reachability queries and, once asked, their answers.
type Answers struct {
	Qs  []graph.Query
	Ans []bool
}

// Cyclic reports whether the option of span s closes a cycle.
func (a *Answers) Cyclic(s Span) bool {
	if s.Loop {
		return true
	}
	for i := s.Q0; i < s.Q1; i++ {
		if a.Ans[i] {
			return true
		}
	}
	return false
}

// polled reports a cancellation, checked every 1024 constraints.
func polled(ctx context.Context, i int) error {
	if i&1023 == 0 && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// DecideWW fixes each open pair (open) one of whose orientations closes a cycle (opts: A
// first, B first) the other way round (fix, with the writer placed first); bad is a pair
// both of whose orientations do, or -1.
func (a *Answers) DecideWW(ctx context.Context, ww []WW, opts [][2]Span, open func(*WW) bool, fix func(ci int, first, second int32)) (bad int, changed bool, err error) {
	for ci := range ww {
		if err := polled(ctx, ci); err != nil {
			return -1, false, err
		}
		c := &ww[ci]
		if !open(c) {
			continue
		}
		l, r := a.Cyclic(opts[ci][0]), a.Cyclic(opts[ci][1])
		switch {
		case l && r:
			return ci, false, nil
		case l:
			fix(ci, c.B, c.A)
			changed = true
		case r:
			fix(ci, c.A, c.B)
			changed = true
		}
	}
	return -1, changed, nil
}

// DecideWR drops the candidates of each asked read (opts not nil) that close a cycle,
// counting them in pruned, and fixes (fix) a read left with one committed candidate; bad is
// a read left with none, or -1.
func (a *Answers) DecideWR(ctx context.Context, wr []WR, opts [][]Span, committed func(int32) bool, fix func(wi int), pruned *int) (bad int, changed bool, err error) {
	for wi := range wr {
		if err := polled(ctx, wi); err != nil {
			return -1, false, err
		}
		rc := &wr[wi]
		if rc.Fixed || opts[wi] == nil {
			continue
		}
		keep := a.alive(rc.Cands, opts[wi])
		if len(keep) == 0 {
			return wi, false, nil
		}
		if len(keep) < len(rc.Cands) {
			*pruned += len(rc.Cands) - len(keep)
			rc.Cands = keep
			changed = true
		}
		if len(keep) == 1 && committed(keep[0]) {
			fix(wi)
			changed = true
		}
	}
	return -1, changed, nil
}

// alive returns the candidates whose option (opts, parallel) closes no cycle.
func (a *Answers) alive(cands []int32, opts []Span) []int32 {
	var keep []int32
	for j, w := range cands {
		if !a.Cyclic(opts[j]) {
			keep = append(keep, w)
		}
	}
	return keep
}

// WWViolation is the violation of pair ci of ww, both of whose orientations close a cycle:
// for each, the cycle (cycle: the shortest some of them close) of its edges (edges, c
// oriented a first, appended to dst).
func WWViolation(ww []WW, ci int, edges func(c *WW, a, b int32, dst []deps.Edge) []deps.Edge, cycle func([]deps.Edge) []deps.Edge) *Violation {
	c := &ww[ci]
	v := &Violation{}
	for _, ab := range [2][2]int32{{c.A, c.B}, {c.B, c.A}} {
		v.Cycles = append(v.Cycles, cycle(edges(c, ab[0], ab[1], nil)))
		v.Options = append(v.Options, Option{WW: int32(ci), First: ab[0], WR: -1})
	}
	return v
}

// WRViolation is the violation of read wi of wr, every candidate of which closes a cycle:
// for each, the cycle (as for [WWViolation]) of its edges (edges: read ri from writer w).
func WRViolation(wr []WR, wi int, edges func(ri, w int32) []deps.Edge, cycle func([]deps.Edge) []deps.Edge) *Violation {
	rc := &wr[wi]
	v := &Violation{}
	for _, w := range rc.Cands {
		v.Cycles = append(v.Cycles, cycle(edges(rc.Read, w)))
		v.Options = append(v.Options, Option{WW: -1, WR: int32(wi), Writer: w})
	}
	return v
}
