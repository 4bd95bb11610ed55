package examples_test

import (
	"os"
	"strings"
	"testing"
)

// TestDocsQuoteTheTest: README.md and docs/library.md show examples/postgres_test.go word
// for word, so the test they show is the one that compiles and runs here.
func TestDocsQuoteTheTest(t *testing.T) {
	src, err := os.ReadFile("postgres_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want := "```go\n" + string(src) + "```\n"
	for _, doc := range []string{"../README.md", "../docs/library.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not quote examples/postgres_test.go as it is: copy the file into its ```go block", doc)
		}
	}
}
