// Package lml is the GP client model of PAC-PFL: the prior P_φ with a deep
// mean and a deep kernel, its exact log marginal likelihood (eq. 33) with the
// gradient with respect to φ written out by hand (reverse mode through the
// Cholesky factor, the kernel and both networks), the tempered mini-batch
// variant of Algorithm 2, and the per-particle and mixture predictive
// distributions (eqs. 35–37).
//
// The pieces the federated loop uses are:
//
//   - Model and its Layout: the networks' shapes and where each weight
//     matrix and bias sits in the flat parameter vector φ;
//   - Evaluator: one client's k particles (a k×dφ matrix) → k LMLs and the
//     k×dφ gradient matrix, with the cores split between particles and the
//     BLAS;
//   - Workspace: the same for one particle, allocation-free when reused;
//   - Batcher: Algorithm 2's mini-batches and their tempering scale;
//   - Predictor and Mixture: personalisation and prediction.
//
// The formulas and every choice the paper leaves open are in docs/math.md.
package lml
