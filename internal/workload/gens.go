package workload

import "math/rand/v2"

func keysOr(o Options, def int) int {
	if o.Keys > 0 {
		return o.Keys
	}
	return def
}

// dupWriter returns the write op of key index i: a fresh tagged value, or a duplicate value
// from a small Zipfian space when the key is one of the duplicate-value keys.
type dupWriter struct {
	dupKeys int
	values  *zipf
}

func newDupWriter(o Options, n int) dupWriter {
	if !o.Duplicates {
		return dupWriter{}
	}
	return dupWriter{dupKeys: int(float64(n) * o.DupKeyShare), values: newZipf(o.DupValues, o.DupTheta)}
}

func (d dupWriter) write(r *rand.Rand, k string, i int) Op {
	if i < d.dupKeys {
		return Op{Kind: OpWrite, Key: k, From: -1, Dup: true, Delta: int64(d.values.next(r) + 1)}
	}
	return write(k)
}

func genRegister(o Options) *Workload {
	n := keysOr(o, 1000)
	ratio := o.ReadRatio
	if ratio == 0 {
		switch o.Mix {
		case "RH", "rh":
			ratio = 0.95
		case "WH", "wh":
			ratio = 0.3
		default:
			ratio = 0.5
		}
	}
	dw := newDupWriter(o, n)
	return &Workload{Sessions: perSessionPicker(o, n, func(r *rand.Rand, p *picker, _ int) Txn {
		t := Txn{Name: "rw"}
		for range o.OpsPerTxn {
			i := p.pick()
			k := key("k", i)
			if r.Float64() < ratio {
				t.add(read(k))
			} else {
				t.add(dw.write(r, k, i))
			}
		}
		return t
	})}
}

func genBlindW(o Options) *Workload {
	n := keysOr(o, 1000)
	dw := newDupWriter(o, n)
	return &Workload{Sessions: perSessionPicker(o, n, func(r *rand.Rand, p *picker, _ int) Txn {
		if r.IntN(2) == 0 {
			t := Txn{Name: "read-only"}
			for range o.OpsPerTxn {
				t.add(read(key("k", p.pick())))
			}
			return t
		}
		t := Txn{Name: "write-only"}
		for range o.OpsPerTxn {
			i := p.pick()
			t.add(dw.write(r, key("k", i), i))
		}
		return t
	})}
}

func genListAppend(o Options) *Workload {
	n := keysOr(o, 32)
	ops := min(o.OpsPerTxn, 4)
	return &Workload{Sessions: perSessionPicker(o, n, func(r *rand.Rand, p *picker, _ int) Txn {
		t := Txn{Name: "append"}
		for range ops {
			k := key("l", p.pick())
			if r.IntN(2) == 0 {
				t.add(appendOp(k))
			} else {
				t.add(readList(k))
			}
		}
		return t
	})}
}

// BankInitial is the initial balance of every account of the bank workload.
const BankInitial = 100

func genBank(o Options) *Workload {
	n := max(keysOr(o, 8), 2)
	w := &Workload{Initial: map[string]int64{}}
	total := int64(n * BankInitial)
	w.Invariant = &total
	for i := range n {
		w.Initial[key("acct", i)] = BankInitial
	}
	w.Sessions = perSessionPicker(o, n, func(r *rand.Rand, p *picker, _ int) Txn {
		if r.IntN(5) == 0 {
			t := Txn{Name: "balance"}
			for i := range n {
				t.add(read(key("acct", i)))
			}
			return t
		}
		a := p.pick()
		b := p.pick()
		for b == a {
			b = r.IntN(n)
		}
		amt := int64(1 + r.IntN(5))
		ka, kb := key("acct", a), key("acct", b)
		return txn("transfer", read(ka), read(kb), rmw(ka, 0, -amt), rmw(kb, 1, amt))
	})
	return w
}

const (
	tpccDistricts = 10
	tpccCustomers = 30 // per district
)

