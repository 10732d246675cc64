//go:build race

package rpc

// raceEnabled: the race detector multiplies the memory of every
// allocation; the heap bounds of the attack tests are scaled by it.
const raceEnabled = true
