package wisdom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/linalg"
)

// TuneOptions bound a tuning run. Zero values take the defaults.
type TuneOptions struct {
	// Budget is the wall time the search may take (default 2 minutes); the
	// run stops with the best configuration found so far when it is spent.
	Budget time.Duration
	// N are the square GEMM sizes every candidate is timed on (default
	// 1000 and 2000); a candidate's score is its worst ratio to the best
	// configuration so far over these sizes, so it must not lose on any.
	N []int
	// Reps is the number of alternated timings per comparison (default 3;
	// the minimum is kept).
	Reps int
	// Threads is the goroutines of the measured GEMMs (0: GOMAXPROCS).
	Threads int
	// Log, if set, gets one line per comparison.
	Log io.Writer
	// Tool names the measuring program in the file.
	Tool string
}

// Tune measures GEMM configurations on this machine at the SIMD level in
// force and returns the winners as a File for CurrentCPU. The search starts
// at the level's defaults (linalg.DefaultBlocking and the default kernel),
// first measures their run-to-run noise, then moves one parameter at a time
// (kernel, KC, MC, NC, the shared-B limit, then the Cholesky panel width on
// the largest size with the GEMM found), taking a candidate only when it
// beats the current best by more than the noise on every size, and at the
// end times the winner against the defaults once more, keeping the defaults
// if it loses on any size. So the result is never a configuration that
// measured slower than the defaults, and it is the defaults when nothing is
// clearly better. A done ctx ends the run with its error; the budget ends
// the search with what it found.
func Tune(ctx context.Context, o TuneOptions) (*File, error) {
	if o.Budget <= 0 {
		o.Budget = 2 * time.Minute
	}
	if len(o.N) == 0 {
		o.N = []int{1000, 2000}
	}
	if o.Reps <= 0 {
		o.Reps = 3
	}
	for _, n := range o.N {
		if n < 16 || n > 8000 {
			return nil, fmt.Errorf("wisdom: tuning size %d outside [16, 8000]", n)
		}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.Budget)
	defer cancel()
	prev, prevPanel := linalg.CurrentTuning(), cholesky.Panel()
	defer func() { linalg.SetTuning(prev); cholesky.SetPanel(prevPanel) }()

	l := asm.Current()
	t := &tuner{o: o, level: l, ctx: ctx, log: o.Log}
	t.mats()
	def := candidate{kernel: asm.GemmKernelFor(l).Name(), blk: linalg.DefaultBlocking()}
	best := def
	var err error
	// Noise: the defaults against themselves.
	t.noise, err = t.selfNoise(def)
	if err != nil {
		return nil, err
	}
	t.logf("noise: %.1f %% between identical runs; a candidate must win by more", 100*t.noise)

	// One parameter at a time, in the order of their effect.
	steps := []func(candidate) []candidate{
		func(c candidate) []candidate { return t.kernels(c) },
		func(c candidate) []candidate {
			return vary(c, func(c *candidate, v int) { c.blk.KC = v }, 128, 192, 256, 320, 384, 512)
		},
		func(c candidate) []candidate {
			mr := t.kernelOf(c).MR
			var out []candidate
			for _, target := range []int{72, 96, 120, 144, 192, 240, 288, 384, 480} {
				out = append(out, with(c, func(c *candidate) { c.blk.MC = max(mr, target/mr*mr) }))
			}
			return out
		},
		func(c candidate) []candidate {
			return vary(c, func(c *candidate, v int) { c.blk.NC = v }, 1024, 2048, 4096, 8192)
		},
	}
	for _, step := range steps {
		if best, err = t.improve(best, step(best)); err != nil {
			break
		}
	}
	if err == nil {
		best, err = t.sharedB(best)
	}
	panel := 0
	if err == nil {
		panel, err = t.choleskyPanel(best)
	}
	if err != nil && (!errors.Is(err, context.DeadlineExceeded) || parent.Err() != nil) {
		return nil, err
	}
	searchErr := err
	// The winner's kernel and blocks against the defaults once more,
	// alternated on the square sizes: if they lose on any size, the
	// defaults' stay (a winner by steps can drift below them). The shared-B
	// limit was decided on its own shapes, which squares never take.
	shapes, idx := t.squares()
	t.ctx = parent // the budget covers the search, not this check
	blocks := with(best, func(c *candidate) { c.sharedB = def.sharedB })
	final, err := t.compare([]candidate{def, blocks}, shapes, idx)
	if err != nil {
		return nil, err
	}
	for i := range final[0] {
		if blocks != def && final[1][i] < final[0][i] {
			t.logf(
				"%s lost to the defaults at n = %d (%.1f against %.1f GFLOP/s): keeping the default kernel and blocks",
				blocks, o.N[i], final[1][i], final[0][i])
			best.kernel, best.blk = def.kernel, def.blk
			final[1] = final[0]
			break
		}
	}
	t.logf("best: %s", best)
	status := "search complete"
	if searchErr != nil {
		status = "budget spent"
	}
	f := &File{Version: Version, CPU: CurrentCPU(), Tool: o.Tool, Created: time.Now().UTC().Format(time.RFC3339),
		GEMM: GEMM{Kernel: best.kernel, MC: best.blk.MC, KC: best.blk.KC, NC: best.blk.NC,
			SharedBMax: best.sharedB},
		Cholesky: Cholesky{Panel: panel},
		Summary: fmt.Sprintf("native DGEMM at n = %v, %d threads, minimum of %d alternated runs; noise %.1f %%; %s",
			o.N, t.threads(), o.Reps, 100*t.noise, status)}
	for i, n := range o.N {
		tuned := final[1][i]
		if blocks == def {
			tuned = final[0][i] // one configuration on the squares: one figure
		}
		f.Default = append(f.Default, Rate{N: n, GFLOPS: final[0][i]})
		f.Tuned = append(f.Tuned, Rate{N: n, GFLOPS: tuned})
	}
	return f, nil
}

