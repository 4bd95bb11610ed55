package historytest_test

import (
	"testing"

	"github.com/isovet/isovet/history/historytest"
)

// FuzzParse: Parse never panics, and what it accepts prints and parses back to the same
// text.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"s1: T1 w(x,1) w(y,1) c; s2: T2 r(x,1) r(y,0) c; T3 a(x,2) r(x,[1,2]) abort; T4 w(z,9) info",
		"init 0\ninit x=5, y=6\nT1 r(x,5)<-init r(q,nil)<-none w(x,1)!@[1,2] c @[0,3] ts[1,4.2]",
		`s: A ins("k 1",v) del("k 1") r(l,[]) ?`,
		"T1 w(x,1); T2 r(x,1)<-T1 # comment",
		`s1: T1 ins(x,3) c; s2: T2 pr("v > 2", [x=3<-T1]) pw(r, "v<2", [y=0], [x=3]) c`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		h, err := historytest.Parse(src)
		if err != nil {
			return
		}
		text := historytest.Format(h)
		h2, err := historytest.Parse(text)
		if err != nil {
			t.Fatalf("Parse(Format(Parse(%q))) = %v\n%s", src, err, text)
		}
		if text2 := historytest.Format(h2); text2 != text {
			t.Fatalf("round trip of %q changed:\n%s\nvs\n%s", src, text, text2)
		}
	})
}
