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
//
// Main types: SVGD (New(k, d); Step moves the particles given their scores,
// Direction only computes the update), Gaussian (the hyper-prior: Sample,
// LogDensity, AddGrad of ∇ ln 𝒫, and the row-wise SampleRows/AddGradRows),
// and the Optimizer implementations Ascent and Adam. An SVGD, an Adam and a
// Gaussian's row buffers belong to one goroutine at a time; a Gaussian's
// single-particle methods only read it and may be shared.
//
// Errors: mismatched lengths, k or d below 1, a non-positive or non-finite
// hyper-prior std, and NaN or infinite particles or scores (named by
// particle and coordinate) are reported as errors before anything moves;
// no routine panics on bad input.
package svgd
