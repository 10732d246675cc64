package lml

import (
	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
)

// The gradient of the Titsias bound, by hand (docs/math.md, "Sparse GP
// (Titsias bound), streamed"). With P = K_uu + S/v (v = σ_e²) the bound is
//
//	F = −(m/2) ln 2πv − ½ ln det P + ½ ln det K_uu − rᵀr/(2v)
//	    + bᵀP⁻¹b/(2v²) − m/(2v) + tr(K_uu⁻¹S)/(2v),
//
// a function of the statistics S = K_uf K_fu, b = K_uf r, rᵀr, of K_uu and
// of v. Reverse mode through it gives, with α = P⁻¹b/v² = L⁻ᵀL_B⁻ᵀc/v,
//
//	∂F/∂b = α,  ∂F/∂(rᵀr) = −1/(2v),
//	∂F/∂S = L⁻ᵀ(I − B⁻¹)L⁻¹/(2v) − (v/2)ααᵀ,
//	∂F/∂K_uu = L⁻ᵀ(2I − B − B⁻¹)L⁻¹/2 − (v²/2)ααᵀ,
//
// and then, per row j of a chunk (k_j the row of K_fu, r_j the residual),
// ∂F/∂k_j = 2·∂F/∂S·k_j + α r_j and ∂F/∂m_j = k_jᵀα − r_j/v negated,
// which the second pass over the chunks pushes through the kernel and the
// networks.

// gradient computes ∂F/∂φ into grad after collapse.
func (p *sparsePool) gradient(Z []float64, scale, sigma, trA, cc float64, grad []float64) error {
	M, df := p.M, p.df
	v, m, fM := p.noiseVar, float64(p.m), float64(p.M)
	p.ensureGrad(M)
	ld := M + 1

	// α = L⁻ᵀ L_B⁻ᵀ c / v.
	alpha, tmp := p.alpha[:M], p.tmpM[:M]
	if err := p.facB.SolveUpper(tmp, p.c[:M]); err != nil {
		return err
	}
	if err := p.facK.SolveUpper(alpha, tmp); err != nil {
		return err
	}
	for j := range alpha {
		alpha[j] /= v
	}
	binv := p.binv[:M*M]
	if err := p.facB.Inverse(binv, M); err != nil {
		return err
	}
	// E_S = (I − B⁻¹)/(2v) in the first M columns of gsa, E_K = (2I − B −
	// B⁻¹)/2 in gk; B is in p.bm (both triangles, symmetric).
	gsa, gk, bm := p.gsa[:M*ld], p.gk[:M*M], p.bm[:M*M]
	var trBinv float64
	for j := 0; j < M; j++ {
		trBinv += binv[j*M+j]
		for k := 0; k < M; k++ {
			bi := binv[j*M+k]
			var id float64
			if j == k {
				id = 1
			}
			gsa[j*ld+k] = (id - bi) / (2 * v)
			gk[j*M+k] = 0.5 * (2*id - bm[j*M+k] - bi)
		}
	}
	// Both ← L⁻ᵀ E L⁻¹.
	l, ldl := p.facK.L()
	for _, e := range []struct {
		a  []float64
		ld int
	}{{gsa, ld}, {gk, M}} {
		p.mm.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, M, M, 1, l, ldl, e.a, e.ld)
		p.mm.Dtrsm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, M, M, 1, l, ldl, e.a, e.ld)
		symmetrize(e.a, M, e.ld)
	}
	// The rank-one terms; gsa becomes [2·∂F/∂S | α] (M×(M+1), stride M+1)
	// for the second pass.
	hv, hv2 := 0.5*v, 0.5*v*v
	for j := 0; j < M; j++ {
		aj := alpha[j]
		for k := 0; k < M; k++ {
			ak := aj * alpha[k]
			gsa[j*ld+k] = 2 * (gsa[j*ld+k] - hv*ak)
			gk[j*M+k] -= hv2 * ak
		}
		gsa[j*ld+M] = alpha[j]
	}
	// αᵀSα = βᵀ(AAᵀ)β/v² with β = L_B⁻ᵀc (still in tmp), for ∂F/∂v.
	sa := p.tmp2[:M]
	p.mm.Dsymv(blas.Lower, M, 1, p.aa[:M*M], M, tmp, 1, 0, sa, 1)
	aSa := asm.DotUnitary(tmp, sa) / (v * v)

	// Second pass: ∂F/∂φ through the data rows, per block.
	p.workers[0].bl.PackB(&p.pbGrad, blas.NoTrans, M, ld, gsa, ld, false)
	p.run(passGrad, p.nBlks)
	gphi := p.gphi[:p.np]
	gzacc := p.gzacc[:M*(df+1)]
	for i := 0; i < p.nBlks; i++ {
		blk := &p.blocks[i]
		if i == 0 {
			copy(gphi, blk.gphi)
			copy(gzacc, blk.gz[:M*(df+1)])
			continue
		}
		asm.AxpyUnitary(1, blk.gphi, gphi)
		asm.AxpyUnitary(1, blk.gz[:M*(df+1)], gzacc)
	}

	// ∂F/∂f(Z): from K_uf, Σ_rows W_ij (f_i − g_j) = (WᵀF)_j − g_j Σ_i W_ij
	// (gzacc holds [F | 1]ᵀW, (DF+1)×M);
	// from K_uu, −2 Σ_k (∂F/∂K_uu ∘ K_uu)_jk (g_j − g_k).
	fz := p.zActs[len(p.zActs)-1][:M*df]
	gz := p.gz[:M*df]
	for j := 0; j < M; j++ {
		for c := 0; c < df; c++ {
			gz[j*df+c] = gzacc[c*M+j] - gzacc[df*M+j]*fz[j*df+c]
		}
	}
	kuu := p.kuu[:M*M]
	for j := 0; j < M; j++ {
		for k := 0; k < M; k++ {
			gk[j*M+k] *= kuu[j*M+k]
		}
		gk[j*M+j] = 0
	}
	w0 := p.workers[0]
	zout := p.zout[:M*(df+1)]
	w0.bl.Dgemm(blas.NoTrans, blas.NoTrans, M, df+1, M, 1, gk, M, p.fz1[:M*(df+1)], df+1, 0, zout, df+1)
	for j := 0; j < M; j++ {
		row := zout[j*(df+1) : j*(df+1)+df+1]
		for c := 0; c < df; c++ {
			gz[j*df+c] += 2 * (row[c] - row[df]*fz[j*df+c])
		}
	}
	d := p.model.D
	for t0 := 0; t0 < M; t0 += p.tile {
		nt := min(p.tile, M-t0)
		p.kern.backwardRows(w0.bl, p.phi, Z[t0*d:(t0+nt)*d], nt, t0, p.zActs, gz[t0*df:(t0+nt)*df], gphi, p.zg1, p.zg2)
	}

	// Noise: ∂F/∂v with the statistics fixed, then v = σ²/scale and the
	// tempering term; dσ²/ds = 2σ·sigmoid(s).
	dv := -m/(2*v) + (fM-trBinv)/(2*v) + p.rr/(2*v*v) - cc/v + 0.5*aSa + m/(2*v*v) - trA/(2*v*v)
	s2 := sigma * sigma
	ds2 := dv / scale
	if scale != 1 {
		ds2 += m * (1 - scale) / (2 * s2)
	}
	s := p.phi[p.np-1]
	gphi[p.np-1] = ds2 * 2 * sigma * sigmoid(s)
	copy(grad, gphi)
	return nil
}

