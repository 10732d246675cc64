//go:build race

package linalg

// raceEnabled: under the race detector the suite runs only the parallel
// native variant (the concurrent code), to keep -race fast.
const raceEnabled = true
