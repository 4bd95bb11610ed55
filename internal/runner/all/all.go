// Package all links every database driver of the workload runner: import it for its side
// effect, as the isovet command does.
//
//	import _ "github.com/isovet/isovet/internal/runner/all"
package all

import (
	_ "github.com/isovet/isovet/internal/runner/mysql"  // mysql://, mariadb://
	_ "github.com/isovet/isovet/internal/runner/pg"     // postgres://, postgresql://
	_ "github.com/isovet/isovet/internal/runner/sqlite" // sqlite://
)
