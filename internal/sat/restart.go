package sat

// restarter decides when to restart.
type restarter struct {
	policy RestartPolicy
	base   int
	limit  int64 // Luby: conflict count of the next restart
	count  int   // Luby: restarts so far in this Solve

	// Glucose: exponential moving averages of LBD and trail size.
	fast, slow    float64
	trailAvg      float64
	sinceRestart  int64
	conflictsSeen int64
}

func (r *restarter) init(o Options) {
	*r = restarter{policy: o.Restart, base: o.RestartBase}
	r.limit = -1
}

func (r *restarter) due(conflicts int64) bool {
	if r.policy == RestartGlucose {
		return r.sinceRestart >= 50 && r.fast > 1.25*r.slow
	}
	if r.limit < 0 {
		r.limit = conflicts + int64(luby(r.count)*float64(r.base))
	}
	return conflicts >= r.limit
}

func (r *restarter) next(conflicts int64) {
	r.count++
	r.limit = conflicts + int64(luby(r.count)*float64(r.base))
	r.sinceRestart = 0
	r.fast = r.slow
}

// conflict records a learnt clause's LBD and the trail size at the conflict.
func (r *restarter) conflict(lbd, trail int) {
	r.conflictsSeen++
	r.sinceRestart++
	x := float64(lbd)
	if r.conflictsSeen == 1 {
		r.fast, r.slow = x, x
	}
	r.fast += (x - r.fast) / 32
	r.slow += (x - r.slow) / 16384
	r.trailAvg += (float64(trail) - r.trailAvg) / 5000
}

// luby returns the i-th element (from 0) of the Luby sequence
// 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ...
func luby(i int) float64 {
	size, seq := 1, 0
	for size < i+1 {
		seq++
		size = 2*size + 1
	}
	x := i
	for size-1 != x {
		size = (size - 1) >> 1
		seq--
		x %= size
	}
	return float64(int(1) << seq)
}
