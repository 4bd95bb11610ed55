package ts

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
)

// loadChronos reads an authors' example (a JSON array of {tid, sid, sts, cts, ops}) into a
// history, with session order = array order. It is a test helper; format/chronos is the
// real reader.
func loadChronos(t testing.TB, path string, initial *int64) *history.History {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type hlc struct{ P, L json.RawMessage }
	var txs []struct {
		Tid, Sid json.RawMessage
		Sts, Cts hlc
		Ops      []struct {
			T string
			K int64
			V json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &txs); err != nil {
		t.Fatal(err)
	}
	num := func(r json.RawMessage) int64 {
		var s string
		if json.Unmarshal(r, &s) == nil {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		var n int64
		if err := json.Unmarshal(r, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	b := history.NewBuilder()
	if initial != nil {
		b.SetInitial(b.IntValue(*initial))
	}
	for _, x := range txs {
		s := b.Session(history.Str(string(x.Sid)))
		id := b.BeginTxn(s, history.Str(string(x.Tid)), history.OutcomeCommitted)
		cur := b.Txn(id)
		cur.Start = history.Timestamp{Physical: num(x.Sts.P), Logical: num(x.Sts.L)}
		cur.Commit = history.Timestamp{Physical: num(x.Cts.P), Logical: num(x.Cts.L)}
		cur.HasTimestamps = true
		for _, o := range x.Ops {
			k := b.IntKey(o.K)
			var v *int64
			var list []int64
			switch {
			case o.T == "r" && len(o.V) > 0 && o.V[0] == '[':
				if err := json.Unmarshal(o.V, &list); err != nil {
					t.Fatal(err)
				}
				vs := make([]history.Value, len(list))
				for i, e := range list {
					vs[i] = b.IntValue(e)
				}
				b.ReadList(k, vs)
				continue
			default:
				if err := json.Unmarshal(o.V, &v); err != nil {
					t.Fatal(err)
				}
			}
			val := history.Nil
			if v != nil {
				val = b.IntValue(*v)
			}
			switch o.T {
			case "r":
				b.Read(k, val)
			case "w":
				b.Write(k, val)
			case "a":
				b.Append(k, val)
			default:
				t.Fatalf("op type %q", o.T)
			}
		}
	}
	h, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSharedExamples runs the authors' example histories; docs/timestamp.md records and
// explains these counts.
func TestSharedExamples(t *testing.T) {
	t.Parallel()
	zero := int64(0)
	tests := []struct {
		file    string
		initial *int64
		level   anomaly.Level
		want    map[string]int
	}{
		{"format-kv.json", &zero, si, nil},
		{"format-kv.json", &zero, ssi, nil},
		{"format-kv.json", &zero, ser, map[string]int{"EXT": 101}},
		{"format-kv.json", nil, si, map[string]int{"EXT": 889}},
		{"format-list.json", &zero, si, nil},
		{"format-list.json", &zero, ser, map[string]int{"EXT": 1264}},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s/%s/init=%v", tc.file, tc.level, tc.initial != nil)
		t.Run(name, func(t *testing.T) {
			h := loadChronos(t, corpus.Path(t, "chronos/"+tc.file), tc.initial)
			res, err := Run(context.Background(), h, tc.level, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, v := range res.Violations {
				got[v.Kind.String()]++
			}
			if len(got) == 0 {
				got = nil
			}
			t.Logf("%s: %v", name, got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Run(%s) = %v, want %v", name, got, tc.want)
			}
		})
	}
}
