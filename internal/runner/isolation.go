package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/isovet/isovet/check"
)

// Isolation is how a database runs one --isolation value: the SQL level the driver sets
// and the level `isovet run` checks by default.
type Isolation struct {
	Name string // isovet's name, as --isolation takes it: serializable, repeatable-read, ...
	SQL  string // the level the driver asks for: SERIALIZABLE, REPEATABLE READ, ...
	// Claim is the level checked when --check is not given: the level the database claims
	// there (0: none isovet checks; --check must say).
	Claim check.Level
	// Note qualifies SQL where a person could take it for more than it is ("not snapshot
	// isolation: it loses updates"); "" otherwise.
	Note string
}

// Describe is the level as a run's description names it: the SQL level and its note.
func (i Isolation) Describe() string {
	if i.Note == "" {
		return i.SQL
	}
	return i.SQL + " (" + i.Note + ")"
}

// IsolationTable is the isolation levels of one kind of database: the --isolation values
// it honours exactly, and why it refuses the others it could be asked for.
type IsolationTable struct {
	Database string      // e.g. "PostgreSQL", "MySQL and MariaDB"
	Levels   []Isolation // the first is the default, for an empty --isolation
	// Refused says, for an --isolation value the database has no exact level for, what the
	// nearest level would be and why it is not the one asked for.
	Refused map[string]string
}

// The isolation tables of the SQL drivers. A value is honoured only where the database's
// level is exactly it; docs/runner.md has the same table.
var (
	// PostgreSQL: REPEATABLE READ is snapshot isolation, SERIALIZABLE is serializable
	// snapshot isolation (serializable); READ UNCOMMITTED runs as READ COMMITTED.
	PostgresIsolation = IsolationTable{
		Database: "PostgreSQL",
		Levels: []Isolation{
			{Name: "serializable", SQL: "SERIALIZABLE", Claim: check.Serializable},
			{Name: "repeatable-read", SQL: "REPEATABLE READ", Claim: check.SnapshotIsolation},
			{Name: "snapshot-isolation", SQL: "REPEATABLE READ", Claim: check.SnapshotIsolation},
			{Name: "read-committed", SQL: "READ COMMITTED", Claim: check.ReadCommitted},
		},
		Refused: map[string]string{
			"read-uncommitted": "PostgreSQL runs READ UNCOMMITTED as READ COMMITTED, so the run would be one at read committed. Ask for read-committed",
		},
	}
	// MySQL and MariaDB (InnoDB): REPEATABLE READ reads a snapshot but writes the latest
	// row, so it loses updates: no snapshot isolation.
	MySQLIsolation = IsolationTable{
		Database: "MySQL and MariaDB",
		Levels: []Isolation{
			{Name: "serializable", SQL: "SERIALIZABLE", Claim: check.Serializable},
			{Name: "repeatable-read", SQL: "REPEATABLE READ", Claim: check.SnapshotIsolation, Note: mysqlRR},
			{Name: "read-committed", SQL: "READ COMMITTED", Claim: check.ReadCommitted},
			{Name: "read-uncommitted", SQL: "READ UNCOMMITTED"},
		},
		Refused: map[string]string{
			"snapshot-isolation": "they have no snapshot isolation level; it would map to REPEATABLE READ, which is not snapshot isolation there (its reads see a snapshot, its writes the latest row: it loses updates). Ask for repeatable-read, whose default check is snapshot-isolation, to see where it falls short, or for serializable",
		},
	}
	// SQLite: every transaction is serializable.
	SQLiteIsolation = IsolationTable{
		Database: "SQLite",
		Levels:   []Isolation{{Name: "serializable", SQL: "SERIALIZABLE", Claim: check.Serializable}},
		Refused: map[string]string{
			"repeatable-read":    sqliteOnly,
			"snapshot-isolation": sqliteOnly,
			"read-committed":     sqliteOnly,
			"read-uncommitted":   sqliteOnly,
		},
	}
)

const (
	mysqlRR    = "not snapshot isolation: it loses updates"
	sqliteOnly = "SQLite transactions are always serializable. Ask for serializable"
)

// IsolationNames are the --isolation values some database honours exactly, in the order
// the tables list them: what shell completion offers.
func IsolationNames() []string {
	var names []string
	for _, tb := range []IsolationTable{PostgresIsolation, MySQLIsolation, SQLiteIsolation} {
		for _, l := range tb.Levels {
			if !slices.Contains(names, l.Name) {
				names = append(names, l.Name)
			}
		}
	}
	return names
}

// Lookup returns how the database runs --isolation iso (isovet's name, as [Open] writes
// it; "" is the table's default). A value it has no exact level for is an error naming
// the levels it offers, what the value would map to, and why that is not it.
func (tb IsolationTable) Lookup(iso string) (Isolation, error) {
	if iso == "" {
		return tb.Levels[0], nil
	}
	for _, l := range tb.Levels {
		if l.Name == iso {
			return l, nil
		}
	}
	if why, ok := tb.Refused[iso]; ok {
		return Isolation{}, fmt.Errorf("%s cannot run at --isolation %s: %s. %s", tb.Database, iso, why, tb.offers())
	}
	return Isolation{}, fmt.Errorf("there is no isolation level %s on %s. %s", iso, tb.Database, tb.offers())
}

// offers lists the levels of tb with the SQL level each maps to.
func (tb IsolationTable) offers() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s offer", tb.Database)
	if !strings.Contains(tb.Database, " and ") {
		b.WriteString("s")
	}
	for i, l := range tb.Levels {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		fmt.Fprintf(&b, "%s%s (%s", sep, l.Name, l.SQL)
		if l.Note != "" {
			fmt.Fprintf(&b, ", %s", l.Note)
		}
		b.WriteString(")")
	}
	return b.String()
}
