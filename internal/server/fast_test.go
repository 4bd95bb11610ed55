package server

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/format/native"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/ts"
)

var datumEq = gocmp.Options{gocmp.Comparer(func(a, b history.Datum) bool { return a == b }), cmpopts.EquateEmpty()}

// checkFastMatches asserts that decodeFast accepts body and agrees with the general
// native path transaction by transaction.
func checkFastMatches(t *testing.T, body []byte) {
	t.Helper()
	var b batchBuf
	if !decodeFast(body, &b) {
		t.Fatalf("decodeFast refused %.200q", body)
	}
	want, err := decodeNative(body)
	if err != nil {
		t.Fatalf("decodeNative: %v", err)
	}
	if diff := gocmp.Diff(want, b.txs, datumEq); diff != "" {
		t.Fatalf("decodeFast vs decodeNative (-native +fast):\n%s", diff)
	}
}

func TestDecodeFastMatchesNative(t *testing.T) {
	t.Parallel()
	h := benchHistory(3000)
	var buf bytes.Buffer
	enc := native.NewEncoder(&buf)
	for i := range h.Txns {
		if err := enc.Encode(h, history.TxnID(i)); err != nil {
			t.Fatal(err)
		}
	}
	checkFastMatches(t, buf.Bytes())
	for _, body := range []string{
		`{"s":"alice","id":"t-1","sts":[5,0],"cts":[9,1],"ops":[["r","x",null],["w","x","v 1"],["d","y"],["i",-3,-40],["a",7,0]]}`,
		`{"ops":[],"cts":[2,0],"sts":[1,0],"id":-7,"s":0}` + "\r\n\n" + `{"s":1,"id":8,"sts":[3,0],"cts":[3,0],"ops":[["w",1,2]]}`,
		`{"s":1,"id":9,"sts":[-5,3],"cts":[-5,4],"ops":[["r",123456789012345678,1]]}` + "\n",
	} {
		checkFastMatches(t, []byte(body))
	}
}

// TestDecodeFastRefuses: every shape outside the fast path is left to the general path
// (which decodes it or reports the error with its code).
func TestDecodeFastRefuses(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"isovet":1,"initial":0}`,
		`{"s":1,"id":8,"sts":[3,0],"cts":[4,1],"ops":[["a",3,7],["r",3,[1,7]]]}`,
		`{"s":1,"id":8,"o":"a","sts":[3,0],"cts":[4,1],"ops":[]}`,
		`{"s":1,"id":"a\"b","sts":[3,0],"cts":[4,1],"ops":[]}`,
		`{"s":1, "id":8,"sts":[3,0],"cts":[4,1],"ops":[]}`,
		`{"s":1,"id":8,"sts":[3,0],"cts":[4,1],"ops":[["w",1,1234567890123456789]]}`,
		`{"s":1,"id":8,"sts":[3,0],"cts":[4,1],"ops":[["w",1,2,{"failed":true}]]}`,
		`{"s":1,"id":8,"sts":[3,0],"cts":[4,1],"ops":[["w",1,2.5]]}`,
		`{"s":1,"id":8,"sts":[3,0],"cts":[4,1]}`,
		`{"s":1,"id":8,"id":9,"sts":[3,0],"cts":[4,1],"ops":[]}`,
		`{"s":1,"id":null,"sts":[3,0],"cts":[4,1],"ops":[]}`,
		`{"s":1,"id":8,"sts":[3,0],"cts":[4,1],"ops":[],"x":1}`,
		`{"s":1,"id":8,"sts":[3,0],"cts":[4,1],"ops":[]}}`,
		`{"s":1,"id":8,"sts":[3,0],"cts":[4,1],"ops":[["w",1,2]`,
		`{"s":1,"id":8,"sts":[3],"cts":[4,1],"ops":[]}`,
	} {
		var b batchBuf
		if decodeFast([]byte(body), &b) {
			t.Errorf("decodeFast accepted %s as %+v", body, b.txs)
		}
	}
}

// FuzzDecodeFast: whatever the fast path accepts, the general path accepts too and reads
// the same transactions.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{
		`{"s":1,"id":17,"sts":[5,0],"cts":[9,1],"ops":[["r",3,7],["w",4,8],["d",5]]}`,
		`{"s":"a","id":"b","sts":[5,0],"cts":[5,0],"ops":[["w","k",null]]}` + "\n" + `{"s":2,"id":3,"sts":[1,2],"cts":[3,4],"ops":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b batchBuf
		if !decodeFast(data, &b) {
			return
		}
		want, err := decodeNative(data)
		if slices.ContainsFunc(b.txs, func(x ts.Txn) bool { return x.Commit.Less(x.Start) }) {
			// decodeBuf refuses these after either path, with the same code.
			var ie *inputError
			if !errors.As(err, &ie) || ie.code != "timestamps_backwards" {
				t.Fatalf("a commit before its start: the native reader says %v, want timestamps_backwards", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("fast path accepted what the native reader refuses (%v): %q", err, data)
		}
		if diff := gocmp.Diff(want, b.txs, datumEq); diff != "" {
			t.Fatalf("decodeFast vs decodeNative (-native +fast):\n%s", diff)
		}
	})
}

// TestBatchBufReuse: a released buffer decodes the next batch without keeping the old
// transactions' memory.
func TestBatchBufReuse(t *testing.T) {
	t.Parallel()
	b := getBatchBuf()
	if !decodeFast([]byte(`{"s":1,"id":"x","sts":[1,0],"cts":[2,0],"ops":[["w",1,2],["w",2,3]]}`), b) {
		t.Fatal("refused")
	}
	first := b.txs
	b.release()
	if first[0].ID != (history.Datum{}) || len(b.txs) != 0 {
		t.Fatalf("release kept %v", first[0])
	}
	if !decodeFast([]byte(`{"s":1,"id":5,"sts":[1,0],"cts":[2,0],"ops":[["r",9,0]]}`), b) {
		t.Fatal("refused")
	}
	want := []ts.Txn{{ID: history.Int(5), Session: history.Int(1), Seq: -1, Start: history.Timestamp{Physical: 1}, Commit: history.Timestamp{Physical: 2},
		Ops: []ts.Op{{Kind: history.OpRead, Key: history.Int(9), Value: history.Int(0)}}}}
	if diff := gocmp.Diff(want, b.txs, datumEq); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestLoadGenIsClean: the benchmark workload is what a correct database produces, so the
// checker (strong-session SI, the strictest level it satisfies) finds nothing in it.
func TestLoadGenIsClean(t *testing.T) {
	t.Parallel()
	g := NewLoadGen(LoadOptions{Seed: 3})
	on, err := ts.NewOnline(ts.OnlineOptions{Level: anomaly.StrongSessionSI, Initial: history.Int(0)})
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	n, writes := 0, 0
	for range 20 {
		body = g.Append(body[:0], 1000)
		var b batchBuf
		if !decodeFast(body, &b) {
			t.Fatalf("the generator wrote lines the fast path refuses: %.300s", body)
		}
		for _, x := range b.txs {
			for _, o := range x.Ops {
				if o.Kind == history.OpWrite {
					writes++
				}
			}
			if evs := on.Observe(x); len(evs) != 0 {
				t.Fatalf("Observe(%v) = %v", x.ID, evs)
			}
			n++
		}
	}
	if evs := on.Flush(); len(evs) != 0 {
		t.Fatalf("Flush = %d events, first %v", len(evs), evs[0])
	}
	if st := on.Stats(); n != 20_000 || st.Observed != 20_000 || writes != 80_000 {
		t.Fatalf("observed %d (%d), %d writes", n, st.Observed, writes)
	}
}
