package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/history/historytest"
	"github.com/isovet/isovet/render"
)

// A failed check rendered as prose: the anomaly, the transactions it involves, and the proof
// that no order explains them.
func ExampleText() {
	h := historytest.MustParse(`
		init x=0
		s1: T1 r(x,0) w(x,1)
		s2: T2 r(x,0) w(x,2)`)
	rep, err := check.Check(context.Background(), h, check.Serializable, check.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	render.Text(os.Stdout, rep)
	// Output:
	// serializable, checked by ser: fail (1 anomaly)
	//
	// [1] G2-item: item anti-dependency cycle (G2-item)
	//     T1 and T2 both read x=0 and both overwrote it, so one of the updates is lost.
	//     Also known as: lost update.
	//
	//     Let:
	//       T1 = {r(x,0), w(x,1)} (session s1, committed)
	//       T2 = {r(x,0), w(x,2)} (session s2, committed)
	//
	//     Then:
	//       - T1 < T2, because T1 read the initial x=0, which T2 overwrote with x=2;
	//       - However, T2 < T1, because T2 read the initial x=0, which T1 overwrote with x=1: a contradiction!
}

// One anomaly as a Graphviz digraph.
func ExampleDOTAnomaly() {
	h := historytest.MustParse("init x=0; s1: T1 r(x,0) w(x,1); s2: T2 r(x,0) w(x,2)")
	rep, _ := check.Check(context.Background(), h, check.Serializable, check.Options{})
	render.DOTAnomaly(os.Stdout, rep.History, rep.Anomalies[0])
	// Output:
	// digraph isovet {
	//   node [shape=box, fontname="monospace"];
	//   edge [fontname="monospace"];
	//   label="G2-item: item anti-dependency cycle (G2-item)";
	//   t0 [label="T1\nr(x,0) w(x,1)\ncommitted"];
	//   t1 [label="T2\nr(x,0) w(x,2)\ncommitted"];
	//   t0 -> t1 [label="rw x", color="#5B00C0", fontcolor="#5B00C0"];
	//   t1 -> t0 [label="rw x", color="#5B00C0", fontcolor="#5B00C0"];
	// }
}

// The JSON document of one report: a schema version and one result; a program reads the
// verdict, each anomaly's kind and its steps' keys (strings, as the history wrote them, even
// when the history's key is the integer 7).
func ExampleJSON() {
	h := historytest.MustParse("init 0; s1: T1 r(7,0) w(7,1); s2: T2 r(7,0) w(7,2)")
	rep, _ := check.Check(context.Background(), h, check.Serializable, check.Options{})
	var b bytes.Buffer
	render.JSON(&b, rep)
	var doc struct {
		Schema  int
		Results []struct {
			Level, Verdict string
			Anomalies      []struct {
				Kind  string
				Steps []struct{ Key any }
			}
		}
	}
	json.Unmarshal(b.Bytes(), &doc)
	r := doc.Results[0]
	fmt.Printf("schema %d: %s %s, %s on key %q\n", doc.Schema, r.Level, r.Verdict, r.Anomalies[0].Kind, r.Anomalies[0].Steps[0].Key)
	// Output:
	// schema 1: serializable fail, G2-item on key "7"
}
