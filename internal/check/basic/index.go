package basic

import "isovet/history"

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

// index is an open-addressing hash table from (key, value) to a writer record. It is
// faster and smaller than a Go map for millions of pairs.
type index struct {
	slots []int32 // rec index + 1; 0 is empty
	mask  uint64
	recs  []wrec
}

func newIndex(writes int) *index {
	n := 16
	for n < writes*3/2+1 {
		n <<= 1
	}
	return &index{slots: make([]int32, n), mask: uint64(n - 1), recs: make([]wrec, 0, writes)}
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

// add records that txn t wrote v to k at op i with the given flags. The table never fills:
// it was sized for every write.
func (ix *index) add(k history.Key, v history.Value, t history.TxnID, i int32, flags uint8) {
	for j := hashKV(k, v) & ix.mask; ; j = (j + 1) & ix.mask {
		s := ix.slots[j]
		if s == 0 {
			ix.recs = append(ix.recs, wrec{k: k, v: v, txn: t, op: i, last: t, n: 1, flags: flags})
			ix.slots[j] = int32(len(ix.recs))
			return
		}
		if r := &ix.recs[s-1]; r.k == k && r.v == v {
			r.flags |= flags
			if r.last != t {
				r.last = t
				r.n++
			}
			return
		}
	}
}
