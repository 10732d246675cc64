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
//     BLAS, as many particles at once as EvaluatorOptions.MemoryLimit
//     allows;
//   - Workspace: the same for one particle, allocation-free when reused,
//     with one m×m matrix for K + σ²I, its factor and its inverse (the
//     only buffer of size m²; docs/math.md, "Memory");
//   - Predictor and Mixture: personalisation and prediction.
//
// The BNN client model (docs/math.md §5): BNN describes a classifier (the MLP or
// the paper's BCNN, built from package conv) and its mean-field Gaussian
// prior P_φ, φ = (μ, ω = ln σ²); BNNEstimator evaluates the Monte Carlo LML
// (38) of a batch with L weight samples stacked in one network, and its
// reparameterised gradient.
//
// Concurrency and allocation: a Workspace, an Evaluator, a Predictor, a
// BNNEstimator and a BNNPredictor each belong to one goroutine at a time
// (give every client its own); all of them size their buffers on first use
// and reuse them, so repeated evaluations on data of the same size do not
// allocate. Their parallelism comes from the BLAS they are given (pass
// linalg.NewNative(1) when many run at once) and, for an Evaluator, from
// EvaluatorOptions.Threads.
//
// Errors: data of the wrong shape or with NaN or infinite entries
// (Model.CheckData, named by row and column), parameters of the wrong length
// or not finite (Model.CheckParams), and kernel matrices that stay not
// positive definite after the jitter ladder (an error wrapping
// cholesky.ErrNotPositiveDefinite) are returned as errors, never a panic.
//
// The formulas and every choice the paper leaves open are in docs/math.md.
package lml
