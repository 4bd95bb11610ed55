package edn_test

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/internal/edn"
)

func ExampleDecoder() {
	in := "[{:type :ok, :value [[:r :x [1 2]]]} ; one op\n #_ignored {:type :fail}]"
	d := edn.NewDecoder(strings.NewReader(in), edn.Options{File: "h.edn", Reuse: true})
	if err := d.Enter(); err != nil {
		fmt.Println(err)
		return
	}
	for {
		more, err := d.More()
		if err != nil {
			fmt.Println(err)
			return
		}
		if !more {
			break
		}
		v, err := d.Next()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(v.Kind, v.Len(), v.Pos.Line, v)
	}
	// Output:
	// map 2 1 {:type :ok, :value [[:r :x [1 2]]]}
	// map 1 2 {:type :fail}
}

func ExampleParseAll() {
	_, err := edn.ParseAll([]byte("{:a [1 2}"), edn.Options{File: "bad.edn"})
	fmt.Println(err)
	// Output: bad.edn:1:9 (byte 8): edn: unexpected '}': expected ']' to close the vector opened at line 1, column 5
}
