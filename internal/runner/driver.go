package runner

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/check"
)

// OpenOptions are what `isovet run` tells a driver.
type OpenOptions struct {
	// Isolation is the level to ask the database for, in isovet's words: serializable,
	// repeatable-read (snapshot-isolation is an alias on PostgreSQL), read-committed,
	// read-uncommitted. Empty: the driver's default (serializable for servers).
	Isolation string
	// Table names the table the driver creates (default "isovet_kv"); tests use their own.
	Table  string
	Seed   uint64
	Logger *slog.Logger
	_      struct{}
}

// Target describes an opened database.
type Target struct {
	// Claim is the level the database claims at the isolation it was asked for: the default
	// level to check. 0 when it claims none (read uncommitted).
	Claim       check.Level
	Description string // e.g. "PostgreSQL 15.2 at REPEATABLE READ"
}

// Opener opens a database from a URL.
type Opener func(ctx context.Context, dsn string, o OpenOptions) (DB, Target, error)

var (
	driversMu sync.Mutex
	drivers   = map[string]Opener{"memdb": openMemDB}
)

// Register makes a driver available for URLs with the given scheme. Driver packages call it
// from init.
func Register(scheme string, open Opener) {
	driversMu.Lock()
	defer driversMu.Unlock()
	drivers[scheme] = open
}

// Schemes returns the URL schemes of the linked drivers, sorted.
func Schemes() []string {
	driversMu.Lock()
	defer driversMu.Unlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Open opens the database the URL names: memdb://MODE[?fault=...], postgres://...,
// mysql://..., sqlite://FILE.
func Open(ctx context.Context, dsn string, o OpenOptions) (DB, Target, error) {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok {
		scheme, _, ok = strings.Cut(dsn, ":")
	}
	if !ok {
		return nil, Target{}, fmt.Errorf("database %q: want a URL such as memdb://snapshot-isolation, postgres://user@host/db, mysql://user@host/db or sqlite://file", dsn)
	}
	if scheme == "postgresql" {
		scheme = "postgres"
	}
	if scheme == "mariadb" {
		scheme = "mysql"
	}
	driversMu.Lock()
	open := drivers[scheme]
	var names []string
	for n := range drivers {
		names = append(names, n)
	}
	driversMu.Unlock()
	if open == nil {
		slices.Sort(names)
		return nil, Target{}, fmt.Errorf("database %q: no driver for %q is linked (linked: %s; import isovet/internal/runner/all)", dsn, scheme, strings.Join(names, ", "))
	}
	o.Isolation = isolationName(o.Isolation)
	return open(ctx, dsn, o)
}

// isolationName writes an --isolation value as the drivers expect it: lower case, with
// hyphens for underscores and spaces ("REPEATABLE READ" is repeatable-read), and a level's
// alias as the level's name (si is snapshot-isolation, ser serializable).
func isolationName(iso string) string {
	iso = strings.ToLower(strings.TrimSpace(iso))
	iso = strings.NewReplacer("_", "-", " ", "-").Replace(iso)
	if l, ok := anomaly.ParseLevel(iso); ok {
		return l.String()
	}
	return iso
}
