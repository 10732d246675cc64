// Package genfl is GenFL and FEDBOUND (docs/math.md §7): federated
// learning of a stochastic neural network Q = N(μ, diag σ²), σ =
// softplus(ρ), by minimising a relaxed PAC-Bayes bound, and the certified
// bound of the result.
//
//	GenFL (Alg. 1) — Train
//	  server: m ← Σ_k m_k; w₁ ← (μ_P, σ_P)                  # Q starts at P
//	  for t = 1..T:
//	      S_t ← max(C·K, 1) users (stream (seed, "select", t))
//	      for k ∈ S_t in parallel: w^k ← userUpdate(k, w_t, m)
//	      w_{t+1} ← Σ_{k∈S_t} m_k w^k / Σ_{k∈S_t} m_k       # misprint in the paper: printed over all K
//	  userUpdate(k, w, m): E epochs of mini-batches b (size B) of S_k:
//	      ε ~ N(0, I); w_s ← μ + σ ⊙ ε
//	      (μ, ρ) ← SGD with momentum on ∇ f_m(w_s; b)
//
//	f₁ = R̂_b(w_s) + √((KL(Q‖P) + ln(2√m/δ))/(2m))                      (GF-8)
//	f₂ = (√(R̂_b(w_s) + c) + √c)²,  c = (KL(Q‖P) + ln(2√m/δ))/(2m)      (GF-9)
//	R̂_b: bounded cross-entropy ln max(softmax(z)_y, p_min)/ln p_min ∈ [0, 1]
//	KL optionally multiplied by a penalty factor (objective only).
//
//	FEDBOUND (Alg. 2) — FedBound
//	  err ← Monte Carlo estimate of R̂_S(Q) from n independent [0, 1]-valued
//	        unbiased estimates (SampleError: Pairs or Full)
//	  bound ← kl⁻¹(kl⁻¹(err, ln(2/δ′)/n), (KL(Q‖P) + ln(2√m/δ))/m)     (GF-7)
//	  holds with probability ≥ 1 − δ − δ′ for the expected 0–1 error
//	  R_D(Q) of the stochastic classifier Q.
//
//	PFL (Alg. 3/4) — RunPFL
//	  P ← prior learnt on ∪_k S¹_k (or data-free)
//	  Q_k ← userUpdate(k, P, m_k) on S²_k  (Personalise)
//	  bound_k ← FEDBOUND on S²_k alone with m = m_k, Q_k   # misprint in the paper: printed with m and one Q
//
// The prior is data-free (RandomPrior: truncated normal means, σ_P =
// 0.025) or learnt (LearnPrior: federated ERM with dropout on the first
// half S¹_k of every user's sample, the bound then using the second halves
// only) or given (GivenPriorKind: the caller's, trained on the first halves
// only, e.g. PAC-PFL's prior; the posterior and the bound as with a learnt
// one). RunFLSOB and RunPFL run a whole experiment; the kl, kl⁻¹ and
// McAllester's bound live in package fl (bounds_kl.go).
//
// Clients. Every step that touches a user's data is its fl.RoundClient's
// (NewRoundClient in another process, Options.Clients to inject them; in
// process by default); the server sees vectors and counts only:
//
//	Fit, the phase global[0] names (out: global with the state replaced):
//	  [1, μ]                      prior's ERM round on S¹_k, stream (seed, "erm", t, k)
//	  [2, m, σ_P, μ_P, μ, ρ]      GenFL's userUpdate(k, (μ, ρ), m), stream (seed, "user", t, k)
//	  [3, σ_P, μ_P]               personalisation Q_k ← userUpdate(k, P, m_k), stream (seed, "pers", k);
//	                              Q_k = (μ_k, ρ_k) is the client's state (AppendState), out = global
//	Evaluate, Model (Extra: counts; the server sums them, inverts the bounds):
//	  ModelMeanError      μ                  0–1 errors of the network μ on the test rows
//	  ModelGibbsError     (μ, ρ)             Gibbs errors of Q on the test rows
//	  ModelFullErrors     (μ, ρ)             FEDBOUND's Full estimator on the user's sample
//	  ModelPairErrors     (μ, ρ, m_1..m_K)   FEDBOUND's Pairs on the pairs whose example is the user's
//	  ModelPersonalBound  (σ_P, μ_P)         errors, evaluations, n, KL(Q_k‖P), m_k of Alg. 4
//	  ModelPersonalTest   —                  Gibbs errors of Q_k on the test rows
//	  ModelPredict        [draws]            accuracy and CE of Q_k's predictive (RunMethod)
//
// A round averages the users of S_t, all of which must answer: GenFL's
// protocol has no stragglers, and a client that fails (or does not echo the
// round's header) ends the run with its error, as does a client whose
// counts are missing, negative or inconsistent in an evaluation. In
// process, FL-SOB's Pairs estimator runs pooled over the users' samples
// (SampleError): its blocks mix users, and each client's exact replay
// (ModelPairErrors, used with injected clients) evaluates every block that
// holds one of its examples, K times the pooled work.
//
// Determinism: every random draw comes from a PCG stream named by (seed,
// purpose, indices); users run on Workers goroutines but the server sums
// their results in user order, so a run depends on its seeds only (tested
// across GOMAXPROCS 1 and 2). Errors: bad sizes, labels or settings are
// errors naming the problem; a non-finite objective stops training with an
// error.
package genfl
