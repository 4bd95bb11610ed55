package polygraph

import (
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/deps"
)

// Components partitions the transactions into groups that share no key and no session order
// (with real time, everything is one group: time links every pair). Constraints of different
// groups cannot interact: every edge of the known graph and of every constraint joins
// transactions (or virtual nodes of a key) of one group. It returns the group of each
// transaction and the number of groups.
func (p *Polygraph) Components() ([]int32, int) {
	d := p.D
	u := &components{parent: make([]int32, d.N), first: make(map[int32]int32)}
	for i := range u.parent {
		u.parent[i] = int32(i)
	}
	u.orders(d)
	for t := range d.N {
		for _, o := range d.H.Txns[t].Ops {
			u.op(d, o, int32(t))
		}
	}
	// Rows a predicate did not return are read too (deps.ReadPredMiss).
	for ri := range d.Reads {
		if r := &d.Reads[ri]; r.Kind == deps.ReadPredMiss {
			u.touch(int32(r.Key), r.Txn)
		}
	}
	return u.number()
}

// components is a union-find over transactions, with a transaction touching each key.
type components struct {
	parent []int32
	first  map[int32]int32 // key -> a transaction touching it
}

func (u *components) find(x int32) int32 {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *components) union(a, b int32) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		u.parent[ra] = rb
	}
}

// touch joins transaction t to the group of key k.
func (u *components) touch(k, t int32) {
	if f, ok := u.first[k]; ok {
		u.union(f, t)
	} else {
		u.first[k] = t
	}
}

// orders joins the transactions real time and session order link.
func (u *components) orders(d *deps.Deps) {
	if d.Opts.Realtime {
		for t := 1; t < d.N; t++ {
			u.union(0, int32(t))
		}
	}
	if d.Opts.Session {
		for _, s := range d.H.Sessions {
			for i := 1; i < len(s.Txns); i++ {
				u.union(int32(s.Txns[i-1]), int32(s.Txns[i]))
			}
		}
	}
}

// op joins transaction t to the keys operation o touches (a predicate's: its rows' keys).
func (u *components) op(d *deps.Deps, o history.Op, t int32) {
	if o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite {
		for _, r := range d.H.Pred(o).Rows {
			u.touch(int32(r.Key), t)
		}
		return
	}
	u.touch(int32(o.Key), t)
}

// number numbers the groups in order of their first transaction.
func (u *components) number() ([]int32, int) {
	comp := make([]int32, len(u.parent))
	ids := make(map[int32]int32)
	for t := range u.parent {
		r := u.find(int32(t))
		id, ok := ids[r]
		if !ok {
			id = int32(len(ids))
			ids[r] = id
		}
		comp[t] = id
	}
	return comp, len(ids)
}

// nodeComp returns the component of graph node u, or -1 for nodes not tied to one
// transaction (Init, time nodes; init-version nodes take their key's writers' component).
func (p *Polygraph) nodeComp(comp []int32, u int32) int32 {
	d := p.D
	if u < int32(d.N) {
		return comp[u]
	}
	if d.Nodes[u].Kind == deps.NodeVersion {
		return comp[d.Nodes[u].Txn]
	}
	if d.Nodes[u].Kind == deps.NodeInitVersion {
		if ws := d.Writers[d.Nodes[u].Key]; len(ws) > 0 {
			return comp[ws[0]]
		}
	}
	return -1
}
