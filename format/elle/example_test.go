package elle_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/isovet/isovet/format/elle"
)

func ExampleReadJSON() {
	in := `[{"type":"invoke","f":"txn","value":[["w","x",1]],"process":0,"index":0},
{"type":"fail","f":"txn","value":[["w","x",1]],"process":0,"index":1}]`
	h, err := elle.ReadJSON(strings.NewReader(in), "example.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(h.Txns), h.Txn(0).Outcome, h.Key(h.Txn(0).Ops[0].Key))
	// Output: 1 aborted x
}

func ExampleWriteEDN() {
	in := `{:type :ok, :value [[:append 1 2] [:r 1 [2]]], :process 3, :index 5}`
	h, err := elle.ReadEDN(strings.NewReader(in), "plume.edn")
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = elle.WriteEDN(os.Stdout, h)
	// Output:
	// {:index 5, :type :ok, :process 3, :f :txn, :value [[:append 1 2] [:r 1 [2]]]}
}

func ExampleSniffEDN() {
	fmt.Println(elle.SniffEDN("h.edn", []byte("{:index 0 :type :invoke :value [[:r 1 nil]]}")))
	fmt.Println(elle.SniffJSON("h.json", []byte(`[{"type":"invoke","f":"txn","value":[]}]`)))
	// Output:
	// true
	// true
}

func ExampleNewEDNDecoder() {
	// A non-transactional history is refused with a located error.
	in := "{:type :invoke, :f :transfer, :value {:from 1, :to 2, :amount 5}, :process 0}\n"
	_, err := elle.ReadEDN(strings.NewReader(in), "bank.edn")
	fmt.Println(err)
	// Output: bank.edn:1:1: elle-edn: not a transactional history: :f :transfer (bank workload); expected :f :txn with a vector of micro-ops (list-append or rw-register)
}
