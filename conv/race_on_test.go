//go:build race

package conv

const raceEnabled = true
