package elle_test

import (
	"bytes"
	"testing"

	"github.com/isovet/isovet/format/elle"
	"github.com/isovet/isovet/history"
)

// fuzzRead checks a reader on arbitrary input: it must not panic, and whatever it reads must
// survive a write/read round trip through both writers.
func fuzzRead(t *testing.T, data []byte, read func([]byte) (*history.History, error)) {
	h, err := read(data)
	if err != nil {
		return
	}
	var buf bytes.Buffer
	if err := elle.WriteEDN(&buf, h); err != nil {
		return // a model Elle cannot express (none the reader makes)
	}
	roundTrip(t, h)
}

// FuzzReadEDN seeds from testdata/fuzz/FuzzReadEDN (copies of the shared Elle histories and
// small hand-made cases).
func FuzzReadEDN(f *testing.F) {
	f.Add([]byte("{:type :invoke, :f :txn, :value [[:append 1 2] [:r 1 nil]], :process 0, :time 1, :index 0}\n{:type :ok, :f :txn, :value [[:append 1 2] [:r 1 [2]]], :process 0, :time 2, :index 1}"))
	f.Add([]byte("[{:type :ok, :value [[:w :x 1]], :process 1} {:type :info, :value [[:r :x nil]], :process 1}]"))
	// No :time: intervals from positions; some :time: positions too.
	f.Add([]byte("{:type :invoke, :value [[:append 1 1]], :process 0}\n{:type :ok, :value [[:append 1 1]], :process 0}\n{:type :invoke, :value [[:r 1 nil]], :process 1}\n{:type :ok, :value [[:r 1 nil]], :process 1}"))
	f.Add([]byte("{:type :invoke, :value [[:w 1 1]], :process 0, :time 5}\n{:type :invoke, :value [[:r 1 nil]], :process 1}\n{:type :ok, :value [[:w 1 1]], :process 0, :time 9}\n{:type :info, :value [[:r 1 nil]], :process 1, :time 3}"))
	// Several open invokes on one process.
	f.Add([]byte("{:index 0, :type :invoke, :value [[:append 1 1]], :process 0}\n{:index 1, :type :invoke, :value [[:append 2 1]], :process 0}\n{:index 2, :type :ok, :value [[:append 2 1]], :process 0}\n{:index 3, :type :info, :value [[:append 1 1]], :process 0}\n{:index 4, :type :invoke, :value [[:r 1 nil]], :process 0}"))
	// Keys and values that are any EDN value.
	f.Add([]byte("{:type :ok, :value [[:append [:anti 1] 1] [:r (:anti 1) [1]] [:append {:b 2 :a #{1}} [:v 1N]] [:r \"[:anti 2]\" nil]], :process 0}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, func(b []byte) (*history.History, error) { return elle.ReadEDN(bytes.NewReader(b), "fuzz.edn") })
	})
}

// FuzzReadJSON seeds from testdata/fuzz/FuzzReadJSON.
func FuzzReadJSON(f *testing.F) {
	f.Add([]byte(`[{"type":"invoke","f":"txn","value":[["append",3,7],["r",4,null]],"process":1,"time":5,"index":0},{"type":"ok","f":"txn","value":[["append",3,7],["r",4,[1,2]]],"process":1,"time":9,"index":1}]`))
	f.Add([]byte(`{"type":"fail","value":[["w","x",2]],"process":0}`))
	f.Add([]byte(`[{"type":"invoke","value":[["append",["anti",1],1]],"process":0},{"type":"invoke","value":[["r",{"a":[1]},null]],"process":0},{"type":"ok","value":[["r",{"a":[1]},[]]],"process":0}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, func(b []byte) (*history.History, error) { return elle.ReadJSON(bytes.NewReader(b), "fuzz.json") })
	})
}
