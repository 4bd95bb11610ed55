package runner

import (
	"strings"
	"testing"

	"github.com/isovet/isovet/check"
)

// TestIsolationTable: every (database, --isolation) pair either runs at the SQL level
// that is exactly the one asked for, with the level checked by default, or is refused
// with a sentence naming what the database offers and, for the values a user would
// expect to work, what the value would map to and why that is not it.
func TestIsolationTable(t *testing.T) {
	t.Parallel()
	type want struct {
		sql   string
		claim check.Level
		err   []string // substrings of the refusal; nil: honoured
	}
	pg, my, lite := PostgresIsolation, MySQLIsolation, SQLiteIsolation
	for _, tc := range []struct {
		tb   IsolationTable
		iso  string
		want want
	}{
		{pg, "", want{sql: "SERIALIZABLE", claim: check.Serializable}},
		{pg, "serializable", want{sql: "SERIALIZABLE", claim: check.Serializable}},
		{pg, "repeatable-read", want{sql: "REPEATABLE READ", claim: check.SnapshotIsolation}},
		{pg, "snapshot-isolation", want{sql: "REPEATABLE READ", claim: check.SnapshotIsolation}},
		{pg, "read-committed", want{sql: "READ COMMITTED", claim: check.ReadCommitted}},
		{pg, "read-uncommitted", want{err: []string{"PostgreSQL cannot run at --isolation read-uncommitted", "runs READ UNCOMMITTED as READ COMMITTED", "Ask for read-committed", "PostgreSQL offers serializable (SERIALIZABLE), repeatable-read (REPEATABLE READ)"}}},
		{pg, "strict-serializable", want{err: []string{"there is no isolation level strict-serializable on PostgreSQL", "PostgreSQL offers serializable (SERIALIZABLE)"}}},
		{pg, "chaos", want{err: []string{"there is no isolation level chaos on PostgreSQL"}}},

		{my, "", want{sql: "SERIALIZABLE", claim: check.Serializable}},
		{my, "serializable", want{sql: "SERIALIZABLE", claim: check.Serializable}},
		{my, "repeatable-read", want{sql: "REPEATABLE READ", claim: check.SnapshotIsolation}},
		{my, "read-committed", want{sql: "READ COMMITTED", claim: check.ReadCommitted}},
		{my, "read-uncommitted", want{sql: "READ UNCOMMITTED"}},
		{my, "snapshot-isolation", want{err: []string{"MySQL and MariaDB cannot run at --isolation snapshot-isolation", "no snapshot isolation level", "would map to REPEATABLE READ, which is not snapshot isolation there", "loses updates", "MySQL and MariaDB offer serializable (SERIALIZABLE), repeatable-read (REPEATABLE READ, not snapshot isolation: it loses updates), read-committed (READ COMMITTED), read-uncommitted (READ UNCOMMITTED)"}}},
		{my, "strong-session-serializable", want{err: []string{"there is no isolation level strong-session-serializable on MySQL and MariaDB"}}},

		{lite, "", want{sql: "SERIALIZABLE", claim: check.Serializable}},
		{lite, "serializable", want{sql: "SERIALIZABLE", claim: check.Serializable}},
		{lite, "repeatable-read", want{err: []string{"SQLite cannot run at --isolation repeatable-read", "always serializable", "SQLite offers serializable (SERIALIZABLE)"}}},
		{lite, "snapshot-isolation", want{err: []string{"always serializable"}}},
		{lite, "read-committed", want{err: []string{"always serializable"}}},
		{lite, "read-uncommitted", want{err: []string{"always serializable"}}},
	} {
		got, err := tc.tb.Lookup(tc.iso)
		name := tc.tb.Database + " --isolation " + tc.iso
		if tc.want.err == nil {
			if err != nil || got.SQL != tc.want.sql || got.Claim != tc.want.claim {
				t.Errorf("%s = %q claiming %v, %v; want %q claiming %v", name, got.SQL, got.Claim, err, tc.want.sql, tc.want.claim)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s runs at %q; want it refused", name, got.SQL)
			continue
		}
		for _, s := range tc.want.err {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: refusal %q does not say %q", name, err, s)
			}
		}
	}
}
