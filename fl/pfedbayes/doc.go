// Package pfedbayes is pFedBayes (docs/math.md §8.1): personalised
// federated learning with a mean-field Gaussian BNN per client, q_i =
// N(μ_i, diag σ_i²), and on the server, w = N(μ_w, diag σ_w²), σ =
// softplus(ρ), v = (μ, ρ).
//
//	Server: input T, R, S, η₁, η₂, β, b, K, v⁰ = (μ⁰, ρ⁰)
//	for t = 0..T−1:
//	    for i = 1..N in parallel: v_w,i ← ClientUpdate(i, vᵗ)  # client i's Fit
//	    Sᵗ ← S clients drawn uniformly                        # (seed, "agg", t)
//	    vᵗ⁺¹ ← (1 − β) vᵗ + (β/S) Σ_{i∈Sᵗ} v_w,i
//	ClientUpdate(i, vᵗ):  v_w ← vᵗ                              # v_i is kept by the client
//	    for r = 0..R−1:
//	        D_Λ ← b rows of D_i;  g_k ~ N(0, I), k = 1..K
//	        v_i ← v_i − η₁ ∇Ω^i(v_i)                           # (pFB-27)
//	        v_w ← v_w − η₂ ∇_{v_w} KL(q_{v_i} ‖ w_{v_w})       # (pFB-28)
//	    return v_w
//
//	Ω^i(v) = −(n/b)(1/K) Σ_{j∈Λ} Σ_k ln p(y_j | x_j, μ + σ ⊙ g_k) + ζ KL(q_v ‖ w_{v_w})
//
// with n = |D_i| and KL and its gradients from package meanfield (pFB-8).
// The data term's gradients by the reparameterisation trick: ∂/∂μ = the
// weight gradient, ∂/∂ρ = the weight gradient ⊙ g ⊙ sigmoid(ρ). The
// network is lml.BNN's MLP 784-100-10 (or the BCNN) through package
// flatnet.
//
// Our choices where the paper is silent (docs/math.md §10): K = 1, b = 100,
// R = 20, β = 1, T = 800; μ⁰ ~ N(0, 0.1²) (pFedMe); v_i starts at v⁰ and is
// kept across rounds (the paper never initialises it, docs/math.md §11.9);
// plain SGD (or Adam, Options.Optimizer, as the authors' code, its moments
// kept by the client); minibatches drawn without replacement afresh each step (data.RowSampler).
// The paper's hyper-parameters are the defaults: ρ⁰ = −2.5, ζ = 10, η₁ =
// η₂ = 0.001, S = 10.
//
// Evaluation: the personalised model (PM) q_i and the global model (GM) w
// on client i's test set, as the predictive of EvalDraws weight draws (0:
// the mean μ), after each of the last EvalLast rounds; the paper reports
// the best mean accuracy over rounds 700–800 (EvalLast = 101 of T = 800),
// Result has that and the final round's. New clients get the GM.
//
// Variant Code (CodeOptions, code.go) computes what the authors' public
// code computes instead of the printed loss: (ζ/R)·KL − Σ_{j∈Λ} ln p with
// the likelihood summed over the batch, PersonalSteps = 5 personalised
// steps on each batch before the localised global step on (ζ/R)·KL, the
// KLs reading σ where that code last stored it, Adam on both models, draws
// of standard deviation 0.001 (training and evaluation), ρ⁰ = −3, the rows
// cycled in order, only the S selected clients training and the server
// averaging them weighted by their sizes (docs/math.md).
//
// Clients: the server holds only v; client i is an fl.RoundClient
// (NewClient, from its own data and the Options) that keeps v_i, the Code
// variant's place in its rows and Adam's moments between rounds as an
// fl.StatefulClient, and starts them at v⁰ of o.Seed (Init), so that the
// same clients run in process or, injected through Options.Clients, in
// other processes. Its Fit is ClientUpdate (the S clients of Sᵗ in the
// Code variant; every client in the Paper variant, whose server hears
// only Sᵗ). Its Evaluate scores, on its own test set, model ModelPM (q_i)
// or ModelGM (w) of an existing client, or ModelNewGM (w) of a new one;
// a group's figures are the plain means over its clients.
//
// A client that does not answer: by default (Options.Drops' Quorum 0) a
// failed Fit or Evaluate ends the run with an error naming the round and
// the client, as Algorithm 1 has no partial round. With Quorum > 0 a
// round goes on without the clients whose Fit failed or whose update was
// rejected (MaxNormFactor), if at least Quorum of the round's trained
// clients remain; each left out is told to OnDrop:
//
//	Paper: all N train (Quorum counts of N); Sᵗ is drawn as above, and
//	       vᵗ⁺¹ ← (1 − β) vᵗ + β · the plain mean of v_w,i over the i ∈ Sᵗ
//	       that answered; none of Sᵗ answered: the run ends.
//	Code:  the S of Sᵗ train (Quorum counts of S), and vᵗ⁺¹ ← (1 − β) vᵗ +
//	       β Σ n_i v_w,i / Σ n_i over those that answered, the sizes
//	       renormalised.
//
// An Evaluate still has to answer. The server never holds a client's state:
// what a dropped client keeps is the client's business (package rpc rolls a
// remote client back to the state of its last accepted update); v_i lives
// on the client only, which restores it after a restart with SetState from
// the state it saved after its last Fit.
//
// Checkpoints (Options.Checkpoint): the server's state after a round is v,
// the round and the history; a resumed run continues from it with the
// clients that kept their state through that round, and gives the
// uninterrupted run's result bit for bit.
//
// Determinism: client i's stream in round t is fedrun's (seed, tag, t, i),
// each client's state is touched by its own update only, and the server
// sums in client order, so a run depends on its seed only (tested across
// GOMAXPROCS 1 and 2). Errors: bad sizes or settings name the problem; a
// non-finite loss or weight stops the run with an error naming the step
// sizes.
package pfedbayes
