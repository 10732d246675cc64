package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Defaults of DirichletConfig.
const (
	DefaultDirichletAlpha = 0.4 // docs/math.md §1.5, the EMNIST protocol
	defaultTestFraction   = 0.2
	defaultMinSamples     = 10
	dirichletAttempts     = 1000
)

// DirichletConfig configures the Dirichlet split of an image pool.
type DirichletConfig struct {
	Clients int     // existing clients n ≥ 1
	New     int     // held-out new clients
	Alpha   float64 // concentration α > 0 of the symmetric Dirichlet (DefaultDirichletAlpha)
	// TestFraction of each client's images is its test set (0: 0.2), at
	// least 1 image, and at least 1 image stays for training.
	TestFraction float64
	// MinSamples is the fewest images a client may hold (0: 10; at least 2
	// for one training and one test image); partitions that give a client
	// fewer are redrawn.
	MinSamples int
	MaxImages  int // use a random subset of at most this many images (0: all)
	Seed       uint64
	Pixels     PixelScale // "" or PixelsUnit: p/255; PixelsSymmetric: 2p/255 − 1
}

// Dirichlet splits the pool label by label (docs/math.md §1.5's EMNIST protocol):
// the images of each label, shuffled by the stream (Seed, "dirlabel",
// label), are divided over the K = Clients + New clients in proportions
// p ~ Dirichlet(α, …, α) drawn from the stream (Seed, "dirich", attempt,
// label); client k gets the images from ⌊A·P_{k−1}⌋ to ⌊A·P_k⌋ of a label
// with A images and cumulative proportions P. When some client ends up with
// fewer than MinSamples images, the whole partition is redrawn (attempt
// 1, 2, …; the usual rule of Dirichlet splits), at most 1000 times, then it
// is an error. Each client's images are then shuffled and split TestFraction
// test, the rest training (order from the stream (Seed, "dirclien", k)).
//
// The new clients are clients Clients, …, K−1 of the partition: they are
// drawn from exactly the same process as the existing ones (the Dirichlet
// is symmetric, so which K−New clients train is immaterial), and their
// images are disjoint from every other client's.
func Dirichlet(im *Images, cfg DirichletConfig) (*Dataset, error) { return dirichlet(im, cfg, -1) }

// DirichletClient is existing client i of Dirichlet(im, cfg), bit for bit,
// without building the other clients' data (a client process builds only
// its own split).
func DirichletClient(im *Images, cfg DirichletConfig, i int) (*ClientData, error) {
	if i < 0 {
		return nil, fmt.Errorf("dirichlet: client %d < 0", i)
	}
	ds, err := dirichlet(im, cfg, i)
	if err != nil {
		return nil, err
	}
	return existingClient(ds, i, "dirichlet")
}

