package format_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isovet/isovet/format"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/corpus"
)

func plumeDir(t *testing.T) string {
	t.Helper()
	return corpus.Path(t, "plume/testcase")
}

// canonical renders h as a format-independent model: sessions of transactions with outcome
// and operations, keys and values renamed by first appearance. It maps what formats express
// differently to one form:
//   - a list-append is a write of the element, and a list read is a read of its last element
//     (an empty list reads the initial state), as Plume's Elle converter encodes registers;
//   - a read of the key's initial value that no transaction wrote reads the initial state.
//
// Plume's dbcop and Cobra converters prepend PolySI's initial transaction (Cobra's T-1.log,
// dbcop's first session); their readers take it as the initial state, so it needs no mapping
// here.
func canonical(t *testing.T, h *history.History) string {
	t.Helper()
	written := map[[2]int32]bool{}
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Kind.IsWrite() {
				written[[2]int32{int32(o.Key), int32(o.Value)}] = true
			}
		}
	}
	keys := map[history.Key]string{}
	vals := map[[2]int32]string{}
	key := func(k history.Key) string {
		if s, ok := keys[k]; ok {
			return s
		}
		s := fmt.Sprintf("k%d", len(keys))
		keys[k] = s
		return s
	}
	val := func(k history.Key, v history.Value, isRead bool) string {
		if isRead && v == h.InitialValue(k) && !written[[2]int32{int32(k), int32(v)}] {
			return "init"
		}
		p := [2]int32{int32(k), int32(v)}
		if s, ok := vals[p]; ok {
			return s
		}
		s := fmt.Sprintf("v%d", len(vals))
		vals[p] = s
		return s
	}
	var b strings.Builder
	sess := 0
	for _, s := range h.Sessions {
		var txns []string
		for _, ti := range s.Txns {
			tx := &h.Txns[ti]
			var ops []string
			for _, o := range tx.Ops {
				switch o.Kind {
				case history.OpWrite, history.OpAppend:
					ops = append(ops, fmt.Sprintf("w(%s,%s)", key(o.Key), val(o.Key, o.Value, false)))
				case history.OpRead:
					ops = append(ops, fmt.Sprintf("r(%s,%s)", key(o.Key), val(o.Key, o.Value, true)))
				case history.OpListRead:
					l := h.List(o)
					v := "init"
					if len(l) > 0 {
						v = val(o.Key, l[len(l)-1], true)
					}
					ops = append(ops, fmt.Sprintf("r(%s,%s)", key(o.Key), v))
				default:
					t.Fatalf("unexpected op kind %v in a Plume fixture", o.Kind)
				}
			}
			txns = append(txns, fmt.Sprintf("%s[%s]", tx.Outcome, strings.Join(ops, " ")))
		}
		if len(txns) > 0 {
			fmt.Fprintf(&b, "s%d: %s\n", sess, strings.Join(txns, " "))
			sess++
		}
	}
	return b.String()
}

// plumeDiffers lists the fixtures whose published files really hold different histories,
// with what differs. The test asserts they differ, so a reader change that hides a real
// difference is noticed too. When only the session assignment differs (sessionsOnly), the
// transactions must still agree as a multiset.
var plumeDiffers = map[string]struct {
	why          string
	sessionsOnly bool
}{
	"tap-b/dbcop": {"Plume's dbcop file drops the aborted transaction (it has only the initial writes and the read)", false},
	"tap-n/elle":  {"Plume's Elle file merges text transactions 3 and 4 into one transaction", false},
	"tap-b/elle":  {"Plume's Elle file runs the two transactions of text session 0 on two processes", true},
	"tap-i/elle":  {"Plume's Elle file runs the transactions of text sessions 1 and 2 on one process", true},
	"tap-l/elle":  {"Plume's Elle file runs the transactions of text sessions 1 and 2 on one process", true},
	"tap-a/viper": {"Plume's Viper file is empty: its Viper writer wrote no transaction of this case", false},
	"tap-b/viper": {"Plume's Viper file is empty: its Viper writer wrote no transaction of this case", false},
	"tap-c/viper": {"Plume's Viper file is empty: its Viper writer wrote no transaction of this case", false},
	"tap-d/viper": {"Plume's Viper files are empty: its Viper writer wrote no transaction of this case", false},
	"tap-e/cobra": {"Plume's Cobra file keeps only the transaction's last write of the key and drops its read (a Cobra log records no read of a transaction's own write)", false},
}

// txnMultiset returns the transactions of a canonical rendering, sorted, without sessions.
func txnMultiset(canon string) []string {
	var txns []string
	for _, line := range strings.Split(strings.TrimSpace(canon), "\n") {
		_, rest, _ := strings.Cut(line, ": ")
		for _, tx := range strings.SplitAfter(rest, "] ") {
			txns = append(txns, strings.TrimSpace(tx))
		}
	}
	slices.Sort(txns)
	return txns
}

// TestPlumeFormatsAgree reads each Plume anomaly fixture in every format isovet reads (text,
// elle, dbcop, cobra, viper) and asserts they yield the same model as the text file.
func TestPlumeFormatsAgree(t *testing.T) {
	dir := plumeDir(t)
	for c := 'a'; c <= 'n'; c++ {
		name := fmt.Sprintf("tap-%c", c)
		t.Run(name, func(t *testing.T) {
			read := func(p string) *history.History {
				h, _, err := format.Open(p, format.Auto, format.Options{})
				if err != nil {
					t.Fatalf("reading %s: %v", p, err)
				}
				return h
			}
			want := canonical(t, read(filepath.Join(dir, "text", name+".txt")))
			forms := []struct{ form, path string }{
				{"elle", filepath.Join(dir, "elle", name+".edn")},
				{"dbcop", filepath.Join(dir, "dbcop", name, "history.bincode")},
				{"cobra", filepath.Join(dir, "cobra", name)},
				{"viper", filepath.Join(dir, "viper", name)},
			}
			for _, f := range forms {
				if _, err := os.Stat(f.path); err != nil {
					if f.form == "cobra" && (c == 'a' || c == 'b') {
						continue // the published Cobra set lacks tap-a and tap-b
					}
					t.Fatalf("missing fixture %s", f.path)
				}
				var h *history.History
				if f.form == "viper" && c <= 'd' {
					// Plume's Viper files of tap-a..d are empty: an input error unless
					// AllowEmpty says the history is really empty.
					if _, _, err := format.Open(f.path, format.Auto, format.Options{}); !errors.Is(err, format.ErrEmpty) {
						t.Errorf("%s: Open = %v, want an error wrapping format.ErrEmpty", f.path, err)
					}
					var err error
					if h, _, err = format.Open(f.path, format.Auto, format.Options{AllowEmpty: true}); err != nil || len(h.Txns) != 0 {
						t.Fatalf("%s with AllowEmpty: %v; want an empty history", f.path, err)
					}
				} else {
					h = read(f.path)
				}
				got := canonical(t, h)
				diff := cmp.Diff(want, got)
				if d, ok := plumeDiffers[name+"/"+f.form]; ok {
					if diff == "" {
						t.Errorf("%s: expected a difference (%s), found none", f.path, d.why)
					}
					if d.sessionsOnly {
						if diff := cmp.Diff(txnMultiset(want), txnMultiset(got)); diff != "" {
							t.Errorf("%s: only sessions should differ (%s), but the transactions do too:\n%s", f.path, d.why, diff)
						}
					}
					continue
				}
				if diff != "" {
					t.Errorf("%s yields a different model than the text fixture (-text +%s):\n%s", f.path, f.form, diff)
				}
			}
		})
	}
}
