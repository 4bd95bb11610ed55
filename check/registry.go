package check

import (
	"context"
	"errors"
	"fmt"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/check/basic"
	"github.com/isovet/isovet/internal/check/ser"
	"github.com/isovet/isovet/internal/check/si"
	"github.com/isovet/isovet/internal/check/ts"
	"github.com/isovet/isovet/internal/check/weak"
	"github.com/isovet/isovet/internal/report"
)

// checkers is the registry: which checker checks which levels, in preference order. The
// CLI and the server share it. A level that no entry lists is refused, never passed.
var checkers = []Checker{
	{
		Name:    "basic",
		Method:  MethodBasic,
		Levels:  Levels(),
		Summary: "linear checks: internal consistency, aborted (G1a), intermediate (G1b) and thin-air reads, duplicate list elements, incompatible list orders, future reads",
		Run: func(ctx context.Context, h *history.History, l Level, o Options) (*Report, error) {
			m := report.NewMeter(o.Progress, l, "basic", len(h.Txns))
			m.Start(report.StageBasic)
			rep, err := basic.Run(ctx, h, l, basic.Options{MaxAnomalies: o.MaxAnomalies})
			if rep != nil {
				m.Update(func(p *report.Progress) { p.Anomalies = len(rep.Anomalies) })
			}
			m.End()
			return rep, err
		},
	},
	{
		Name:    "weak",
		Decides: true,
		Method:  MethodBlackBox,
		Levels:  weak.Levels,
		Summary: "read committed (Adya PL-2), read atomic and causal consistency for item, row and list histories, in polynomial time: the basic checks, then a cycle search on the write-read (and, for causal, session) order with the version-order edges lists show and those the read atomic or causal axiom forces (Biswas and Enea's saturation)",
		Run: func(ctx context.Context, h *history.History, l Level, o Options) (*Report, error) {
			return weak.Check(ctx, h, l, weak.Options{MaxAnomalies: o.MaxAnomalies, SearchConflicts: o.weakConflicts(), Progress: o.Progress})
		},
	},
	{
		Name:    "ser",
		Decides: true,
		Method:  MethodBlackBox,
		Levels:  ser.Levels,
		Summary: "black-box serializability (plain, strong-session, strict): hyper-polygraph with pruning and a SAT solver over an acyclicity theory; every violation comes with a cycle",
		Run: func(ctx context.Context, h *history.History, l Level, o Options) (*Report, error) {
			rep, err := ser.Check(ctx, h, l, ser.Options{ClockSkew: o.ClockSkew, MaxAnomalies: o.MaxAnomalies, Parallelism: o.Parallelism, Now: o.Now, Progress: o.Progress})
			if errors.Is(err, ser.ErrNeedsTime) {
				return nil, fmt.Errorf("%w: %w", ErrNeedsTime, err)
			}
			return rep, err
		},
	},
	{
		Name:    "si",
		Decides: true,
		Method:  MethodBlackBox,
		Levels:  si.Levels,
		Summary: "black-box snapshot isolation (plain, strong-session, strong): generalized polygraph over the induced graph (SO ∪ WR ∪ WW) ; RW?, pruning and a SAT solver over an acyclicity theory with composite edges; every violation comes with a named cycle",
		Run: func(ctx context.Context, h *history.History, l Level, o Options) (*Report, error) {
			rep, err := si.Check(ctx, h, l, si.Options{MaxAnomalies: o.MaxAnomalies, Now: o.Now, Progress: o.Progress})
			if errors.Is(err, si.ErrNeedsTime) {
				return nil, fmt.Errorf("%w: %w", ErrNeedsTime, err)
			}
			return rep, err
		},
	},
	{
		Name:    "chronos",
		Decides: true,
		Method:  MethodTimestamp,
		Levels:  ts.Levels,
		Summary: "Chronos: snapshot isolation and serializability from the database's start and commit timestamps (SESSION, INT, EXT, NOCONFLICT), near-linear time",
		Run: func(ctx context.Context, h *history.History, l Level, o Options) (*Report, error) {
			rep, err := ts.Check(ctx, h, l, ts.Options{MaxAnomalies: o.MaxAnomalies, Progress: o.Progress})
			if errors.Is(err, ts.ErrNoTimestamps) {
				return nil, fmt.Errorf("%w: %w", ErrNeedsTime, err)
			}
			return rep, err
		},
	},
}
