package anomaly

import (
	"strings"
	"testing"
)

// TestImpliesIsTransitive: the implication table is closed under transitivity, each
// level's real-time counterpart implies it, and every level forbids at least the anomalies
// of each level it implies.
func TestImpliesIsTransitive(t *testing.T) {
	for _, a := range Levels() {
		if !a.Implies(a) {
			t.Errorf("%s does not imply itself", a)
		}
		if rt, ok := a.RealtimeCounterpart(); ok && !rt.Implies(a) {
			t.Errorf("%s does not imply %s", rt, a)
		}
		for _, b := range Levels() {
			if !a.Implies(b) {
				continue
			}
			for _, k := range b.Info().Forbids {
				if !a.Forbids(k) {
					t.Errorf("%s implies %s but allows %s, which %s forbids", a, b, k, b)
				}
			}
			for _, c := range Levels() {
				if b.Implies(c) && !a.Implies(c) {
					t.Errorf("%s implies %s implies %s, but not %s", a, b, c, c)
				}
			}
		}
	}
}

// TestParseLevelSpellings: names and aliases in any case, with underscores or spaces for
// hyphens; names databases use for different levels are not levels.
func TestParseLevelSpellings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want Level // LevelInvalid: refused
	}{
		{"serializable", Serializable},
		{"Serializable", Serializable},
		{"SERIALIZABLE", Serializable},
		{"SNAPSHOT-ISOLATION", SnapshotIsolation},
		{"Snapshot_Isolation", SnapshotIsolation},
		{"snapshot isolation", SnapshotIsolation},
		{" read committed ", ReadCommitted},
		{"READ_COMMITTED", ReadCommitted},
		{"SI", SnapshotIsolation},
		{"snapshot", SnapshotIsolation},
		{"PL-SI", SnapshotIsolation},
		{"PL-3", Serializable},
		{"PL-2", ReadCommitted},
		{"PL-SS", StrictSerializable},
		{"Strict-Serializable", StrictSerializable},
		{"strong-session-SI", StrongSessionSI},
		{"repeatable-read", LevelInvalid},
		{"REPEATABLE READ", LevelInvalid},
		{"read-uncommitted", LevelInvalid},
		{"bogus", LevelInvalid},
		{"", LevelInvalid},
	}
	for _, tt := range tests {
		got, ok := ParseLevel(tt.name)
		if got != tt.want || ok != (tt.want != LevelInvalid) {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", tt.name, got, ok, tt.want)
		}
	}
}

// TestDatabaseNames: each ambiguous name is found in any spelling, is no level's alias,
// says what it means on PostgreSQL and MySQL, and names only real levels to check.
func TestDatabaseNames(t *testing.T) {
	t.Parallel()
	for _, spelling := range []string{"repeatable-read", "Repeatable_Read", "REPEATABLE READ"} {
		d, ok := LookupDatabaseName(spelling)
		if !ok {
			t.Fatalf("LookupDatabaseName(%q) not found", spelling)
		}
		s := d.String()
		for _, want := range []string{"PostgreSQL it is snapshot isolation: check --level snapshot-isolation", "MySQL/InnoDB it is weaker than snapshot isolation", "lost updates", "PL-2.99"} {
			if !strings.Contains(s, want) {
				t.Errorf("%q: %q does not say %q", spelling, s, want)
			}
		}
	}
	if _, ok := LookupDatabaseName("serializable"); ok {
		t.Error("serializable is a level, not an ambiguous database name")
	}
	for _, d := range databaseNames {
		if _, ok := ParseLevel(d.Name); ok {
			t.Errorf("%s is both ambiguous and a level", d.Name)
		}
		if strings.Contains(d.String(), "\n") {
			t.Errorf("%s: the answer spans lines", d.Name)
		}
		for _, r := range d.Readings {
			if l, ok := ParseLevel(r.Check); r.Check != "" && (!ok || l.String() != r.Check) {
				t.Errorf("%s %s: check %q is not a level's name", d.Name, r.Where, r.Check)
			}
		}
	}
}
