// Package all links every database driver of the workload runner: import it for its side
// effect, as the isovet command does.
//
//	import _ "isovet/internal/runner/all"
package all

import (
	_ "isovet/internal/runner/mysql"  // mysql://, mariadb://
	_ "isovet/internal/runner/pg"     // postgres://, postgresql://
	_ "isovet/internal/runner/sqlite" // sqlite://
)
