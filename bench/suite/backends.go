package suite

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/linalg"
)

// Shape is a GEMM shape: C (M×N) = A (M×K) · B (K×N).
type Shape struct{ M, N, K int }

// Square reports whether M = N = K.
func (sh Shape) Square() bool { return sh.M == sh.N && sh.N == sh.K }

// String is "n" for a square shape, else "MxNxK".
func (sh Shape) String() string {
	if sh.Square() {
		return strconv.Itoa(sh.N)
	}
	return fmt.Sprintf("%dx%dx%d", sh.M, sh.N, sh.K)
}

// Flops is the shape's multiply-add work, 2·M·N·K.
func (sh Shape) Flops() float64 { return 2 * float64(sh.M) * float64(sh.N) * float64(sh.K) }

// ParseShapes parses comma-separated shapes MxNxK of positive integers
// ("256x256x2000": C is 256×256, the inner dimension 2000).
func ParseShapes(v string) ([]Shape, error) {
	var out []Shape
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		parts := strings.Split(strings.ToLower(f), "x")
		if len(parts) != 3 {
			return nil, fmt.Errorf("%q is not a shape MxNxK", f)
		}
		var d [3]int
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%q is not a shape MxNxK of positive integers", f)
			}
			d[i] = n
		}
		out = append(out, Shape{d[0], d[1], d[2]})
	}
	return out, nil
}

// BackendRow is one figure of a backend sweep (GEMM, Cholesky): a backend at
// one size, or the error that replaced the figure. Its JSON form is the
// sweep's JSON line.
type BackendRow struct {
	Kernel  string  `json:"kernel"`
	Op      string  `json:"op,omitempty"`
	N       int     `json:"n,omitempty"`
	M       int     `json:"m,omitempty"` // a non-square GEMM: C is m×n, the inner dimension k
	K       int     `json:"k,omitempty"`
	Backend string  `json:"backend"`
	Level   string  `json:"level,omitempty"` // with levels: the SIMD level of a native row
	Threads int     `json:"threads"`
	Seconds float64 `json:"seconds,omitempty"`
	GFLOPS  float64 `json:"gflops,omitempty"`
	Error   string  `json:"error,omitempty"`
	// Shape is the measured shape (square for Cholesky).
	Shape Shape `json:"-"`
	// Flops is the work of one run: 2·m·n·k for GEMM, n³/3 for a
	// factorization, 2n³/3 for an inverse.
	Flops float64 `json:"-"`
	Rate
}

func (r BackendRow) failed() bool { return r.Error != "" }

// WriteText writes r as a line of the sweep's table (op "" leaves the op
// column out).
func (r BackendRow) WriteText(w io.Writer) {
	name := r.Backend
	if r.Level != "" {
		name += "/" + r.Level
	}
	lead := fmt.Sprintf("%6s  %-13s", r.Shape, name)
	if r.Op != "" {
		lead = fmt.Sprintf("%6s  %-6s %-13s", r.Shape, r.Op, name)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "%s error: %s\n", lead, r.Error)
		return
	}
	fmt.Fprintf(w, "%s %12.6f %10.2f %7.1f%%\n", lead, r.Seconds, r.GFLOPS, r.PercentPeak)
}

// GEMMConfig configures GEMM. Zero fields take the defaults given.
type GEMMConfig struct {
	// Sizes are square orders n, measured first (DefaultGEMMSizes when
	// Sizes and Shapes are both empty).
	Sizes []int
	// Shapes are further shapes, measured after Sizes.
	Shapes []Shape
	// Backends are the BLAS backends to alternate (linalg.Backends():
	// those compiled in).
	Backends []string
	// Reps is the repetitions per figure after one warm-up (DefaultReps);
	// the minimum is reported.
	Reps int
	// Threads is the thread count of every backend (0: GOMAXPROCS).
	Threads int
	// Levels, if set, runs the native backend at each SIMD level,
	// alternated (its rows carry the level); else at the level in force.
	Levels []asm.Level
}

// DefaultGEMMSizes are GEMMConfig's default square orders.
var DefaultGEMMSizes = []int{500, 1000, 2000, 4000}

func (c GEMMConfig) withDefaults() GEMMConfig {
	if len(c.Sizes) == 0 && len(c.Shapes) == 0 {
		c.Sizes = slices.Clone(DefaultGEMMSizes)
	}
	c.Backends = orDefaultList(c.Backends, linalg.Backends())
	c.Reps = orDefault(c.Reps, DefaultReps)
	return c
}

