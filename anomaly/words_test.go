package anomaly

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestWords: every template is one sentence that names at least one fact, and only the
// placeholders the table documents.
func TestWords(t *testing.T) {
	re := regexp.MustCompile(`\{([^{}]*)\}`)
	known := Placeholders()
	for _, k := range Kinds() {
		for _, w := range k.Words() {
			ms := re.FindAllStringSubmatch(w, -1)
			if len(ms) == 0 {
				t.Errorf("%s: %q names no fact (the meaning says as much)", k, w)
			}
			for _, m := range ms {
				if !slices.Contains(known, m[1]) {
					t.Errorf("%s: %q uses the unknown placeholder {%s}", k, w, m[1])
				}
			}
			if !strings.HasSuffix(w, ".") || strings.Count(w, ". ") > 0 {
				t.Errorf("%s: %q is not one sentence ending in a full stop", k, w)
			}
		}
	}
	if Kind(200).Words() != nil || KindInvalid.Words() != nil {
		t.Error("an invalid kind has words")
	}
}
