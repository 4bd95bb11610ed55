package cycle

// The old classifiers, for the witness test in package cycle_test.
var (
	OldSer = oldSer
	OldSI  = oldSI
)
