//go:build race

package ts

// raceEnabled shrinks the randomized tests under the race detector, which is about ten
// times slower.
const raceEnabled = true
