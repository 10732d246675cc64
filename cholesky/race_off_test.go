//go:build !race

package cholesky

const raceEnabled = false
