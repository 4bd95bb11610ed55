package histtest

import "github.com/isovet/isovet/history"

// Shrink returns a smallest-it-can-find sub-history of h on which fails still returns
// true: it drops runs of transactions (halving the run length down to one, in the manner
// of delta debugging), then single operations, until nothing more can go. fails must be
// deterministic and must hold for h. Explicit read sources follow their op; a read whose
// source was dropped reverts to matching by value.
//
// Use it to turn a failing generated history into a fixture:
//
//	small := histtest.Shrink(h, func(h *history.History) bool { return check(h) != want })
//	t.Logf("shrunk:\n%s", histtest.Format(small))
func Shrink(h *history.History, fails func(*history.History) bool) *history.History {
	sh := &shrinker{h: h, fails: fails, cur: h, keep: make([][]bool, len(h.Txns))}
	for t := range h.Txns {
		sh.keep[t] = make([]bool, len(h.Txns[t].Ops))
		for i := range sh.keep[t] {
			sh.keep[t][i] = true
		}
	}
	for changed := true; changed; {
		changed = sh.dropRuns()
		changed = sh.dropOps() || changed
	}
	return sh.cur
}

// shrinker is the state of [Shrink]: the selection keep of h's transactions and ops that
// still fails, and cur, the history it selects.
type shrinker struct {
	h     *history.History
	fails func(*history.History) bool
	keep  [][]bool // keep[t][i]: op i of txn t; nil: txn dropped
	cur   *history.History
}

// try adopts the selection next if its history builds and still fails.
func (sh *shrinker) try(next [][]bool) bool {
	c := rebuild(sh.h, next, nil)
	if c != nil && sh.fails(c) {
		sh.keep, sh.cur = next, c
		return true
	}
	return false
}

// clone copies the current selection, to be changed and tried.
func (sh *shrinker) clone() [][]bool {
	c := make([][]bool, len(sh.keep))
	for t := range sh.keep {
		if sh.keep[t] != nil {
			c[t] = append([]bool(nil), sh.keep[t]...)
		}
	}
	return c
}

// dropRuns tries dropping runs of the transactions kept at its start, of half their number
// and then of half the run length each round down to one, and says whether any went.
func (sh *shrinker) dropRuns() bool {
	var live []int
	for t := range sh.keep {
		if sh.keep[t] != nil {
			live = append(live, t)
		}
	}
	changed := false
	for size := max(len(live)/2, 1); size >= 1; size /= 2 {
		for start := 0; start < len(live); start += size {
			next := sh.clone()
			dropped := 0
			for _, t := range live[start:min(start+size, len(live))] {
				if next[t] != nil {
					next[t] = nil
					dropped++
				}
			}
			if dropped > 0 && sh.try(next) {
				changed = true
			}
		}
		if size == 1 {
			break
		}
	}
	return changed
}

// dropOps tries dropping each kept op alone and says whether any went.
func (sh *shrinker) dropOps() bool {
	changed := false
	for t := range sh.keep {
		for i := range sh.keep[t] {
			if sh.keep[t] == nil || !sh.keep[t][i] {
				continue
			}
			next := sh.clone()
			next[t][i] = false
			if sh.try(next) {
				changed = true
			}
		}
	}
	return changed
}

// rebuild copies the transactions and ops of h that keep selects into a new history, each
// transaction with the outcome outcome gives it (nil: its own). It returns nil if the result
// does not build.
func rebuild(h *history.History, keep [][]bool, outcome func(t *history.Txn) history.Outcome) *history.History {
	rb := &rebuilder{h: h, b: history.NewBuilder()}
	b := rb.b
	b.SetInitial(rb.val(h.Initial))
	for k := range h.Keys { // keep key order stable for InitialByKey
		if v, ok := h.InitialByKey[history.Key(k)]; ok {
			b.SetInitialKey(rb.key(history.Key(k)), rb.val(v))
		}
	}
	sess := make([]history.SessionID, len(h.Sessions))
	for s := range h.Sessions {
		sess[s] = b.NewSession(h.Sessions[s].Source)
	}
	rb.renumber(keep)
	for id, t := range h.All() {
		if keep[id] == nil {
			continue
		}
		o := t.Outcome
		if outcome != nil {
			o = outcome(t)
		}
		b.BeginTxn(sess[t.Session], t.Source, o)
		cur := b.Current()
		cur.Time, cur.HasTime = t.Time, t.HasTime
		cur.Start, cur.Commit, cur.HasTimestamps = t.Start, t.Commit, t.HasTimestamps
		for i, o := range t.Ops {
			if keep[id][i] {
				rb.op(t, i, o)
			}
		}
		b.EndTxn()
	}
	out, err := b.Build()
	if err != nil {
		return nil
	}
	return out
}

