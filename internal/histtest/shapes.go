package histtest

import (
	"math/rand/v2"

	"github.com/isovet/isovet/history"
)

// Shapes builds a small history of the shapes that made checking quadratic (issue #26),
// mixed: read-modify-writes of a tiny value domain (mostly x=1 read and written again, so
// that reads have many candidate writers and closed sets of readers form), keys that are
// only written (blind writes no read may read), and aborted or unknown outcomes (each
// about one transaction in abortOneIn). nt transactions, intervals serial per session; with
// secondRead, a quarter of the transactions read once more at the end.
func Shapes(seed uint64, nt int, abortOneIn int, secondRead bool) *history.History {
	r := rand.New(rand.NewPCG(seed, 26))
	b := history.NewBuilder()
	b.SetInitial(b.IntValue(0))
	read := []history.Key{b.IntKey(0), b.IntKey(1)}[:1+r.IntN(2)]
	blind := []history.Key{b.IntKey(10), b.IntKey(11)}
	ns := 1 + r.IntN(nt)
	sess := make([]history.SessionID, ns)
	for i := range sess {
		sess[i] = b.Session(history.Int(int64(i)))
	}
	val := func() history.Value { return b.IntValue([]int64{1, 1, 1, 2, 0}[r.IntN(5)]) }
	clock := make([]int64, ns)
	for i := range nt {
		out := history.OutcomeCommitted
		switch r.IntN(abortOneIn) {
		case 0:
			out = history.OutcomeAborted
		case 1:
			out = history.OutcomeUnknown
		}
		s := r.IntN(ns)
		b.BeginTxn(sess[s], history.Int(int64(i+1)), out)
		begin := clock[s] + int64(r.IntN(5))
		end := begin + int64(r.IntN(8))
		clock[s] = end + 1
		b.Current().Time = history.Interval{Begin: begin, End: end}
		b.Current().HasTime = true
		k := read[r.IntN(len(read))]
		if r.IntN(6) != 0 {
			b.Read(k, val())
		}
		if r.IntN(6) != 0 {
			b.Write(k, val())
		}
		if r.IntN(2) == 0 {
			b.Write(blind[r.IntN(len(blind))], val())
		}
		if secondRead && r.IntN(4) == 0 {
			b.Read(read[r.IntN(len(read))], val())
		}
		b.EndTxn()
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	return h
}
