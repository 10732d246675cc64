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
//	    n ← Σ n_k;  g ← −Σ (n_k/n) Δ_k                   (over the k that answered)
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
// a group's accuracy is weighted by the clients' test-set sizes (the server
// weighs their scores by ClientEval.Tests).
//
// Clients (NewClient; NewFedAvgClient for FedAvg on the network, TrainFedAvg)
// are fl.RoundClients: the round loop and every evaluation call them only
// through Fit and Evaluate, so each may run in its own process from its own
// data (Options.Clients). They keep no state between rounds: θ comes from
// the server every round and the momentum v stays on it. Fit's draws come
// from the fl.RoundTask's stream; the models Evaluate scores
// (fl.EvalTask.Model) are
//
//	FedVI   ModelPersonal  (0)  P's classifier from the training set under θ;
//	                            β draws from (Seed, "fvie", group, round, index)
//	FedAvg  ModelGlobal    (0)  the global weights
//	        ModelFineTuned (1)  FedAvg+FT: the global weights fine-tuned on the
//	                            training set, from (Seed, "favf", group, index)
//
// A participating client whose Fit fails in a round (an error, a lost
// connection) ends the run with that error, unless Options.Drops sets a
// Quorum: then the round goes on without it, as Algorithm 1 would step over
// the clients that answered — n ← Σ n_k and g ← −Σ (n_k/n) Δ_k over them,
// their weights renormalised, then v and θ as usual — if at least Quorum
// of S⁽ᵗ⁾ did (fewer end the run). MaxNormFactor also leaves out an update
// whose norm ‖θ_k − θ⁽ᵗ⁾‖ is far above the median of the round's others,
// and OnDrop hears every client left out. TrainFedAvg's mean drops clients
// the same way. An evaluation needs every client of its group (one that
// fails ends the run): a group's weighted accuracy is never over part of
// the group.
//
// Checkpoints (Options.Checkpoint): the server's state between rounds is
// fl.RoundState's Round, Global (θ; TrainFedAvg's w), Server (the momentum
// v) and History, from which the Result's means over the last rounds are
// computed; a run resumed from the state after any round gives the
// uninterrupted run's Result bit for bit (its Seconds aside).
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
