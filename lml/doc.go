// Package lml holds the client models of PAC-PFL.
//
// The GP client model: the prior P_φ with a deep
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
// The BNN client model (SPEC §6): BNN describes a classifier (the MLP or
// the paper's BCNN, built from package conv) and its mean-field Gaussian
// prior P_φ, φ = (μ, ω = ln σ²); BNNEstimator evaluates the Monte Carlo LML
// (38) of a batch with L weight samples stacked in one network, and its
// reparameterised gradient.
//
// The formulas and every choice the paper leaves open are in docs/math.md.
package lml
