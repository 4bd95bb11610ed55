package all_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/isovet/isovet/internal/runner"
	_ "github.com/isovet/isovet/internal/runner/all"
)

func TestSchemesLinked(t *testing.T) {
	var out bytes.Buffer
	code, err := runner.RunCommand(context.Background(), runner.Options{DB: "sqlite://" + filepath.Join(t.TempDir(), "x.db"), Txns: 20}, &out, &out)
	if err != nil || code != runner.ExitOK {
		t.Fatalf("RunCommand(sqlite) = %d, %v\n%s", code, err, out.String())
	}
}