// rebuilder copies parts of h into b for [rebuild].
type rebuilder struct {
	h     *history.History
	b     *history.Builder
	newID []history.TxnID // the kept transactions' ids in b; -1: dropped
	newOp [][]int32       // the kept ops' indexes in b; -1: dropped
}

// renumber gives the transactions and ops keep selects their ids and indexes in the
// rebuilt history.
func (rb *rebuilder) renumber(keep [][]bool) {
	n := len(rb.h.Txns)
	rb.newID, rb.newOp = make([]history.TxnID, n), make([][]int32, n)
	next := history.TxnID(0)
	for t := range n {
		rb.newID[t] = -1
		if keep[t] == nil {
			continue
		}
		rb.newID[t] = next
		next++
		m := make([]int32, len(keep[t]))
		j := int32(0)
		for i, k := range keep[t] {
			m[i] = -1
			if k {
				m[i] = j
				j++
			}
		}
		rb.newOp[t] = m
	}
}

// remap renumbers a source; one naming a dropped op becomes no source.
func (rb *rebuilder) remap(src history.Src) history.Src {
	if src.Kind != history.SrcTxn {
		return src
	}
	if rb.newID[src.Txn] < 0 || rb.newOp[src.Txn][src.Op] < 0 {
		return history.Src{}
	}
	return history.Src{Kind: history.SrcTxn, Txn: rb.newID[src.Txn], Op: rb.newOp[src.Txn][src.Op]}
}

func (rb *rebuilder) key(k history.Key) history.Key     { return rb.b.Key(rb.h.Key(k)) }
func (rb *rebuilder) val(v history.Value) history.Value { return rb.b.Value(rb.h.Value(v)) }

// op copies op o, the i-th of t, into the current transaction with its flags and time.
func (rb *rebuilder) op(t *history.Txn, i int, o history.Op) {
	j, ok := rb.addOp(o)
	if !ok {
		return
	}
	if o.Flags != 0 {
		rb.b.SetOpFlags(j, o.Flags)
	}
	if t.OpTimes != nil {
		rb.b.SetOpTime(j, t.OpTimes[i])
	}
}

// addOp adds o to the current transaction and returns its index; false for a kind it does
// not know.
func (rb *rebuilder) addOp(o history.Op) (int32, bool) {
	b := rb.b
	switch o.Kind {
	case history.OpRead:
		return b.ReadFrom(rb.key(o.Key), rb.val(o.Value), rb.remap(o.Src)), true
	case history.OpWrite:
		return b.Write(rb.key(o.Key), rb.val(o.Value)), true
	case history.OpAppend:
		return b.Append(rb.key(o.Key), rb.val(o.Value)), true
	case history.OpInsert:
		return b.Insert(rb.key(o.Key), rb.val(o.Value)), true
	case history.OpDelete:
		return b.Delete(rb.key(o.Key)), true
	case history.OpListRead:
		l := rb.h.List(o)
		vs := make([]history.Value, len(l))
		for x, v := range l {
			vs[x] = rb.val(v)
		}
		return b.ReadList(rb.key(o.Key), vs), true
	case history.OpPredRead:
		return b.PredRead(rb.pred(o)), true
	case history.OpPredWrite:
		return b.PredWrite(rb.pred(o)), true
	}
	return 0, false
}

// pred copies the predicate payload of o, its rows' keys and values and its sources
// renumbered.
func (rb *rebuilder) pred(o history.Op) history.PredOp {
	p := *rb.h.Pred(o)
	p.Rows = append([]history.Row(nil), p.Rows...)
	for x := range p.Rows {
		r := &p.Rows[x]
		r.Key, r.Value = rb.key(r.Key), rb.val(r.Value)
	}
	if p.Srcs != nil {
		p.Srcs = append([]history.Src(nil), p.Srcs...)
		for x := range p.Srcs {
			p.Srcs[x] = rb.remap(p.Srcs[x])
		}
	}
	return p
}
