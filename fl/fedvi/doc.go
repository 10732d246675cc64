// Package fedvi is FedVI (docs/math.md §9): personalised federated
// learning as mixed-effects variational inference. The global parameters
// θ (a point estimate, γ = 0) are shared; every client k has local
// classifier weights β_k with the prior r = N(0, σ_r²) and the amortised
// posterior q(β_k | θ, D_k) = N(μ_k, σ_k²) that the posterior constructor
// P builds from the client's support images, so a client that never took
// part in training gets its local classifier without any training.
//
// Algorithm 1 as implemented (Train, Model.ClientUpdate):
//
//	Server:  θ⁽⁰⁾ ← Glorot init;  v ← 0
//	for each round t:  S⁽ᵗ⁾ ← c clients at random (without replacement)
//	    for k ∈ S⁽ᵗ⁾ in parallel:  (Δ_k, n_k) ← ClientUpdate(k, θ⁽ᵗ⁾)
//	    n ← Σ n_k;  g ← −Σ (n_k/n) Δ_k
//	    v ← μ·v − α_s·g;  θ⁽ᵗ⁺¹⁾ ← θ⁽ᵗ⁾ + v              (server SGD with momentum)
//	ClientUpdate(k, θ):  for each mini-batch of D_k (one epoch, shuffled):
//	    (D_s, D_q) ← S(batch)                            (first half / second half)
//	    R_s, R_q ← E(x_s), E(x_q);  (R^g, R^l) ← F(R)     (first d_g / last d_l features)
//	    (μ_k, ρ_k, b_k) ← P(mean of R^g_s);  σ_k = softplus(ρ_k)
//	    β_k = μ_k + σ_k ⊙ ε,  ε ~ N(0, I)
//	    logits ← G(R^g_q) + R^l_q β_kᵀ + b_k
//	    loss ← mean_q −ln softmax(logits)_y + τ·KL(N(μ_k, σ_k²) ‖ r)/n_q
//	    θ ← θ − η·∇_θ loss                                (client SGD)
//	    return (θ_k − θ, n_k = Σ |D_q|)
//
// (With Arch.PoolOutputs, P runs on every support image's R^g and its
// outputs are averaged instead.)
//
// Evaluation (Evaluate): every client, participating or not, pools the
// global features of its whole training set (dropout off) the same way
// through P and classifies its test images by the mean softmax over a few
// β draws;
// a group's accuracy is weighted by the clients' test-set sizes.
//
// The network (Arch, Model) is the paper's FEMNIST one: E = conv32 →
// ReLU → conv64 → ReLU → maxpool 2 → dropout 0.25 → flatten → dense 128 →
// dropout 0.5 (3×3 valid convolutions; no ReLU after dense 128, as the
// paper lists it — Arch.EmbedReLU adds Reddi et al.'s), P = dense 256 → ReLU →
// dense 256 → ReLU → dense (2·d_l + 1)·|Y|, G one dense layer. Choices
// where the paper is silent are in docs/math.md ("FedVI").
//
// Every layer is single-threaded and clients (in training) or clients'
// evaluations run in parallel, one Model per worker, each with its own
// random stream, so results depend on the seed only, not on GOMAXPROCS.
package fedvi