// candidate is one GEMM configuration.
type candidate struct {
	kernel  string
	blk     linalg.Blocking
	sharedB int
}

func (c candidate) String() string {
	return fmt.Sprintf("kernel %s, MC %d, KC %d, NC %d, shared-B limit %d", c.kernel, c.blk.MC, c.blk.KC, c.blk.NC,
		c.sharedB)
}

func with(c candidate, f func(*candidate)) candidate { f(&c); return c }

func vary(c candidate, set func(*candidate, int), vals ...int) []candidate {
	out := make([]candidate, 0, len(vals))
	for _, v := range vals {
		out = append(out, with(c, func(c *candidate) { set(c, v) }))
	}
	return out
}

type tuner struct {
	o     TuneOptions
	level asm.Level
	ctx   context.Context
	log   io.Writer
	noise float64
	a, b  [][]float64
	c     [][]float64
}

func (t *tuner) logf(format string, a ...any) {
	if t.log != nil {
		fmt.Fprintf(t.log, format+"\n", a...)
	}
}

func (t *tuner) threads() int {
	if t.o.Threads > 0 {
		return t.o.Threads
	}
	return linalg.NewNative(0).Threads()
}

func (t *tuner) mats() {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range t.o.N {
		a, b := make([]float64, n*n), make([]float64, n*n)
		for i := range a {
			a[i], b[i] = rng.Float64()-0.5, rng.Float64()-0.5
		}
		t.a, t.b, t.c = append(t.a, a), append(t.b, b), append(t.c, make([]float64, n*n))
	}
}

func (t *tuner) kernelOf(c candidate) *asm.GemmKernel {
	k, _ := asm.GemmKernelNamed(t.level, c.kernel)
	return k
}

func (t *tuner) kernels(c candidate) []candidate {
	var out []candidate
	for _, k := range asm.GemmKernels(t.level) {
		if k.Name() == c.kernel {
			continue
		}
		mc := max(k.MR, c.blk.MC/k.MR*k.MR)
		out = append(out, with(c, func(c *candidate) { c.kernel, c.blk.MC = k.Name(), mc }))
	}
	return out
}

// contender is a GEMM of size index i under configuration c.
func (t *tuner) contender(c candidate, i int, shape [3]int) bench.Contender {
	nat := linalg.NewNative(t.o.Threads)
	tu := &linalg.Tuning{Level: t.level, Kernel: c.kernel, Blocking: c.blk, SharedBMax: c.sharedB}
	m, n, k := shape[0], shape[1], shape[2]
	a, b, cc := t.a[i], t.b[i], t.c[i]
	return bench.Contender{
		Name:  c.String(),
		Setup: func() { linalg.SetTuning(tu) },
		Run: func() error {
			if err := t.ctx.Err(); err != nil {
				return err
			}
			nat.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, cc, n)
			return nil
		},
	}
}

// compare times the candidates alternately on every size and returns each
// one's GFLOP/s per size.
func (t *tuner) compare(cs []candidate, shapes [][3]int, sizeIdx []int) ([][]float64, error) {
	rates := make([][]float64, len(cs))
	for s, shape := range shapes {
		var con []bench.Contender
		for _, c := range cs {
			if err := (&linalg.Tuning{Level: t.level, Kernel: c.kernel, Blocking: c.blk,
				SharedBMax: c.sharedB}).Validate(); err != nil {
				return nil, err
			}
			con = append(con, t.contender(c, sizeIdx[s], shape))
		}
		best, errs := bench.Alternate(t.o.Reps, con)
		for i := range cs {
			if errs[i] != nil {
				return nil, errs[i]
			}
			rates[i] = append(rates[i], 2*float64(shape[0])*float64(shape[1])*float64(shape[2])/best[i]/1e9)
		}
	}
	return rates, nil
}

func (t *tuner) squares() ([][3]int, []int) {
	var shapes [][3]int
	var idx []int
	for i, n := range t.o.N {
		shapes, idx = append(shapes, [3]int{n, n, n}), append(idx, i)
	}
	return shapes, idx
}

