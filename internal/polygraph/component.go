package polygraph

import (
	"isovet/history"
	"isovet/internal/deps"
)

// Components partitions the transactions into groups that share no key and no session order
// (with real time, everything is one group: time links every pair). Constraints of different
// groups cannot interact: every edge of the known graph and of every constraint joins
// transactions (or virtual nodes of a key) of one group. It returns the group of each
// transaction and the number of groups.
func (p *Polygraph) Components() ([]int32, int) {
	d := p.D
	parent := make([]int32, d.N)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int32) {
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[ra] = rb
		}
	}
	if d.Opts.Realtime {
		for t := 1; t < d.N; t++ {
			union(0, int32(t))
		}
	}
	if d.Opts.Session {
		for _, s := range d.H.Sessions {
			for i := 1; i < len(s.Txns); i++ {
				union(int32(s.Txns[i-1]), int32(s.Txns[i]))
			}
		}
	}
	first := make(map[int32]int32) // key -> a transaction touching it
	for t := range d.N {
		for _, o := range d.H.Txns[t].Ops {
			keys := []int32{int32(o.Key)}
			if o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite { // their rows' keys
				keys = keys[:0]
				for _, r := range d.H.Pred(o).Rows {
					keys = append(keys, int32(r.Key))
				}
			}
			for _, k := range keys {
				if f, ok := first[k]; ok {
					union(f, int32(t))
				} else {
					first[k] = int32(t)
				}
			}
		}
	}
	// Rows a predicate did not return are read too (deps.ReadPredMiss).
	for ri := range d.Reads {
		if r := &d.Reads[ri]; r.Kind == deps.ReadPredMiss {
			if f, ok := first[int32(r.Key)]; ok {
				union(f, r.Txn)
			} else {
				first[int32(r.Key)] = r.Txn
			}
		}
	}
	comp := make([]int32, d.N)
	ids := make(map[int32]int32)
	for t := range d.N {
		r := find(int32(t))
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