func genTPCC(o Options) *Workload {
	items := keysOr(o, 100)
	return &Workload{Sessions: perSessionPicker(o, items, func(r *rand.Rand, p *picker, _ int) Txn {
		d := 1 + r.IntN(tpccDistricts)
		dk := "d" + itoa(d)
		c := dk + ":c" + itoa(1+r.IntN(tpccCustomers))
		switch x := r.IntN(100); {
		case x < 45: // new-order
			t := Txn{Name: "new-order"}
			t.add(read("w:tax"))
			next := t.add(read(dk + ":next_o_id"))
			t.add(rmw(dk+":next_o_id", next, 1))
			t.add(read(c + ":discount"))
			seen := map[int]bool{}
			for range 5 + r.IntN(6) {
				i := p.pick()
				if seen[i] {
					continue
				}
				seen[i] = true
				t.add(read(key("i", i) + ":price"))
				s := t.add(read(key("s", i) + ":qty"))
				t.add(rmw(key("s", i)+":qty", s, -int64(1+r.IntN(10))))
			}
			t.add(appendOp(dk + ":orders"))
			t.add(appendOp(dk + ":new_orders"))
			return t
		case x < 88: // payment
			h := int64(1 + r.IntN(5000))
			t := Txn{Name: "payment"}
			w := t.add(read("w:ytd"))
			t.add(rmw("w:ytd", w, h))
			dy := t.add(read(dk + ":ytd"))
			t.add(rmw(dk+":ytd", dy, h))
			b := t.add(read(c + ":balance"))
			t.add(rmw(c+":balance", b, -h))
			t.add(appendOp(c + ":history"))
			return t
		case x < 92: // order-status
			return txn("order-status", read(c+":balance"), readList(dk+":orders"))
		case x < 96: // delivery: every district
			t := Txn{Name: "delivery"}
			for dd := 1; dd <= tpccDistricts; dd++ {
				k := "d" + itoa(dd)
				t.add(readList(k + ":new_orders"))
				n := t.add(read(k + ":delivered"))
				t.add(rmw(k+":delivered", n, 1))
				ck := k + ":c" + itoa(1+r.IntN(tpccCustomers)) + ":balance"
				b := t.add(read(ck))
				t.add(rmw(ck, b, int64(1+r.IntN(100))))
			}
			return t
		default: // stock-level
			t := Txn{Name: "stock-level"}
			t.add(read(dk + ":next_o_id"))
			for range 10 {
				t.add(read(key("s", p.pick()) + ":qty"))
			}
			return t
		}
	})}
}

func genTwitter(o Options) *Workload {
	users := keysOr(o, 100)
	return &Workload{Sessions: perSessionPicker(o, users, func(r *rand.Rand, p *picker, _ int) Txn {
		u := key("u", p.pick())
		switch x := r.IntN(100); {
		case x < 40: // tweet
			t := Txn{Name: "tweet"}
			t.add(appendOp(u + ":tweets"))
			n := t.add(read(u + ":ntweets"))
			t.add(rmw(u+":ntweets", n, 1))
			return t
		case x < 50: // follow
			t := Txn{Name: "follow"}
			t.add(appendOp(u + ":follows"))
			v := key("u", p.pick())
			n := t.add(read(v + ":nfollowers"))
			t.add(rmw(v+":nfollowers", n, 1))
			return t
		default: // timeline
			t := Txn{Name: "timeline"}
			t.add(readList(u + ":follows"))
			for range 4 {
				t.add(readList(key("u", p.pick()) + ":tweets"))
			}
			return t
		}
	})}
}

func genRUBiS(o Options) *Workload {
	n := keysOr(o, 100) // users and items
	return &Workload{Sessions: perSessionPicker(o, n, func(r *rand.Rand, p *picker, _ int) Txn {
		u := key("user", r.IntN(n))
		it := key("item", p.pick())
		switch x := r.IntN(100); {
		case x < 5:
			return txn("register", write(u+":profile"))
		case x < 45:
			t := Txn{Name: "bid"}
			b := t.add(read(it + ":max_bid"))
			t.add(rmw(it+":max_bid", b, int64(1+r.IntN(10))))
			t.add(appendOp(it + ":bids"))
			return t
		case x < 55:
			t := Txn{Name: "buy-now"}
			q := t.add(read(it + ":sold"))
			t.add(rmw(it+":sold", q, 1))
			t.add(appendOp(u + ":bought"))
			return t
		case x < 90:
			return txn("view-item", read(it+":max_bid"), read(it+":sold"), readList(it+":bids"))
		default:
			t := Txn{Name: "comment"}
			q := t.add(read(u + ":rating"))
			t.add(rmw(u+":rating", q, int64(r.IntN(3)-1)))
			return t
		}
	})}
}

func genWriteSkew(o Options) *Workload {
	pairs := keysOr(o, 2)
	return &Workload{Sessions: perSessionPicker(o, pairs, func(r *rand.Rand, p *picker, _ int) Txn {
		i := p.pick()
		x, y := key("x", i), key("y", i)
		// Both read the pair (two doctors on call), then each changes one side; under
		// snapshot isolation two such transactions on one pair can both commit.
		if r.IntN(2) == 0 {
			return txn("take-x", read(x), read(y), write(x))
		}
		return txn("take-y", read(x), read(y), write(y))
	})}
}

func genRMW(o Options) *Workload {
	n := keysOr(o, 4)
	return &Workload{Sessions: perSessionPicker(o, n, func(r *rand.Rand, p *picker, _ int) Txn {
		k := key("c", p.pick())
		return txn("increment", read(k), rmw(k, 0, 1))
	})}
}

func perSessionPicker(o Options, n int, f func(r *rand.Rand, p *picker, s int) Txn) [][]Txn {
	out := make([][]Txn, o.Sessions)
	for s := range out {
		r := newRand(o.Seed, uint64(s))
		p := newPicker(r, n, o)
		out[s] = make([]Txn, o.TxnsPerSess)
		for i := range out[s] {
			out[s][i] = f(r, p, s)
		}
	}
	return out
}

func itoa(i int) string { return key("", i) }