// selfNoise runs the defaults against themselves and returns the largest
// relative difference over the sizes (at least 1 %).
func (t *tuner) selfNoise(def candidate) (float64, error) {
	shapes, idx := t.squares()
	r, err := t.compare([]candidate{def, def}, shapes, idx)
	if err != nil {
		return 0, err
	}
	noise := 0.01
	for i := range r[0] {
		lo, hi := min(r[0][i], r[1][i]), max(r[0][i], r[1][i])
		noise = max(noise, hi/lo-1)
	}
	return noise, nil
}

// improve compares best with each candidate (alternated in one process) and
// returns the candidate whose worst ratio to best over the sizes is largest,
// if that ratio exceeds 1 + noise; else best.
func (t *tuner) improve(best candidate, cands []candidate) (candidate, error) {
	shapes, idx := t.squares()
	cands = slices.DeleteFunc(cands, func(c candidate) bool { return c == best })
	win, winScore := best, 1+t.noise
	for _, c := range cands {
		if err := t.ctx.Err(); err != nil {
			return win, err
		}
		r, err := t.compare([]candidate{best, c}, shapes, idx)
		if err != nil {
			return win, err
		}
		score := r[1][0] / r[0][0]
		for i := range r[0] {
			score = min(score, r[1][i]/r[0][i])
		}
		t.logf("%s: %.3f× the best so far", c, score)
		if score > winScore {
			win, winScore = c, score
		}
	}
	return win, nil
}

// sharedB times the shared-B schedule against the grid on C s×s with inner
// dimension 4s, for the sides 128, 256, 512, 768 and 1024 that the tuning
// matrices have room for. linalg's own rule takes shared-B up to s = 512;
// only when a measurement contradicts it clearly (the grid wins by more
// than the noise at s ≤ 512, or shared-B at s > 512) does the limit become
// the largest side where shared-B won clearly (1: none, never shared).
func (t *tuner) sharedB(best candidate) (candidate, error) {
	limit, contradicted := 1, false
	for _, s := range []int{128, 256, 512, 768, 1024} {
		if err := t.ctx.Err(); err != nil {
			return best, err
		}
		i := t.sizeFor(4 * s)
		if i < 0 {
			break
		}
		grid, shared := with(best, func(c *candidate) { c.sharedB = 1 }),
			with(best, func(c *candidate) { c.sharedB = 1 << 16 })
		r, err := t.compare([]candidate{grid, shared}, [][3]int{{s, s, 4 * s}}, []int{i})
		if err != nil {
			return best, err
		}
		ratio := r[1][0] / r[0][0]
		t.logf("shared-B against the grid at %d×%d×%d: %.3f×", s, s, 4*s, ratio)
		sharedWins, gridWins := ratio > 1+t.noise, ratio < 1/(1+t.noise)
		if sharedWins {
			limit = s
		}
		if (s <= 512 && gridWins) || (s > 512 && sharedWins) {
			contradicted = true
		}
	}
	if contradicted {
		best.sharedB = limit
	}
	return best, nil
}

// sizeFor is the index of the first tuning matrix with room for the s×k
// and k×s operands of a shared-B shape (k = 4s: n² ≥ k²/4 entries), or -1.
func (t *tuner) sizeFor(k int) int {
	for i, n := range t.o.N {
		if n*n >= k*k/4 {
			return i
		}
	}
	return -1
}

// choleskyPanel times the blocked Cholesky of an n×n SPD matrix (n the
// largest tuning size) with the GEMM tuning c at panel widths 64 to 384
// against the default, alternated, and returns the width that beats the
// default by more than the noise (0: the default stays).
func (t *tuner) choleskyPanel(c candidate) (int, error) {
	n := slices.Max(t.o.N)
	spd := make([]float64, n*n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range n {
		for j := 0; j <= i; j++ {
			v := rng.Float64() - 0.5
			spd[i*n+j], spd[j*n+i] = v, v
		}
		spd[i*n+i] += float64(n)
	}
	tu := &linalg.Tuning{Level: t.level, Kernel: c.kernel, Blocking: c.blk, SharedBMax: c.sharedB}
	nat := linalg.NewNative(t.o.Threads)
	var f cholesky.Factor
	f.SetBLAS(nat)
	run := func(nb int) bench.Contender {
		return bench.Contender{
			Name:  fmt.Sprintf("panel %d", nb),
			Setup: func() { linalg.SetTuning(tu); cholesky.SetPanel(nb) },
			Run: func() error {
				if err := t.ctx.Err(); err != nil {
					return err
				}
				return f.Factorize(spd, n, n)
			},
		}
	}
	def := cholesky.Panel()
	best, bestScore := 0, 1+t.noise
	for _, nb := range []int{64, 96, 128, 256, 384} {
		if nb == def || nb >= n {
			continue
		}
		secs, errs := bench.Alternate(t.o.Reps, []bench.Contender{run(0), run(nb)})
		for _, err := range errs {
			if err != nil {
				return best, err
			}
		}
		score := secs[0] / secs[1]
		t.logf("Cholesky n = %d, panel %d: %.3f× the default %d", n, nb, score, def)
		if score > bestScore {
			best, bestScore = nb, score
		}
	}
	return best, nil
}
