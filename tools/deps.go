//go:build tools

// Package tools pins the module's dependencies before the packages that use them land, so that
// parallel work never races on go.mod.
package tools

import (
	_ "github.com/cockroachdb/datadriven"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/nats-io/nats.go"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/spf13/cobra"
	_ "modernc.org/sqlite"
)
