package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isovet/isovet/internal/runner"
	_ "github.com/isovet/isovet/internal/runner/all"
)

// TestIsolationRefusedByOpen: Open refuses an isolation a database cannot honour before
// it does anything else, in any spelling of the level (SQLite runs in-process; the
// PostgreSQL and MySQL URLs point nowhere, and the refusal comes before any connection).
func TestIsolationRefusedByOpen(t *testing.T) {
	t.Parallel()
	lite := "sqlite://" + filepath.Join(t.TempDir(), "x.db")
	for _, tc := range []struct{ db, iso, want string }{
		{"mysql://nobody@127.0.0.1:1/none", "snapshot-isolation", "MySQL and MariaDB cannot run at --isolation snapshot-isolation"},
		{"mariadb://nobody@127.0.0.1:1/none", "SNAPSHOT_ISOLATION", "MySQL and MariaDB cannot run at --isolation snapshot-isolation"},
		{"mysql://nobody@127.0.0.1:1/none", "si", "MySQL and MariaDB cannot run at --isolation snapshot-isolation"},
		{"postgres://nobody@127.0.0.1:1/none", "Read Uncommitted", "PostgreSQL cannot run at --isolation read-uncommitted"},
		{lite, "repeatable-read", "SQLite cannot run at --isolation repeatable-read"},
		{lite, "rc", "SQLite cannot run at --isolation read-committed"},
		{"memdb://serializable", "snapshot-isolation", "memdb://serializable runs at serializable"},
		{"memdb://", "repeatable-read", "unknown memdb mode"},
	} {
		db, _, err := runner.Open(context.Background(), tc.db, runner.OpenOptions{Isolation: tc.iso})
		if err == nil {
			db.Close()
			t.Errorf("Open(%s, --isolation %s) succeeded; want it refused", tc.db, tc.iso)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s, --isolation %s) = %v; want it to say %q", tc.db, tc.iso, err, tc.want)
		}
	}
}
