// Package svgd moves prior particles on the hyper-posterior with Stein
// variational gradient descent: RBF kernel, median heuristic, hyper-prior,
// update and optimisers.
package svgd
