//go:build race

package server

// raceEnabled: the race detector keeps shadow memory beside the heap (several times its
// size), all of it resident, so a bound on resident memory cannot be checked under it.
const raceEnabled = true
