//go:build purego || !amd64

package bench

// No FMA throughput loop in this build: NEON and the scalar level use the
// documented assumption (see flopsPerCycle).
var fmaProbe, fmaProbe512 *fmaLoop
