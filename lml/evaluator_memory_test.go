package lml

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/linalg"
)

func TestWorkspaceBytes(t *testing.T) {
	assert.Equal(t, int64(8*10000*10000), WorkspaceBytes(10000, 1))
	assert.Equal(t, int64(8*10000*10000+8*5008*5008), WorkspaceBytes(10000, 2))
	assert.Equal(t, int64(8*7*7), WorkspaceBytes(7, 4), "no concurrent halves below 256")
	assert.Equal(t, int64(8*600*600+8*304*304), WorkspaceBytes(600, 2))
	// The bound covers what a workspace holds at m = 1000 (fixed scratch
	// aside; TestWorkspaceSquareBuffers checks the shape).
	md := testModels[0]
	rng := rand.New(rand.NewPCG(40, 40))
	phi, X, y := testProblem(rng, md, 1000, 0.5)
	for _, threads := range []int{1, 2} {
		ws := NewWorkspaceMust(t, md, linalg.NewNative(threads))
		_, err := ws.LML(phi, X, y, make([]float64, md.NumParams()))
		require.NoError(t, err)
		held := int64(8 * ws.SquareFloats())
		assert.LessOrEqual(t, held, WorkspaceBytes(1000, threads)+8*300_000, "threads=%d", threads)
		assert.GreaterOrEqual(t, held, WorkspaceBytes(1000, threads), "threads=%d", threads)
	}
}

// TestEvaluatorMemoryLimit: the particles in flight fit in the memory
// limit; when fewer than min(k, threads) fit they share the cores, the
// idle workspaces hold no m×m buffer, the results are those of a
// workspace on a BLAS with that many threads, and nothing is allocated in
// steady state.
func TestEvaluatorMemoryLimit(t *testing.T) {
	p := &pool{threads: 2, split: SplitAuto, memLimit: DefaultMemoryLimit}
	assert.Equal(t, 2, p.inFlight(4, 10000), "m = 10,000: two particles of 0.8 GB fit in 4 GiB")
	assert.Equal(t, 1, p.inFlight(4, 17000), "m = 17,000: two of 2.3 GB do not")
	assert.Equal(t, 1, p.inFlight(1, 100))
	p.memLimit = 2 * WorkspaceBytes(500, 1)
	assert.Equal(t, 2, p.inFlight(3, 500))
	assert.Equal(t, 1, p.inFlight(3, 501))
	p.threads = 4
	p.memLimit = 3 * WorkspaceBytes(900, 1)
	assert.Equal(t, 3, p.inFlight(8, 900), "three at one thread each fit, four do not")
	p.memLimit = 2 * WorkspaceBytes(900, 1)
	assert.Equal(t, 1, p.inFlight(8, 900), "two would fit at one thread each, but not at two (the inverse's scratch)")
	p.split = SplitBLAS
	assert.Equal(t, 1, p.inFlight(8, 10))
	p.split = SplitParticles
	p.threads, p.memLimit = 2, WorkspaceBytes(2000, 2)
	assert.Equal(t, 1, p.inFlight(4, 2000))
	p.lmls, p.y, p.nw = make([]float64, 4), make([]float64, 2000), 1
	assert.Equal(t, 2, p.threadsFor(0), "memory-bound particles share the cores")

	rng := rand.New(rand.NewPCG(41, 41))
	md := DefaultModel(15)
	np := md.NumParams()
	const k, m = 3, 600
	_, X, y := testProblem(rng, md, m, 0.5)
	phis := make([]float64, k*np)
	for κ := 0; κ < k; κ++ {
		ph, _, _ := testProblem(rng, md, 1, 0.5)
		copy(phis[κ*np:], ph)
	}
	for _, split := range []Split{SplitAuto, SplitParticles} {
		// A first call at a small m with both workspaces in use, then one
		// at m = 600 where only one particle fits.
		ev, err := NewEvaluator(md, EvaluatorOptions{Threads: 2, Split: split, MemoryLimit: 5 << 20})
		require.NoError(t, err)
		lmls := make([]float64, k)
		grads := make([]float64, k*np)
		require.NoError(t, ev.Evaluate(lmls, grads, phis, X[:50*md.D], y[:50]))
		assert.Positive(t, ev.ws[1].SquareFloats())
		require.NoError(t, ev.Evaluate(lmls, grads, phis, X, y))
		assert.Equal(t, 1, ev.nw, "%v", split)
		assert.Zero(t, ev.ws[1].SquareFloats(), "%v: the idle workspace let its buffers go", split)
		ref := NewWorkspaceMust(t, md, linalg.NewNative(2))
		g := make([]float64, np)
		for κ := 0; κ < k; κ++ {
			want, err := ref.LML(phis[κ*np:(κ+1)*np], X, y, g)
			require.NoError(t, err)
			assert.Equal(t, want, lmls[κ], "%v particle %d", split, κ)
			assert.Equal(t, g, grads[κ*np:(κ+1)*np], "%v particle %d", split, κ)
		}
		assert.Equal(t, 0.0, testing.AllocsPerRun(2, func() { _ = ev.Evaluate(lmls, grads, phis, X, y) }), "%v", split)
		ev.Close()
	}
}
