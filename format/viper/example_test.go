package viper_test

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/format/viper"
	"github.com/isovet/isovet/history"
)

// Example decodes two client logs: client 25's transaction reads what client 24's wrote.
func Example() {
	d := viper.NewDecoder()
	b := history.NewBuilder()
	logs := []struct{ name, text string }{
		{"J24.log", `{"value": [["w", 1, 10, true], ["w", 2, 20, true]]}` + "\n"},
		{"J25.log", `{"value": [["r", 1, 10, false], ["r", 2, null, false]]}` + "\n"},
	}
	for _, l := range logs {
		if err := d.Decode(strings.NewReader(l.text), l.name, b); err != nil {
			panic(err)
		}
	}
	if err := d.Finish(b); err != nil {
		panic(err)
	}
	h, err := b.Build()
	if err != nil {
		panic(err)
	}
	for id, t := range h.All() {
		fmt.Printf("%s (session %v):", h.Name(id), h.Sessions[t.Session].Source)
		for _, o := range t.Ops {
			fmt.Printf(" %s(%v,%v)", o.Kind, h.Key(o.Key), h.Value(o.Value))
		}
		fmt.Println()
	}
	// Output:
	// J24:1 (session 24): write(1,10) write(2,20)
	// J25:1 (session 25): read(1,10) read(2,nil)
}
