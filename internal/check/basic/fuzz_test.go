package basic_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/isovet/isovet/internal/check/basic"
	"github.com/isovet/isovet/internal/explain"
	"github.com/isovet/isovet/internal/histtest"
	"github.com/isovet/isovet/internal/report"
)

// FuzzCheck: the basic checks never panic on any history the DSL accepts, every finding
// names valid transactions, and every renderer accepts the report.
func FuzzCheck(f *testing.F) {
	ents, err := os.ReadDir("../../../testdata/histories/basic")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		text, err := os.ReadFile("../../../testdata/histories/basic/" + e.Name())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(text))
	}
	f.Fuzz(func(t *testing.T, src string) {
		h, err := histtest.Parse(src)
		if err != nil {
			return
		}
		f, err := basic.Check(context.Background(), h, basic.Options{MaxAnomalies: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range f.Anomalies {
			for _, id := range a.Txns {
				if id < 0 || int(id) >= len(h.Txns) {
					t.Fatalf("%s names txn %d of %d", a.Kind, id, len(h.Txns))
				}
			}
			if a.Message == "" || strings.Contains(a.Message, "%!") {
				t.Fatalf("%s has message %q", a.Kind, a.Message)
			}
		}
		rep := &report.Report{Verdict: report.Fail, Anomalies: f.Anomalies, Notes: f.Notes, History: h}
		for _, render := range []func(io.Writer, *report.Report) error{explain.Text, explain.DOT, explain.JSON} {
			if err := render(io.Discard, rep); err != nil {
				t.Fatal(err)
			}
		}
	})
}
