//go:build race

package asm

// raceEnabled: the race detector slows the tests down; they keep sizes small.
const raceEnabled = true
