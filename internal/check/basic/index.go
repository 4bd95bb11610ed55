package basic

import (
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/hugepage"
)

// Writer-record flags.
const (
	wFinal   uint8 = 1 << iota // a committed or unknown txn wrote it as its last write of the key
	wInter                     // a committed or unknown txn wrote it and later wrote the key again
	wAborted                   // an aborted txn wrote it
	wFailed                    // some write of it was a failed op
)

// wrec describes every write of one (key, value) pair.
type wrec struct {
	k     history.Key
	v     history.Value
	txn   history.TxnID // first writer
	op    int32         // its op index
	last  history.TxnID // last writer seen, to count distinct writers
	n     int32         // distinct writer transactions
	flags uint8
}

// index maps (key, value) to a writer record. Values are dense and, in most histories,
// written to one key only, so the first record of each value is found directly by value
// (and, since values are interned in order of appearance, with good locality); pairs that
// reuse a value on another key go to an open-addressing hash table.
type index struct {
	first []int32 // per value: index+1 of the record of its first key; 0 is none
	recs  []wrec

	slots []int32 // overflow hash table: record index + 1; 0 is empty
	mask  uint64
	used  int
}

func newIndex(values, writes int) *index {
	return &index{first: hugepage.Make[int32](values, values), recs: hugepage.Make[wrec](0, writes), slots: make([]int32, 16), mask: 15}
}

func hashKV(k history.Key, v history.Value) uint64 {
	x := uint64(uint32(k))<<32 | uint64(uint32(v))
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// find returns the record of (k, v), or nil.
func (ix *index) find(k history.Key, v history.Value) *wrec {
	f := ix.first[v]
	if f == 0 {
		return nil
	}
	if r := &ix.recs[f-1]; r.k == k {
		return r
	}
	if ix.used == 0 {
		return nil
	}
	for i := hashKV(k, v) & ix.mask; ; i = (i + 1) & ix.mask {
		s := ix.slots[i]
		if s == 0 {
			return nil
		}
		if r := &ix.recs[s-1]; r.k == k && r.v == v {
			return r
		}
	}
}

// add records that txn t wrote v to k at op i with the given flags.
func (ix *index) add(k history.Key, v history.Value, t history.TxnID, i int32, flags uint8) {
	r := ix.find(k, v)
	if r != nil {
		r.flags |= flags
		if r.last != t {
			r.last = t
			r.n++
		}
		return
	}
	ix.recs = append(ix.recs, wrec{k: k, v: v, txn: t, op: i, last: t, n: 1, flags: flags})
	id := int32(len(ix.recs))
	if ix.first[v] == 0 {
		ix.first[v] = id
		return
	}
	if 2*(ix.used+1) > len(ix.slots) {
		ix.grow()
	}
	ix.insert(id)
}

func (ix *index) insert(id int32) {
	r := &ix.recs[id-1]
	for j := hashKV(r.k, r.v) & ix.mask; ; j = (j + 1) & ix.mask {
		if ix.slots[j] == 0 {
			ix.slots[j] = id
			ix.used++
			return
		}
	}
}

func (ix *index) grow() {
	old := ix.slots
	ix.slots = make([]int32, 2*len(old))
	ix.mask = uint64(len(ix.slots) - 1)
	ix.used = 0
	for _, id := range old {
		if id != 0 {
			ix.insert(id)
		}
	}
}
