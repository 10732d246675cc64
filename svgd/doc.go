// Package svgd moves prior particles on the hyper-posterior with Stein
// variational gradient descent (PAC-PFL eq. 39): an RBF kernel whose
// bandwidth follows the median heuristic, a diagonal-Gaussian hyper-prior,
// the SVGD direction computed from given scores, and two optimisers (plain
// ascent, as in the paper, and Adam, as in the reference code).
//
// Particles are a k×d matrix stored row-major in one []float64: row κ is
// particle φ_κ. Scores (∇ ln target at each particle) have the same layout.
// Every per-step routine works in preallocated buffers, so an SVGD loop does
// not allocate after its first step.
package svgd
