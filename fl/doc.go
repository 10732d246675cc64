// Package fl is the federated loop of PAC-PFL (server, client updates,
// differential privacy), its baselines, metrics and PAC-Bayesian bounds. The
// data sets it runs on live in package data.
//
// # Layers
//
// A client model (package lml for GP and BNN priors) computes, on one
// client's data, the log marginal likelihood ln Z^C of a prior P_φ and its
// gradient. The Server (Algorithm 1 of the paper; Algorithm 3 with
// Config.DP) keeps k particles φ_1..φ_k, the SVGD approximation of the
// hyper-posterior over priors; each round it sends them to c sampled clients
// (Client.Update), aggregates their gradients with the hyper-prior's score
// and takes one SVGD step (package svgd). GPModel and BNNModel adapt the
// lml models to Client; RunPACPFL, RunVanilla, RunPooled and their BNN
// twins are the methods of the paper's tables on a data.Dataset; Evaluate
// and EvaluateClassification are its metrics; ComputeBounds,
// ComputeBNNBounds and ComputeLearnedBound its PAC-Bayesian bounds.
//
// # Bringing your own client model
//
// Any model with a prior P_φ over its hypotheses, parameterised by a vector
// φ ∈ ℝ^dφ, plugs into the Server. Package fl/blr (Bayesian linear
// regression, closed form throughout) is a complete worked example; its
// tests check the trained result against the closed-form hyper-posterior.
// The contract:
//
//   - Particles: the server holds k particles as one row-major k×dφ slice,
//     particle κ in particles[κ·dφ : (κ+1)·dφ]. dφ is the HyperPrior's
//     Dim; the layout of φ inside a row is the model's own business.
//   - Client.Update(particles, k, dφ, batch, rng, grad) must write into
//     grad (same layout) ∇_φ ln Z^C_β(P_φκ, S_i) for every particle, where
//     ln Z^C_β(P, S) = ln E_{h∼P} exp(−(β/m)·Σ_{j∈S} ℓ(h, z_j)) and with the
//     NLL as loss and β = m_i this is the log marginal likelihood of the
//     client's m_i samples; and return the mean over the k particles of
//     ln Z^C (used for progress only). batch ≤ 0 or ≥ m_i means all of S_i;
//     otherwise draw the mini-batch from rng (and only from rng, so that runs
//     are reproducible) and return an unbiased or at least consistent
//     estimate, for example the batch's log-likelihood scaled by m_i/b.
//   - Hyper-prior: a HyperPrior (Dim, Sample, AddGrad of ∇ ln 𝒫). A
//     diagonal Gaussian (svgd.Isotropic, svgd.NewGaussian) is the usual one.
//   - Concurrency: the server calls Update on different clients from
//     different goroutines at the same time, never twice at once on the same
//     client. Per-client state (workspaces, mini-batch buffers) is therefore
//     safe without locks; shared state is not. Keep numerical libraries
//     inside a client single-threaded (for example linalg.NewNative(1)):
//     the server already runs one client per core (Config.Workers).
//   - Errors and values: return an error rather than a NaN; the server also
//     checks every update and rejects it, naming the round, the client and
//     the value: a non-finite gradient entry (with its particle and
//     coordinate), a gradient whose squared L2 norm overflows, a non-finite
//     mean ln Z^C, a norm above Config.MaxUpdateNorm. Without a quorum a
//     rejection ends the run. Update should not allocate in steady state
//     (the server calls it T·c times).
//   - Prediction: the paper's predictive (eq. 37) for a client is the
//     mixture over particles of the Bayes (or Gibbs) posteriors given the
//     client's data, weighted by α_κ ∝ Z(P_φκ, data) (lml.MixtureWeights).
//     Return a Prediction (mean and CDF at the true target) per client and
//     Evaluate gives RSMSE and calibration error; for classifiers return a
//     ClassPrediction and use EvaluateClassification.
//   - Bounds: write a LogZCFunc, ln Z^C of the loss clipped to [a, b] for
//     client i (Monte Carlo is fine: the estimate is biased low, which keeps
//     the bound conservative); EstimateLogZS turns it into ln Z^S, and
//     BoundConfig.Evaluate into Theorem 4.2 and Lemma 4.6 at the Gibbs
//     hyper-posterior.
//
// # Guarantees
//
// Runs are deterministic for a given Config.Seed, whatever GOMAXPROCS and
// Workers: every client's random stream is derived from (seed, round,
// client), and gradients are aggregated in a fixed order. With Config.DP the
// released particles satisfy the differential-privacy guarantee that
// Result.Privacy states (see DPConfig); the printed ε is always one that
// holds. Bounds say in their Description what they bound. Bad configuration
// or data is reported by an error (Config.Validate, BoundConfig.Validate,
// the models' CheckData), never a panic.
package fl