// AllShapes is the shapes GEMM measures, in order: Sizes as squares, then
// Shapes.
func (c GEMMConfig) AllShapes() []Shape {
	c = c.withDefaults()
	var all []Shape
	for _, n := range c.Sizes {
		all = append(all, Shape{n, n, n})
	}
	return append(all, c.Shapes...)
}

// MemoryBytes is a lower bound of the memory GEMM holds at its largest
// shape, which it returns: A, B and one C per backend.
func (c GEMMConfig) MemoryBytes() (Shape, float64) {
	c = c.withDefaults()
	var big Shape
	var most float64
	for _, sh := range c.AllShapes() {
		m, n, k := float64(sh.M), float64(sh.N), float64(sh.K)
		if b := 8 * (m*k + k*n + m*n*float64(len(c.Backends))); b > most {
			big, most = sh, b
		}
	}
	return big, most
}

// GEMM times DGEMM C = A·B (no transposes, random entries in (−1, 1)) on
// each backend at each shape, the backends alternated within each
// repetition, and returns one row per backend (per level with Levels) and
// shape, and ErrRowFailed if a backend failed. It sets GOMAXPROCS (and OpenBLAS's threads) to Threads while it
// runs and restores GOMAXPROCS and the SIMD level after.
func GEMM(ctx context.Context, cfg GEMMConfig, out Output) ([]BackendRow, error) {
	cfg = cfg.withDefaults()
	lookup := func(name string) error { _, err := linalg.Backend(name); return err }
	err := checkSweep(cfg.Reps, cfg.Threads, cfg.Backends, linalg.KnownBackends(), linalg.Backends(), lookup)
	if err != nil {
		return nil, err
	}
	shapes := cfg.AllShapes()
	for _, sh := range shapes {
		if err := checkPositive("shape dimension", sh.M, sh.N, sh.K); err != nil {
			return nil, err
		}
	}
	if err := checkLevels(cfg.Levels); err != nil {
		return nil, err
	}
	impls := make([]blas.Float64, len(cfg.Backends))
	for i, name := range cfg.Backends {
		impls[i], _ = linalg.Backend(name) // checked above
	}
	s, restore, err := newSweep("gemm", "", cfg.Threads, cfg.Backends, cfg.Levels, out)
	if err != nil {
		return nil, err
	}
	defer restore()
	huge := func(sh Shape) bool { return sh.M*sh.N*sh.K >= 4000*4000*4000 }
	if slices.Contains(cfg.Backends, "gonum") && slices.ContainsFunc(shapes, huge) {
		out.note("note: gonum at n >= 4000 takes minutes per run; it is measured anyway")
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	var rows []BackendRow
	for _, sh := range shapes {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		m, n, k := sh.M, sh.N, sh.K
		a, b := randomFloats(rnd, m*k), randomFloats(rnd, k*n)
		contenders := make([]bench.Contender, len(impls))
		for i := range impls {
			impl, c := impls[i], make([]float64, m*n)
			contenders[i] = bench.Contender{Name: cfg.Backends[i], Run: func() error {
				impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
				return nil
			}}
		}
		contenders = perLevel(contenders, cfg.Levels, isNative)
		best, errs := bench.Alternate(cfg.Reps, contenders)
		rows = append(rows, s.rows(sh, contenderNames(contenders), best, errs, sh.Flops())...)
	}
	return rows, rowsErr(rows, BackendRow.failed)
}

// CholeskyConfig configures Cholesky. Zero fields take the defaults given.
type CholeskyConfig struct {
	// Sizes are the matrix orders (DefaultCholeskySizes).
	Sizes []int
	// Op is "potrf", the factorization (n³/3 flop, the default), or
	// "potri", the inverse from the factor (2n³/3 flop).
	Op string
	// Backends are the LAPACK backends to alternate (cholesky.Backends():
	// those compiled in).
	Backends []string
	// Reps is the repetitions per figure after one warm-up (DefaultReps).
	Reps int
	// Threads is the thread count of every backend (0: GOMAXPROCS).
	Threads int
	// Levels, if set, runs the native backend at each SIMD level.
	Levels []asm.Level
}

// DefaultCholeskySizes are CholeskyConfig's default orders.
var DefaultCholeskySizes = []int{500, 1000, 2000, 4000}

func (c CholeskyConfig) withDefaults() CholeskyConfig {
	c.Sizes = orDefaultList(c.Sizes, DefaultCholeskySizes)
	if c.Op == "" {
		c.Op = "potrf"
	}
	c.Backends = orDefaultList(c.Backends, cholesky.Backends())
	c.Reps = orDefault(c.Reps, DefaultReps)
	return c
}

// MemoryBytes is a lower bound of the memory Cholesky holds: the matrix and
// one working copy at the largest order.
func (c CholeskyConfig) MemoryBytes() float64 {
	n := float64(slices.Max(c.withDefaults().Sizes))
	return 8 * n * n * 2
}

// CholeskyFlops is the work of op at order n: n³/3 for potrf, 2n³/3 for
// potri.
func CholeskyFlops(op string, n int) float64 {
	f := float64(n) * float64(n) * float64(n) / 3
	if op == "potri" {
		f *= 2
	}
	return f
}

// Cholesky times Dpotrf (or Dpotri) of an n×n SPD matrix, lower triangle,
// row-major, on each backend, alternated within each repetition; the copy
// of the input before each run is not timed. It returns one row per backend
// (per level with Levels) and order (ErrRowFailed if a run failed), and sets and restores the threads and
// level as GEMM does.
func Cholesky(ctx context.Context, cfg CholeskyConfig, out Output) ([]BackendRow, error) {
	cfg = cfg.withDefaults()
	if cfg.Op != "potrf" && cfg.Op != "potri" {
		return nil, invalidf("op %q: want potrf or potri", cfg.Op)
	}
	lookup := func(name string) error { _, err := cholesky.Backend(name); return err }
	err := checkSweep(cfg.Reps, cfg.Threads, cfg.Backends, cholesky.KnownBackends(), cholesky.Backends(), lookup)
	if err != nil {
		return nil, err
	}
	if err := checkPositive("order", cfg.Sizes...); err != nil {
		return nil, err
	}
	if err := checkLevels(cfg.Levels); err != nil {
		return nil, err
	}
	impls := make([]cholesky.Lapack, len(cfg.Backends))
	for i, name := range cfg.Backends {
		impls[i], _ = cholesky.Backend(name) // checked above
	}
	// The potri input, a Cholesky factor, is made by the native backend.
	native, err := cholesky.Backend("native")
	if err != nil {
		return nil, err
	}
	s, restore, err := newSweep("cholesky", cfg.Op, cfg.Threads, cfg.Backends, cfg.Levels, out)
	if err != nil {
		return nil, err
	}
	defer restore()
	if slices.Contains(cfg.Backends, "gonum") && slices.Max(cfg.Sizes) >= 4000 {
		out.note("note: gonum at n >= 4000 takes many seconds per run; it is measured anyway")
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	var rows []BackendRow
	for _, n := range cfg.Sizes {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		input := diagDominantSPD(rnd, n)
		if cfg.Op == "potri" && !native.Dpotrf(blas.Lower, n, input, n) {
			return rows, fmt.Errorf("factoring the potri input failed at n=%d", n)
		}
		contenders := make([]bench.Contender, len(impls))
		for i := range impls {
			impl, w := impls[i], make([]float64, n*n)
			contenders[i] = bench.Contender{
				Name:  cfg.Backends[i],
				Setup: func() { copy(w, input) },
				Run: func() error {
					var ok bool
					if cfg.Op == "potrf" {
						ok = impl.Dpotrf(blas.Lower, n, w, n)
					} else {
						ok = impl.Dpotri(blas.Lower, n, w, n)
					}
					if !ok {
						return fmt.Errorf("D%s reported failure on an SPD matrix", cfg.Op)
					}
					return nil
				},
			}
		}
		contenders = perLevel(contenders, cfg.Levels, isNative)
		best, errs := bench.Alternate(cfg.Reps, contenders)
		rows = append(rows, s.rows(Shape{n, n, n}, contenderNames(contenders), best, errs, CholeskyFlops(cfg.Op, n))...)
	}
	return rows, rowsErr(rows, BackendRow.failed)
}

// sweep is what GEMM and Cholesky share: one thread count for every
// backend, the header with the machine peak and the thread count, and one
// row per backend and size.
type sweep struct {
	kernel, op string
	out        Output
	peak       bench.Peak
	threads    int
}

// isNative tells the contenders that run at each level: the native
// backend's (OpenBLAS and gonum have no SIMD level of ours).
func isNative(c bench.Contender) bool { return c.Name == "native" }

// checkSweep validates the repetitions, the thread count and the backend
// names: an unknown name, a name given twice or a backend this build lacks
// is refused.
func checkSweep(reps, threads int, names, known, compiled []string, lookup func(string) error) error {
	for i, n := range names {
		if !slices.Contains(known, n) {
			return invalidf("unknown backend %q (known: %s)", n, strings.Join(known, ", "))
		}
		if slices.Contains(names[:i], n) {
			return invalidf("backend lists %q twice", n)
		}
	}
	if reps < 1 {
		return invalidf("reps %d: want at least 1", reps)
	}
	if threads < 0 || threads > runtime.NumCPU() {
		return invalidf("threads %d: want 0 (GOMAXPROCS) up to the %d CPUs of this machine", threads, runtime.NumCPU())
	}
	for _, name := range names {
		if !slices.Contains(compiled, name) {
			return invalidError{lookup(name).Error()}
		}
	}
	return nil
}

// newSweep gives every backend the same number of threads (0: GOMAXPROCS):
// native and gonum follow GOMAXPROCS, OpenBLAS its own setting, which
// ignores GOMAXPROCS. It writes the header and returns the function that
// restores GOMAXPROCS and the SIMD level.
func newSweep(kernel, op string, threads int, names []string, levels []asm.Level, out Output) (*sweep, func(), error) {
	old, level := runtime.GOMAXPROCS(0), asm.Current()
	if threads == 0 {
		threads = old
	}
	runtime.GOMAXPROCS(threads)
	restore := func() { runtime.GOMAXPROCS(old); asm.SetLevel(level) }
	if slices.Contains(names, "openblas") {
		linalg.SetOpenBLASThreads(threads)
		if got := linalg.OpenBLASThreads(); got != threads {
			restore()
			return nil, nil, invalidf("OpenBLAS runs %d threads, not the %d asked for "+
				"(OPENBLAS_NUM_THREADS or its build caps it): ask for %d", got, threads, got)
		}
	}
	peak, err := bench.MachinePeak() // of the cores in use
	if err != nil {
		restore()
		return nil, nil, err
	}
	s := &sweep{kernel: kernel, op: op, out: out, peak: peak, threads: threads}
	if len(names) > 1 && slices.Contains(names, "openblas") && os.Getenv("OPENBLAS_THREAD_TIMEOUT") == "" {
		// With the default timeout, a contender run right after OpenBLAS
		// loses much of its speed to OpenBLAS's spinning threads.
		out.note("note: OpenBLAS's idle threads spin after each call and can slow the contender " +
			"run after it; set OPENBLAS_THREAD_TIMEOUT=4 for a fair alternation")
	}
	printPeak(out, peak)
	out.printf("threads: %d for every backend (native and gonum through GOMAXPROCS, "+
		"openblas through openblas_set_num_threads)\n", threads)
	if len(levels) > 0 {
		out.println("native at SIMD level" + levelsPhrase(levels) + " (kernels and cache blocks of each level)")
	}
	if op != "" {
		out.printf("%6s  %-6s %-13s %12s %10s %8s\n", "n", "op", "backend", "seconds", "GFLOP/s", "% peak")
	} else {
		out.printf("%6s  %-13s %12s %10s %8s\n", "n", "backend", "seconds", "GFLOP/s", "% peak")
	}
	return s, restore, nil
}

// rows reports one shape: each contender's best time, or its error.
func (s *sweep) rows(sh Shape, names []string, best []float64, errs []error, flops float64) []BackendRow {
	rows := make([]BackendRow, len(names))
	for i, name := range names {
		r := BackendRow{Kernel: s.kernel, Op: s.op, N: sh.N, Threads: s.threads, Shape: sh, Flops: flops}
		r.Backend, r.Level = splitLevel(name)
		if !sh.Square() {
			r.M, r.K = sh.M, sh.K
		}
		if errs[i] != nil {
			r.Error = errs[i].Error()
		} else {
			r.Seconds = best[i]
			r.GFLOPS = flops / best[i] / 1e9
			r.Rate = rate(r.GFLOPS, s.peak)
		}
		s.out.row(r, r.WriteText)
		rows[i] = r
	}
	return rows
}

func randomFloats(rnd *rand.Rand, n int) []float64 {
	m := make([]float64, n)
	for i := range m {
		m[i] = rnd.Float64()*2 - 1
	}
	return m
}

// diagDominantSPD returns a random symmetric n×n matrix with off-diagonal
// entries in (−1, 1) and n on the diagonal: strictly diagonally dominant with
// a positive diagonal, hence SPD, and made in O(n²).
func diagDominantSPD(rnd *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			v := rnd.Float64()*2 - 1
			a[i*n+j], a[j*n+i] = v, v
		}
		a[i*n+i] = float64(n)
	}
	return a
}
