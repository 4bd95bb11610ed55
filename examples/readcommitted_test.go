// Package examples holds complete tests as a team would write them in its own repository,
// using only isovet's public packages. docs/library.md walks through them.
package examples_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
	"github.com/isovet/isovet/render"
)

// TestDepositsReadCommitted: at READ COMMITTED the second deposit overwrites the first, and
// the check names the lost update.
func TestDepositsReadCommitted(t *testing.T) {
	db := openPostgres(t)
	h := deposits(t, db, sql.LevelReadCommitted)
	rep, err := check.Check(t.Context(), h, check.Serializable, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != check.Fail || !rep.Anomalies[0].Is(anomaly.LostUpdate) {
		var b strings.Builder
		render.Text(&b, rep)
		t.Fatalf("want a lost update at READ COMMITTED, got:\n%s", b.String())
	}
}
