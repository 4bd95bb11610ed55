package sat

import (
	"context"
	"testing"
)

// FuzzSolve decodes arbitrary bytes into a CNF over at most 12 variables
// (first byte: variable count; then one byte per literal: bit 0 the sign,
// bit 7 ends the clause) and compares Solve with brute force, with and
// without the last literal as an assumption.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{3, 0, 2, 0x84, 1, 0x83})
	f.Add([]byte{2, 0, 0x82, 1, 0x83, 0x80, 0x82})
	f.Add([]byte{11, 1, 5, 9, 0x8c, 2, 6, 0x8b, 3, 0x87, 0x81})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 400 {
			return
		}
		n := 1 + int(data[0])%12
		var cnf [][]int
		var cur []int
		for _, b := range data[1:] {
			x := 1 + int(b&0x7f>>1)%n
			if b&1 == 1 {
				x = -x
			}
			cur = append(cur, x)
			if b&0x80 != 0 {
				cnf = append(cnf, cur)
				cur = nil
			}
		}
		if cur != nil {
			cnf = append(cnf, cur)
		}
		s := load(n, cnf, Options{RestartBase: 1 + int(data[0])%5})
		st, err := s.Solve(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		checkAnswer(t, s, n, cnf, nil, st)
		if len(cnf) > 0 {
			last := cnf[len(cnf)-1]
			assume := []int{-last[0]}
			st, err = s.Solve(context.Background(), lits(assume)...)
			if err != nil {
				t.Fatal(err)
			}
			checkAnswer(t, s, n, cnf, assume, st)
		}
	})
}