// gradBlock pushes ∂F/∂K_fu and ∂F/∂m(X) of the rows of block bi through
// the kernel and both networks, tile by tile, into the block's gradient and
// its Σ_rows [F | 1]ᵀW (for ∂F/∂f(Z)).
func (p *sparsePool) gradBlock(w *sparseWorker, bi int) {
	M, df, d := p.M, p.df, p.model.D
	ld := M + 1
	v := p.noiseVar
	inv := 1 / v
	blk := &p.blocks[bi]
	clear(blk.gphi)
	acc := blk.gz[:(df+1)*M]
	clear(acc)
	alpha := p.alpha[:M]
	gT := p.gT[:(df+1)*M]
	r0, r1 := p.blockRows(bi)
	for c0 := r0; c0 < r1; c0 += p.chunk {
		nc := min(p.chunk, r1-c0)
		F := p.chunkForward(w, c0, nc)
		// [2K·∂F/∂S | Kα] = K_cu·[2·∂F/∂S | α], for the chunk at once (each
		// row depends on its own row of K only). The inner dimension is M,
		// not M+1 with r riding along: for M a multiple of the GEMM's
		// 256-deep panels that would add a pass over the product for one
		// more term; rαᵀ is added below instead.
		w.bl.GemmPacked(nc, 1, w.k, ld, &p.pbGrad, 0, w.h, ld)
		for t0 := 0; t0 < nc; t0 += p.tile {
			nt := min(p.tile, nc-t0)
			gf := w.gf[:nt*df]
			for i := 0; i < nt; i++ {
				ri := w.r[t0+i]
				hrow := w.h[(t0+i)*ld : (t0+i)*ld+ld]
				krow := w.k[(t0+i)*ld : (t0+i)*ld+M]
				w.dmu[t0+i] = ri*inv - hrow[M]
				// W = (2K·∂F/∂S + rαᵀ) ∘ K: ∂F/∂K_cu times ∂K/∂(−½‖f − g‖²).
				hw := hrow[:M]
				asm.AxpyUnitary(ri, alpha, hw)
				for j, kv := range krow {
					hw[j] *= kv
				}
				// ∂F/∂f_i = Σ_j W_ij g_j − f_i Σ_j W_ij, and the row's share
				// of Σ_i W_ij [f_i | 1] for ∂F/∂g_j, row after row (the
				// order of the sum is the rows' order in the block). All of
				// it on the row of W while it is in L1.
				fi := F[(t0+i)*df : (t0+i)*df+df]
				sw := asm.DotUnitary(hw, gT[df*M:(df+1)*M])
				for c, fv := range fi {
					gf[i*df+c] = asm.DotUnitary(hw, gT[c*M:(c+1)*M]) - sw*fv
					asm.AxpyUnitary(fv, hw, acc[c*M:(c+1)*M])
				}
				asm.AxpyUnitary(1, hw, acc[df*M:(df+1)*M])
			}
			xt := p.x[(c0+t0)*d : (c0+t0+nt)*d]
			p.mean.backwardRows(w.bl, p.phi, xt, nt, t0, w.meanActs, w.dmu[t0:t0+nt], blk.gphi, w.g1, w.g2)
			p.kern.backwardRows(w.bl, p.phi, xt, nt, t0, w.kernActs, gf, blk.gphi, w.g1, w.g2)
		}
	}
}
