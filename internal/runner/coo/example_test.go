package coo_test

import (
	"fmt"
	"strings"

	"github.com/isovet/isovet/internal/runner/coo"
)

func ExampleParse() {
	src := "0-1-DROP TABLE IF EXISTS t1;\r\n0-1-CREATE TABLE t1 (k INT PRIMARY KEY, v INT);\r\n" +
		"0-1-INSERT INTO t1 VALUES (0, 0);\r\n0-1-COMMIT;\r\n" +
		"1-1-BEGIN;\r\n2-1-SELECT * from t1 WHERE v >= 0 AND v <= 1;\r\n3-2-UPDATE t1 SET v=1 WHERE k=0;\r\n4-1-COMMIT;"
	s, err := coo.Parse("demo.txt", strings.NewReader(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, s.Table, len(s.Setup), "setup statements, sessions", s.Sessions())
	for _, st := range s.Steps {
		fmt.Printf("%d-%d %s\n", st.Step, st.Session, st.Kind)
	}
	_, err = coo.Parse("bad.txt", strings.NewReader(src+"\n5-2-DELETE FROM t1;"))
	fmt.Println(err)
	// Output:
	// demo t1 4 setup statements, sessions [1 2]
	// 1-1 begin
	// 2-1 select-range
	// 3-2 update
	// 4-1 commit
	// bad.txt:9:5: coo: syntax error: unsupported statement DELETE (the scripts use BEGIN, COMMIT, ROLLBACK, DROP, CREATE, INSERT, SELECT, UPDATE)
}
