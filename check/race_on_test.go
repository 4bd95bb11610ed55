//go:build race

package check_test

// raceEnabled: the race detector slows every loop several times over.
const raceEnabled = true