// dirichlet builds the split; only ≥ 0 builds only existing client only.
func dirichlet(im *Images, cfg DirichletConfig, only int) (*Dataset, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := im.Validate(); err != nil {
		return nil, err
	}
	K := cfg.Clients + cfg.New
	pool := im.subset(cfg.MaxImages, cfg.Seed)
	if len(pool) < K*cfg.MinSamples {
		return nil,
			fmt.Errorf("dirichlet: %d images cannot give %d clients %d images each", len(pool), K, cfg.MinSamples)
	}
	byLabel := im.byLabel(pool, cfg.Seed, tagDirLabel)
	parts := make([][]int, K)
	var attempt int
	for attempt = 0; ; attempt++ {
		if attempt == dirichletAttempts {
			return nil, fmt.Errorf("dirichlet: in %d draws no partition of %d images over %d clients with α = %g "+
				"gave every client at least %d images: use fewer clients, a larger α or a smaller MinSamples",
				dirichletAttempts, len(pool), K, cfg.Alpha, cfg.MinSamples)
		}
		for k := range parts {
			parts[k] = parts[k][:0]
		}
		p := make([]float64, K)
		for l, idx := range byLabel {
			dirichletVariate(p, cfg.Alpha, rng(cfg.Seed, tagDirichlet, uint64(attempt), uint64(l)))
			cum, lo := 0.0, 0
			for k := range parts {
				cum += p[k]
				hi := int(cum * float64(len(idx)))
				if k == K-1 || hi > len(idx) {
					hi = len(idx)
				}
				hi = max(hi, lo)
				parts[k] = append(parts[k], idx[lo:hi]...)
				lo = hi
			}
		}
		ok := true
		for _, pk := range parts {
			ok = ok && len(pk) >= cfg.MinSamples
		}
		if ok {
			break
		}
	}
	split := make([]part, K)
	for k, idx := range parts {
		r := rng(cfg.Seed, tagDirClient, uint64(k))
		r.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		nt := min(max(int(math.Round(cfg.TestFraction*float64(len(idx)))), 1), len(idx)-1)
		split[k] = part{train: idx[nt:], test: idx[:nt]}
	}
	ds := im.datasetOnly(fmt.Sprintf("%s/dirichlet-%g", im.Name, cfg.Alpha), split[:cfg.Clients], split[cfg.Clients:],
		cfg.Seed, only, cfg.Pixels)
	if attempt > 0 {
		ds.Notes = append(ds.Notes, fmt.Sprintf(
			"dirichlet: %d partition(s) redrawn because a client had fewer than %d images", attempt, cfg.MinSamples))
	}
	return ds, nil
}

// defaults fills the zero TestFraction and MinSamples and validates.
func (c *DirichletConfig) defaults() error {
	if c.TestFraction == 0 {
		c.TestFraction = defaultTestFraction
	}
	if c.MinSamples == 0 {
		c.MinSamples = defaultMinSamples
	}
	switch {
	case c.Clients < 1:
		return fmt.Errorf("dirichlet: need at least 1 existing client, got %d", c.Clients)
	case c.New < 0:
		return fmt.Errorf("dirichlet: negative number of new clients %d", c.New)
	case !(c.Alpha > 0) || math.IsInf(c.Alpha, 0):
		return fmt.Errorf("dirichlet: α must be finite and > 0, got %v", c.Alpha)
	case !(c.TestFraction > 0 && c.TestFraction < 1):
		return fmt.Errorf("dirichlet: test fraction must lie in (0, 1), got %v", c.TestFraction)
	case c.MinSamples < 2:
		return fmt.Errorf("dirichlet: MinSamples must be ≥ 2 (one training and one test image), got %d", c.MinSamples)
	case c.MaxImages < 0:
		return fmt.Errorf("dirichlet: negative MaxImages %d", c.MaxImages)
	}
	if err := c.Pixels.check(); err != nil {
		return fmt.Errorf("dirichlet: %w", err)
	}
	return nil
}

// dirichletVariate fills p with a draw from the symmetric Dirichlet(α):
// independent Gamma(α, 1) variates, normalised. They are drawn as
// logarithms, so that a small α (whose variates underflow float64) still
// gives a proper draw.
func dirichletVariate(p []float64, alpha float64, r *rand.Rand) {
	mx := math.Inf(-1)
	for k := range p {
		p[k] = logGammaVariate(alpha, r)
		mx = max(mx, p[k])
	}
	s := 0.0
	for k := range p {
		p[k] = math.Exp(p[k] - mx)
		s += p[k]
	}
	for k := range p {
		p[k] /= s
	}
}

// logGammaVariate returns ln X for X ~ Gamma(shape a, scale 1), by
// Marsaglia and Tsang (2000); for a < 1, X = Y·U^{1/a} with Y ~ Gamma(a+1).
func logGammaVariate(a float64, r *rand.Rand) float64 {
	boost := 0.0
	if a < 1 {
		boost = math.Log(1-r.Float64()) / a // 1−U ∈ (0, 1]
		a++
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return math.Log(d*v) + boost
		}
	}
}
